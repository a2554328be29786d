/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

#include "pyint.h"
#include "unicode.h"

static void assert_int(const char *s, int64_t expected) {
        int64_t v = -42;

        ck_assert_msg(sbx_py_int_parse(s, &v) == 0, "int(%s) failed", s);
        ck_assert_int_eq(v, expected);
}

static void assert_fails(const char *s, int error) {
        int64_t v = -42;

        ck_assert_int_eq(sbx_py_int_parse(s, &v), error);
        ck_assert_int_eq(v, -42);
}

/* xagent's contract (xagent-contract.md) §5 rule 2. */
START_TEST(test_contract_vectors) {
        assert_int(" 1 ", 1);
        assert_int("+1", 1);
        assert_int("01", 1);
        assert_int("0_1", 1);
        assert_int("1\n", 1);
        assert_int("\xd9\xa1", 1);              /* U+0661 ARABIC-INDIC DIGIT ONE */
        assert_fails("1.0", -EINVAL);
        assert_fails("0x1", -EINVAL);
        assert_fails("", -EINVAL);
        assert_fails("_1", -EINVAL);
        assert_fails("1_", -EINVAL);
        assert_fails("1__0", -EINVAL);
}
END_TEST

START_TEST(test_signs_and_whitespace) {
        assert_int("-0", 0);
        assert_int("-17", -17);
        assert_int("\t\v\f\r 5 \t", 5);
        assert_int("1_000_000", 1000000);
        assert_fails("+", -EINVAL);
        assert_fails("-", -EINVAL);
        assert_fails(" ", -EINVAL);
        assert_fails("+-1", -EINVAL);
        assert_fails("- 1", -EINVAL);
        assert_fails("+_1", -EINVAL);
        assert_fails("1 _0", -EINVAL);
        assert_fails("1 2", -EINVAL);
        assert_fails("1\x7f", -EINVAL);
        assert_fails("one", -EINVAL);
        assert_fails("1e3", -EINVAL);
        /* U+001C–U+001F are str.isspace() but ASCII, so int() does not strip them */
        assert_fails("\x1c" "1", -EINVAL);
        assert_fails("1\x1f", -EINVAL);
        /* non-ASCII whitespace is stripped: NEL, NBSP, U+2028, U+3000 */
        assert_int("\xc2\x85" "1\xc2\xa0", 1);
        assert_int("\xe2\x80\xa8" "2\xe3\x80\x80", 2);
        /* but not inside the number */
        assert_fails("1\xe3\x80\x80" "2", -EINVAL);
}
END_TEST

START_TEST(test_unicode_digits) {
        assert_int("\xd9\xa1\xd9\xa2", 12);                    /* ١٢ */
        assert_int("\xd9\xa1_\xd9\xa2", 12);                   /* ١_٢ */
        assert_int("\xef\xbc\x91\xef\xbc\x90", 10);            /* fullwidth １０ */
        assert_int("-\xf0\x9d\x9f\x8e" "7", -7);               /* U+1D7CE MATHEMATICAL BOLD DIGIT ZERO */
        assert_int("\xf0\x9f\xaf\xb9", 9);                     /* U+1FBF9 SEGMENTED DIGIT NINE */
        assert_fails("\xc2\xb2", -EINVAL);                     /* ² is a digit, not decimal */
        assert_fails("\xe2\x85\xa0", -EINVAL);                 /* Ⅰ ROMAN NUMERAL ONE */
        assert_fails("1\xff", -EINVAL);                        /* malformed UTF-8 */

        ck_assert_int_eq(sbx_unicode_decimal_value('7'), 7);
        ck_assert_int_eq(sbx_unicode_decimal_value(0x1d7ff), 9);
        ck_assert_int_eq(sbx_unicode_decimal_value(0xb2), -1);
        ck_assert(sbx_unicode_is_space(0x1c));
        ck_assert(!sbx_unicode_is_space(0x200b));
}
END_TEST

START_TEST(test_range) {
        assert_int("9223372036854775807", INT64_MAX);
        assert_int("-9223372036854775808", INT64_MIN);
        assert_int("000000000000000000000009223372036854775807", INT64_MAX);
        assert_fails("9223372036854775808", -ERANGE);
        assert_fails("-9223372036854775809", -ERANGE);
        assert_fails("99999999999999999999999", -ERANGE);
        /* a syntax error wins over the range */
        assert_fails("99999999999999999999999x", -EINVAL);
}
END_TEST

/* int() refuses more than 4300 digits (leading zeros count, underscores do not). */
START_TEST(test_digit_limit) {
        char buf[2 * SBX_PY_INT_MAX_STR_DIGITS + 8];

        memset(buf, '0', SBX_PY_INT_MAX_STR_DIGITS);
        strcpy(buf + SBX_PY_INT_MAX_STR_DIGITS - 1, "7");
        assert_int(buf, 7);
        strcpy(buf + SBX_PY_INT_MAX_STR_DIGITS, "7");
        assert_fails(buf, -EINVAL);

        for (size_t i = 0; i < SBX_PY_INT_MAX_STR_DIGITS; i++) {
                buf[2 * i] = '0';
                buf[2 * i + 1] = '_';
        }
        strcpy(buf + 2 * SBX_PY_INT_MAX_STR_DIGITS - 2, "3");
        assert_int(buf, 3);
        strcpy(buf + 2 * SBX_PY_INT_MAX_STR_DIGITS - 1, "_3");
        assert_fails(buf, -EINVAL);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("pyint");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_contract_vectors);
        tcase_add_test(tc, test_signs_and_whitespace);
        tcase_add_test(tc, test_unicode_digits);
        tcase_add_test(tc, test_range);
        tcase_add_test(tc, test_digit_limit);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
