/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "pyint.h"
#include "unicode.h"
#include "utf8.h"

/* CPython parses int(str) in two steps: _PyUnicode_TransformDecimalAndSpaceToASCII()
 * maps the str to ASCII (below 0x7f kept, other whitespace to ' ', other
 * decimal digits to '0'–'9', anything else to a '?' that no rule accepts), then
 * PyLong_FromString() parses that. The cursor does the mapping on the fly. */
typedef struct Cursor {
        const char *s;
        size_t len;
} Cursor;

/* The current character in its ASCII form: '\0' at the end, '?' for a character
 * int() rejects (including malformed UTF-8). */
static char peek(const Cursor *c) {
        uint32_t cp;
        int d;

        if (c->len == 0)
                return '\0';
        if (sbx_utf8_decode(c->s, c->len, &cp) < 0)
                return '?';
        if (cp < 0x7f)
                return (char) cp;
        if (sbx_unicode_is_space(cp))
                return ' ';
        d = sbx_unicode_decimal_value(cp);
        return d >= 0 ? (char) ('0' + d) : '?';
}

static void advance(Cursor *c) {
        uint32_t cp;
        int n = sbx_utf8_decode(c->s, c->len, &cp);

        n = n > 0 ? n : 1;
        c->s += n;
        c->len -= (size_t) n;
}

/* Py_ISSPACE(): only ASCII whitespace; U+001C–U+001F (str.isspace()) are not
 * mapped to ' ' since they are ASCII, and int() rejects them. */
static bool is_space(char c) {
        return c && strchr(" \t\n\v\f\r", c);
}

static bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

int sbx_py_int_parse(const char *s, int64_t *ret) {
        Cursor c = { .s = s, .len = strlen(s) };
        bool negative = false, overflow = false;
        size_t digits = 0;
        uint64_t limit, v = 0;
        char ch, prev = '\0';

        while (is_space(peek(&c)))
                advance(&c);
        ch = peek(&c);
        if (ch == '+' || ch == '-') {
                negative = ch == '-';
                advance(&c);
        }
        if (!is_digit(peek(&c)))        /* no digits, or a leading underscore */
                return -EINVAL;

        limit = negative ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX;
        for (; ch = peek(&c), is_digit(ch) || ch == '_'; prev = ch, advance(&c)) {
                if (ch == '_') {
                        if (prev == '_')
                                return -EINVAL;
                        continue;
                }
                digits++;
                if (v > (limit - (uint64_t) (ch - '0')) / 10)
                        overflow = true;
                else
                        v = v * 10 + (uint64_t) (ch - '0');
        }
        if (prev == '_')
                return -EINVAL;
        if (digits > SBX_PY_INT_MAX_STR_DIGITS)
                return -EINVAL;
        while (is_space(peek(&c)))
                advance(&c);
        if (peek(&c) != '\0')
                return -EINVAL;
        if (overflow)
                return -ERANGE;

        *ret = negative ? (int64_t) (0 - v) : (int64_t) v;
        return 0;
}
