/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The run tool. Without a progressToken it is one ExecSandbox call (the service
 * captures the output). With one, it is a StartExec with pipes: each chunk of
 * output goes out as a progress notification as it arrives and is kept for the
 * result; the run's own timer (and a cancel) kill the process through the exec
 * object's Kill, and what it printed until then stays in the result. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus-spec.h"
#include "mcp-json.h"
#include "mcp-run.h"

#define SEC 1000000ULL
#define MARGIN_USEC (30 * SEC)          /* the bus call's time beyond the run's own */
#define GRACE_USEC (5 * SEC)            /* output still read after a kill */
#define TIMED_OUT_EXIT 124              /* as coreutils' timeout(1) reports it */
#define RUN_WAIT_MAX 3600U              /* StartExec's option wait: seconds for a full share */

typedef struct Stream {
        int fd;
        sd_event_source *source;
        char *data;                     /* kept: at most limit bytes */
        size_t len;
        char pending[4];                /* a UTF-8 sequence cut at a chunk's end */
        size_t n_pending;
} Stream;

typedef struct Run {
        Call *call;
        bool streamed;
        uint64_t limit;
        bool truncated, timed_out;
        Stream out, err;
        int in_fd;
        sd_event_source *in_source;
        char *stdin_data;
        size_t stdin_len, stdin_off;
        char *path;                     /* the exec object */
        char *service;                  /* the unique name of the service that made it */
        bool exited, kill_sent, paused;
        int exit_status;
        double progress;
        sd_event_source *timer;
        uint64_t timeout, wait;         /* seconds; wait: for a full share (StartExec's option) */
        sd_bus_slot *status_slot;
} Run;

static void stream_close(Stream *st) {
        st->source = sd_event_source_disable_unref(st->source);
        st->fd = safe_close(st->fd);
}

static void run_free(void *p) {
        Run *run = p;

        if (!run)
                return;
        stream_close(&run->out);
        stream_close(&run->err);
        free(run->out.data);
        free(run->err.data);
        sd_event_source_disable_unref(run->in_source);
        safe_close(run->in_fd);
        sd_event_source_disable_unref(run->timer);
        sd_bus_slot_unref(run->status_slot);
        free(run->stdin_data);
        free(run->path);
        free(run->service);
        free(run);
}

/* ---- arguments ------------------------------------------------------------------- */

int run_append_argv(sd_bus_message *m, json_object *command, char **error) {
        int r;

        if (json_object_is_type(command, json_type_string))
                return sd_bus_message_append(m, "as", 3, "/bin/sh", "-c", json_object_get_string(command));
        if (!json_object_is_type(command, json_type_array) || json_object_array_length(command) == 0 ||
            json_object_array_length(command) > SBX_EXEC_ARGV_MAX)
                return asprintf(error, "argument 'command': a string, or an array of 1 to %u strings",
                                SBX_EXEC_ARGV_MAX), -EINVAL;
        if ((r = sd_bus_message_open_container(m, 'a', "s")) < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(command); i++) {
                json_object *a = json_object_array_get_idx(command, i);

                if (!json_object_is_type(a, json_type_string))
                        return asprintf(error, "argument 'command[%zu]': must be a string", i), -EINVAL;
                if ((r = sd_bus_message_append_basic(m, 's', json_object_get_string(a))) < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

int run_append_env(sd_bus_message *m, json_object *env, char **error) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "env")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{ss}")) < 0)
                return r;
        json_object_object_foreach(env, key, value) {
                if (!json_object_is_type(value, json_type_string))
                        return asprintf(error, "argument 'env.%s': must be a string", key), -EINVAL;
                if ((r = sd_bus_message_append(m, "{ss}", key, json_object_get_string(value))) < 0)
                        return r;
        }
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* The options a{sv}: timeout, env, working_dir, wait, and for a captured run stdin
 * and output_limit. */
static int append_options(sd_bus_message *m, Call *c, Run *run, uint64_t timeout, char **error) {
        json_object *env = NULL;
        const char *cwd = NULL;
        int r;

        if (arg_string(c->args, "working_dir", false, &cwd, error) < 0)
                return -EINVAL;
        if (json_object_object_get_ex(c->args, "env", &env) && env && !json_object_is_type(env, json_type_object))
                return asprintf(error, "argument 'env': must be an object of strings"), -EINVAL;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(m, "{sv}", "timeout", "u", (uint32_t) timeout)) < 0)
                return r;
        if (cwd && (r = sd_bus_message_append(m, "{sv}", "working_dir", "s", cwd)) < 0)
                return r;
        if (run->wait && (r = sd_bus_message_append(m, "{sv}", "wait", "u", (uint32_t) run->wait)) < 0)
                return r;
        if (env && (r = run_append_env(m, env, error)) < 0)
                return r;
        if (!run->streamed) {
                if ((r = sd_bus_message_append(m, "{sv}", "output_limit", "t", run->limit)) < 0)
                        return r;
                if (run->stdin_data &&
                    ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
                     (r = sd_bus_message_append_basic(m, 's', "stdin")) < 0 ||
                     (r = sd_bus_message_open_container(m, 'v', "ay")) < 0 ||
                     (r = sd_bus_message_append_array(m, 'y', run->stdin_data, run->stdin_len)) < 0 ||
                     (r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0))
                        return r;
        }
        return sd_bus_message_close_container(m);
}

/* ---- the result ------------------------------------------------------------------ */

static json_object *result_json(int exit_code, const char *out, size_t out_len, const char *err, size_t err_len,
                                bool timed_out, bool truncated) {
        json_object *o = json_object_new_object();

        if (!o || sbx_json_put(o, "exit_code", json_object_new_int(exit_code)) < 0 ||
            sbx_json_put(o, "stdout", json_string_from_bytes(out, out_len, NULL)) < 0 ||
            sbx_json_put(o, "stderr", json_string_from_bytes(err, err_len, NULL)) < 0 ||
            sbx_json_put(o, "timed_out", json_object_new_boolean(timed_out)) < 0 ||
            sbx_json_put(o, "truncated", json_object_new_boolean(truncated)) < 0)
                return json_object_put(o), NULL;
        return o;
}

char *run_render(json_object *st) {
        json_object *out = json_object_object_get(st, "stdout"), *err = json_object_object_get(st, "stderr");
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        fwrite(json_object_get_string(out), 1, (size_t) json_object_get_string_len(out), f);
        if (json_object_get_string_len(err) > 0) {
                fputs("\n[stderr]\n", f);
                fwrite(json_object_get_string(err), 1, (size_t) json_object_get_string_len(err), f);
        }
        fprintf(f, "\n[exit code %d%s%s]", json_object_get_int(json_object_object_get(st, "exit_code")),
                json_object_get_boolean(json_object_object_get(st, "timed_out")) ? ", timed out" : "",
                json_object_get_boolean(json_object_object_get(st, "truncated")) ? ", output truncated" : "");
        fclose(f);
        return text;
}

static void run_finish(Run *run) {
        json_object *st = result_json(run->timed_out ? TIMED_OUT_EXIT : run->exit_status, run->out.data,
                                      run->out.len, run->err.data, run->err.len, run->timed_out, run->truncated);

        call_finish(run->call, st);
}

/* The process is done when both streams ended and its status is known. */
static void run_maybe_done(Run *run) {
        if (run->out.fd >= 0 || run->err.fd >= 0 || !run->path)
                return;
        if (run->exited || run->timed_out || run->call->cancelled) {
                run_finish(run);
                return;
        }
}

/* ---- streaming ------------------------------------------------------------------- */

static void run_kill(Run *run) {
        Server *s = run->call->server;

        if (!run->path || run->kill_sent || run->exited)
                return;
        run->kill_sent = true;
        (void) sd_bus_call_method_async(s->bus, NULL, MCP_BUS_SERVICE, run->path, MCP_BUS_EXEC, "Kill", NULL, NULL,
                                        "s", "KILL");
}

static int on_grace(sd_event_source *source, uint64_t usec, void *userdata) {
        Run *run = userdata;

        /* The streams did not end after the kill: what came is what there is. */
        stream_close(&run->out);
        stream_close(&run->err);
        run->exited = true;
        run_maybe_done(run);
        return 0;
}

static void arm_grace(Run *run) {
        run->timer = sd_event_source_disable_unref(run->timer);
        (void) sd_event_add_time_relative(run->call->server->event, &run->timer, CLOCK_MONOTONIC, GRACE_USEC, 0,
                                          on_grace, run);
}

static int on_timeout(sd_event_source *source, uint64_t usec, void *userdata) {
        Run *run = userdata;

        server_log(run->call->server, LOG_INFO, "run", "timed out: killing the process");
        run->timed_out = true;
        run_kill(run);
        arm_grace(run);
        return 0;
}

static void run_cancel(Call *c) {
        Run *run = c->state;

        run_kill(run);          /* or, before StartExec's reply, when it comes */
        arm_grace(run);
}

static void keep(Run *run, Stream *st, const char *data, size_t n) {
        size_t room = st->len < run->limit ? (size_t) (run->limit - st->len) : 0;

        if (n > room)
                run->truncated = true;
        memcpy(st->data + st->len, data, MIN(n, room));
        st->len += MIN(n, room);
}

static void set_paused(Run *run, bool paused) {
        run->paused = paused;
        if (run->out.source)
                (void) sd_event_source_set_enabled(run->out.source, paused ? SD_EVENT_OFF : SD_EVENT_ON);
        if (run->err.source)
                (void) sd_event_source_set_enabled(run->err.source, paused ? SD_EVENT_OFF : SD_EVENT_ON);
}

static void run_resume(Call *c) {
        Run *run = c->state;

        if (run->paused)
                set_paused(run, false);
}

static int on_output(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Run *run = userdata;
        Stream *st = fd == run->out.fd ? &run->out : &run->err;
        char buf[65536 + sizeof st->pending];
        size_t consumed = 0;
        ssize_t n;

        memcpy(buf, st->pending, st->n_pending);
        n = read(fd, buf + st->n_pending, 65536);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                /* End of the stream: a cut sequence left is sent as it is (replaced). */
                if (st->n_pending)
                        (void) call_progress(run->call, run->progress += (double) st->n_pending, st->pending,
                                             st->n_pending, st == &run->out ? "stdout" : "stderr");
                stream_close(st);
                run_maybe_done(run);
                return 0;
        }
        keep(run, st, buf + st->n_pending, (size_t) n);
        n += (ssize_t) st->n_pending;
        if (run->call->progress_token) {
                _cleanup_(json_object_putp) json_object *probe = json_string_from_bytes(buf, (size_t) n, &consumed);

                if (consumed == 0 && (size_t) n > 3)
                        consumed = (size_t) n;  /* never hold back more than a sequence */
                (void) call_progress(run->call, run->progress += (double) consumed, buf, consumed,
                                     st == &run->out ? "stdout" : "stderr");
        } else
                consumed = (size_t) n;
        st->n_pending = (size_t) n - consumed;
        memcpy(st->pending, buf + consumed, st->n_pending);
        /* The client reads slower than the process writes: the pipes wait. */
        if (server_output_congested(run->call->server))
                set_paused(run, true);
        return 0;
}

static int on_stdin_writable(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Run *run = userdata;

        while (run->stdin_off < run->stdin_len) {
                ssize_t n = write(fd, run->stdin_data + run->stdin_off, run->stdin_len - run->stdin_off);

                if (n < 0 && errno == EAGAIN)
                        return 0;
                if (n <= 0)
                        break;          /* the process closed its stdin: the rest is not wanted */
                run->stdin_off += (size_t) n;
        }
        run->in_source = sd_event_source_disable_unref(run->in_source);
        run->in_fd = safe_close(run->in_fd);
        return 0;
}

/* Pipes for StartExec: ours non-blocking, the service's ends appended (sd-bus
 * keeps its own copies, so ours close at once). */
static int run_pipes(Run *run, sd_bus_message *m) {
        Server *s = run->call->server;
        int in[2], out[2], err[2], r;

        if (pipe2(in, O_CLOEXEC) < 0)
                return -errno;
        if (pipe2(out, O_CLOEXEC) < 0) {
                r = -errno;
                goto fail_in;
        }
        if (pipe2(err, O_CLOEXEC) < 0) {
                r = -errno;
                goto fail_out;
        }
        r = sd_bus_message_append(m, "hhh", in[0], out[1], err[1]);
        safe_close(in[0]);
        safe_close(out[1]);
        safe_close(err[1]);
        run->in_fd = in[1];
        run->out.fd = out[0];
        run->err.fd = err[0];
        if (r < 0)
                return r;
        (void) fcntl(run->in_fd, F_SETFL, O_NONBLOCK);
        (void) fcntl(run->out.fd, F_SETFL, O_NONBLOCK);
        (void) fcntl(run->err.fd, F_SETFL, O_NONBLOCK);
        if ((r = sd_event_add_io(s->event, &run->out.source, run->out.fd, EPOLLIN, on_output, run)) < 0 ||
            (r = sd_event_add_io(s->event, &run->err.source, run->err.fd, EPOLLIN, on_output, run)) < 0 ||
            (r = sd_event_add_io(s->event, &run->in_source, run->in_fd, EPOLLOUT, on_stdin_writable, run)) < 0)
                return r;
        return 0;
fail_out:
        safe_close(out[0]);
        safe_close(out[1]);
fail_in:
        safe_close(in[0]);
        safe_close(in[1]);
        return r;
}

/* ---- the exit status ------------------------------------------------------------- */

static int on_status(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Run *run = userdata;
        int32_t status;

        run->status_slot = sd_bus_slot_unref(run->status_slot);
        if (!sd_bus_message_is_method_error(reply, NULL) && sd_bus_message_read(reply, "v", "i", &status) >= 0 &&
            status >= 0) {
                run->exited = true;
                run->exit_status = status;
                run_maybe_done(run);
        }
        /* Else the Exited signal will tell. */
        return 0;
}

static void run_exited(Call *c, const char *sender, const char *path, int status) {
        Run *run = c->state;

        if (run->path && streq(run->path, path) && streq_ptr(run->service, sender)) {
                run->exited = true;
                run->exit_status = status;
                run_maybe_done(run);
        }
}

static int on_exited(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        Server *s = userdata;
        const char *path = sd_bus_message_get_path(m), *sender = sd_bus_message_get_sender(m);
        int32_t status;

        if (!path || !sender || sd_bus_message_read(m, "i", &status) < 0)
                return 0;
        for (Call *c = s->calls, *next; c; c = next) {
                next = c->next;
                if (c->exited)
                        c->exited(c, sender, path, status);
        }
        return 0;
}

/* The Exited signal of every exec object, matched before any is started (so none
 * is missed). */
int mcp_bus_setup(Server *s) {
        return sd_bus_match_signal(s->bus, NULL, MCP_BUS_SERVICE, NULL, MCP_BUS_EXEC, "Exited", on_exited, s);
}

/* ---- the tool -------------------------------------------------------------------- */

int run_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        Run *run = c->state;
        const void *out, *err;
        size_t out_len, err_len;
        const char *path;
        int32_t status;
        int truncated, r;

        if (!run->streamed) {
                if ((r = sd_bus_message_read(reply, "i", &status)) < 0 ||
                    (r = sd_bus_message_read_array(reply, 'y', &out, &out_len)) < 0 ||
                    (r = sd_bus_message_read_array(reply, 'y', &err, &err_len)) < 0 ||
                    (r = sd_bus_message_read(reply, "b", &truncated)) < 0)
                        return r;
                *ret = result_json(status, out, out_len, err, err_len, false, truncated);
                return *ret ? 0 : -ENOMEM;
        }
        if ((r = sd_bus_message_read(reply, "o", &path)) < 0)
                return r;
        run->path = strdup(path);
        run->service = strdup(sd_bus_message_get_sender(reply) ?: "");
        if (!run->path || !run->service)
                return -ENOMEM;
        if (c->cancelled || run->timed_out) {
                run_kill(run);
                arm_grace(run);
        } else if (run->wait && run->timer)
                (void) sd_event_source_set_time_relative(run->timer, run->timeout * SEC);
        /* The process may have ended already, its Exited gone before we knew the path. */
        (void) sd_bus_call_method_async(c->server->bus, &run->status_slot, MCP_BUS_SERVICE, run->path,
                                        "org.freedesktop.DBus.Properties", "Get", on_status, run, "ss", MCP_BUS_EXEC,
                                        "ExitStatus");
        run_maybe_done(run);
        return 1;
}

int run_on_error(Call *c, const sd_bus_error *e, json_object **ret) {
        Run *run = c->state;

        if (run->streamed || !sd_bus_error_has_name(e, "org.xagent.Sandbox1.Error.TimedOut"))
                return 0;
        /* ExecSandbox gives no output of a run it killed. */
        *ret = result_json(TIMED_OUT_EXIT, "", 0, "", 0, true, false);
        return *ret ? 1 : 0;
}

static int run_prepare(Call *c, Run *run, uint64_t *ret_timeout, char **error) {
        const char *stdin_text = NULL;
        uint64_t timeout = SBX_EXEC_TIMEOUT_DEFAULT_S;

        run->limit = MCP_OUTPUT_LIMIT_DEFAULT;
        if (arg_uint(c->args, "timeout", SBX_EXEC_TIMEOUT_MAX_S, &timeout, error) < 0 ||
            arg_uint(c->args, "output_limit", MCP_OUTPUT_LIMIT_MAX, &run->limit, error) < 0 ||
            arg_string(c->args, "stdin", false, &stdin_text, error) < 0 ||
            arg_uint(c->args, "wait", RUN_WAIT_MAX, &run->wait, error) < 0)
                return -EINVAL;
        run->timeout = timeout;
        if (timeout == 0)
                return asprintf(error, "argument 'timeout': must be at least 1"), -EINVAL;
        if (stdin_text) {
                run->stdin_data = strdup(stdin_text);
                if (!run->stdin_data)
                        return -ENOMEM;
                run->stdin_len = strlen(stdin_text);
        }
        if (run->streamed) {
                run->out.data = malloc(run->limit + 1);
                run->err.data = malloc(run->limit + 1);
                if (!run->out.data || !run->err.data)
                        return -ENOMEM;
        }
        *ret_timeout = timeout;
        return 0;
}

int run_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        const char *sandbox = NULL;
        json_object *command = NULL;
        uint64_t timeout;
        Run *run;
        int r;

        run = new0(Run, 1);
        if (!run)
                return -ENOMEM;
        /* Always StartExec, so that cancelling can kill the process (an ExecSandbox
         * leaves no handle on the bus); progress only with a progressToken. */
        *run = (Run) { .call = c, .streamed = true, .in_fd = -EBADF,
                       .out.fd = -EBADF, .err.fd = -EBADF, .exit_status = -1 };
        c->state = run;
        c->free_state = run_free;
        if (arg_string(c->args, "sandbox", true, &sandbox, &error) < 0 ||
            (r = run_prepare(c, run, &timeout, &error)) == -EINVAL)
                goto bad_args;
        if (r < 0)
                return r;
        json_object_object_get_ex(c->args, "command", &command);

        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH, MCP_BUS_MANAGER,
                                           run->streamed ? "StartExec" : "ExecSandbox");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", sandbox);
        if (r >= 0)
                r = run_append_argv(m, command, &error);
        /* Streamed: the service's timeout is a backstop a little after ours. */
        if (r >= 0)
                r = append_options(m, c, run, run->streamed ? timeout + 5 : timeout, &error);
        if (r == -EINVAL && error)
                goto bad_args;
        if (r >= 0 && run->streamed)
                r = run_pipes(run, m);
        if (r < 0) {
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        c->timeout_usec = (run->streamed ? 0 : timeout * SEC + MARGIN_USEC) + run->wait * SEC;
        if (run->wait && run->streamed)
                c->timeout_usec += 120 * SEC;
        r = call_send_async(c, m);
        if (r < 0) {
                call_fail_errno(c, "calling the service", r);
                return 0;
        }
        if (run->streamed) {
                c->cancel = run_cancel;
                c->resume = run_resume;
                c->exited = run_exited;
                /* With wait, the time in the service's queue is not the run's: the
                 * timer starts again when StartExec answers (run_on_reply()). */
                r = sd_event_add_time_relative(c->server->event, &run->timer, CLOCK_MONOTONIC,
                                               (timeout + run->wait) * SEC, 0, on_timeout, run);
                if (r < 0) {
                        call_fail_errno(c, "arming the run's timer", r);
                        return 0;
                }
        }
        return 0;

bad_args:
        call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "invalid arguments");
        return 0;
}
