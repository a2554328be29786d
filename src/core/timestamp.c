/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>
#include <time.h>

#include "timestamp.h"

int sbx_parse_rfc3339_usec(const char *s, uint64_t *ret) {
        struct tm tm = {};
        const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
        uint64_t usec = 0;
        int64_t offset = 0;
        time_t t;

        if (!p)
                return -EINVAL;
        if (*p == '.') {
                unsigned digits = 0;
                for (p++; *p >= '0' && *p <= '9'; p++, digits++)
                        if (digits < 6)
                                usec = usec * 10 + (uint64_t) (*p - '0');
                if (digits == 0)
                        return -EINVAL;
                for (; digits < 6; digits++)
                        usec *= 10;
        }
        if (*p == 'Z' || *p == 'z')
                p++;
        else if (*p == '+' || *p == '-') {
                unsigned hh, mm;
                char sign = *p;
                if (strlen(p) != 6 || p[3] != ':' || p[1] < '0' || p[1] > '9' || p[2] < '0' || p[2] > '9' ||
                    p[4] < '0' || p[4] > '9' || p[5] < '0' || p[5] > '9')
                        return -EINVAL;
                hh = (unsigned) (p[1] - '0') * 10 + (unsigned) (p[2] - '0');
                mm = (unsigned) (p[4] - '0') * 10 + (unsigned) (p[5] - '0');
                offset = (int64_t) (hh * 3600 + mm * 60) * (sign == '+' ? 1 : -1);
                p += 6;
        } else
                return -EINVAL;
        if (*p)
                return -EINVAL;

        t = timegm(&tm);
        if (t == (time_t) -1 || t - offset < 0)
                return -EINVAL;
        *ret = (uint64_t) (t - offset) * 1000000 + usec;
        return 0;
}
