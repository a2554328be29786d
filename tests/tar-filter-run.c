/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* tar-filter-run UID GID [KEY=N]...: the core tar filter from stdin to stdout; a
 * refusal is printed on stderr ("InvalidArgs: message") with exit status 1. For
 * tests/test_tar_filter.py, which makes the archives with Python's tarfile.
 * KEY: entries, symlinks, symlink-bytes, name, target, components (the limits,
 * the others at their defaults); chunk (bytes per read and feed, default 777);
 * stop-after (should_stop() says stop from its call N + 1 on). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tar-filter.h"

static unsigned long long stop_after = ~0ULL, stop_calls;

static bool should_stop(void *userdata) {
        return stop_calls++ >= stop_after;
}

static int option(const char *arg, SbxTarLimits *l, size_t *chunk) {
        static const struct {
                const char *key;
                size_t offset, size;
        } keys[] = {
                { "entries=", offsetof(SbxTarLimits, entries), sizeof(uint64_t) },
                { "symlinks=", offsetof(SbxTarLimits, symlinks), sizeof(uint64_t) },
                { "symlink-bytes=", offsetof(SbxTarLimits, symlink_bytes), sizeof(uint64_t) },
                { "name=", offsetof(SbxTarLimits, name), sizeof(size_t) },
                { "target=", offsetof(SbxTarLimits, target), sizeof(size_t) },
                { "components=", offsetof(SbxTarLimits, components), sizeof(size_t) },
        };
        const char *eq = strchr(arg, '=');
        unsigned long long v;

        if (!eq)
                return -1;
        v = strtoull(eq + 1, NULL, 10);
        if (strncmp(arg, "chunk=", 6) == 0) {
                *chunk = (size_t) v;
                return *chunk > 0 ? 0 : -1;
        }
        if (strncmp(arg, "stop-after=", 11) == 0) {
                stop_after = v;
                return 0;
        }
        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (strncmp(arg, keys[i].key, strlen(keys[i].key)) == 0) {
                        if (keys[i].size == sizeof(uint64_t))
                                *(uint64_t *) ((char *) l + keys[i].offset) = v;
                        else
                                *(size_t *) ((char *) l + keys[i].offset) = (size_t) v;
                        return 0;
                }
        return -1;
}

int main(int argc, char **argv) {
        _cleanup_(sbx_tar_filter_freep) SbxTarFilter *f = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_free_ char *out = NULL, *buf = NULL;
        SbxTarLimits limits = SBX_TAR_LIMITS_DEFAULT;
        size_t size = 0, alloc = 0, chunk = 777;       /* small, odd reads: headers arrive split */
        ssize_t k;
        int r = 0;

        if (argc < 3 || sbx_tar_filter_new((uid_t) atoi(argv[1]), (gid_t) atoi(argv[2]), &f) < 0)
                return 2;
        for (int i = 3; i < argc; i++)
                if (option(argv[i], &limits, &chunk) < 0)
                        return 2;
        sbx_tar_filter_set_limits(f, &limits);
        sbx_tar_filter_set_stop(f, should_stop, NULL);
        if (!(buf = malloc(chunk)))
                return 2;
        /* A big chunk is read whole: one feed call for all of it. */
        while (r >= 0) {
                size_t n = 0;

                while (n < chunk && (k = read(STDIN_FILENO, buf + n, chunk - n)) > 0)
                        n += (size_t) k;
                if (n == 0)
                        break;
                r = sbx_tar_filter_feed(f, buf, n, &out, &size, &alloc, &e);
        }
        if (r >= 0)
                r = sbx_tar_filter_finish(f, &out, &size, &alloc, &e);
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", sbx_error_kind_name(e.kind), e.message ?: "?");
                return 1;
        }
        fwrite(out, 1, size, stdout);
        return 0;
}
