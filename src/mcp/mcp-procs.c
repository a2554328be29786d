/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* process_start, process_list, process_output, process_kill: detached processes
 * (StartExec option detach, ListExecs, and ReadOutput and Kill on the exec object;
 * docs/api.md). A process is named by its exec object's id, the last element of
 * /org/xagent/Sandbox1/exec/<id>; the service decides who may touch it (its caller's
 * uid, the sandbox's owner, root), so another server of the same user reaches it too.
 * Its output is what the sandbox wrote: hostile bytes, bounded by the service (at most
 * 4 MiB of each stream a read) and made valid UTF-8 (each bad byte U+FFFD) or base64. */

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp-json.h"
#include "mcp-procs.h"
#include "mcp-run.h"

#define SEC 1000000ULL
#define EXEC_PREFIX "/org/xagent/Sandbox1/exec/"
#define EXITED_WAIT_USEC (2 * SEC)      /* for the Exited signal after the last read */
#define WAIT_MAX 3600U                  /* StartExec's option wait */

static int fail_args(Call *c, const char *error) {
        call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "invalid arguments");
        return 0;
}

static int fail_build(Call *c, int r, const char *error) {
        if (r == -EINVAL && error)
                return fail_args(c, error);
        call_fail_errno(c, "building the bus call", r);
        return 0;
}

/* The exec object of the argument process: an id, or the object's whole path. */
static int process_path(Call *c, char **ret, char **error) {
        const char *p = NULL;
        char *path;

        if (arg_string(c->args, "process", true, &p, error) < 0)
                return -EINVAL;
        if (p[0] == '/')
                path = strdup(p);
        else if (asprintf(&path, EXEC_PREFIX "%s", p) < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;
        if (!startswith(path, EXEC_PREFIX) || !sd_bus_object_path_is_valid(path) ||
            strchr(path + strlen(EXEC_PREFIX), '/') || !path[strlen(EXEC_PREFIX)]) {
                free(path);
                return asprintf(error, "argument 'process': not a process id of process_start or process_list"),
                       -EINVAL;
        }
        *ret = path;
        return 0;
}

static const char *path_id(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

/* ---- process_start ---------------------------------------------------------------- */

static int append_start_options(sd_bus_message *m, Call *c, char **error) {
        json_object *env = NULL;
        const char *cwd = NULL;
        uint64_t wait = 0;
        int r;

        if (arg_string(c->args, "working_dir", false, &cwd, error) < 0 ||
            arg_uint(c->args, "wait", WAIT_MAX, &wait, error) < 0)
                return -EINVAL;
        if (json_object_object_get_ex(c->args, "env", &env) && env && !json_object_is_type(env, json_type_object))
                return asprintf(error, "argument 'env': must be an object of strings"), -EINVAL;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(m, "{sv}", "detach", "b", 1)) < 0)
                return r;
        if (cwd && (r = sd_bus_message_append(m, "{sv}", "working_dir", "s", cwd)) < 0)
                return r;
        if (wait && (r = sd_bus_message_append(m, "{sv}", "wait", "u", (uint32_t) wait)) < 0)
                return r;
        if (env && (r = run_append_env(m, env, error)) < 0)
                return r;
        c->timeout_usec = (wait + 120) * SEC;
        return sd_bus_message_close_container(m);
}

int process_start_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        const char *sandbox = NULL;
        json_object *command = NULL;
        int null_fd, r;

        if (arg_string(c->args, "sandbox", true, &sandbox, &error) < 0)
                return fail_args(c, error);
        json_object_object_get_ex(c->args, "command", &command);
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                           MCP_BUS_MANAGER, "StartExec");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", sandbox);
        if (r >= 0)
                r = run_append_argv(m, command, &error);
        if (r >= 0)
                r = append_start_options(m, c, &error);
        if (r < 0)
                return fail_build(c, r, error);
        /* A detached process does not use them; the message keeps its own copies. */
        null_fd = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null_fd < 0)
                return fail_build(c, -errno, NULL);
        r = sd_bus_message_append(m, "hhh", null_fd, null_fd, null_fd);
        safe_close(null_fd);
        if (r < 0)
                return fail_build(c, r, NULL);
        r = call_send_async(c, m);
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
        return 0;
}

int process_start_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        _cleanup_free_ char *ignored = NULL;
        const char *path, *sandbox = "";
        int r;

        if ((r = sd_bus_message_read(reply, "o", &path)) < 0)
                return r;
        (void) arg_string(c->args, "sandbox", false, &sandbox, &ignored);
        if (!o || sbx_json_put(o, "process", json_object_new_string(path_id(path))) < 0 ||
            sbx_json_put(o, "sandbox", json_object_new_string(sandbox)) < 0 ||
            sbx_json_put(o, "running", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- process_list ----------------------------------------------------------------- */

int process_list_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        const char *sandbox = NULL;
        int r;

        if (arg_string(c->args, "sandbox", true, &sandbox, &error) < 0)
                return fail_args(c, error);
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                           MCP_BUS_MANAGER, "ListExecs");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", sandbox);
        if (r < 0)
                return fail_build(c, r, NULL);
        r = call_send_async(c, m);
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
        return 0;
}

static json_object *exit_code_json(bool running, int status) {
        return running || status < 0 ? NULL : json_object_new_int(status);
}

int process_list_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *rows = json_object_new_array();
        const char *path, *argv0;
        int running, r;
        int32_t status;

        if (!o || !rows)
                return -ENOMEM;
        if ((r = sd_bus_message_enter_container(reply, 'a', "(osbi)")) < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(osbi)", &path, &argv0, &running, &status)) > 0) {
                _cleanup_(json_object_putp) json_object *row = json_object_new_object();

                if (!row || sbx_json_put(row, "process", json_object_new_string(path_id(path))) < 0 ||
                    sbx_json_put(row, "command", json_string_from_bytes(argv0, strlen(argv0), NULL)) < 0 ||
                    sbx_json_put(row, "running", json_object_new_boolean(running)) < 0 ||
                    json_object_object_add(row, "exit_code", exit_code_json(running, status)) < 0 ||
                    sbx_json_push(rows, TAKE_PTR(row)) < 0)
                        return -ENOMEM;
        }
        if (r < 0 || sbx_json_put(o, "processes", TAKE_PTR(rows)) < 0)
                return r < 0 ? r : -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- process_output --------------------------------------------------------------- *
 *
 * ReadOutput gives no exit status, and the object goes once a read returned running
 * false. So the status is read first (ExitStatus); a process that ended between that
 * and the read is told by the Exited signal, which the service sends after its reply:
 * it is waited for a little. */

typedef struct Output {
        Call *call;
        char *path;
        char *service;                  /* the unique name of the service that answered */
        bool base64;
        uint64_t offset;
        int status;                     /* -1: not known */
        json_object *result;            /* the read, waiting for the status */
        sd_bus_slot *status_slot;
        sd_event_source *timer;
} Output;

static void output_free(void *p) {
        Output *o = p;

        if (!o)
                return;
        free(o->path);
        free(o->service);
        json_object_put(o->result);
        sd_bus_slot_unref(o->status_slot);
        sd_event_source_disable_unref(o->timer);
        free(o);
}

static void output_finish(Output *o) {
        json_object *result = TAKE_PTR(o->result);

        if (json_object_object_add(result, "exit_code", exit_code_json(false, o->status)) < 0) {
                json_object_put(result);
                call_fail_errno(o->call, "making the result", -ENOMEM);
                return;
        }
        call_finish(o->call, result);
}

static void output_exited(Call *c, const char *sender, const char *path, int status) {
        Output *o = c->state;

        if (!streq(o->path, path) || !streq_ptr(o->service, sender))
                return;
        o->status = status;
        if (o->result)
                output_finish(o);
}

static int on_exited_wait(sd_event_source *source, uint64_t usec, void *userdata) {
        output_finish(userdata);        /* no signal came: the status stays unknown */
        return 0;
}

static int read_output(Output *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        r = sd_bus_message_new_method_call(o->call->server->bus, &m, MCP_BUS_SERVICE, o->path, MCP_BUS_EXEC,
                                           "ReadOutput");
        if (r >= 0)
                r = sd_bus_message_append(m, "t", o->offset);
        if (r >= 0)
                r = call_send_async(o->call, m);
        return r;
}

static int read_or_fail(Output *o) {
        int r;

        r = read_output(o);
        if (r < 0)
                call_fail_errno(o->call, "calling the service", r);
        return 0;
}

static int on_status(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Output *o = userdata;
        int32_t status;

        o->status_slot = sd_bus_slot_unref(o->status_slot);
        /* An error (no such object, not allowed) is the read's to tell. */
        if (sd_bus_message_is_method_error(reply, NULL))
                return read_or_fail(o);
        if (!o->service && !(o->service = strdup(sd_bus_message_get_sender(reply) ?: ""))) {
                call_fail_errno(o->call, "reading the service's reply", -ENOMEM);
                return 0;
        }
        if (sd_bus_message_read(reply, "v", "i", &status) >= 0 && status >= 0 && o->status < 0)
                o->status = status;
        return read_or_fail(o);
}

int process_output_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        const char *encoding = "text";
        Output *o;
        int r;

        o = new0(Output, 1);
        if (!o)
                return -ENOMEM;
        *o = (Output) { .call = c, .status = -1 };
        c->state = o;
        c->free_state = output_free;
        c->exited = output_exited;
        if ((r = process_path(c, &o->path, &error)) < 0 ||
            (r = arg_cursor(c->args, "cursor", &o->offset, &error)) < 0 ||
            (r = arg_string(c->args, "encoding", false, &encoding, &error)) < 0)
                return r == -EINVAL ? fail_args(c, error) : r;
        if (!streq(encoding, "text") && !streq(encoding, "base64"))
                return fail_args(c, "argument 'encoding': text or base64");
        o->base64 = streq(encoding, "base64");
        r = sd_bus_call_method_async(c->server->bus, &o->status_slot, MCP_BUS_SERVICE, o->path,
                                     "org.freedesktop.DBus.Properties", "Get", on_status, o, "ss", MCP_BUS_EXEC,
                                     "ExitStatus");
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
        return 0;
}

/* ReadOutput's offset carries both streams' positions (stderr's in the high 32 bits):
 * beyond JSON's exact integers, so the tool passes it on as an opaque decimal string,
 * as MCP's own pagination cursors are. */
static json_object *cursor_json(uint64_t offset) {
        char s[24];

        snprintf(s, sizeof s, "%" PRIu64, offset);
        return json_object_new_string(s);
}

static json_object *bytes_json(const void *data, size_t n, bool base64) {
        _cleanup_free_ char *b64 = NULL;

        if (!base64)
                return json_string_from_bytes(data, n, NULL);
        b64 = base64_encode(data, n);
        return b64 ? json_object_new_string(b64) : NULL;
}

int process_output_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *res = json_object_new_object();
        Output *o = c->state;
        const void *out, *err;
        size_t out_len, err_len;
        uint64_t next;
        int running, r;

        if ((r = sd_bus_message_read_array(reply, 'y', &out, &out_len)) < 0 ||
            (r = sd_bus_message_read_array(reply, 'y', &err, &err_len)) < 0 ||
            (r = sd_bus_message_read(reply, "tb", &next, &running)) < 0)
                return r;
        if (!res || sbx_json_put(res, "process", json_object_new_string(path_id(o->path))) < 0 ||
            sbx_json_put(res, "encoding", json_object_new_string(o->base64 ? "base64" : "text")) < 0 ||
            sbx_json_put(res, "stdout", bytes_json(out, out_len, o->base64)) < 0 ||
            sbx_json_put(res, "stderr", bytes_json(err, err_len, o->base64)) < 0 ||
            sbx_json_put(res, "next_cursor", cursor_json(next)) < 0 ||
            sbx_json_put(res, "running", json_object_new_boolean(running)) < 0)
                return -ENOMEM;
        if (!o->service && !(o->service = strdup(sd_bus_message_get_sender(reply) ?: "")))
                return -ENOMEM;
        if (running || o->status >= 0) {
                if (json_object_object_add(res, "exit_code", exit_code_json(running, o->status)) < 0)
                        return -ENOMEM;
                *ret = TAKE_PTR(res);
                return 0;
        }
        o->result = TAKE_PTR(res);
        r = sd_event_add_time_relative(c->server->event, &o->timer, CLOCK_MONOTONIC, EXITED_WAIT_USEC, 0,
                                       on_exited_wait, o);
        if (r < 0)
                return r;
        return 1;               /* the Exited signal (or the timer) finishes it */
}

/* ---- process_kill ----------------------------------------------------------------- */

int process_kill_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL, *path = NULL;
        const char *signal = "KILL";
        int r;

        if ((r = process_path(c, &path, &error)) < 0 || (r = arg_string(c->args, "signal", false, &signal, &error)) < 0)
                return r == -EINVAL ? fail_args(c, error) : r;
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, path, MCP_BUS_EXEC, "Kill");
        if (r >= 0)
                r = sd_bus_message_append(m, "s", signal);
        if (r < 0)
                return fail_build(c, r, NULL);
        r = call_send_async(c, m);
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
        return 0;
}

int process_kill_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        _cleanup_free_ char *ignored = NULL, *bad = NULL, *path = NULL;
        const char *signal = "KILL";

        (void) arg_string(c->args, "signal", false, &signal, &ignored);
        if (process_path(c, &path, &bad) < 0)
                return -EINVAL;
        if (!o || sbx_json_put(o, "process", json_object_new_string(path_id(path))) < 0 ||
            sbx_json_put(o, "signal", json_object_new_string(signal)) < 0 ||
            sbx_json_put(o, "sent", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}
