/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A process as the sandbox's owner through Docker's exec (exec.h): its token, its
 * container and its user, checked under the sandbox's lock — a non-root owner's
 * process runs only in a container this service started and verified —, then
 * Docker's exec created and started, and for StartExec its start checked. The
 * channel's own program is started so (channel.c); every other process is started
 * by sbx_lifecycle_exec_start() (exec.c): over the channel when it can carry
 * commands, else here. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "container-body.h"
#include "docker-container.h"
#include "exec.h"
#include "lifecycle-internal.h"
#include "naming.h"
#include "owner-info.h"
#include "spec-json.h"
#include "time-util.h"

/* StartExec's wait for its process to run (wait_started()). */
#define START_CHECK_TRIES 400U
#define START_CHECK_SLEEP_NS (5 * 1000000L)
#define START_TEXT_MAX 4096U

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
bool lc_exec_never_started(const SbxExecState *s) {
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

int lc_exec_start_failed(const SbxExecProcess *p, const SbxExecRequest *req, SbxError *error) {
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
                if (lc_exec_never_started(&s)) {
                        p->relay.out[0].limit = p->relay.out[1].limit = START_TEXT_MAX;
                        p->relay.deadline_us = sbx_now_monotonic_us() + KILL_DRAIN_US;
                        (void) sbx_relay_run(&p->relay);
                        return lc_exec_start_failed(p, req, error);
                }
                if (s.pid > 0 || s.exited)
                        return 0;
                nanosleep(&(struct timespec) { .tv_nsec = START_CHECK_SLEEP_NS }, NULL);
        }
        return 0;
}

int lc_exec_new(const SbxExecRequest *req, SbxExecProcess **ret) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
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
        else if ((r = sbx_exec_make_token(p->token)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}

int lc_exec_locate(SbxLifecycle *l, const char *name, SbxExecProcess *p, SbxKeyedLockHandle **ret_lock,
                   char **ret_working_dir, SbxError *error) {
        const char *plain;
        uid_t owner = sbx_name_unqualify(name, &plain);
        int r;

        p->user = mfree(p->user);
        *ret_working_dir = mfree(*ret_working_dir);
        if ((r = sbx_lifecycle_lock(l, name, ret_lock)) < 0 ||
            (!p->container_id && (r = sbx_lifecycle_container_id(l, name, &p->container_id, error)) < 0))
                return r;
        return owner_user(l, name, p->container_id, owner, &p->user, ret_working_dir, error);
}

int lc_exec_start_docker(SbxLifecycle *l, SbxExecProcess *p, const SbxExecRequest *req, const char *working_dir,
                         SbxError *error) {
        int r = start_exec(l, p, req, working_dir, error);

        if (r >= 0 && req->check_start)
                r = wait_started(l, p, req, error);
        return r;
}

int lc_exec_docker(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                   SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_free_ char *working_dir = NULL;
        int r;

        if ((r = lc_exec_new(req, &p)) < 0 ||
            (r = lc_exec_locate(l, name, p, &lock, &working_dir, error)) < 0 ||
            (r = lc_exec_start_docker(l, p, req, working_dir, error)) < 0)
                return r;
        *ret = TAKE_PTR(p);
        return 0;
}
