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
#include "ring.h"

#define START_TEXT_MAX 4096U

void sbx_detach_output_done(SbxDetachOutput *o) {
        free(o->out);
        free(o->err);
        *o = (SbxDetachOutput) {};
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
                                     err ? "" : " (the kernel's OOM killer killed in it)");
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

/* One OUTPUT request (the ring's one reader is the program in the sandbox,
 * src/core/ring.c): the process's state and, with max > 0, what was kept of each
 * stream from the cursor on. *ret_errno: the program's answer when it could not
 * read the ring (ENOENT: it is gone; EBADMSG: damaged; EPROTONOSUPPORT: layout 1;
 * ERANGE: the cursor is past the end; EAGAIN: overwritten faster than read); 0 for
 * a failure of the channel itself (timed out, broken, garbage): nothing is known. */
static int output_call(SbxLifecycle *l, const char *name, const char *id, uint64_t cursor, uint64_t max,
                       SbxChannelReply *reply, SbxProtoOutputReply *ret, int *ret_errno, SbxError *error) {
        SbxProtoRequest q = { .type = SBX_PROTO_OUTPUT, .offset = cursor, .length = max };
        int r;

        *ret_errno = 0;
        if (snprintf(q.path, sizeof q.path, SBX_DETACH_DIR "/%s", id) >= (int) sizeof q.path)
                return -EINVAL;
        r = sbx_lifecycle_channel_call_errno(l, name, &q, reply, ret_errno, error);
        if (r < 0)
                return r;
        if (sbx_proto_output_reply_parse(&reply->frame, max, ret) < 0) {
                sbx_channel_reply_done(reply);
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox answered "
                                     "garbage about the detached process's output");
        }
        return 0;
}

int sbx_lifecycle_detach_poll(SbxLifecycle *l, const char *name, const char *id, SbxDetachState *ret,
                              SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        SbxProtoOutputReply o;
        SbxError e = SBX_ERROR_NULL;
        int err, r;

        *ret = (SbxDetachState) {};
        r = output_call(l, name, id, 0, 0, &reply, &o, &err, &e);
        if (r < 0 && (err == ENOENT || err == ENOTDIR || err == EBADMSG || err == EPROTONOSUPPORT)) {
                /* The program read the sandbox and says: removed or damaged by the
                 * owner's processes, or of the old layout. */
                if (err == EPROTONOSUPPORT)
                        log_warning("Detached exec %s in sandbox '%s': its output file is of layout 1 (a process "
                                    "started before an upgrade), which this version does not read; it is killed",
                                    id, name);
                sbx_error_free(&e);
                *ret = (SbxDetachState) { .exited = true, .gone = true, .exit_status = 255,
                                          .old_layout = err == EPROTONOSUPPORT };
                return 0;
        }
        if (r < 0) {
                /* Unknown (the channel timed out or broke, the program is stopped):
                 * a state, not an end; the next poll asks again. */
                ret->paused = frozen(l, name, &e);
                sbx_error_move(error, &e);
                return r;
        }
        if (o.state == SBX_RING_STATE_EXITED)
                *ret = (SbxDetachState) { .exited = true, .exit_status = (int) o.status };
        else if (o.state == SBX_RING_STATE_LOST)
                *ret = (SbxDetachState) { .exited = true, .exit_status = 128 + 9,
                                          .oom_killed = lc_container_oom_killed(l, name) > 0 };
        return 0;
}

static int output_error(int err, uint64_t offset, SbxError *error) {
        switch (err) {
        case ERANGE:
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "offset: %" PRIu64 " is past the output's end",
                                     offset);
        case EPROTONOSUPPORT:
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process's output file is of layout 1 (a process started before "
                                     "an upgrade), which this version does not read");
        case EAGAIN:
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The detached process's output was overwritten "
                                     "faster than it could be read, %u times; read again", SBX_RING_READ_TRIES);
        case ENOENT:
        case ENOTDIR:
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The detached process's output file is gone from the sandbox");
        default:
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The detached process's output file is damaged");
        }
}

static int copy_out(const uint8_t *data, size_t n, uint8_t **ret, size_t *ret_size) {
        *ret = malloc(MAX(n, 1U));
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, data, n);
        *ret_size = n;
        return 0;
}

int sbx_lifecycle_detach_read(SbxLifecycle *l, const char *name, const char *id, uint64_t offset,
                              SbxDetachOutput *ret, SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        SbxProtoOutputReply o;
        uint64_t end[2];
        int err, r;

        *ret = (SbxDetachOutput) {};
        r = output_call(l, name, id, offset, SBX_DETACH_READ_MAX, &reply, &o, &err, error);
        if (r < 0 && err != 0) {
                sbx_error_free(error);
                return output_error(err, offset, error);
        }
        if (r < 0) {
                ret->paused = frozen(l, name, error);
                return r;
        }
        if ((r = copy_out(o.data[0], o.size[0], &ret->out, &ret->out_size)) < 0 ||
            (r = copy_out(o.data[1], o.size[1], &ret->err, &ret->err_size)) < 0) {
                sbx_detach_output_done(ret);
                return r;
        }
        for (int s = 0; s < 2; s++)
                end[s] = o.pos[s] + o.size[s];
        ret->next_offset = sbx_ring_cursor(end);
        ret->more = end[0] < o.commit[0] || end[1] < o.commit[1];
        ret->running = o.state == SBX_RING_STATE_RUNNING;
        ret->lost = o.state == SBX_RING_STATE_LOST;
        ret->exit_status = ret->lost ? 128 + 9 : (int) o.status;
        if (ret->lost && !ret->more)
                ret->oom_killed = lc_container_oom_killed(l, name) > 0;
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
