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

/* sbx_read_fd: a pipe read to its end, bounded, any bytes. */
static int pipe_with(const char *data, size_t n) {
        int p[2];

        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(write(p[1], data, n), (ssize_t) n);
        close(p[1]);
        return p[0];
}

START_TEST(test_read_fd) {
        char *buf = NULL;
        size_t n = 99;
        int fd;

        fd = pipe_with("a\0b", 3);
        ck_assert_int_eq(sbx_read_fd(fd, 3, &buf, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_mem_eq(buf, "a\0b", 3);
        free(buf);
        close(fd);

        fd = pipe_with("abcd", 4);
        ck_assert_int_eq(sbx_read_fd(fd, 3, &buf, &n), -EFBIG);
        close(fd);

        fd = pipe_with("", 0);
        ck_assert_int_eq(sbx_read_fd(fd, 3, &buf, &n), 0);
        ck_assert_ptr_null(buf);
        ck_assert_uint_eq(n, 0);
        close(fd);
        ck_assert_int_eq(sbx_read_fd(-1, 3, &buf, &n), -EBADF);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("fileio");
        TCase *tc = tcase_create("shared");

        tcase_add_test(tc, test_read);
        tcase_add_test(tc, test_read_fd);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
