/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* tar-filter-run UID GID: the core tar filter from stdin to stdout; a refusal is
 * printed on stderr ("InvalidArgs: message") with exit status 1. For
 * tests/test_tar_filter.py, which makes the archives with Python's tarfile. */

#include <stdio.h>
#include <unistd.h>

#include "tar-filter.h"

int main(int argc, char **argv) {
        _cleanup_(sbx_tar_filter_freep) SbxTarFilter *f = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_free_ char *out = NULL;
        char buf[4096];
        size_t size = 0, alloc = 0;
        ssize_t k;
        int r = 0;

        if (argc != 3 || sbx_tar_filter_new((uid_t) atoi(argv[1]), (gid_t) atoi(argv[2]), &f) < 0)
                return 2;
        /* Small, odd reads: headers arrive split. */
        while (r >= 0 && (k = read(STDIN_FILENO, buf, 777)) > 0)
                r = sbx_tar_filter_feed(f, buf, (size_t) k, &out, &size, &alloc, &e);
        if (r >= 0)
                r = sbx_tar_filter_finish(f, &out, &size, &alloc, &e);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", sbx_error_kind_name(e.kind), e.message ?: "?");
                return 1;
        }
        fwrite(out, 1, size, stdout);
        return 0;
}
