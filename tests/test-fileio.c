/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <unistd.h>

#include "fileio.h"
#include "sbx-test.h"

static char *write_tmp(const char *data, size_t n) {
        char *p = strdup("/tmp/sbx-fileio-XXXXXX");
        int fd = mkstemp(p);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, n), (ssize_t) n);
        close(fd);
        return p;
}

START_TEST(test_read) {
        _cleanup_free_ char *ok = write_tmp("{\"a\": 1}\n", 9), *nul = write_tmp("{\"a\"\0: 1}", 9), *text = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_read_text_file(ok, 100, &text, &e), 0);
        ck_assert_str_eq(text, "{\"a\": 1}\n");
        text = mfree(text);
        /* never silently cut: at a NUL byte, or at the size limit */
        ck_assert_int_eq(sbx_read_text_file(nul, 100, &text, &e), -EINVAL);
        ck_assert(sbx_error_is(&e, SBX_ERROR_INVALID_ARGS));
        ck_assert_ptr_nonnull(strstr(e.message, "contains a NUL byte"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_read_text_file(ok, 8, &text, &e), -EINVAL);
        ck_assert_ptr_nonnull(strstr(e.message, "larger than 8 bytes"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_read_text_file(ok, 9, &text, NULL), 0);
        text = mfree(text);
        /* a missing file is told apart by its errno */
        ck_assert_int_eq(sbx_read_text_file("/nonexistent/x", 100, &text, &e), -ENOENT);
        ck_assert(sbx_error_is(&e, SBX_ERROR_IO));
        sbx_error_free(&e);
        unlink(ok);
        unlink(nul);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("fileio");
        TCase *tc = tcase_create("shared");

        tcase_add_test(tc, test_read);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
