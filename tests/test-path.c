/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

#include "path.h"

/* xagent's contract (xagent-contract.md) §1.3: the derived table, all rows. */
static const struct {
        const char *in, *out;
} table[] = {
        { "", "." },
        { ".", "." },
        { "/", "/" },
        { "//", "/" },
        { "///", "/" },
        { "//data/uploads", "/data/uploads" },
        { "///data/uploads", "/data/uploads" },
        { "//data/./uploads/../uploads", "/data/uploads" },
        { "/data//uploads", "/data/uploads" },
        { "/home/", "/home" },
        { "/a/b/..", "/a" },
        { "/../a", "/a" },
        { "/..", "/" },
        { "a/b", "a/b" },
        { "a/../..", ".." },
        { "./a", "a" },
        { "/a/./b/", "/a/b" },
        { "//data/./sub/", "/data/sub" },
        { "/x/y/../../..", "/" },
        { "~/x", "~/x" },
        { "/a//b///c/", "/a/b/c" },
        /* posixpath.normpath corners beyond the table */
        { "..", ".." },
        { "../..", "../.." },
        { "../a/../..", "../.." },
        { "a/..", "." },
        { "//..", "/" },
        { "//a/..", "/" },
        { "////a//b", "/a/b" },
        { "a//b/", "a/b" },
        { "/data/../data2", "/data2" },
        { "/host/x/../a/", "/host/a" },
        { "/guest/./a", "/guest/a" },
        { "/.../a", "/.../a" },
        { "/a/..b/c", "/a/..b/c" },
};

START_TEST(test_canonical_table) {
        char *got = sbx_canonical_path(table[_i].in);

        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, table[_i].out) == 0, "canonical(\"%s\") = \"%s\", expected \"%s\"", table[_i].in,
                      got, table[_i].out);
        free(got);
}
END_TEST

START_TEST(test_root_or_descendant) {
        ck_assert(sbx_path_is_root_or_descendant("/data", "/data"));
        ck_assert(sbx_path_is_root_or_descendant("/data/sub", "/data"));
        ck_assert(!sbx_path_is_root_or_descendant("/database", "/data"));
        ck_assert(!sbx_path_is_root_or_descendant("/data", "/data/sub"));
        ck_assert(sbx_path_is_root_or_descendant("/data/sub", "/"));
        ck_assert(sbx_path_is_root_or_descendant("/", "/"));
        ck_assert(!sbx_path_is_root_or_descendant("/other", "/data"));
}
END_TEST

START_TEST(test_normalize_absolute) {
        static const struct {
                const char *in, *out;
        } abs_table[] = {
                { "/", "/" }, { "//", "/" }, { "/.", "/" }, { "/tmp/..", "/" }, { "/w/..", "/" },
                { "///", "/" }, { "/..", "/" }, { "/../..", "/" }, { "/./././", "/" }, { "/a/b/../..", "/" },
                { "/tmp/", "/tmp" }, { "/tmp//x/./y/", "/tmp/x/y" }, { "/a/../b", "/b" }, { "/a/b/..", "/a" },
                { "//a//b", "/a/b" }, { "/...", "/..." }, { "/a/.b", "/a/.b" }, { "/../a/..b", "/a/..b" },
        };
        char buf[64], *copy;

        for (size_t i = 0; i < ELEMENTSOF(abs_table); i++) {
                ck_assert_int_eq(sbx_path_normalize_absolute(abs_table[i].in, buf, sizeof buf), 0);
                ck_assert_str_eq(buf, abs_table[i].out);
                /* the same as the canonical form, and in place */
                copy = sbx_canonical_path(abs_table[i].in);
                ck_assert_str_eq(buf, copy);
                free(copy);
                strcpy(buf, abs_table[i].in);
                ck_assert_int_eq(sbx_path_normalize_absolute(buf, buf, sizeof buf), 0);
                ck_assert_str_eq(buf, abs_table[i].out);
        }
        ck_assert_int_eq(sbx_path_normalize_absolute("tmp", buf, sizeof buf), -EINVAL);
        ck_assert_int_eq(sbx_path_normalize_absolute("", buf, sizeof buf), -EINVAL);
        ck_assert_int_eq(sbx_path_normalize_absolute("/abcdef", buf, 7), -ENAMETOOLONG);
        ck_assert_int_eq(sbx_path_normalize_absolute("/abcdef", buf, 8), 0);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("path");
        TCase *tc = tcase_create("canonical");

        tcase_add_loop_test(tc, test_canonical_table, 0, (int) (sizeof(table) / sizeof(table[0])));
        tcase_add_test(tc, test_root_or_descendant);
        tcase_add_test(tc, test_normalize_absolute);
        suite_add_tcase(s, tc);

        return s;
}

SBX_TEST_MAIN(make_suite)
