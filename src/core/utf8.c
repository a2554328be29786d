/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "utf8.h"

int sbx_utf8_decode(const char *str, size_t len, uint32_t *ret_cp) {
        const unsigned char *s = (const unsigned char *) str;
        uint32_t cp, min;
        size_t n;

        if (len == 0)
                return -EILSEQ;

        if (s[0] < 0x80) {
                *ret_cp = s[0];
                return 1;
        } else if ((s[0] & 0xe0) == 0xc0) {
                n = 2, cp = s[0] & 0x1f, min = 0x80;
        } else if ((s[0] & 0xf0) == 0xe0) {
                n = 3, cp = s[0] & 0x0f, min = 0x800;
        } else if ((s[0] & 0xf8) == 0xf0) {
                n = 4, cp = s[0] & 0x07, min = 0x10000;
        } else
                return -EILSEQ;

        if (len < n)
                return -EILSEQ;
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return -EILSEQ;
                cp = (cp << 6) | (s[i] & 0x3f);
        }
        if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
                return -EILSEQ;

        *ret_cp = cp;
        return (int) n;
}

bool sbx_utf8_is_valid(const char *s) {
        size_t len = strlen(s);

        while (len > 0) {
                uint32_t cp;
                int n = sbx_utf8_decode(s, len, &cp);

                if (n < 0)
                        return false;
                s += n;
                len -= (size_t) n;
        }
        return true;
}
