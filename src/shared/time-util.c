/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <poll.h>
#include <time.h>

#include "macro.h"
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

uint64_t sbx_now_boottime_us(void) {
        return now_us(CLOCK_BOOTTIME);
}

int sbx_fd_wait(int fd, short events, uint64_t deadline_ms) {
        for (;;) {
                uint64_t now = sbx_now_monotonic_us() / 1000U;
                struct pollfd p = { .fd = fd, .events = events };
                int n;

                if (now >= deadline_ms)
                        return 0;
                n = poll(&p, 1, (int) MIN(deadline_ms - now, (uint64_t) 60000));
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        return 1;
        }
}
