/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ctl-util.h"

int ctl_read_file(const char *path, size_t max, char **ret, SbxError *error) {
        bool is_stdin = !path || streq(path, "-");
        FILE *f = is_stdin ? stdin : fopen(path, "re");
        _cleanup_free_ char *buf = NULL;
        size_t n = 0;

        if (!f)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: %s", path, strerror(errno));
        buf = malloc(max + 1);
        if (buf)
                n = fread(buf, 1, max + 1, f);
        if (!is_stdin)
                fclose(f);
        if (!buf)
                return -ENOMEM;
        if (n > max)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: larger than %zu bytes",
                                     is_stdin ? "standard input" : path, max);
        buf[n] = 0;
        if (strlen(buf) != n)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: contains a NUL byte",
                                     is_stdin ? "standard input" : path);
        *ret = TAKE_PTR(buf);
        return 0;
}

int ctl_fail(const char *what, int r, const SbxError *error) {
        if (sbx_error_is_set(error))
                fprintf(stderr, "xagent-sandboxctl: %s: %s\n", sbx_error_kind_name(error->kind),
                        error->message ?: what);
        else
                fprintf(stderr, "xagent-sandboxctl: %s: %s\n", what, strerror(-r));
        return 1;
}

int ctl_usage(const char *usage) {
        fprintf(stderr, "xagent-sandboxctl: usage: xagent-sandboxctl %s\n", usage);
        return 2;
}
