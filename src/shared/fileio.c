/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "fileio.h"

int sbx_read_text_file(const char *path, size_t max, char **ret, SbxError *error) {
        bool is_stdin = !path || streq(path, "-");
        const char *what = is_stdin ? "standard input" : path;
        FILE *f = is_stdin ? stdin : fopen(path, "re");
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;
        bool failed;

        if (!f) {
                int r = -errno;
                sbx_error_set(error, SBX_ERROR_IO, "%s: %s", path, strerror(-r));
                return r;
        }
        buf = malloc(max + 1);
        if (buf)
                n = fread(buf, 1, max + 1, f);
        failed = ferror(f);
        if (!is_stdin)
                fclose(f);
        if (!buf)
                return -ENOMEM;
        if (failed)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: read error", what);
        if (n > max)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: larger than %zu bytes", what, max);
        buf[n] = 0;
        if (strlen(buf) != n)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: contains a NUL byte", what);
        *ret = TAKE_PTR(buf);
        return 0;
}

int sbx_read_fd(int fd, size_t max, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t n = 0, alloc = 0;

        for (;;) {
                ssize_t k;

                if (n == alloc) {
                        char *b = realloc(buf, alloc = alloc ? alloc * 2 : 65536);

                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                k = read(fd, buf + n, alloc - n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > max)
                        return -EFBIG;
        }
        *ret = n > 0 ? TAKE_PTR(buf) : NULL;
        *ret_size = n;
        return 0;
}
