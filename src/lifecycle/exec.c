/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include "docker-container.h"
#include "exec.h"
#include "labels.h"
#include "naming.h"
#include "owner-info.h"
#include "tar-filter.h"

/* After a kill, how long the stream may take to end. */
#define KILL_DRAIN_US (5U * 1000000U)

void sbx_exec_request_done(SbxExecRequest *r) {
        strv_free(r->argv);
        strv_free(r->env);
        free(r->working_dir);
        *r = (SbxExecRequest) {};
}

SbxExecProcess *sbx_exec_process_free(SbxExecProcess *p) {
        if (!p)
                return NULL;
        sbx_relay_done(&p->relay);
        free(p->container_id);
        free(p->exec_id);
        free(p->user);
        free(p);
        return NULL;
}

void sbx_exec_result_done(SbxExecResult *r) {
        free(r->out);
        free(r->err);
        *r = (SbxExecResult) {};
}

/* "uid:gid": the group the sandbox was created for, else the owner's primary one.
 * Under the sandbox's lock: a non-root owner's process runs only in a container
 * this service started and verified (its row, for this container, says running),
 * never in one whose start's mount check is pending or failed. */
static int owner_user(SbxLifecycle *l, const char *name, const char *container_id, uid_t owner, char **ret,
                      SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        SbxOwnerInfo info;
        const char *plain;
        bool ours;
        gid_t gid;
        int r;

        r = sbx_store_get_sandbox(l->store, name, &row, error);
        if (r < 0)
                return r;
        ours = r > 0 && streq_ptr(row->container_id, container_id);
        if (owner != 0 && !(ours && row->state == SBX_SANDBOX_RUNNING)) {
                (void) sbx_name_unqualify(name, &plain);
                return sbx_error_set(error, SBX_ERROR_NOT_RUNNING,
                                     "Sandbox '%s' was not started and verified by this service; start it", plain);
        }
        if (ours)
                gid = row->owner_gid;
        else {
                r = sbx_owner_info_lookup(owner, &info, error);
                if (r < 0)
                        return r;
                gid = info.owner.gid;
        }
        return asprintf(ret, "%u:%u", (unsigned) owner, (unsigned) gid) < 0 ? -ENOMEM : 0;
}

static int make_token(char token[static 33]) {
        uint8_t b[16];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        for (size_t i = 0; i < sizeof b; i++)
                snprintf(token + 2 * i, 3, "%02x", b[i]);
        return 0;
}

/* The request's environment plus the token, which comes last and so wins. */
static int env_with_token(char **env, const char *token, char ***ret) {
        size_t n = 0;
        char **v;

        while (env && env[n])
                n++;
        v = calloc(n + 2, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = env[i];
        if (asprintf(&v[n], SBX_EXEC_TOKEN_VAR "=%s", token) < 0) {
                free(v);
                return -ENOMEM;
        }
        *ret = v;
        return 0;
}

static int start_exec(SbxLifecycle *l, SbxExecProcess *p, const SbxExecRequest *req, SbxError *error) {
        _cleanup_free_ char **env = NULL;
        size_t n = 0;
        int fd = -1, r;

        while (req->env && req->env[n])
                n++;
        r = env_with_token(req->env, p->token, &env);
        if (r < 0)
                return r;
        r = sbx_docker_exec_create(l->docker, p->container_id, &(SbxExecConfig) {
                .argv = req->argv, .env = env, .working_dir = req->working_dir, .user = p->user,
                .tty = req->tty, .attach_stdin = true }, &p->exec_id, error);
        free(env[n]);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT)) {
                sbx_error_free(error);
                return sbx_error_set(error, SBX_ERROR_NOT_RUNNING, "The sandbox is not running");
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "The sandbox is gone");
        }
        if (r < 0)
                return r;
        r = sbx_docker_exec_start(l->docker, p->exec_id, req->tty, &fd, error);
        if (r < 0)
                return r;
        p->relay.sock = fd;
        p->relay.tty = req->tty;
        if (req->tty && req->rows > 0 && req->cols > 0)
                (void) sbx_docker_exec_resize(l->docker, p->exec_id, req->rows, req->cols, NULL);
        return 0;
}

int sbx_lifecycle_exec_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                             SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        const char *plain;
        uid_t owner = sbx_name_unqualify(name, &plain);
        int r;

        if (!req->argv || !req->argv[0] || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(SbxExecProcess));
        if (!p)
                return -ENOMEM;
        p->relay = SBX_RELAY_INIT;
        if ((r = make_token(p->token)) < 0 ||
            (r = sbx_lifecycle_lock(l, name, &lock)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &p->container_id, error)) < 0 ||
            (r = owner_user(l, name, p->container_id, owner, &p->user, error)) < 0 ||
            (r = start_exec(l, p, req, error)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int sbx_exec_kill(SbxDocker *d, const SbxExecProcess *p, int sig, SbxError *error) {
        _cleanup_free_ char *id = NULL;
        char signum[16];
        SbxRelay relay = SBX_RELAY_INIT;
        int fd = -1, code = -1, r;

        snprintf(signum, sizeof signum, "%d", sig);
        r = sbx_docker_exec_create(d, p->container_id, &(SbxExecConfig) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--kill", signum, (char *) p->token, NULL },
                .user = p->user }, &id, error);
        if (r >= 0)
                r = sbx_docker_exec_start(d, id, false, &fd, error);
        if (r < 0)
                return r;
        relay.sock = fd;
        relay.out[0].limit = relay.out[1].limit = 4096;
        relay.deadline_us = sbx_now_monotonic_us() + SBX_DOCKER_EXEC_CALL_TIMEOUT_S * 1000000ULL;
        r = sbx_relay_run(&relay);
        sbx_relay_done(&relay);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The kill in the sandbox did not finish: %s",
                                     strerror(-r));
        r = sbx_docker_exec_wait(d, id, &code, error);
        if (r < 0)
                return r;
        if (code != 0 && code != 1)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The sandbox cannot signal its processes (exit status %d): it lacks the "
                                     "service's init (" SBX_EXEC_INIT_PATH ")", code);
        return code == 0;
}

int sbx_exec_wait(SbxDocker *d, const SbxExecProcess *p, int *ret_status, SbxError *error) {
        return sbx_docker_exec_wait(d, p->exec_id, ret_status, error);
}

static void take_output(SbxExecProcess *p, SbxExecResult *ret) {
        ret->out = TAKE_PTR(p->relay.out[0].data);
        ret->out_size = p->relay.out[0].size;
        ret->err = TAKE_PTR(p->relay.out[1].data);
        ret->err_size = p->relay.out[1].size;
        ret->truncated = p->relay.out[0].truncated || p->relay.out[1].truncated;
}

/* Readable once sbx_exec_cancel_all() was called: every capture's and copy's relay
 * polls it as its wake-up. */
static int cancel_fd = -1;
static pthread_once_t cancel_once = PTHREAD_ONCE_INIT;

static void cancel_setup(void) {
        cancel_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

static int cancel_wake_fd(void) {
        (void) pthread_once(&cancel_once, cancel_setup);
        return cancel_fd;
}

void sbx_exec_cancel_all(void) {
        int fd = cancel_wake_fd();

        if (fd >= 0)
                (void) eventfd_write(fd, 1);
}

/* Past the deadline: everything of this exec is killed, and the stream drained. */
static int time_out(SbxLifecycle *l, SbxExecProcess *p, unsigned timeout_s, SbxError *error) {
        int r = sbx_exec_kill(l->docker, p, SIGKILL, error);

        if (r < 0)
                return r;
        p->relay.deadline_us = sbx_now_monotonic_us() + KILL_DRAIN_US;
        (void) sbx_relay_run(&p->relay);
        return sbx_error_set(error, SBX_ERROR_TIMED_OUT, "The command did not finish within %u s and was killed",
                             timeout_s);
}

/* Runs the relay to its end (timeout_s 0: no deadline); past the deadline, or
 * when the stream fails, the exec is killed: nothing is left running. */
static int relay_or_kill(SbxLifecycle *l, SbxExecProcess *p, unsigned timeout_s, const char *what,
                         SbxError *error) {
        int r;

        p->relay.deadline_us = timeout_s > 0 ? sbx_now_monotonic_us() + (uint64_t) timeout_s * 1000000U : 0;
        p->relay.wake_fd = cancel_wake_fd();
        r = sbx_relay_run(&p->relay);
        p->relay.wake_fd = -1;
        if (r == -ETIME)
                return time_out(l, p, timeout_s, error);
        if (r == -ECANCELED) {
                (void) sbx_exec_kill(l->docker, p, SIGKILL, NULL);
                p->relay.deadline_us = sbx_now_monotonic_us() + KILL_DRAIN_US;
                (void) sbx_relay_run(&p->relay);
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "The service is shutting down: the %s process was killed", what);
        }
        if (r < 0) {
                (void) sbx_exec_kill(l->docker, p, SIGKILL, NULL);
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The %s stream failed: %s", what, strerror(-r));
        }
        return 0;
}

int sbx_lifecycle_exec_capture(SbxLifecycle *l, const char *name, const SbxExecRequest *req,
                               const void *in, size_t in_size, unsigned timeout_s, uint64_t limit,
                               SbxExecResult *ret, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        int r;

        r = sbx_lifecycle_exec_start(l, name, req, &p, error);
        if (r < 0)
                return r;
        p->relay.in_data = in;
        p->relay.in_size = in_size;
        p->relay.out[0].limit = p->relay.out[1].limit = (size_t) limit;
        p->relay.kept_limit = (size_t) SBX_EXEC_CAPTURE_MAX;
        if ((r = relay_or_kill(l, p, timeout_s, "exec's", error)) < 0)
                return r;
        *ret = (SbxExecResult) {};
        r = sbx_exec_wait(l->docker, p, &ret->exit_status, error);
        if (r < 0)
                return r;
        take_output(p, ret);
        return 0;
}

/* Copies ---------------------------------------------------------------------- */

typedef struct CopyFilter {
        SbxTarFilter *filter;
        SbxError error;
} CopyFilter;

static int copy_filter(void *userdata, const char *data, size_t size, char **out, size_t *out_size,
                       size_t *out_alloc) {
        CopyFilter *c = userdata;

        if (!data)
                return sbx_tar_filter_finish(c->filter, out, out_size, out_alloc, &c->error);
        return sbx_tar_filter_feed(c->filter, data, size, out, out_size, out_alloc, &c->error);
}

/* tar's complaint, for the message. */
static const char *tar_said(const SbxExecProcess *p) {
        const char *s = p->relay.out[1].data;

        return s && *s ? s : "no message";
}

/* After the stream: tar's exit status decides; its stderr is the message. */
static int copy_result(SbxLifecycle *l, SbxExecProcess *p, const char *field, const char *path, SbxError *error) {
        int status, r;

        r = sbx_exec_wait(l->docker, p, &status, error);
        if (r < 0)
                return r;
        if (status == 0)
                return 0;
        if (p->relay.out[1].data)
                p->relay.out[1].data[strcspn(p->relay.out[1].data, "\n")] = 0;
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: tar in the sandbox failed for '%s' (status %d): %s",
                             field, path, status, tar_said(p));
}

static int copy_run(SbxLifecycle *l, SbxExecProcess *p, SbxError *error) {
        p->relay.out[1].limit = 4096;
        return relay_or_kill(l, p, SBX_COPY_TIMEOUT_S, "archive", error);
}

static int owner_ids(const SbxExecProcess *p, uid_t *uid, gid_t *gid) {
        unsigned u, g;

        if (sscanf(p->user, "%u:%u", &u, &g) != 2)
                return -EINVAL;
        *uid = u;
        *gid = g;
        return 0;
}

int sbx_lifecycle_copy_to(SbxLifecycle *l, const char *name, const char *guest_dir, int tar_fd, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        CopyFilter c = { .error = SBX_ERROR_NULL };
        uid_t uid;
        gid_t gid;
        int r;

        r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) "tar", (char *) "-x", (char *) "-f", (char *) "-", (char *) "-C",
                                     (char *) guest_dir, NULL } }, &p, error);
        if (r < 0)
                return r;
        if ((r = owner_ids(p, &uid, &gid)) < 0 || (r = sbx_tar_filter_new(uid, gid, &c.filter)) < 0)
                return r;
        p->relay.in_fd = tar_fd;
        p->relay.in_filter = copy_filter;
        p->relay.in_filter_userdata = &c;
        r = copy_run(l, p, error);
        sbx_tar_filter_free(c.filter);
        if (sbx_error_is_set(&c.error)) {
                /* A refused entry: tar was killed before it (copy_run()). */
                sbx_error_free(error);
                *error = c.error;
                return -EINVAL;
        }
        if (r < 0)
                return r;
        return copy_result(l, p, "guest_dir", guest_dir, error);
}

int sbx_lifecycle_copy_from(SbxLifecycle *l, const char *name, const char *guest_path, int tar_fd, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_free_ char *dir = strdup(guest_path), *base = NULL;
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        while (slash && slash > dir && slash[1] == 0) {         /* "/a/b/" → "/a/b" */
                *slash = 0;
                slash = strrchr(dir, '/');
        }
        base = strdup(slash && slash[1] ? slash + 1 : ".");
        if (!base)
                return -ENOMEM;
        if (slash == dir)
                dir[1] = 0;
        else if (slash)
                *slash = 0;

        r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) "tar", (char *) "-c", (char *) "-f", (char *) "-", (char *) "-C", dir,
                                     (char *) "--", base, NULL } }, &p, error);
        if (r < 0)
                return r;
        p->relay.out[0].fd = tar_fd;
        r = copy_run(l, p, error);
        if (r < 0)
                return r;
        return copy_result(l, p, "guest_path", guest_path, error);
}
