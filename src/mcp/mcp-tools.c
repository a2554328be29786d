/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The tools: each one call (or two) of org.xagent.Sandbox1.Manager, its arguments
 * read from the tool's arguments, its reply made the tool's structured result.
 * Only what the bus offers today is here (docs/mcp.md). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-spec.h"
#include "mcp-files.h"
#include "mcp-json.h"
#include "mcp-procs.h"
#include "mcp-run.h"
#include "mcp-spec.h"
#include "mcp-tools.h"

#define SEC 1000000ULL

/* ---- schemas --------------------------------------------------------------------- */

#define S_NAME(what) "{\"type\":\"string\",\"minLength\":1,\"maxLength\":200,\"description\":\"" what "\"}"
#define P_NAME "\"name\":" S_NAME("The sandbox's name (in the calling user's own namespace).")
#define P_SANDBOX "\"sandbox\":" S_NAME("The name of a running sandbox of the calling user's.")

#define P_SPEC \
        "\"image\":{\"type\":\"string\",\"description\":\"Image reference; absent: the host's default image.\"}," \
        "\"snapshot\":{\"type\":\"string\",\"description\":\"Make it from this snapshot of the caller's instead of an image.\"}," \
        "\"working_dir\":{\"type\":\"string\",\"description\":\"Absolute path; default /home.\"}," \
        "\"cpus\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"Whole CPUs (0: 1).\"}," \
        "\"memory\":{\"type\":\"integer\",\"minimum\":0,\"description\":\"MiB (0: 512; at least 128).\"}," \
        "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"Environment variables of the sandbox.\"}," \
        "\"volumes\":{\"type\":\"array\",\"description\":\"Host directories mounted in it (within the host policy's volume roots).\"," \
                "\"items\":{\"type\":\"object\",\"required\":[\"host\",\"guest\"],\"additionalProperties\":false,\"properties\":{" \
                "\"host\":{\"type\":\"string\"},\"guest\":{\"type\":\"string\"},\"mode\":{\"type\":\"string\",\"enum\":[\"ro\",\"rw\"],\"default\":\"rw\"}}}}," \
        "\"ports\":{\"type\":\"array\",\"description\":\"Published ports; host 0 picks a free one (see sandbox_ports).\"," \
                "\"items\":{\"type\":\"object\",\"required\":[\"guest\"],\"additionalProperties\":false,\"properties\":{" \
                "\"host\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":65535,\"default\":0},\"guest\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":65535}}}}," \
        "\"network_isolated\":{\"type\":\"boolean\",\"description\":\"No network at all.\"}"

#define P_MAKE_OPTS \
        "\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"The caller's " \
                "own metadata (at most 32 keys of [a-z0-9._/-], 4 KiB in all), never part of the spec; sandbox_list " \
                "finds sandboxes by them.\"}," \
        "\"runtime\":{\"type\":\"string\",\"description\":\"The runtime it runs under: runc (the " \
                "default) or one of the host policy's runtimes (the policy tool), e.g. gvisor: a kernel of its own, " \
                "for network_isolated sandboxes without volumes.\"}," \
        "\"idle_timeout\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295,\"description\":\"Seconds " \
                "unused before it is stopped (or paused: on_idle); 0: never. Bounded by the host policy.\"}," \
        "\"expire_after\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4294967295,\"description\":\"Seconds " \
                "after its creation when it is deleted; 0: never. Bounded by the host policy.\"}," \
        "\"on_idle\":{\"type\":\"string\",\"enum\":[\"stop\",\"pause\"],\"description\":\"What idle_timeout " \
                "does (default stop).\"}," \
        "\"idle_counts_processes\":{\"type\":\"boolean\",\"description\":\"Whether a background process nobody " \
                "reads keeps it from idling (default false). An ensure that finds the sandbox applies the " \
                "lifetimes given.\"}"
#define P_LABELS_FILTER \
        "\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"Only " \
                "sandboxes having every one of these labels with this value.\"}," \
        "\"state\":{\"type\":\"string\",\"enum\":[\"running\",\"paused\",\"stopped\"],\"description\":\"Only " \
                "sandboxes in this state.\"}"
#define P_COMMAND \
        "\"command\":{\"anyOf\":[{\"type\":\"string\",\"minLength\":1},{\"type\":\"array\"," \
                "\"items\":{\"type\":\"string\"},\"minItems\":1}]}"
#define P_PROCESS \
        "\"process\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":300,\"description\":\"A process id " \
                "from process_start or process_list.\"}"
#define S_EXIT_CODE \
        "\"exit_code\":{\"type\":[\"integer\",\"null\"],\"description\":\"The code, or 128+N after signal N; " \
                "null while it runs or when not known.\"}"

#define OBJ(props, required) \
        "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{" props "},\"required\":[" required "]}"
#define NO_ARGS "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}"

#define S_SANDBOX_ROW \
        "{\"type\":\"object\",\"required\":[\"name\",\"state\",\"owner\",\"verdict\"],\"properties\":{" \
        "\"name\":{\"type\":\"string\"},\"state\":{\"type\":\"string\"},\"owner\":{\"type\":\"integer\"}," \
        "\"verdict\":{\"type\":\"string\",\"enum\":[\"match\",\"mismatch\",\"unverified\"]}}}"
#define S_SNAPSHOT_ROW \
        "{\"type\":\"object\",\"required\":[\"snapshot_id\",\"source\",\"image_id\",\"owner\",\"created_us\"],\"properties\":{" \
        "\"snapshot_id\":{\"type\":\"string\"},\"source\":{\"type\":\"string\"},\"image_id\":{\"type\":\"string\"}," \
        "\"owner\":{\"type\":\"integer\"},\"created_us\":{\"type\":\"integer\"}}}"
#define S_NAME_STATE \
        "{\"type\":\"object\",\"required\":[\"name\",\"state\"],\"properties\":{\"name\":{\"type\":\"string\"}," \
        "\"state\":{\"type\":\"string\"}}}"

/* ---- helpers --------------------------------------------------------------------- */

static int manager_call(Call *c, const char *method, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(c->server->bus, ret, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                              MCP_BUS_MANAGER, method);
}

/* A bad argument: an InvalidArgs result naming it (never a protocol error: the
 * model reads it and can try again). */
static int fail_args(Call *c, char *message) {
        call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", message ?: "invalid arguments");
        free(message);
        return 0;
}

/* Sends m; a failure to append (sd-bus refuses e.g. a string that is not UTF-8)
 * is the caller's InvalidArgs. */
static int send_or_fail(Call *c, sd_bus_message *m, int r) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *owned = m;

        if (r < 0) {
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        r = call_send_async(c, m);
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
        return 0;
}

/* Methods taking the sandbox name (and nothing else, or an empty a{sv}). */
static int start_by_name(Call *c, const char *method, const char *key, bool options) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name = NULL;
        int r;

        if (arg_string(c->args, key, true, &name, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, method, &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0 && options)
                r = sd_bus_message_append(m, "a{sv}", 0);
        return send_or_fail(c, m, r);
}

static json_object *name_result(Call *c, const char *key, const char *rkey, json_object *extra_value,
                                const char *extra_key) {
        const char *name = NULL;
        char *ignored = NULL;
        json_object *o = json_object_new_object();

        (void) arg_string(c->args, key, false, &name, &ignored);
        free(ignored);
        if (!o || sbx_json_put(o, rkey, json_object_new_string(name ?: "")) < 0 ||
            (extra_key && sbx_json_put(o, extra_key, extra_value) < 0))
                return json_object_put(o), NULL;
        return o;
}

/* ---- sandboxes ------------------------------------------------------------------- */

/* FindSandboxes: with no filter it answers as ListSandboxes. */
static int list_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        json_object *labels = NULL;
        const char *state = NULL;
        int r;

        if (arg_string(c->args, "state", false, &state, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, "FindSandboxes", &m);
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "{sv}");
        if (r >= 0 && state)
                r = sd_bus_message_append(m, "{sv}", "state", "s", state);
        if (r >= 0 && json_object_object_get_ex(c->args, "labels", &labels) && labels)
                r = append_labels_entry(m, labels, &error);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r == -EINVAL && error) {
                sd_bus_message_unref(m);
                return fail_args(c, TAKE_PTR(error));
        }
        return send_or_fail(c, m, r);
}

static int list_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *rows = json_object_new_array();
        const char *name, *state, *verdict, *path;
        uint32_t owner;
        int r;

        if (!o || !rows)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(ssuso)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssuso)", &name, &state, &owner, &verdict, &path)) > 0) {
                json_object *row = json_object_new_object();

                if (!row || sbx_json_push(rows, row) < 0 ||
                    sbx_json_put(row, "name", json_object_new_string(name)) < 0 ||
                    sbx_json_put(row, "state", json_object_new_string(state)) < 0 ||
                    sbx_json_put(row, "owner", json_object_new_int64(owner)) < 0 ||
                    sbx_json_put(row, "verdict", json_object_new_string(verdict)) < 0)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        if (sbx_json_put(o, "sandboxes", TAKE_PTR(rows)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static char *list_render(json_object *st) {
        json_object *rows = json_object_object_get(st, "sandboxes");
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        if (json_object_array_length(rows) == 0)
                fputs("No sandboxes.\n", f);
        for (size_t i = 0; i < json_object_array_length(rows); i++) {
                json_object *row = json_object_array_get_idx(rows, i);

                fprintf(f, "%s\t%s\t%s\n", json_object_get_string(json_object_object_get(row, "name")),
                        json_object_get_string(json_object_object_get(row, "state")),
                        json_object_get_string(json_object_object_get(row, "verdict")));
        }
        fclose(f);
        return out;
}

static int make_start(Call *c, bool ensure) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name = NULL;
        int r;

        if (arg_string(c->args, "name", true, &name, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, ensure ? "EnsureSandbox" : "CreateSandbox", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0)
                r = append_spec_args(m, c->args, &error);
        if (r >= 0)
                r = append_make_options(m, c->args, ensure, &error);
        if (r == -EINVAL && error) {
                sd_bus_message_unref(m);
                return fail_args(c, TAKE_PTR(error));
        }
        return send_or_fail(c, m, r);
}

static int ensure_start(Call *c) {
        return make_start(c, true);
}

static int create_start(Call *c) {
        return make_start(c, false);
}

static int make_reply(Call *c, sd_bus_message *reply, json_object **ret, bool ensure) {
        const char *path, *fingerprint, *outcome = "created";
        json_object *o;
        int r;

        r = ensure ? sd_bus_message_read(reply, "oss", &path, &fingerprint, &outcome)
                   : sd_bus_message_read(reply, "os", &path, &fingerprint);
        if (r < 0)
                return r;
        /* `sandbox` as a claim's result has it (docs/mcp.md); `name` as before. */
        o = name_result(c, "name", "sandbox", json_object_new_string(outcome), "outcome");
        if (!o || sbx_json_put(o, "name", json_object_get(json_object_object_get(o, "sandbox"))) < 0 ||
            sbx_json_put(o, "fingerprint", json_object_new_string(fingerprint)) < 0)
                return json_object_put(o), -ENOMEM;
        *ret = o;
        return 0;
}

static int ensure_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        return make_reply(c, reply, ret, true);
}

static int create_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        return make_reply(c, reply, ret, false);
}

static int start_start(Call *c) {
        return start_by_name(c, "StartSandbox", "name", false);
}

static int start_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = name_result(c, "name", "name", json_object_new_string("running"), "state");
        return *ret ? 0 : -ENOMEM;
}

static int stop_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name = NULL;
        uint64_t timeout = SBX_STOP_TIMEOUT_DEFAULT;
        bool force = false;
        int r;

        if (arg_string(c->args, "name", true, &name, &error) < 0 ||
            arg_uint(c->args, "timeout", SBX_STOP_TIMEOUT_MAX, &timeout, &error) < 0 ||
            arg_bool(c->args, "force", &force, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, "StopSandbox", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "sa{sv}", name, 2, "timeout", "u", (uint32_t) timeout, "force", "b", force);
        return send_or_fail(c, m, r);
}

static int stop_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = name_result(c, "name", "name", json_object_new_string("stopped"), "state");
        return *ret ? 0 : -ENOMEM;
}

static int pause_start(Call *c) {
        return start_by_name(c, "PauseSandbox", "name", false);
}

static int pause_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = name_result(c, "name", "name", json_object_new_string("paused"), "state");
        return *ret ? 0 : -ENOMEM;
}

static int resume_start(Call *c) {
        return start_by_name(c, "ResumeSandbox", "name", false);
}

static int delete_start(Call *c) {
        return start_by_name(c, "DeleteSandbox", "name", false);
}

static int delete_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = name_result(c, "name", "name", json_object_new_boolean(true), "deleted");
        return *ret ? 0 : -ENOMEM;
}

static int snapshot_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name = NULL, *id = NULL;
        int r;

        if (arg_string(c->args, "name", true, &name, &error) < 0 ||
            arg_string(c->args, "snapshot_id", true, &id, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, "SnapshotSandbox", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", name, id);
        return send_or_fail(c, m, r);
}

static int snapshot_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        const char *image_id;
        int r;

        r = sd_bus_message_read(reply, "s", &image_id);
        if (r < 0)
                return r;
        *ret = name_result(c, "snapshot_id", "snapshot_id", json_object_new_string(image_id), "image_id");
        return *ret ? 0 : -ENOMEM;
}

static int snapshots_start(Call *c) {
        sd_bus_message *m = NULL;

        return send_or_fail(c, m, manager_call(c, "ListSnapshots", &m));
}

static int snapshots_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *rows = json_object_new_array();
        const char *id, *source, *image_id;
        uint32_t owner;
        uint64_t created;
        int r;

        if (!o || !rows)
                return -ENOMEM;
        r = sd_bus_message_enter_container(reply, 'a', "(sssut)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(sssut)", &id, &source, &image_id, &owner, &created)) > 0) {
                json_object *row = json_object_new_object();

                if (!row || sbx_json_push(rows, row) < 0 ||
                    sbx_json_put(row, "snapshot_id", json_object_new_string(id)) < 0 ||
                    sbx_json_put(row, "source", json_object_new_string(source)) < 0 ||
                    sbx_json_put(row, "image_id", json_object_new_string(image_id)) < 0 ||
                    sbx_json_put(row, "owner", json_object_new_int64(owner)) < 0 ||
                    sbx_json_put(row, "created_us", json_object_new_uint64(created)) < 0)
                        return -ENOMEM;
        }
        if (r < 0)
                return r;
        if (sbx_json_put(o, "snapshots", TAKE_PTR(rows)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int snapshot_delete_start(Call *c) {
        return start_by_name(c, "DeleteSnapshot", "snapshot_id", false);
}

static int snapshot_delete_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = name_result(c, "snapshot_id", "snapshot_id", json_object_new_boolean(true), "deleted");
        return *ret ? 0 : -ENOMEM;
}

static int inspect_start(Call *c) {
        return start_by_name(c, "InspectSandbox", "name", false);
}

static int dict_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        return sbx_bus_read_json(reply, ret);
}

static int verify_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name = NULL;
        int r;

        if (arg_string(c->args, "name", true, &name, &error) < 0)
                return fail_args(c, TAKE_PTR(error));
        r = manager_call(c, "VerifySandbox", &m);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", name);
        if (r >= 0 && (r = append_spec_args(m, c->args, &error)) == -EINVAL) {
                sd_bus_message_unref(m);
                return fail_args(c, TAKE_PTR(error));
        }
        return send_or_fail(c, m, r);
}

static int verify_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *fields = NULL;
        const char *verdict;
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = sd_bus_message_read(reply, "s", &verdict)) < 0 || (r = sbx_bus_read_json(reply, &fields)) < 0)
                return r;
        if (sbx_json_put(o, "verdict", json_object_new_string(verdict)) < 0 ||
            sbx_json_put(o, "mismatched_fields", TAKE_PTR(fields)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int ports_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *inspection = NULL, *o = json_object_new_object(),
                                                *ports = json_object_new_array();
        json_object *bound;
        int r;

        if (!o || !ports)
                return -ENOMEM;
        r = sbx_bus_read_json(reply, &inspection);
        if (r < 0)
                return r;
        if (json_object_object_get_ex(inspection, "bound_ports", &bound))
                for (size_t i = 0; i < json_object_array_length(bound); i++) {
                        json_object *b = json_object_array_get_idx(bound, i), *p = json_object_new_object();

                        if (!p || sbx_json_push(ports, p) < 0 ||
                            sbx_json_put(p, "host_address", json_object_get(json_object_array_get_idx(b, 0))) < 0 ||
                            sbx_json_put(p, "host_port", json_object_get(json_object_array_get_idx(b, 1))) < 0 ||
                            sbx_json_put(p, "guest_port", json_object_get(json_object_array_get_idx(b, 2))) < 0)
                                return -ENOMEM;
                }
        if (sbx_json_put(o, "ports", TAKE_PTR(ports)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static int usage_start(Call *c) {
        return start_by_name(c, "GetSandboxUsage", "name", false);
}

static int policy_start(Call *c) {
        sd_bus_message *m = NULL;

        return send_or_fail(c, m, manager_call(c, "GetPolicy", &m));
}

/* ---- the table ------------------------------------------------------------------- */

const Tool mcp_tools[] = {
        {
                .name = "sandbox_list", .title = "List sandboxes", .read_only = true, .idempotent = true,
                .description = "The calling user's sandboxes: name, state (running/paused/stopped), owner uid and "
                               "verdict (whether the container is what its spec asked for); with `labels` and "
                               "`state`, only those that have all these labels and are in that state.",
                .input_schema = OBJ(P_LABELS_FILTER, ""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"sandboxes\"],\"properties\":{"
                                 "\"sandboxes\":{\"type\":\"array\",\"items\":" S_SANDBOX_ROW "}}}",
                .start = list_start, .on_reply = list_reply, .render = list_render,
        },
        {
                .name = "sandbox_ensure", .title = "Get or create a sandbox", .destructive = true, .idempotent = true,
                .description = "Makes sure the sandbox `name` exists with this spec and runs: reused if it matches, "
                               "started if stopped, created if absent. A sandbox of that name with another spec is "
                               "an error, or with on_mismatch=recreate is deleted and created again (its files are "
                               "lost). outcome says which: created, started, reused, recreated.",
                .input_schema = OBJ(P_NAME "," P_SPEC "," P_MAKE_OPTS ","
                                    "\"on_mismatch\":{\"type\":\"string\",\"enum\":[\"fail\",\"recreate\"],\"default\":\"fail\"},"
                                    "\"stop_timeout\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600,"
                                    "\"description\":\"Seconds to let a sandbox being recreated stop (default 30).\"}",
                                    "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"name\",\"outcome\",\"fingerprint\"],\"properties\":{"
                                 "\"name\":{\"type\":\"string\"},\"outcome\":{\"type\":\"string\",\"enum\":"
                                 "[\"created\",\"started\",\"reused\",\"recreated\"]},\"fingerprint\":{\"type\":\"string\"}}}",
                .start = ensure_start, .on_reply = ensure_reply, .timeout_usec = 600 * SEC,
        },
        {
                .name = "sandbox_create", .title = "Create a sandbox",
                .description = "Creates and starts the sandbox `name` from this spec (an error if the name is taken).",
                .input_schema = OBJ(P_NAME "," P_SPEC "," P_MAKE_OPTS, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"name\",\"outcome\",\"fingerprint\"],\"properties\":{"
                                 "\"name\":{\"type\":\"string\"},\"outcome\":{\"type\":\"string\",\"enum\":[\"created\"]},"
                                 "\"fingerprint\":{\"type\":\"string\"}}}",
                .start = create_start, .on_reply = create_reply, .timeout_usec = 600 * SEC,
        },
        {
                .name = "sandbox_start", .title = "Start a sandbox", .idempotent = true,
                .description = "Starts the stopped sandbox `name` (nothing happens if it runs).",
                .input_schema = OBJ(P_NAME, "\"name\""), .output_schema = S_NAME_STATE,
                .start = start_start, .on_reply = start_reply, .timeout_usec = 300 * SEC,
        },
        {
                .name = "sandbox_stop", .title = "Stop a sandbox", .idempotent = true,
                .description = "Stops the sandbox `name`: SIGTERM, then SIGKILL after `timeout` seconds (default "
                               "10). Its files stay; processes running in it end.",
                .input_schema = OBJ(P_NAME ",\"timeout\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600}",
                                    "\"name\""),
                .output_schema = S_NAME_STATE,
                .start = stop_start, .on_reply = stop_reply, .timeout_usec = 3700 * SEC,
        },
        {
                .name = "sandbox_pause", .title = "Pause a sandbox", .idempotent = true,
                .description = "Freezes the running sandbox `name`: its processes stop where they are and keep "
                               "their memory until sandbox_resume. Commands and files of a paused sandbox are "
                               "refused (NotRunning).",
                .input_schema = OBJ(P_NAME, "\"name\""), .output_schema = S_NAME_STATE,
                .start = pause_start, .on_reply = pause_reply,
        },
        {
                .name = "sandbox_resume", .title = "Resume a sandbox", .idempotent = true,
                .description = "Thaws the paused sandbox `name`: its processes go on where they were.",
                .input_schema = OBJ(P_NAME, "\"name\""), .output_schema = S_NAME_STATE,
                .start = resume_start, .on_reply = start_reply,
        },
        {
                .name = "sandbox_delete", .title = "Delete a sandbox", .destructive = true, .idempotent = true,
                .description = "Deletes the sandbox `name` and everything in it (its snapshots stay). Deleting a "
                               "name that does not exist succeeds.",
                .input_schema = OBJ(P_NAME, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"name\",\"deleted\"],\"properties\":{"
                                 "\"name\":{\"type\":\"string\"},\"deleted\":{\"type\":\"boolean\"}}}",
                .start = delete_start, .on_reply = delete_reply, .timeout_usec = 300 * SEC,
        },
        {
                .name = "sandbox_snapshot", .title = "Snapshot a sandbox",
                .description = "Commits the sandbox `name` as the snapshot `snapshot_id` (only its owner can make "
                               "sandboxes from it: the spec key `snapshot`).",
                .input_schema = OBJ(P_NAME ",\"snapshot_id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}",
                                    "\"name\",\"snapshot_id\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"snapshot_id\",\"image_id\"],\"properties\":{"
                                 "\"snapshot_id\":{\"type\":\"string\"},\"image_id\":{\"type\":\"string\"}}}",
                .start = snapshot_start, .on_reply = snapshot_reply, .timeout_usec = 600 * SEC,
        },
        {
                .name = "snapshot_list", .title = "List snapshots", .read_only = true, .idempotent = true,
                .description = "The calling user's snapshots.",
                .input_schema = NO_ARGS,
                .output_schema = "{\"type\":\"object\",\"required\":[\"snapshots\"],\"properties\":{"
                                 "\"snapshots\":{\"type\":\"array\",\"items\":" S_SNAPSHOT_ROW "}}}",
                .start = snapshots_start, .on_reply = snapshots_reply,
        },
        {
                .name = "snapshot_delete", .title = "Delete a snapshot", .destructive = true, .idempotent = true,
                .description = "Deletes the snapshot `snapshot_id` and its image (an unknown id succeeds).",
                .input_schema = OBJ("\"snapshot_id\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":100}",
                                    "\"snapshot_id\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"snapshot_id\",\"deleted\"],\"properties\":{"
                                 "\"snapshot_id\":{\"type\":\"string\"},\"deleted\":{\"type\":\"boolean\"}}}",
                .start = snapshot_delete_start, .on_reply = snapshot_delete_reply, .timeout_usec = 300 * SEC,
        },
        {
                .name = "sandbox_inspect", .title = "Inspect a sandbox", .read_only = true, .idempotent = true,
                .description = "What the engine reports about the sandbox `name` now: state, image, limits, env, "
                               "volumes, ports, bound_ports, verdict, and more (docs/api.md).",
                .input_schema = OBJ(P_NAME, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"state\"],\"properties\":{"
                                 "\"state\":{\"type\":\"string\"},\"status\":{\"type\":\"string\"},"
                                 "\"image_ref\":{\"type\":\"string\"},\"verdict\":{\"type\":\"string\"},"
                                 "\"owner\":{\"type\":\"integer\"},\"env\":{\"type\":\"object\"},"
                                 "\"volumes\":{\"type\":\"array\"},\"ports\":{\"type\":\"array\"},"
                                 "\"bound_ports\":{\"type\":\"array\"}},\"additionalProperties\":true}",
                .start = inspect_start, .on_reply = dict_reply,
        },
        {
                .name = "sandbox_verify", .title = "Verify a sandbox against a spec", .read_only = true,
                .idempotent = true,
                .description = "Whether the sandbox `name` is what this spec asks for: match, mismatch (with the "
                               "fields that differ) or unverified.",
                .input_schema = OBJ(P_NAME "," P_SPEC, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"verdict\",\"mismatched_fields\"],\"properties\":{"
                                 "\"verdict\":{\"type\":\"string\",\"enum\":[\"match\",\"mismatch\",\"unverified\"]},"
                                 "\"mismatched_fields\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}}}",
                .start = verify_start, .on_reply = verify_reply,
        },
        {
                .name = "run", .title = "Run a command in a sandbox",
                .description = "Runs `command` (a string for /bin/sh -c, or an argv array) in the running sandbox as "
                               "its owner and waits for it: exit_code (128+N after signal N, 124 when it timed out), "
                               "stdout, stderr. With a progressToken the output streams as progress notifications "
                               "and a timed-out run keeps what it printed; cancelling the call kills the process.",
                .input_schema = OBJ(P_SANDBOX "," P_COMMAND ","
                                    "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,\"default\":60,"
                                    "\"description\":\"Seconds before the process is killed.\"},"
                                    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
                                    "\"working_dir\":{\"type\":\"string\",\"description\":\"Absolute; default the sandbox's.\"},"
                                    "\"stdin\":{\"type\":\"string\",\"description\":\"Text given to the process on its stdin.\"},"
                                    "\"output_limit\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":4194304,\"default\":1048576,"
                                    "\"description\":\"Bytes kept of each stream; beyond, truncated is true.\"},"
                                    "\"wait\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600,\"default\":0,"
                                    "\"description\":\"Seconds to wait for a free slot when the user's runs are at "
                                    "their limit (parallel calls), instead of LimitsExceeded.\"}",
                                    "\"sandbox\",\"command\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"exit_code\",\"stdout\",\"stderr\",\"timed_out\","
                                 "\"truncated\"],\"properties\":{\"exit_code\":{\"type\":\"integer\"},"
                                 "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
                                 "\"timed_out\":{\"type\":\"boolean\"},\"truncated\":{\"type\":\"boolean\"}}}",
                .start = run_start, .on_reply = run_on_reply, .on_error = run_on_error, .render = run_render,
        },
        {
                .name = "process_start", .title = "Start a background process",
                .description = "Starts `command` (a string for /bin/sh -c, or an argv array) detached in the running "
                               "sandbox as its owner and returns at once: it outlives this server and the service's "
                               "restarts, its output (2 MiB of both streams, oldest dropped) kept for "
                               "process_output. With `wait`, a full share of processes is waited for that many "
                               "seconds.",
                .input_schema = OBJ(P_SANDBOX "," P_COMMAND ","
                                    "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
                                    "\"working_dir\":{\"type\":\"string\",\"description\":\"Absolute; default the sandbox's.\"},"
                                    "\"wait\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":3600,\"default\":0}",
                                    "\"sandbox\",\"command\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"process\",\"sandbox\",\"running\"],\"properties\":{"
                                 "\"process\":{\"type\":\"string\"},\"sandbox\":{\"type\":\"string\"},"
                                 "\"running\":{\"type\":\"boolean\"}}}",
                .start = process_start_start, .on_reply = process_start_on_reply,
        },
        {
                .name = "process_list", .title = "List the processes of a sandbox", .read_only = true,
                .idempotent = true,
                .description = "The processes of process_start (and the running commands) in the sandbox that the "
                               "caller may see: id, command (argv[0]), running, exit_code.",
                .input_schema = OBJ(P_SANDBOX, "\"sandbox\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"processes\"],\"properties\":{\"processes\":{"
                                 "\"type\":\"array\",\"items\":{\"type\":\"object\",\"required\":[\"process\",\"command\","
                                 "\"running\",\"exit_code\"],\"properties\":{\"process\":{\"type\":\"string\"},"
                                 "\"command\":{\"type\":\"string\"},\"running\":{\"type\":\"boolean\"}," S_EXIT_CODE "}}}}}",
                .start = process_list_start, .on_reply = process_list_on_reply,
        },
        {
                .name = "process_output", .title = "Read a background process's output",
                .description = "The output of `process` from `cursor` (omitted: the oldest bytes kept), "
                               "stdout and stderr apart, as text (UTF-8, undecodable bytes replaced) or base64, at "
                               "most 4 MiB of each a call; next_cursor is the cursor to ask next. Once it ended, the read "
                               "that returns running false has the rest and its exit_code, and the process is "
                               "forgotten.",
                .input_schema = OBJ(P_PROCESS ",\"cursor\":{\"type\":\"string\",\"pattern\":\"^[0-9]{1,20}$\"},"
                                    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"],\"default\":\"text\"}",
                                    "\"process\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"process\",\"encoding\",\"stdout\",\"stderr\","
                                 "\"next_cursor\",\"running\",\"exit_code\"],\"properties\":{\"process\":{\"type\":\"string\"},"
                                 "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"]},"
                                 "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"
                                 "\"next_cursor\":{\"type\":\"string\"},\"running\":{\"type\":\"boolean\"}," S_EXIT_CODE "}}",
                .start = process_output_start, .on_reply = process_output_on_reply,
        },
        {
                .name = "process_kill", .title = "Signal a background process", .destructive = true,
                .description = "Sends `signal` (default KILL; a name such as TERM, or a number) to `process` and "
                               "its descendants.",
                .input_schema = OBJ(P_PROCESS ",\"signal\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":16,"
                                    "\"default\":\"KILL\"}", "\"process\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"process\",\"signal\",\"sent\"],\"properties\":{"
                                 "\"process\":{\"type\":\"string\"},\"signal\":{\"type\":\"string\"},"
                                 "\"sent\":{\"type\":\"boolean\"}}}",
                .start = process_kill_start, .on_reply = process_kill_on_reply,
        },
        {
                .name = "file_read", .title = "Read a file of a sandbox", .read_only = true, .idempotent = true,
                .description = "The contents of the file at the absolute `path` in the running sandbox, read with its "
                               "owner's rights (at most 4 MiB): as text (UTF-8, undecodable bytes replaced) or "
                               "base64.",
                .input_schema = OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\",\"minLength\":2},"
                                    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"],\"default\":\"text\"}",
                                    "\"sandbox\",\"path\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"path\",\"size\",\"encoding\",\"content\"],"
                                 "\"properties\":{\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
                                 "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"]},"
                                 "\"content\":{\"type\":\"string\"}}}",
                .start = file_read_start, .on_reply = file_read_on_reply,
        },
        {
                .name = "file_write", .title = "Write a file in a sandbox", .destructive = true, .idempotent = true,
                .description = "Writes `content` to the absolute `path` in the running sandbox with its owner's "
                               "rights, replacing the file; the directory must exist. The file appears whole or "
                               "not at all.",
                .input_schema = OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\",\"minLength\":2},"
                                    "\"content\":{\"type\":\"string\"},"
                                    "\"encoding\":{\"type\":\"string\",\"enum\":[\"text\",\"base64\"],\"default\":\"text\"},"
                                    "\"mode\":{\"type\":\"integer\",\"minimum\":0,\"maximum\":511,\"default\":420,"
                                    "\"description\":\"Permission bits (default 0644).\"}",
                                    "\"sandbox\",\"path\",\"content\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"path\",\"size\"],\"properties\":{"
                                 "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"}}}",
                .start = file_write_start, .on_reply = file_write_on_reply,
        },
        {
                .name = "file_list", .title = "List files of a sandbox", .read_only = true, .idempotent = true,
                .description = "The entries below the absolute directory `path` in the running sandbox, read with "
                               "its owner's rights: `depth` levels (default 1, at most 32), at most `limit` entries "
                               "(default 1000, at most 100000; `truncated` says when there were more). Symbolic "
                               "links are listed, never followed.",
                .input_schema = OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\",\"minLength\":1},"
                                    "\"depth\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":32,\"default\":1},"
                                    "\"limit\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":100000,\"default\":1000}",
                                    "\"sandbox\",\"path\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"path\",\"entries\",\"truncated\"],"
                                 "\"properties\":{\"path\":{\"type\":\"string\"},\"truncated\":{\"type\":\"boolean\"},"
                                 "\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\","
                                 "\"required\":[\"name\",\"kind\",\"size\",\"mtime_us\",\"mode\"],\"properties\":{"
                                 "\"name\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
                                 "\"size\":{\"type\":\"integer\"},\"mtime_us\":{\"type\":\"integer\"},"
                                 "\"mode\":{\"type\":\"integer\"}}}}}}",
                .start = file_list_start, .on_reply = file_list_on_reply,
        },
        {
                .name = "file_remove", .title = "Remove a file of a sandbox", .destructive = true, .idempotent = false,
                .description = "Removes the file, link or empty directory at the absolute `path` in the running "
                               "sandbox with its owner's rights; with `recursive`, a directory and everything in "
                               "it (links are removed, never followed). The sandbox's root is never removed.",
                .input_schema = OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\",\"minLength\":2},"
                                    "\"recursive\":{\"type\":\"boolean\",\"default\":false}",
                                    "\"sandbox\",\"path\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"path\",\"removed\"],\"properties\":{"
                                 "\"path\":{\"type\":\"string\"},\"removed\":{\"type\":\"boolean\"}}}",
                .start = file_remove_start, .on_reply = file_remove_on_reply,
        },
        {
                .name = "sandbox_ports", .title = "Published ports of a sandbox", .read_only = true, .idempotent = true,
                .description = "The ports the sandbox `name` publishes: host address, host port bound (picked when "
                               "the spec said 0) and guest port.",
                .input_schema = OBJ(P_NAME, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"ports\"],\"properties\":{\"ports\":{\"type\":\"array\","
                                 "\"items\":{\"type\":\"object\",\"required\":[\"host_address\",\"host_port\",\"guest_port\"],"
                                 "\"properties\":{\"host_address\":{\"type\":\"string\"},\"host_port\":{\"type\":\"integer\"},"
                                 "\"guest_port\":{\"type\":\"integer\"}}}}}}",
                .start = inspect_start, .on_reply = ports_reply,
        },
        {
                .name = "sandbox_usage", .title = "Resource usage of a sandbox", .read_only = true,
                .description = "The engine's one-shot statistics of the sandbox `name`: CPU time, memory and its "
                               "limit, processes, network bytes.",
                .input_schema = OBJ(P_NAME, "\"name\""),
                .output_schema = "{\"type\":\"object\",\"required\":[\"cpu_usage_ns\",\"memory_bytes\",\"memory_limit_bytes\","
                                 "\"pids\"],\"properties\":{\"cpu_usage_ns\":{\"type\":\"integer\"},"
                                 "\"memory_bytes\":{\"type\":\"integer\"},\"memory_limit_bytes\":{\"type\":\"integer\"},"
                                 "\"pids\":{\"type\":\"integer\"},\"net_rx_bytes\":{\"type\":\"integer\"},"
                                 "\"net_tx_bytes\":{\"type\":\"integer\"}},\"additionalProperties\":true}",
                .start = usage_start, .on_reply = dict_reply,
        },
        {
                .name = "policy", .title = "The host policy", .read_only = true, .idempotent = true,
                .description = "What the host policy allows the calling user: default and allowed images, volume "
                               "roots, CPU and memory limits, how many sandboxes and processes at once.",
                .input_schema = NO_ARGS,
                .output_schema = "{\"type\":\"object\",\"required\":[\"default_image\",\"allowed_images\"],\"properties\":{"
                                 "\"default_image\":{\"type\":\"string\"},\"allowed_images\":{\"type\":\"array\","
                                 "\"items\":{\"type\":\"string\"}},\"volume_roots\":{\"type\":\"array\"},"
                                 "\"max_cpus\":{\"type\":\"integer\"},\"max_memory_mib\":{\"type\":\"integer\"},"
                                 "\"max_sandboxes_per_user\":{\"type\":\"integer\"}},\"additionalProperties\":true}",
                .start = policy_start, .on_reply = dict_reply,
        },
};
const size_t mcp_n_tools = ELEMENTSOF(mcp_tools);
