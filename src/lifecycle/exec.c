/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "container-body.h"
#include "docker-container.h"
#include "exec.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "naming.h"
#include "owner-info.h"
#include "spec-json.h"
#include "time-util.h"

/* After a kill, how long the stream may take to end. */
#define KILL_DRAIN_US (5U * 1000000U)
/* StartExec's wait for its process to run (wait_started()). */
#define START_CHECK_TRIES 400U
#define START_CHECK_SLEEP_NS (5 * 1000000L)
#define START_TEXT_MAX 4096U

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
        if (p->channel && p->tty_master >= 0)
                safe_close(p->tty_master);
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

/* The spec's working directory when Docker was not given it (container-body.h), for
 * an exec that names none; else NULL (Docker's Config.WorkingDir is the spec's). */
static int spec_working_dir(const SbxSandboxRow *row, char **ret) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        *ret = NULL;
        r = sbx_spec_from_json_string(row->spec_json, &spec, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0 || streq(sbx_container_config_working_dir(spec), spec->working_dir))
                return 0;
        *ret = strdup(spec->working_dir);
        return *ret ? 0 : -ENOMEM;
}

/* "uid:gid": the group the sandbox was created for, else the owner's primary one.
 * Under the sandbox's lock: a non-root owner's process runs only in a container
 * this service started and verified (its row, for this container, says running),
 * never in one whose start's mount check is pending or failed. */
static int owner_user(SbxLifecycle *l, const char *name, const char *container_id, uid_t owner, char **ret,
                      char **ret_working_dir, SbxError *error) {
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
        if (ours) {
                gid = row->owner_gid;
                if ((r = spec_working_dir(row, ret_working_dir)) < 0)
                        return r;
        } else {
                r = sbx_owner_info_lookup(owner, &info, error);
                if (r < 0)
                        return r;
                gid = info.owner.gid;
        }
        return asprintf(ret, "%u:%u", (unsigned) owner, (unsigned) gid) < 0 ? -ENOMEM : 0;
}

static void hex(const uint8_t *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static char instance_id[SBX_EXEC_INSTANCE_LEN + 1];
static pthread_once_t instance_once = PTHREAD_ONCE_INIT;

static void make_instance_id(void) {
        uint8_t b[SBX_EXEC_INSTANCE_LEN / 2];
        uint64_t t = sbx_now_monotonic_us() ^ ((uint64_t) getpid() << 40);

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                memcpy(b, &t, sizeof b);        /* unique enough among this host's instances */
        hex(b, sizeof b, instance_id);
}

const char *sbx_exec_instance_id(void) {
        (void) pthread_once(&instance_once, make_instance_id);
        return instance_id;
}

/* "<instance id>.<random>": the instance id tells the next instance which execs
 * were this one's (sbx_lifecycle_exec_sweep). */
int sbx_exec_make_token(char token[static SBX_EXEC_TOKEN_LEN + 1]) {
        uint8_t b[16];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        memcpy(token, sbx_exec_instance_id(), SBX_EXEC_INSTANCE_LEN);
        token[SBX_EXEC_INSTANCE_LEN] = '.';
        hex(b, sizeof b, token + SBX_EXEC_INSTANCE_LEN + 1);
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

int lc_container_oom_killed(SbxLifecycle *l, const char *name) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_free_ char *id = NULL;
        SbxError ignored = SBX_ERROR_NULL;
        json_object *state, *oom;
        bool killed = false;

        if (sbx_lifecycle_container_id(l, name, &id, &ignored) >= 0 &&
            sbx_docker_container_inspect(l->docker, id, &j, &ignored) >= 0) {
                killed = json_object_object_get_ex(j, "State", &state) &&
                        json_object_object_get_ex(state, "OOMKilled", &oom) && json_object_get_boolean(oom);
                /* a process of a running container: Docker 20.10 does not say (a local engine's cgroup does) */
                killed = killed || sbx_docker_container_oom_kills(l->docker, j) > 0;
        }
        sbx_error_free(&ignored);
        return killed;
}

/* Docker's 409 to an exec: the container is paused (its message says so) or not running. */
static int exec_refused(SbxError *error) {
        bool paused = error->message && strstr(error->message, "paused");

        sbx_error_free(error);
        return sbx_error_set(error, SBX_ERROR_NOT_RUNNING, paused ? "The sandbox is paused (resume it first)"
                                                                  : "The sandbox is not running");
}

static int start_exec(SbxLifecycle *l, SbxExecProcess *p, const SbxExecRequest *req, const char *working_dir,
                      SbxError *error) {
        _cleanup_free_ char **env = NULL;
        size_t n = 0;
        int fd = -1, r;

        while (req->env && req->env[n])
                n++;
        r = env_with_token(req->env, p->token, &env);
        if (r < 0)
                return r;
        r = sbx_docker_exec_create(l->docker, p->container_id, &(SbxExecConfig) {
                .argv = req->argv, .env = env, .working_dir = req->working_dir ?: working_dir, .user = p->user,
                .tty = req->tty, .attach_stdin = true }, &p->exec_id, error);
        free(env[n]);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return exec_refused(error);
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

/* Docker answers a process that could not be started (no such command, a working
 * directory that is not there) with exit status 126 or 127 and the runtime's text in
 * the stream. What tells it from a process that ran and exited so is Docker's Pid: 0,
 * nothing ever ran (so the text is the runtime's, not the sandbox's). */
static bool never_started(const SbxExecState *s) {
        return s->exited && s->pid == 0 && (s->exit_code == 126 || s->exit_code == 127);
}

static bool output_has(const SbxExecProcess *p, const char *what) {
        const SbxRelaySink *o = &p->relay.out[0];

        return o->data && memmem(o->data, o->size, what, strlen(what));
}

int lc_exec_start_refused(const SbxExecRequest *req, bool working_dir, const char *why, SbxError *error) {
        if (working_dir && req->working_dir)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "working_dir: '%.256s' is not a directory the owner can enter in the sandbox",
                                     req->working_dir);
        if (working_dir)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "working_dir: the sandbox's working directory is "
                                     "not a directory the owner can enter; give working_dir");
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "argv[0]: '%.256s': %s", req->argv[0], why);
}

static int start_failed(const SbxExecProcess *p, const SbxExecRequest *req, SbxError *error) {
        const char *why = output_has(p, "executable file not found") ? "no such command in PATH" :
                          output_has(p, "permission denied") ? "permission denied" :
                          output_has(p, "no such file or directory") ? "no such file" : "it could not be started";

        return lc_exec_start_refused(req, output_has(p, "chdir to cwd"), why, error);
}

/* StartExec's check: Docker's start answers before the runtime tried the process,
 * so its state is asked until it has a Pid (it runs, or ran) or never started; then
 * the runtime's text is read from the stream (it has ended) to tell which field was
 * wrong. A process still starting after about 2 s is relayed like any other. */
static int wait_started(SbxLifecycle *l, SbxExecProcess *p, const SbxExecRequest *req, SbxError *error) {
        SbxExecState s;
        int r;

        for (unsigned i = 0; i < START_CHECK_TRIES; i++) {
                if ((r = sbx_docker_exec_inspect(l->docker, p->exec_id, &s, error)) < 0)
                        return r;
                if (never_started(&s)) {
                        p->relay.out[0].limit = p->relay.out[1].limit = START_TEXT_MAX;
                        p->relay.deadline_us = sbx_now_monotonic_us() + KILL_DRAIN_US;
                        (void) sbx_relay_run(&p->relay);
                        return start_failed(p, req, error);
                }
                if (s.pid > 0 || s.exited)
                        return 0;
                nanosleep(&(struct timespec) { .tv_nsec = START_CHECK_SLEEP_NS }, NULL);
        }
        return 0;
}

int sbx_lifecycle_exec_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                             SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_free_ char *working_dir = NULL;
        const char *plain;
        uid_t owner = sbx_name_unqualify(name, &plain);
        int r;

        if (!req->argv || !req->argv[0] || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(SbxExecProcess));
        if (!p)
                return -ENOMEM;
        p->relay = SBX_RELAY_INIT;
        p->tty_master = -1;
        if (req->token && strlen(req->token) == SBX_EXEC_TOKEN_LEN)
                memcpy(p->token, req->token, SBX_EXEC_TOKEN_LEN + 1);
        else if (req->token)
                return -EINVAL;
        if ((!req->token && (r = sbx_exec_make_token(p->token)) < 0) ||
            (r = sbx_lifecycle_lock(l, name, &lock)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &p->container_id, error)) < 0 ||
            (r = owner_user(l, name, p->container_id, owner, &p->user, &working_dir, error)) < 0)
                return r;
        if (!req->docker_exec) {
                /* Over the channel, which may open itself with an exec under this lock. */
                lock = sbx_keyed_lock_handle_free(lock);
                r = lc_exec_start_channel(l, name, p, req, working_dir, error);
                if (r != 0)
                        return r < 0 ? r : (*ret = TAKE_PTR(p), 0);
                /* No channel to be had (docs/lifecycle.md, "Commands"): the checks again. */
                p->user = mfree(p->user);
                working_dir = mfree(working_dir);
                if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 ||
                    (r = owner_user(l, name, p->container_id, owner, &p->user, &working_dir, error)) < 0)
                        return r;
        }
        if ((r = start_exec(l, p, req, working_dir, error)) < 0 ||
            (req->check_start && (r = wait_started(l, p, req, error)) < 0))
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
                if (never_started(&s))
                        return start_failed(p, req, error);
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
