/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* ReadFile's and WriteFile's option fd (channel.h; docs/api.md, "Files"): the
 * service's own program (src/init/stream.c) reads or writes the file as the owner
 * through one exec, and the relay (docker-relay.h) moves its bytes between the
 * exec's stream and the caller's descriptor through fixed buffers, as for the copies
 * (copy.c): nothing is assembled in memory, no bus message carries the data, and
 * max_file_bytes does not apply; the sandbox's disk budget (disk-ledger.h) does. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "channel.h"
#include "exec.h"
#include "lifecycle-internal.h"
#include "path.h"

/* What the daemon passes on past the budget before it kills the program itself:
 * the program refuses at the budget, this bounds a program that does not. */
#define BUDGET_SLACK ((uint64_t) 1 << 20)

/* The caller's descriptor, looked at only now (after authorization): the way it
 * was opened must allow what the call does with it. */
static int check_fd(int fd, bool written, SbxError *error) {
        int flags = fcntl(fd, F_GETFL);
        struct stat st;

        if (flags < 0 || fstat(fd, &st) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: not a valid descriptor");
        if (S_ISDIR(st.st_mode))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: a directory, which can be neither read "
                                     "nor written as a stream");
        if (written && (flags & O_ACCMODE) == O_RDONLY)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: opened read-only, but ReadFile writes the "
                                     "file's data to it; pass a descriptor opened for writing");
        if (!written && (flags & O_ACCMODE) == O_WRONLY)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: opened write-only, but WriteFile reads the "
                                     "data from it; pass a descriptor opened for reading");
        return 0;
}

static int normal_path(const char *path, char buf[static SBX_PROTO_MAX_PATH + 1], SbxError *error) {
        if (strlen(path) > SBX_PROTO_MAX_PATH || sbx_path_normalize_absolute(path, buf, SBX_PROTO_MAX_PATH + 1) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.64s' is not an absolute path of at "
                                     "most %u bytes", path, SBX_PROTO_MAX_PATH);
        return 0;
}

/* The program's line "key=N …" (hostile: bounded, parsed strictly); the value of key. */
static int said(const char *line, const char *key, uint64_t *ret) {
        char pattern[32];
        const char *p;

        if (!line)
                return -EBADMSG;
        snprintf(pattern, sizeof pattern, "%s=", key);
        for (p = line; (p = strstr(p, pattern)); p++)
                if (p == line || p[-1] == ' ' || p[-1] == '\n')
                        return sscanf(p + strlen(pattern), "%" SCNu64, ret) == 1 ? 0 : -EBADMSG;
        return -EBADMSG;
}

/* After the stream: the exit status; a failure's errno as the channel's errors are
 * told (InvalidArgs naming the path), or *ret_errno for the caller to tell apart. */
static int stream_result(SbxLifecycle *l, SbxExecProcess *p, const char *path, uint64_t *ret_errno,
                         SbxError *error) {
        uint64_t err = 0;
        int status, r = sbx_exec_wait(l->docker, p, &status, error);

        if (r < 0)
                return r;
        if (status == 0)
                return 0;
        if (status != 1 || said(p->relay.out[1].data, "error", &err) < 0 || err == 0 || err > 4095)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox failed "
                                     "(status %d) for '%.256s'", status, path);
        if (ret_errno)
                *ret_errno = err;
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.256s': %s", path,
                             err == ESPIPE ? "not a regular file" : strerror((int) err));
}

static int start(SbxLifecycle *l, const char *name, char **argv, SbxExecProcess **ret, SbxError *error) {
        int r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) { .argv = argv }, ret, error);

        if (r >= 0) {
                (*ret)->relay.out[0].limit = 4096;
                (*ret)->relay.out[1].limit = 4096;
        }
        return r;
}

/* The caller's descriptor stopped taking the data (closed, full for good, not writable). */
static int fd_broken(const SbxRelaySink *s, SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: the descriptor did not take the file's data (%s); "
                             "the reader closed it before the end, or it cannot be written", strerror(-s->error));
}

int sbx_lifecycle_read_file_fd(SbxLifecycle *l, const char *name, const char *path, uint64_t offset,
                               uint64_t length, int fd, SbxFileData *ret, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        char normal[SBX_PROTO_MAX_PATH + 1], off[24], len[24] = "-";
        uint64_t size = 0, mode = 0, mtime = 0, eof = 0;
        int r;

        if ((r = normal_path(path, normal, error)) < 0 || (r = check_fd(fd, true, error)) < 0)
                return r;
        snprintf(off, sizeof off, "%" PRIu64, offset);
        if (length != UINT64_MAX)
                snprintf(len, sizeof len, "%" PRIu64, length);
        r = start(l, name, (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--cat", normal, off, len, NULL },
                  &p, error);
        if (r < 0)
                return r;
        p->relay.out[0].fd = fd;
        if ((r = lc_exec_relay_or_kill(l, p, SBX_COPY_TIMEOUT_S, "file's", error)) < 0 ||
            (r = stream_result(l, p, normal, NULL, error)) < 0)
                return r;
        if (p->relay.out[0].broken)
                return fd_broken(&p->relay.out[0], error);
        if (said(p->relay.out[1].data, "size", &size) < 0 || said(p->relay.out[1].data, "mode", &mode) < 0 ||
            said(p->relay.out[1].data, "mtime", &mtime) < 0 || said(p->relay.out[1].data, "eof", &eof) < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The service's program in the sandbox answered garbage");
        *ret = (SbxFileData) { .file_size = size, .mode = mode, .mtime_us = mtime, .eof = eof != 0 };
        return 0;
}

/* ---- WriteFile ---------------------------------------------------------------------- */

typedef struct PutFilter {
        const SbxRelay *relay;
        uint64_t passed, bound;
} PutFilter;

static int grow(char **out, size_t *out_alloc, size_t need) {
        char *b;

        if (need <= *out_alloc)
                return 0;
        if (!(b = realloc(*out, need)))
                return -ENOMEM;
        *out = b;
        *out_alloc = need;
        return 0;
}

/* The data as it came, then (at the input's end, an unreadable input's excepted) the
 * trailer that tells the program it is whole (proto.h). */
static int put_filter(void *userdata, const char *data, size_t size, char **out, size_t *out_size,
                      size_t *out_alloc) {
        PutFilter *f = userdata;
        uint8_t t[SBX_PUT_TRAILER_SIZE];
        int r;

        if (data) {
                f->passed += size;
                if (f->passed > f->bound)
                        return -EDQUOT;
                if ((r = grow(out, out_alloc, size)) < 0)
                        return r;
                memcpy(*out, data, size);
                *out_size = size;
                return 0;
        }
        if (f->relay->in_error < 0)
                return f->relay->in_error;
        memcpy(t, SBX_PUT_TRAILER_MAGIC, 8);
        for (unsigned i = 0; i < 8; i++)
                t[8 + i] = (uint8_t) (f->passed >> (8 * i));
        if ((r = grow(out, out_alloc, sizeof t)) < 0)
                return r;
        memcpy(*out, t, sizeof t);
        *out_size = sizeof t;
        return 0;
}

static int over_budget(SbxLifecycle *l, uint64_t used, SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                             "max_disk_mib: the service's file calls and copies put %" PRIu64 " bytes into the "
                             "sandbox; the data from fd would take it past the host policy's max_disk_mib %" PRIi64
                             " MiB; nothing was written", used, l->policy->max_disk_mib);
}

/* After the relay: what failed, in the terms of the call. */
static int put_outcome(SbxLifecycle *l, SbxExecProcess *p, const PutFilter *f, const char *path, int relayed,
                       uint64_t used, SbxError *error) {
        uint64_t err = 0;
        int r;

        if (p->relay.in_error < 0) {
                sbx_error_free(error);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fd: the data could not be read from it (%s); "
                                     "nothing was written", strerror(-p->relay.in_error));
        }
        if (f->passed > f->bound) {             /* refused by put_filter(), the program killed */
                sbx_error_free(error);
                return over_budget(l, used, error);
        }
        if (relayed < 0)
                return relayed;
        r = stream_result(l, p, path, &err, error);
        if (r < 0 && err == EDQUOT) {
                sbx_error_free(error);
                return over_budget(l, used, error);
        }
        return r;
}

int sbx_lifecycle_write_file_fd(SbxLifecycle *l, const char *name, const char *path, int fd, unsigned mode,
                                unsigned flags, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_free_ char *container_id = NULL;
        char normal[SBX_PROTO_MAX_PATH + 1], mode_s[16], flags_s[16], max_s[24];
        uint64_t bound, used, budget, added = 0, released = 0;
        PutFilter f = {};
        int r;

        if (mode > 07777)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "mode: %o is not a file mode", mode);
        if (!l->channels || !l->policy)
                return -EINVAL;
        if ((r = normal_path(path, normal, error)) < 0 || (r = check_fd(fd, false, error)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &container_id, error)) < 0)
                return r;
        bound = (uint64_t) l->policy->max_disk_mib << 20;
        used = sbx_disk_ledger_used(sbx_channels_disk(l->channels), container_id);
        budget = used >= bound ? 0 : bound - used;
        snprintf(mode_s, sizeof mode_s, "%o", mode);
        snprintf(flags_s, sizeof flags_s, "%u", flags);
        snprintf(max_s, sizeof max_s, "%" PRIu64, budget);
        r = start(l, name, (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--put", normal, mode_s, flags_s,
                                        max_s, NULL }, &p, error);
        if (r < 0)
                return r;
        f = (PutFilter) { .relay = &p->relay, .bound = budget + BUDGET_SLACK };
        p->relay.in_fd = fd;
        p->relay.in_filter = put_filter;
        p->relay.in_filter_userdata = &f;
        r = lc_exec_relay_or_kill(l, p, SBX_COPY_TIMEOUT_S, "file's", error);
        r = put_outcome(l, p, &f, normal, r, used, error);
        if (r >= 0 && (said(p->relay.out[0].data, "allocated", &added) < 0 ||
                       said(p->relay.out[0].data, "released", &released) < 0)) {
                added = sbx_disk_blocks(f.passed);      /* an answer without them: the write counts as sent */
                released = 0;
        } else if (r < 0 && (sbx_error_is(error, SBX_ERROR_TIMED_OUT) || sbx_error_is(error, SBX_ERROR_BACKEND_ERROR)))
                added = sbx_disk_blocks(f.passed);      /* lost on the way: it may be there, in part */
        sbx_disk_ledger_settle(sbx_channels_disk(l->channels), container_id, 0, added, released);
        return r;
}
