/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "busstr.h"
#include "unicode.h"
#include "utf8.h"

bool sbx_bus_string_ok(const char *s) {
        size_t len = strlen(s);

        while (len > 0) {
                uint32_t cp;
                int n = sbx_utf8_decode(s, len, &cp);

                if (n < 0 || sbx_unicode_is_noncharacter(cp))
                        return false;
                s += n;
                len -= (size_t) n;
        }
        return true;
}

/* Writes the next character or byte of s (len bytes left), escaped as needed;
 * returns how many bytes it took. */
static size_t escape_one(FILE *f, const char *s, size_t len) {
        uint32_t cp;
        int n = sbx_utf8_decode(s, len, &cp);

        if (n < 0) {
                fprintf(f, "\\x%02x", (unsigned char) s[0]);
                return 1;
        }
        if (cp == '\\')
                fputs("\\\\", f);
        else if (sbx_unicode_is_noncharacter(cp) && cp <= 0xffff)
                fprintf(f, "\\u%04" PRIx32, cp);
        else if (sbx_unicode_is_noncharacter(cp))
                fprintf(f, "\\U%08" PRIx32, cp);
        else
                fwrite(s, 1, (size_t) n, f);
        return (size_t) n;
}

int sbx_bus_string_escape(const char *s, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, len = strlen(s);
        FILE *f = open_memstream(&buf, &size);

        if (!f)
                return -ENOMEM;
        while (len > 0) {
                size_t n = escape_one(f, s, len);
                s += n;
                len -= n;
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(buf);
        return 0;
}
