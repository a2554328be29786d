/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <time.h>

#include "time-util.h"

static uint64_t now_us(clockid_t clock) {
        struct timespec ts;

        if (clock_gettime(clock, &ts) < 0)
                return 0;
        return (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U;
}

uint64_t sbx_now_monotonic_us(void) {
        return now_us(CLOCK_MONOTONIC);
}

uint64_t sbx_now_realtime_us(void) {
        return now_us(CLOCK_REALTIME);
}
