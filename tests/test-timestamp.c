/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "sbx-test.h"
#include "timestamp.h"

START_TEST(test_parse) {
        uint64_t u;

        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00Z", &u), 0);
        ck_assert_uint_eq(u, UINT64_C(1767225600000000));
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00.123456789Z", &u), 0);
        ck_assert_uint_eq(u, UINT64_C(1767225600123456));
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00.5Z", &u), 0);
        ck_assert_uint_eq(u, UINT64_C(1767225600500000));
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T01:30:00+01:30", &u), 0);
        ck_assert_uint_eq(u, UINT64_C(1767225600000000));
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2025-12-31T22:00:00-02:00", &u), 0);
        ck_assert_uint_eq(u, UINT64_C(1767225600000000));
        ck_assert_int_eq(sbx_parse_rfc3339_usec("1970-01-01T00:00:00Z", &u), 0);
        ck_assert_uint_eq(u, 0);

        ck_assert_int_eq(sbx_parse_rfc3339_usec("", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00.Z", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00Zjunk", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("2026-01-01T00:00:00+1:00", &u), -EINVAL);
        ck_assert_int_eq(sbx_parse_rfc3339_usec("0001-01-01T00:00:00Z", &u), -EINVAL);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("timestamp");
        TCase *tc = tcase_create("timestamp");

        tcase_add_test(tc, test_parse);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
