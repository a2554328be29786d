/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A wall-clock step for one process, for tests (test_lifetimes_clock.py builds it):
 * LD_PRELOAD'ed, it adds CLOCKSTEP_SECONDS (default 7200) to CLOCK_REALTIME, time()
 * and gettimeofday() while the file named by $SBX_CLOCKSTEP_TRIGGER exists. The
 * monotonic and boot clocks, and so every timer of the event loop, are left alone. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long step(void) {
        const char *trigger = getenv("SBX_CLOCKSTEP_TRIGGER"), *s = getenv("CLOCKSTEP_SECONDS");
        int saved = errno;
        long r = 0;

        if (trigger && access(trigger, F_OK) == 0)
                r = s ? atol(s) : 7200;
        errno = saved;
        return r;
}

int clock_gettime(clockid_t clock, struct timespec *ts) {
        static int (*real)(clockid_t, struct timespec *);
        int r;

        if (!real)
                real = (int (*)(clockid_t, struct timespec *)) dlsym(RTLD_NEXT, "clock_gettime");
        r = real(clock, ts);
        if (r == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
                ts->tv_sec += step();
        return r;
}

time_t time(time_t *t) {
        struct timespec ts;
        time_t now = clock_gettime(CLOCK_REALTIME, &ts) == 0 ? ts.tv_sec : (time_t) -1;

        if (t)
                *t = now;
        return now;
}

int gettimeofday(struct timeval *tv, void *tz) {
        struct timespec ts;

        if (clock_gettime(CLOCK_REALTIME, &ts) < 0)
                return -1;
        if (tv) {
                tv->tv_sec = ts.tv_sec;
                tv->tv_usec = ts.tv_nsec / 1000;
        }
        return 0;
}
