/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "busstr.h"
#include "sbx-test.h"

static void assert_escapes(const char *in, const char *want) {
        _cleanup_free_ char *out = NULL;

        ck_assert_int_eq(sbx_bus_string_escape(in, &out), 0);
        ck_assert_str_eq(out, want);
        ck_assert(sbx_bus_string_ok(out));
}

/* sd-bus refuses noncharacters and bytes that are not UTF-8; everything else passes. */
START_TEST(test_ok) {
        ck_assert(sbx_bus_string_ok(""));
        ck_assert(sbx_bus_string_ok("caf\xc3\xa9 \\ \xef\xbf\xbd \xf4\x8f\xbf\xbd"));      /* U+FFFD, U+10FFFD */
        ck_assert(!sbx_bus_string_ok("\xef\xb7\x90"));                                     /* U+FDD0 */
        ck_assert(!sbx_bus_string_ok("a\xef\xb7\xaf"));                                    /* U+FDEF */
        ck_assert(!sbx_bus_string_ok("\xef\xbf\xbe"));                                     /* U+FFFE */
        ck_assert(!sbx_bus_string_ok("\xf0\x9f\xbf\xbf"));                                 /* U+1FFFF */
        ck_assert(!sbx_bus_string_ok("\xf4\x8f\xbf\xbf"));                                 /* U+10FFFF */
        ck_assert(!sbx_bus_string_ok("\xff"));
        ck_assert(!sbx_bus_string_ok("\xed\xa0\x80"));                                     /* a surrogate */
}
END_TEST

/* Python-repr-style escapes for what cannot go, and "\\" for a backslash, so the
 * escaped form reads back unambiguously. */
START_TEST(test_escape) {
        assert_escapes("plain", "plain");
        assert_escapes("a\\b", "a\\\\b");
        assert_escapes("x\xef\xb7\x90y", "x\\ufdd0y");
        assert_escapes("\xef\xbf\xbf", "\\uffff");
        assert_escapes("\xf4\x8f\xbf\xbe", "\\U0010fffe");
        assert_escapes("caf\xc3\xa9\xff", "caf\xc3\xa9\\xff");
        assert_escapes("\\ufdd0", "\\\\ufdd0");     /* the text, not the character */
        assert_escapes("\xe2\x80\xa8\x01", "\xe2\x80\xa8\x01");  /* U+2028 and controls are valid on D-Bus */
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("busstr");
        TCase *tc = tcase_create("busstr");

        tcase_add_test(tc, test_ok);
        tcase_add_test(tc, test_escape);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
