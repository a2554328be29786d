/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <time.h>
#include <unistd.h>

#include "sbx-test.h"
#include "time-util.h"

START_TEST(test_monotonic) {
        uint64_t a = sbx_now_monotonic_us(), b;
        struct timespec ts;

        ck_assert_uint_gt(a, 0);
        usleep(2000);
        b = sbx_now_monotonic_us();
        ck_assert_uint_ge(b - a, 2000);
        ck_assert_int_eq(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
        ck_assert_uint_le(b, (uint64_t) ts.tv_sec * 1000000U + (uint64_t) ts.tv_nsec / 1000U);
}
END_TEST

START_TEST(test_realtime) {
        uint64_t before = (uint64_t) time(NULL) * 1000000U, now = sbx_now_realtime_us();

        /* the microseconds of the wall clock, not of the monotonic one */
        ck_assert_uint_ge(now, before);
        ck_assert_uint_lt(now, before + 2000000U);
}
END_TEST

static Suite *time_util_suite(void) {
        Suite *s = suite_create("time-util");
        TCase *tc = tcase_create("clocks");

        tcase_add_test(tc, test_monotonic);
        tcase_add_test(tc, test_realtime);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(time_util_suite)
