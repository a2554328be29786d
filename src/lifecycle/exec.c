/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "docker-container.h"
#include "exec.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "naming.h"
#include "owner-info.h"
#include "time-util.h"

void sbx_exec_request_done(SbxExecRequest *r) {
        strv_free(r->argv);
        strv_free(r->env);
        free(r->working_dir);
        *r = (SbxExecRequest) {};
}

void sbx_exec_result_done(SbxExecResult *r) {
        free(r->out);
        free(r->err);
        *r = (SbxExecResult) {};
}

int sbx_lifecycle_exec_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                             SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_free_ char *working_dir = NULL;
        int r;

        if ((r = lc_exec_new(req, &p)) < 0 || (r = lc_exec_locate(l, name, p, &lock, &working_dir, error)) < 0)
                return r;
        /* Over the channel, which may open itself with an exec under this lock. */
        lock = sbx_keyed_lock_handle_free(lock);
        r = lc_exec_start_channel(l, name, p, req, working_dir, error);
        if (r != 0)
                return r < 0 ? r : (*ret = TAKE_PTR(p), 0);
        /* No channel to be had (docs/lifecycle.md, "Commands"): the checks again. */
        if ((r = lc_exec_locate(l, name, p, &lock, &working_dir, error)) < 0 ||
            (r = lc_exec_start_docker(l, p, req, working_dir, error)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

/* The service's init in the sandbox, as user, in one of its kill modes. */
static int run_init_kill(SbxDocker *d, const char *container_id, const char *user, const char *mode, int sig,
                         const char *what, SbxError *error) {
        _cleanup_free_ char *id = NULL;
        char signum[16];
        SbxRelay relay = SBX_RELAY_INIT;
        int fd = -1, code = -1, r;

        snprintf(signum, sizeof signum, "%d", sig);
        r = sbx_docker_exec_create(d, container_id, &(SbxExecConfig) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) mode, signum, (char *) what, NULL },
                .user = (char *) user }, &id, error);
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

int sbx_exec_kill(SbxDocker *d, const SbxExecProcess *p, int sig, SbxError *error) {
        return run_init_kill(d, p->container_id, p->user, "--kill", sig, p->token, error);
}

/* One running container of this service: its owner's execs of other instances. */
static int sweep_container(SbxLifecycle *l, json_object *c, SbxError *error) {
        json_object *labels = json_object_object_get(c, "Labels"), *v;
        const char *id = json_object_get_string(json_object_object_get(c, "Id"));
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_free_ char *name = NULL, *user = NULL;
        SbxOwnerInfo info;
        gid_t gid;
        uid_t uid;
        int r;

        if (!id || !streq_ptr(json_object_get_string(json_object_object_get(c, "State")), "running") ||
            !json_object_object_get_ex(labels, SBX_LABEL_OWNER, &v) ||
            sbx_label_parse_owner(json_object_get_string(v), &uid) < 0 ||
            !json_object_object_get_ex(labels, SBX_LABEL_SANDBOX_NAME, &v) ||
            sbx_name_from_labels(json_object_get_string(v), uid, &name) < 0 || !name)
                return 0;
        if ((r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        if (r > 0 && streq_ptr(row->container_id, id))
                gid = row->owner_gid;
        else if ((r = sbx_owner_info_lookup(uid, &info, error)) >= 0)
                gid = info.owner.gid;
        else
                return r;
        if (asprintf(&user, "%u:%u", (unsigned) uid, (unsigned) gid) < 0)
                return -ENOMEM;
        r = run_init_kill(l->docker, id, user, "--kill-leftovers", SIGKILL, sbx_exec_instance_id(), error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT) || sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);          /* stopped or removed meanwhile: nothing runs in it */
                return 0;
        }
        if (r > 0)
                log_notice("Killed the execs an earlier instance of the service left running in '%s' (container "
                           "%s)", json_object_get_string(v), id);
        return r;
}

int sbx_lifecycle_exec_sweep(SbxLifecycle *l, unsigned *ret_killed, SbxError *error) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *service = NULL;
        unsigned killed = 0;
        int r, failed = 0;

        if (!l->service_id)
                return 0;
        if (asprintf(&service, "%s=%s", SBX_LABEL_SERVICE, l->service_id) < 0)
                return -ENOMEM;
        if ((r = sbx_docker_container_list(l->docker, (const char *const[]) {
                SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, service, NULL }, &list, error)) < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                SbxError e = SBX_ERROR_NULL;

                r = sweep_container(l, json_object_array_get_idx(list, i), &e);
                if (r < 0 && failed == 0) {
                        failed = r;
                        sbx_error_move(error, &e);
                }
                sbx_error_free(&e);
                killed += r > 0;
        }
        if (ret_killed)
                *ret_killed = killed;
        return failed;
}

/* A command over the channel: the end its stream carried last. */
static int channel_status(const SbxExecProcess *p, int *ret_status, SbxError *error) {
        unsigned kind;
        uint32_t value;

        if (p->relay.status_size != SBX_EXEC_STATUS_SIZE ||
            sbx_exec_status_parse(p->relay.status, &kind, &value) < 0 || kind != SBX_EXEC_EXITED || value > 255)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The command's stream ended without its exit "
                                     "status");
        *ret_status = (int) value;
        return 0;
}

int sbx_exec_wait(SbxDocker *d, const SbxExecProcess *p, int *ret_status, SbxError *error) {
        if (p->channel)
                return channel_status(p, ret_status, error);
        return sbx_docker_exec_wait(d, p->exec_id, ret_status, error);
}

int sbx_exec_resize(SbxDocker *d, const SbxExecProcess *p, unsigned rows, unsigned cols, SbxError *error) {
        if (!p->channel)
                return sbx_docker_exec_resize(d, p->exec_id, rows, cols, error);
        if (p->tty_master < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "The process has no terminal");
        if (ioctl(p->tty_master, TIOCSWINSZ, &(struct winsize) { .ws_row = (unsigned short) rows,
                                                                .ws_col = (unsigned short) cols }) < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Cannot resize the process's terminal: %s",
                                     strerror(errno));
        return 0;
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
static int time_out(SbxLifecycle *l, SbxExecProcess *p, unsigned timeout_s, const char *what, SbxError *error) {
        int r;

        /* What timed out, and by which path, for whoever reads the log after it. */
        log_info("the %s stream in container %.12s (%s) did not end within %u s: killing it", what,
                 p->container_id ?: "?", p->channel ? "over the channel" : "a Docker exec", timeout_s);
        r = sbx_exec_kill(l->docker, p, SIGKILL, error);

        if (r < 0)
                return r;
        p->relay.deadline_us = sbx_now_monotonic_us() + KILL_DRAIN_US;
        (void) sbx_relay_run(&p->relay);
        return sbx_error_set(error, SBX_ERROR_TIMED_OUT, "The command did not finish within %u s and was killed",
                             timeout_s);
}

/* Runs the relay to its end (timeout_s 0: no deadline); past the deadline, or
 * when the stream fails, the exec is killed: nothing is left running. */
int lc_exec_relay_or_kill(SbxLifecycle *l, SbxExecProcess *p, unsigned timeout_s, const char *what,
                          SbxError *error) {
        int r;

        p->relay.deadline_us = timeout_s > 0 ? sbx_now_monotonic_us() + (uint64_t) timeout_s * 1000000U : 0;
        p->relay.wake_fd = cancel_wake_fd();
        r = sbx_relay_run(&p->relay);
        p->relay.wake_fd = -1;
        if (r == -ETIME)
                return time_out(l, p, timeout_s, what, error);
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

/* The exit status once Docker recorded it; a process that never started is
 * InvalidArgs naming argv[0] or working_dir. */
static int wait_exit(SbxLifecycle *l, const SbxExecProcess *p, const SbxExecRequest *req, int *ret_status,
                     SbxError *error) {
        SbxExecState s;

        if (p->channel)
                return channel_status(p, ret_status, error);
        for (unsigned i = 0; i < 200; i++) {
                int r = sbx_docker_exec_inspect(l->docker, p->exec_id, &s, error);

                if (r < 0)
                        return r;
                if (lc_exec_never_started(&s))
                        return lc_exec_start_failed(p, req, error);
                if (s.exited) {
                        *ret_status = s.exit_code;
                        return 0;
                }
                /* The stream can end a moment before Docker records the exit. */
                nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000000 }, NULL);
        }
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker did not record the exec's exit");
}

int sbx_lifecycle_exec_capture(SbxLifecycle *l, const char *name, const SbxExecRequest *req,
                               const void *in, size_t in_size, unsigned timeout_s, uint64_t limit,
                               bool timeout_result, SbxExecResult *ret, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        int r;

        r = sbx_lifecycle_exec_start(l, name, req, &p, error);
        if (r < 0)
                return r;
        p->relay.in_data = in;
        p->relay.in_size = in_size;
        p->relay.out[0].limit = p->relay.out[1].limit = (size_t) limit;
        p->relay.kept_limit = (size_t) SBX_EXEC_CAPTURE_MAX;
        r = lc_exec_relay_or_kill(l, p, timeout_s, "exec's", error);
        if (r < 0 && timeout_result && sbx_error_is(error, SBX_ERROR_TIMED_OUT)) {
                /* Killed at its deadline (and drained): what it wrote until then. */
                sbx_error_free(error);
                *ret = (SbxExecResult) { .exit_status = SBX_EXEC_TIMED_OUT_STATUS };
                take_output(p, ret);
                return 0;
        }
        if (r < 0)
                return r;
        *ret = (SbxExecResult) {};
        r = wait_exit(l, p, req, &ret->exit_status, error);
        if (r < 0)
                return r;
        take_output(p, ret);
        return 0;
}
