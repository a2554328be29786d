/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "utf8.h"

int sbx_json_put(json_object *object, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(object, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int sbx_json_push(json_object *array, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(array, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

/* The strict reader ------------------------------------------------------------ */

DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

#define STR_(x) #x
#define STR(x) STR_(x)

typedef struct Scan {
        const char *text, *p;
        char *out;                      /* the text as json-c gets it; never longer */
        size_t n;
        const char *what;
        const char *key;                /* the innermost member's key, raw */
        size_t key_len;
        SbxError *error;
} Scan;

/* " (under the key \"k\")" for messages, or "" at the top; a long key is cut
 * at a character boundary (messages go out as D-Bus strings). */
static const char *where(const Scan *s, char *buf, size_t size) {
        size_t n = MIN(s->key_len, (size_t) 60);

        if (!s->key)
                return "";
        while (n > 0 && n < s->key_len && ((unsigned char) s->key[n] & 0xc0) == 0x80)
                n--;
        snprintf(buf, size, " (under the key \"%.*s\")", (int) n, s->key);
        return buf;
}

static int bad(Scan *s, const char *why) {
        char buf[100];

        return sbx_error_set(s->error, SBX_ERROR_INVALID_ARGS, "%s: not valid JSON: %s at byte %zu%s", s->what,
                             why, (size_t) (s->p - s->text), where(s, buf, sizeof buf));
}

static void put(Scan *s, const char *p, size_t n) {
        memcpy(s->out + s->n, p, n);
        s->n += n;
}

static void skip_ws(Scan *s) {
        while (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r')
                put(s, s->p++, 1);
}

static int hex4(const char *p, uint32_t *ret) {
        uint32_t v = 0;

        for (size_t i = 0; i < 4; i++) {
                char c = p[i];
                unsigned d = c >= '0' && c <= '9' ? (unsigned) (c - '0')
                           : c >= 'a' && c <= 'f' ? (unsigned) (c - 'a' + 10)
                           : c >= 'A' && c <= 'F' ? (unsigned) (c - 'A' + 10) : 16U;
                if (d == 16)
                        return -EINVAL;
                v = v << 4 | d;
        }
        *ret = v;
        return 0;
}

static void put_utf8(Scan *s, uint32_t cp) {
        char b[4];
        size_t n;

        if (cp < 0x800) {
                b[0] = (char) (0xc0 | cp >> 6);
                n = 1;
        } else if (cp < 0x10000) {
                b[0] = (char) (0xe0 | cp >> 12);
                b[1] = (char) (0x80 | (cp >> 6 & 0x3f));
                n = 2;
        } else {
                b[0] = (char) (0xf0 | cp >> 18);
                b[1] = (char) (0x80 | (cp >> 12 & 0x3f));
                b[2] = (char) (0x80 | (cp >> 6 & 0x3f));
                n = 3;
        }
        b[n++] = (char) (0x80 | (cp & 0x3f));
        put(s, b, n);
}

static int surrogate(Scan *s, uint32_t u, const char *which) {
        char buf[100];

        return sbx_error_set(s->error, SBX_ERROR_INVALID_ARGS,
                             "%s: a lone %s surrogate \\u%04x at byte %zu%s: not a character, refused rather than "
                             "replaced", s->what, which, u, (size_t) (s->p - s->text), where(s, buf, sizeof buf));
}

/* \uXXXX at s->p: ASCII is left for json-c as it is, the rest written as UTF-8. */
static int unicode_escape(Scan *s) {
        uint32_t u, lo;
        char buf[100];

        if (hex4(s->p + 2, &u) < 0)
                return bad(s, "a \\u escape without four hex digits");
        if (u == 0)
                return sbx_error_set(s->error, SBX_ERROR_INVALID_ARGS,
                                     "%s: a key or string (\\u0000 at byte %zu%s) contains U+0000 (NUL), which it "
                                     "cannot hold: refused rather than truncated", s->what,
                                     (size_t) (s->p - s->text), where(s, buf, sizeof buf));
        if (u >= 0xdc00 && u <= 0xdfff)
                return surrogate(s, u, "low");
        if (u >= 0xd800 && u <= 0xdbff) {
                if (s->p[6] != '\\' || s->p[7] != 'u' || hex4(s->p + 8, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
                        return surrogate(s, u, "high");
                put_utf8(s, 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00));
                s->p += 12;
                return 0;
        }
        if (u < 0x80)
                put(s, s->p, 6);
        else
                put_utf8(s, u);
        s->p += 6;
        return 0;
}

static int string(Scan *s) {
        put(s, s->p++, 1);
        for (;;) {
                unsigned char c = (unsigned char) *s->p;
                uint32_t cp;
                int n, r;

                if (c == '"') {
                        put(s, s->p++, 1);
                        return 0;
                }
                if (c == 0)
                        return bad(s, "an unterminated string");
                if (c < 0x20)
                        return bad(s, "a control character in a string (it must be escaped)");
                if (c == '\\') {
                        if (s->p[1] == 'u') {
                                if ((r = unicode_escape(s)) < 0)
                                        return r;
                                continue;
                        }
                        if (!s->p[1] || !strchr("\"\\/bfnrt", s->p[1]))
                                return bad(s, "an unknown escape in a string");
                        n = 2;
                } else if ((n = sbx_utf8_decode(s->p, strnlen(s->p, 4), &cp)) < 0)
                        return bad(s, "a string that is not UTF-8");
                put(s, s->p, (size_t) n);
                s->p += n;
        }
}

static size_t digits(const char *p) {
        size_t n = 0;

        while (p[n] >= '0' && p[n] <= '9')
                n++;
        return n;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int number(Scan *s) {
        const char *p = s->p;
        size_t n;

        if (*p == '-')
                p++;
        n = digits(p);
        if (n == 0)
                return bad(s, "an unexpected character");
        if (n > 1 && *p == '0')
                return bad(s, "a number with a leading zero");
        p += n;
        if (*p == '.') {
                if ((n = digits(++p)) == 0)
                        return bad(s, "a number without digits after its '.'");
                p += n;
        }
        if (*p == 'e' || *p == 'E') {
                p++;
                if (*p == '+' || *p == '-')
                        p++;
                if ((n = digits(p)) == 0)
                        return bad(s, "a number without digits in its exponent");
                p += n;
        }
        put(s, s->p, (size_t) (p - s->p));
        s->p = p;
        return 0;
}

static int literal(Scan *s) {
        static const char *const words[] = { "true", "false", "null" };

        for (size_t i = 0; i < ELEMENTSOF(words); i++) {
                size_t n = strlen(words[i]);
                if (strncmp(s->p, words[i], n) == 0) {
                        put(s, s->p, n);
                        s->p += n;
                        return 0;
                }
        }
        /* NaN, Infinity, 'single quotes', comments, bare words */
        return *s->p == '-' || (*s->p >= '0' && *s->p <= '9') ? number(s) : bad(s, "an unexpected character");
}

static int value(Scan *s, unsigned depth);

/* An array or object at s->p; for an object, each member's key becomes s->key. */
static int container(Scan *s, unsigned depth) {
        bool object = *s->p == '{';
        char close = object ? '}' : ']';
        const char *outer = s->key;
        size_t outer_len = s->key_len;
        int r;

        if (depth >= SBX_JSON_MAX_DEPTH)
                return bad(s, "arrays and objects nested more than " STR(SBX_JSON_MAX_DEPTH) " deep");
        put(s, s->p++, 1);
        skip_ws(s);
        if (*s->p == close) {
                put(s, s->p++, 1);
                return 0;
        }
        for (;;) {
                if (object) {
                        const char *key = s->p + 1;
                        if (*s->p != '"')
                                return bad(s, "an object key that is not a string");
                        if ((r = string(s)) < 0)
                                return r;
                        s->key = key;
                        s->key_len = (size_t) (s->p - 1 - key);
                        skip_ws(s);
                        if (*s->p != ':')
                                return bad(s, "a missing ':' after an object key");
                        put(s, s->p++, 1);
                }
                if ((r = value(s, depth + 1)) < 0)
                        return r;
                skip_ws(s);
                if (*s->p == close)
                        break;
                if (*s->p != ',')
                        return bad(s, object ? "a missing ',' or '}'" : "a missing ',' or ']'");
                put(s, s->p++, 1);
                skip_ws(s);
                if (*s->p == close)
                        return bad(s, "a trailing comma");
        }
        put(s, s->p++, 1);
        s->key = outer;
        s->key_len = outer_len;
        return 0;
}

static int value(Scan *s, unsigned depth) {
        skip_ws(s);
        if (*s->p == '{' || *s->p == '[')
                return container(s, depth);
        if (*s->p == '"')
                return string(s);
        if (*s->p == 0)
                return bad(s, "the text ends before a value");
        return literal(s);
}

int sbx_json_parse_strict(const char *text, const char *what, json_object **ret, SbxError *error) {
        _cleanup_free_ char *out = malloc(strlen(text) + 1);
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        Scan s = { .text = text, .p = text, .out = out, .what = what, .error = error };
        enum json_tokener_error jerr;
        json_object *obj;
        int r;

        if (!out)
                return -ENOMEM;
        if ((r = value(&s, 0)) < 0)
                return r;
        skip_ws(&s);
        if (*s.p)
                return bad(&s, "text after the value");
        out[s.n] = 0;

        /* What is left is plain JSON; json-c builds it. */
        if (!(tok = json_tokener_new_ex(SBX_JSON_MAX_DEPTH + 1)))
                return -ENOMEM;
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        obj = json_tokener_parse_ex(tok, out, (int) s.n + 1);
        jerr = json_tokener_get_error(tok);
        if (jerr != json_tokener_success) {
                json_object_put(obj);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: not valid JSON: %s", what,
                                     json_tokener_error_desc(jerr));
        }
        *ret = obj;             /* NULL for a document that is null */
        return 0;
}

int sbx_json_get_text(const char *field, json_object *v, const char **ret, SbxError *error) {
        const char *s;

        if (!json_object_is_type(v, json_type_string))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be a string", field);
        s = json_object_get_string(v);
        if ((size_t) json_object_get_string_len(v) != strlen(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: contains a NUL character", field);
        if (!sbx_utf8_is_valid(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: is not valid UTF-8", field);
        *ret = s;
        return 0;
}
