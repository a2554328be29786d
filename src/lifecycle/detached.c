/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "channel.h"
#include "exec.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "naming.h"
#include "time-util.h"
#include "proto.h"

#define START_TEXT_MAX 4096U
#define PROC_STAT_MAX 1024U

void sbx_detach_output_done(SbxDetachOutput *o) {
        free(o->out);
        free(o->err);
        *o = (SbxDetachOutput) {};
}

static int ring_path(const char *id, char **ret) {
        return asprintf(ret, SBX_DETACH_DIR "/%s/" SBX_RING_FILE, id) < 0 ? -ENOMEM : 0;
}

/* The init's "exec-failed ERRNO" (exit status 3) as the error naming argv[0]. */
static int exec_failed(const SbxExecProcess *p, const SbxExecRequest *req, SbxError *error) {
        const SbxRelaySink *o = &p->relay.out[0];
        char text[64] = "";
        int err = 0;

        if (o->data)
                memcpy(text, o->data, MIN(o->size, sizeof text - 1));
        if (sscanf(text, "exec-failed %d", &err) != 1 || err <= 0)
                err = EIO;
        if (err == ENOENT && !strchr(req->argv[0], '/'))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "argv[0]: '%.256s': no such command in PATH",
                                     req->argv[0]);
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "argv[0]: '%.256s': %s", req->argv[0],
                             err == ENOENT ? "no such file" : strerror(err));
}

/* What the ring keeps of each stream: the policy's max_process_output (within the
 * ring's bounds: the policy's are the same). */
static uint64_t output_cap(SbxLifecycle *l) {
        uint64_t cap = l->policy ? (uint64_t) l->policy->max_process_output : SBX_RING_CAP_DEFAULT;

        return MIN(MAX(cap, SBX_RING_CAP_MIN), SBX_RING_CAP_MAX);
}

/* The init's "dir-failed ERRNO" (or fork-, supervisor-failed; exit status 4), or its
 * end by a signal, as an error saying what happened (a full disk, no memory). */
static int setup_failed(SbxLifecycle *l, const char *name, const SbxExecProcess *p, int status, SbxError *error) {
        const SbxRelaySink *o = &p->relay.out[0];
        char text[64] = "", what[32] = "";
        int err = 0;

        if (o->data)
                memcpy(text, o->data, MIN(o->size, sizeof text - 1));
        if (sscanf(text, "%31s %d", what, &err) != 2 || err <= 0)
                err = 0;
        if (err == ENOSPC || err == EDQUOT)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process could not be set up: the sandbox's disk is full (%s "
                                     "under %s)", strerror(err), SBX_DETACH_DIR);
        if (err == ENOMEM || err == EAGAIN || (status == 128 + SIGKILL && lc_container_oom_killed(l, name) > 0))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process could not be set up: the sandbox is out of memory%s",
                                     err ? "" : " (Docker says OOMKilled)");
        if (err > 0 && streq(what, "dir-failed"))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process could not be set up: %s must be a writable directory "
                                     "of the owner's (%s)", SBX_DETACH_DIR, strerror(err));
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                             "The detached process could not be set up in the sandbox (exit status %d%s%s)", status,
                             err ? ": " : "", err ? strerror(err) : "");
}

static int run_detach(SbxLifecycle *l, const char *name, const SbxExecRequest *req, const char *id,
                      const char *token, SbxExecProcess **ret, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ char *dir = NULL;
        char cap[24];
        size_t n = 0;
        int status = -1, r;

        while (req->argv[n])
                n++;
        argv = calloc(n + 6, sizeof(char *));
        if (!argv || asprintf(&dir, SBX_DETACH_DIR "/%s", id) < 0)
                return -ENOMEM;
        snprintf(cap, sizeof cap, "%" PRIu64, output_cap(l));
        argv[0] = (char *) SBX_EXEC_INIT_PATH;
        argv[1] = (char *) "--detach";
        argv[2] = dir;
        argv[3] = cap;
        argv[4] = (char *) "--";
        memcpy(argv + 5, req->argv, n * sizeof(char *));
        r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = argv, .env = req->env, .working_dir = req->working_dir, .check_start = true,
                .token = token }, &p, error);
        if (r < 0)
                return r;
        p->relay.out[0].limit = p->relay.out[1].limit = START_TEXT_MAX;
        if ((r = lc_exec_relay_or_kill(l, p, SBX_DETACH_START_TIMEOUT_S, "detach", error)) < 0 ||
            (r = sbx_exec_wait(l->docker, p, &status, error)) < 0)
                return r;
        if (status == 3)
                return exec_failed(p, req, error);
        if (status != 0)
                return setup_failed(l, name, p, status, error);
        sbx_relay_done(&p->relay);
        p->relay = SBX_RELAY_INIT;
        *ret = TAKE_PTR(p);
        return 0;
}

static int make_id(char id[static SBX_DETACH_ID_LEN + 1]) {
        uint8_t b[SBX_DETACH_ID_LEN / 2];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        for (size_t i = 0; i < sizeof b; i++)
                snprintf(id + 2 * i, 3, "%02x", b[i]);
        return 0;
}

int sbx_lifecycle_detach_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, uid_t caller,
                               SbxExecProcess **ret, SbxError *error) {
        _cleanup_free_ char *container_id = NULL;
        char token[SBX_EXEC_TOKEN_LEN + 1], id[SBX_DETACH_ID_LEN + 1];
        const char *plain;
        uid_t owner = sbx_name_unqualify(name, &plain);
        int r;

        if ((r = make_id(id)) < 0 || (r = sbx_exec_make_token(token)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &container_id, error)) < 0)
                return r;
        /* The row comes first: a service that dies at any point after it finds it. */
        r = sbx_store_put_detached(l->store, &(SbxDetachedRow) {
                .id = (char *) id, .sandbox = (char *) name, .container_id = container_id, .owner = owner,
                .caller = caller, .argv0 = req->argv[0], .token = token, .started_us = sbx_now_realtime_us() },
                error);
        if (r < 0)
                return r;
        r = run_detach(l, name, req, id, token, ret, error);
        if (r < 0)
                (void) sbx_store_delete_detached(l->store, id, NULL);
        else
                memcpy((*ret)->detach_id, id, sizeof id);
        return r;
}

/* Reads exactly n bytes at off of the ring file, or fails saying it is damaged. */
static int read_exact(SbxLifecycle *l, const char *name, const char *path, uint64_t off, size_t n, uint8_t *buf,
                      SbxError *error) {
        SbxFileData d = {};
        int r;

        if (n == 0)
                return 0;
        r = sbx_lifecycle_read_file(l, name, path, off, n, &d, error);
        if (r >= 0 && d.size != n)
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The detached process's output file is damaged");
        if (r >= 0)
                memcpy(buf, d.data, n);
        sbx_file_data_done(&d);
        return r;
}

static int read_header(SbxLifecycle *l, const char *name, const char *path, SbxRingHeader *ret, SbxError *error) {
        uint8_t buf[SBX_RING_HEADER_SIZE];
        int r = read_exact(l, name, path, 0, sizeof buf, buf, error);

        if (r < 0)
                return r;
        r = sbx_ring_parse_header(buf, sizeof buf, ret);
        if (r == -EPROTONOSUPPORT) {
                (void) sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process's output file is of layout 1 (a process started before "
                                     "an upgrade), which this version does not read");
                return r;
        }
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The detached process's output file is damaged");
        return 0;
}

/* Whether the supervisor still runs: its /proc/PID/stat has the start time it wrote. */
static int supervisor_alive(SbxLifecycle *l, const char *name, const SbxRingHeader *h, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        SbxFileData d = {};
        SbxError e = SBX_ERROR_NULL;
        char buf[PROC_STAT_MAX + 1], *p;
        int r;

        if (h->pid == 0 || h->pid > INT32_MAX)
                return 1;               /* not written yet: it is starting */
        if (asprintf(&path, "/proc/%" PRIu64 "/stat", h->pid) < 0)
                return -ENOMEM;
        r = sbx_lifecycle_read_file(l, name, path, 0, PROC_STAT_MAX, &d, &e);
        if (r < 0) {
                bool gone = sbx_error_is(&e, SBX_ERROR_INVALID_ARGS);

                sbx_error_move(error, &e);
                sbx_error_free(&e);
                if (gone)
                        sbx_error_free(error);
                return gone ? 0 : r;
        }
        memcpy(buf, d.data, d.size);
        buf[d.size] = 0;
        sbx_file_data_done(&d);
        p = strrchr(buf, ')');
        for (int field = 2; p && field < 22; field++)
                p = strchr(p + 1, ' ');
        return p && strtoull(p + 1, NULL, 10) == h->start_time;
}

/* Whether a NotRunning answer came from a paused sandbox: its processes are frozen
 * there, not ended, and its output is read after the resume. */
static bool frozen(SbxLifecycle *l, const char *name, const SbxError *e) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        SbxError ignored = SBX_ERROR_NULL;
        int r;

        if (!sbx_error_is(e, SBX_ERROR_NOT_RUNNING))
                return false;
        r = lc_locate_existing(l, name, &o, NULL, &ignored);
        sbx_error_free(&ignored);
        return r > 0 && o && o->state == SBX_STATE_PAUSED;
}

int sbx_lifecycle_detach_poll(SbxLifecycle *l, const char *name, const char *id, SbxDetachState *ret,
                              SbxError *error) {
        _cleanup_free_ char *path = NULL;
        SbxRingHeader h;
        SbxError e = SBX_ERROR_NULL;
        int r;

        *ret = (SbxDetachState) {};
        if ((r = ring_path(id, &path)) < 0)
                return r;
        r = read_header(l, name, path, &h, &e);
        if (r < 0 && (sbx_error_is(&e, SBX_ERROR_INVALID_ARGS) || sbx_error_is(&e, SBX_ERROR_BACKEND_ERROR))) {
                /* removed or damaged by the owner's processes, or of the old layout */
                if (r == -EPROTONOSUPPORT)
                        log_warning("Detached exec %s in sandbox '%s': %s; it is killed", id, name, e.message);
                sbx_error_free(&e);
                *ret = (SbxDetachState) { .exited = true, .gone = true, .exit_status = 255,
                                          .old_layout = r == -EPROTONOSUPPORT };
                return 0;
        }
        if (r < 0) {
                ret->paused = frozen(l, name, &e);
                sbx_error_move(error, &e);
                return r;
        }
        *ret = (SbxDetachState) { .exited = h.exited, .exit_status = (int) h.status };
        if (h.exited)
                return 0;
        r = supervisor_alive(l, name, &h, error);
        if (r == 0) {
                /* Re-read: it may have ended normally since. */
                if (read_header(l, name, path, &h, NULL) >= 0 && h.exited)
                        *ret = (SbxDetachState) { .exited = true, .exit_status = (int) h.status };
                else
                        *ret = (SbxDetachState) { .exited = true, .exit_status = 128 + 9,
                                                  .oom_killed = lc_container_oom_killed(l, name) > 0 };
        }
        if (r < 0)
                ret->paused = frozen(l, name, error);
        return r < 0 ? r : 0;
}

/* n bytes of the ring of size cap at base, from stream position pos, unwrapped. */
static int read_ring(SbxLifecycle *l, const char *name, const char *path, uint64_t base, uint64_t cap,
                     uint64_t pos, size_t n, uint8_t *buf, SbxError *error) {
        uint64_t at = pos % cap;
        size_t first = (size_t) MIN((uint64_t) n, cap - at);
        int r = read_exact(l, name, path, base + at, first, buf, error);

        return r < 0 ? r : read_exact(l, name, path, base, n - first, buf + first, error);
}

/* Stream s of the ring from *pos on (what was dropped before it skipped), at most
 * SBX_DETACH_READ_MAX bytes, into *ret; *pos: where the next read begins. The
 * stream's intent is read last: what a write begun meanwhile may have overwritten
 * is dropped. */
static int read_stream(SbxLifecycle *l, const char *name, const char *path, const SbxRingHeader *h, int s,
                       uint64_t *pos, uint8_t **ret, size_t *ret_size, SbxError *error) {
        _cleanup_free_ uint8_t *data = NULL;
        uint8_t trailer[8];
        uint64_t commit = h->commit[s], start, intent = 0, drop;
        size_t len;
        int r;

        start = MAX(*pos, commit > h->cap ? commit - h->cap : 0);
        len = (size_t) MIN(commit - start, SBX_DETACH_READ_MAX);
        data = malloc(len ?: 1);
        if (!data)
                return -ENOMEM;
        if ((r = read_ring(l, name, path, SBX_RING_DATA_OFFSET(h->cap, s), h->cap, start, len, data, error)) < 0 ||
            (r = read_exact(l, name, path, SBX_RING_INTENT_OFFSET(h->cap, s), sizeof trailer, trailer, error)) < 0)
                return r;
        for (int i = 7; i >= 0; i--)
                intent = (intent << 8) | trailer[i];
        drop = intent > h->cap && intent - h->cap > start ? MIN(intent - h->cap - start, (uint64_t) len) : 0;
        if (drop > 0)
                memmove(data, data + drop, len - (size_t) drop);
        *ret = TAKE_PTR(data);
        *ret_size = len - (size_t) drop;
        *pos = start + len;
        return 0;
}

int sbx_lifecycle_detach_read(SbxLifecycle *l, const char *name, const char *id, uint64_t offset,
                              SbxDetachOutput *ret, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        uint64_t pos[2];
        SbxRingHeader h;
        int r;

        *ret = (SbxDetachOutput) {};
        if ((r = ring_path(id, &path)) < 0)
                return r;
        if ((r = read_header(l, name, path, &h, error)) < 0) {
                ret->paused = frozen(l, name, error);
                return r;
        }
        if (sbx_ring_cursor_positions(offset, h.commit, pos) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "offset: %" PRIu64 " is past the output's end (%" PRIu64 ")", offset,
                                     sbx_ring_cursor(h.commit));
        if ((r = read_stream(l, name, path, &h, 0, &pos[0], &ret->out, &ret->out_size, error)) < 0 ||
            (r = read_stream(l, name, path, &h, 1, &pos[1], &ret->err, &ret->err_size, error)) < 0) {
                sbx_detach_output_done(ret);
                return r;
        }
        ret->next_offset = sbx_ring_cursor(pos);
        ret->more = pos[0] < h.commit[0] || pos[1] < h.commit[1];
        ret->running = !h.exited;
        ret->exit_status = (int) h.status;
        return 0;
}

int sbx_lifecycle_detach_attach(SbxLifecycle *l, const char *name, const char *id, SbxExecProcess **ret,
                                SbxError *error) {
        _cleanup_free_ char *dir = NULL;

        if (asprintf(&dir, SBX_DETACH_DIR "/%s", id) < 0)
                return -ENOMEM;
        return sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--attach", dir, NULL },
                .check_start = true }, ret, error);
}

int sbx_lifecycle_detach_forget(SbxLifecycle *l, const char *name, const char *id, SbxError *error) {
        _cleanup_free_ char *dir = NULL;

        if (asprintf(&dir, SBX_DETACH_DIR "/%s", id) < 0)
                return -ENOMEM;
        return sbx_lifecycle_remove_file(l, name, dir, true, error);
}
