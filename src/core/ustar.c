/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <string.h>

#include "ustar.h"

uint64_t sbx_ustar_number(const uint8_t *p, size_t n) {
        uint64_t v = 0;
        size_t i = 0;

        if (n > 0 && (p[0] & 0x80)) {
                v = p[0] & 0x7f;
                for (i = 1; i < n; i++)
                        v = v << 8 | p[i];
                return v;
        }
        while (i < n && p[i] == ' ')
                i++;
        for (; i < n && p[i] >= '0' && p[i] <= '7'; i++)
                v = v * 8 + (uint64_t) (p[i] - '0');
        return v;
}

bool sbx_ustar_checksum_ok(const uint8_t *b) {
        uint64_t want = sbx_ustar_number(b + 148, 8), u = 0;
        int64_t s = 0;

        for (size_t i = 0; i < SBX_USTAR_BLOCK; i++) {
                uint8_t c = i >= 148 && i < 156 ? ' ' : b[i];

                u += c;
                s += (int8_t) c;
        }
        return want == u || (int64_t) want == s;
}

bool sbx_ustar_is_zero(const uint8_t *b) {
        for (size_t i = 0; i < SBX_USTAR_BLOCK; i++)
                if (b[i])
                        return false;
        return true;
}

static void put_number(uint8_t *p, size_t n, uint64_t v) {
        char buf[32];

        snprintf(buf, sizeof buf, "%0*llo", (int) n - 1, (unsigned long long) v);
        if (strlen(buf) <= n - 1) {
                memcpy(p, buf, n);
                return;
        }
        memset(p, 0, n);
        p[0] = 0x80;
        for (size_t i = 0; i < 8 && i < n - 1; i++)
                p[n - 1 - i] = (uint8_t) (v >> (8 * i));
}

void sbx_ustar_header(uint8_t h[SBX_USTAR_BLOCK], const SbxUstarEntry *e) {
        unsigned sum = 0;

        memset(h, 0, SBX_USTAR_BLOCK);
        strncpy((char *) h, e->name, SBX_USTAR_NAME_FIELD);
        put_number(h + 100, 8, e->mode);
        put_number(h + 108, 8, e->uid);
        put_number(h + 116, 8, e->gid);
        put_number(h + 124, 12, e->size);
        if (e->mtime_field)
                memcpy(h + 136, e->mtime_field, 12);
        else
                put_number(h + 136, 12, e->mtime);
        h[156] = (uint8_t) e->type;
        if (e->link)
                strncpy((char *) h + 157, e->link, SBX_USTAR_NAME_FIELD);
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        memset(h + 148, ' ', 8);
        for (size_t i = 0; i < SBX_USTAR_BLOCK; i++)
                sum += h[i];
        snprintf((char *) h + 148, 8, "%06o", sum);
        h[155] = ' ';
}

size_t sbx_pax_record(char *buf, size_t room, const char *key, const char *value) {
        size_t body = strlen(key) + strlen(value) + 3, len = body + 1;

        for (;;) {
                size_t digits = (size_t) snprintf(NULL, 0, "%zu", len);

                if (digits + body == len)
                        break;
                len = digits + body;
        }
        if (len < room)         /* snprintf writes a NUL after it */
                snprintf(buf, room, "%zu %s=%s\n", len, key, value);
        return len;
}
