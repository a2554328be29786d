/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* JSON on both sides: bytes as valid UTF-8 text, base64, and reading tool arguments
 * (D-Bus replies as JSON values: src/shared/bus-json.c). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-json.h"
#include "utf8.h"

/* ---- bytes as text --------------------------------------------------------------- */

/* The length of the sequence a lead byte begins, 0 for a byte no sequence begins with. */
static size_t utf8_lead_length(unsigned char c) {
        if (c < 0x80)
                return 1;
        if (c >= 0xc2 && c <= 0xdf)
                return 2;
        if (c >= 0xe0 && c <= 0xef)
                return 3;
        if (c >= 0xf0 && c <= 0xf4)
                return 4;
        return 0;
}

json_object *json_string_from_bytes(const char *data, size_t len, size_t *ret_consumed) {
        _cleanup_free_ char *out = NULL;
        size_t i = 0, o = 0;
        json_object *j;

        out = malloc(len * 3 + 1);     /* each byte at worst U+FFFD (3 bytes) */
        if (!out)
                return NULL;
        while (i < len) {
                uint32_t cp;
                int n = sbx_utf8_decode(data + i, len - i, &cp);

                if (n > 0 && cp != 0) {
                        memcpy(out + o, data + i, (size_t) n);
                        o += (size_t) n;
                        i += (size_t) n;
                        continue;
                }
                /* A sequence cut by the end of this chunk waits for the next one. */
                if (ret_consumed && n < 0 && utf8_lead_length((unsigned char) data[i]) > len - i) {
                        bool prefix = true;

                        for (size_t k = i + 1; k < len; k++)
                                prefix = prefix && ((unsigned char) data[k] & 0xc0) == 0x80;
                        if (prefix)
                                break;
                }
                if (n > 0 && cp == 0) {         /* NUL is valid UTF-8 and JSON (\u0000) */
                        out[o++] = '\0';
                        i++;
                        continue;
                }
                memcpy(out + o, "\xef\xbf\xbd", 3);
                o += 3;
                i++;
        }
        if (ret_consumed)
                *ret_consumed = i;
        j = json_object_new_string_len(out, (int) o);
        return j;
}

/* ---- base64 ---------------------------------------------------------------------- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len) {
        const unsigned char *p = data;
        char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t) p[i] << 16 | (i + 1 < len ? (uint32_t) p[i + 1] << 8 : 0) |
                             (i + 2 < len ? p[i + 2] : 0);

                *o++ = b64[v >> 18 & 63];
                *o++ = b64[v >> 12 & 63];
                *o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
                *o++ = i + 2 < len ? b64[v & 63] : '=';
        }
        *o = '\0';
        return out;
}

static int b64_value(char c) {
        const char *p = c ? strchr(b64, c) : NULL;

        return p ? (int) (p - b64) : -1;
}

int base64_decode(const char *text, void **ret, size_t *ret_len) {
        size_t len = strlen(text), o = 0;
        _cleanup_free_ unsigned char *out = NULL;
        uint32_t acc = 0;
        unsigned bits = 0, pad = 0;

        out = malloc(len / 4 * 3 + 3);
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                int v;

                if (text[i] == '=') {
                        pad++;
                        continue;
                }
                if (strchr(" \t\r\n", text[i]))
                        continue;
                v = b64_value(text[i]);
                if (v < 0 || pad)
                        return -EINVAL;
                acc = acc << 6 | (uint32_t) v;
                bits += 6;
                if (bits >= 8) {
                        bits -= 8;
                        out[o++] = (unsigned char) (acc >> bits);
                }
        }
        if (pad > 2 || bits >= 6)
                return -EINVAL;
        *ret = TAKE_PTR(out);
        *ret_len = o;
        return 0;
}

/* ---- arguments ------------------------------------------------------------------- */

static int arg_error(char **error, const char *key, const char *what) {
        if (asprintf(error, "argument '%s': %s", key, what) < 0)
                *error = NULL;
        return -EINVAL;
}

int arg_string(json_object *args, const char *key, bool required, const char **ret, char **error) {
        json_object *v;

        if (!json_object_object_get_ex(args, key, &v) || !v)
                return required ? arg_error(error, key, "is required") : 0;
        if (!json_object_is_type(v, json_type_string))
                return arg_error(error, key, "must be a string");
        if (memchr(json_object_get_string(v), '\0', (size_t) json_object_get_string_len(v)))
                return arg_error(error, key, "must not contain U+0000");
        *ret = json_object_get_string(v);
        return 0;
}

int arg_uint(json_object *args, const char *key, uint64_t max, uint64_t *ret, char **error) {
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_int))
                return arg_error(error, key, "must be an integer");
        n = json_object_get_int64(v);
        if (n < 0 || (uint64_t) n > max) {
                char what[64];

                snprintf(what, sizeof what, "must be between 0 and %llu", (unsigned long long) max);
                return arg_error(error, key, what);
        }
        *ret = (uint64_t) n;
        return 0;
}

int arg_cursor(json_object *args, const char *key, uint64_t *ret, char **error) {
        const char *s = NULL;
        uint64_t n = 0;
        int r;

        r = arg_string(args, key, false, &s, error);
        if (r < 0 || !s)
                return r;
        if (!*s || strlen(s) > 20)
                return arg_error(error, key, "must be a cursor this tool returned (next_cursor)");
        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9' || n > (UINT64_MAX - (uint64_t) (*p - '0')) / 10)
                        return arg_error(error, key, "must be a cursor this tool returned (next_cursor)");
                n = n * 10 + (uint64_t) (*p - '0');
        }
        *ret = n;
        return 0;
}

int arg_bool(json_object *args, const char *key, bool *ret, char **error) {
        json_object *v;

        if (!json_object_object_get_ex(args, key, &v) || !v)
                return 0;
        if (!json_object_is_type(v, json_type_boolean))
                return arg_error(error, key, "must be true or false");
        *ret = json_object_get_boolean(v);
        return 0;
}
