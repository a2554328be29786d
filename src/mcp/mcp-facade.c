/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The tools a model sees (docs/mcp.md, "Tools"): twelve, every one naming a sandbox
 * `sandbox` and a process `process`, small enough that tools/list stays under 12,000
 * characters. A tool with an `action` runs the operation of that name — mcp-tools.c's
 * table, and the three here (lifetimes, a lease held for the session, its release) —
 * with its arguments renamed as the operation reads them. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp-json.h"
#include "mcp-spec.h"
#include "mcp-tools.h"

/* ---- the operations of this file ------------------------------------------------- */

static int by_name(Call *c, const char *method, sd_bus_message **ret, const char **ret_name) {
        _cleanup_free_ char *error = NULL;
        int r;

        if (arg_string(c->args, "name", true, ret_name, &error) < 0) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "argument 'sandbox': is required");
                return -EINVAL;
        }
        r = sd_bus_message_new_method_call(c->server->bus, ret, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                           MCP_BUS_MANAGER, method);
        if (r >= 0)
                r = sd_bus_message_append(*ret, "s", *ret_name);
        if (r < 0)
                call_fail_errno(c, "building the bus call", r);
        return r;
}

static void send(Call *c, sd_bus_message *m) {
        int r = call_send_async(c, m);

        sd_bus_message_unref(m);
        if (r < 0)
                call_fail_errno(c, "calling the service", r);
}

/* m sent, or (r < 0: its arguments were wrong, -EINVAL with error, or it could not be
 * built) dropped and the call failed. */
static void send_or_fail(Call *c, sd_bus_message *m, int r, const char *error) {
        if (r >= 0) {
                send(c, m);
                return;
        }
        sd_bus_message_unref(m);
        if (r == -EINVAL)
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "invalid arguments");
        else
                call_fail_errno(c, "building the bus call", r);
}

static json_object *sandbox_result(Call *c, const char *key, json_object *value) {
        const char *name = NULL;
        char *ignored = NULL;
        json_object *o = json_object_new_object();

        (void) arg_string(c->args, "name", false, &name, &ignored);
        free(ignored);
        if (!o || sbx_json_put(o, "sandbox", json_object_new_string(name ?: "")) < 0 ||
            sbx_json_put(o, key, value) < 0)
                return json_object_put(o), NULL;
        return o;
}

/* SetSandboxLifetimes with the lifetimes given (at least one). */
static int lifetimes_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        const char *name;
        int r;

        if (by_name(c, "SetSandboxLifetimes", &m, &name) < 0)
                return 0;
        r = append_lifetime_options(m, c->args, &error);
        if (r == 0) {
                sd_bus_message_unref(m);
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", "action 'lifetimes': give idle_timeout, "
                          "expire_after, on_idle or idle_counts_processes");
                return 0;
        }
        send_or_fail(c, m, r, error);
        return 0;
}

/* SetSandboxEgress with the argument egress ({mode, allow}). */
static int egress_start(Call *c) {
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        json_object *egress = NULL;
        const char *name;
        int r;

        if (by_name(c, "SetSandboxEgress", &m, &name) < 0)
                return 0;
        if (!json_object_object_get_ex(c->args, "egress", &egress) || !egress)
                r = arg_error(&error, "egress", "is required for action 'egress'");
        else
                r = append_egress_value(m, egress, &error);
        send_or_fail(c, m, r, error);
        return 0;
}

static int lifetimes_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        *ret = sandbox_result(c, "changed", json_object_new_boolean(true));
        return *ret ? 0 : -ENOMEM;
}

static int lease_start(Call *c) {
        sd_bus_message *m = NULL;
        const char *name;
        int r;

        if (by_name(c, "AcquireSandbox", &m, &name) < 0)
                return 0;
        if ((r = sd_bus_message_append(m, "a{sv}", 0)) < 0) {
                sd_bus_message_unref(m);
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        send(c, m);
        return 0;
}

/* The lease's descriptor is kept until release or the end of the session. */
static int lease_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        Server *s = c->server;
        const char *name = NULL;
        char *ignored = NULL, **names;
        int fd, *fds, r;

        (void) arg_string(c->args, "name", false, &name, &ignored);
        free(ignored);
        if ((r = sd_bus_message_read(reply, "h", &fd)) < 0)
                return r;
        if (!(names = reallocarray(s->lease_names, s->n_leases + 1, sizeof(char *))))
                return -ENOMEM;
        s->lease_names = names;
        if (!(fds = reallocarray(s->lease_fds, s->n_leases + 1, sizeof(int))))
                return -ENOMEM;
        s->lease_fds = fds;
        if (!(names[s->n_leases] = strdup(name ?: "")))
                return -ENOMEM;
        if ((fds[s->n_leases] = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
                free(names[s->n_leases]);
                return -errno;
        }
        s->n_leases++;
        *ret = sandbox_result(c, "leased", json_object_new_boolean(true));
        return *ret ? 0 : -ENOMEM;
}

/* Nothing to ask the service: closing the descriptor ends the lease. */
static int release_start(Call *c) {
        Server *s = c->server;
        const char *name = NULL;
        char *ignored = NULL;
        bool released = false;

        (void) arg_string(c->args, "name", false, &name, &ignored);
        free(ignored);
        for (size_t i = 0; i < s->n_leases; i++)
                if (streq(s->lease_names[i], name ?: "")) {
                        safe_close(s->lease_fds[i]);
                        free(s->lease_names[i]);
                        s->lease_fds[i] = s->lease_fds[--s->n_leases];
                        s->lease_names[i] = s->lease_names[s->n_leases];
                        released = true;
                        break;
                }
        call_finish(c, sandbox_result(c, "released", json_object_new_boolean(released)));
        return 0;
}

/* ClaimSandbox: sandbox_ensure without a `sandbox` (docs/mcp.md). on_mismatch and
 * stop_timeout are about a sandbox found, which a claim never has. */
static int claim_start(Call *c) {
        static const char *const ensure_only[] = { "on_mismatch", "stop_timeout" };
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(ensure_only); i++)
                if (json_object_object_get_ex(c->args, ensure_only[i], NULL)) {
                        if (asprintf(&error, "argument '%s': only with `sandbox` (a claim makes a new one)",
                                     ensure_only[i]) < 0)
                                return -ENOMEM;
                        call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error);
                        return 0;
                }
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                           MCP_BUS_MANAGER, "ClaimSandbox");
        if (r >= 0)
                r = append_spec_args(m, c->args, &error);
        if (r >= 0)
                r = append_make_options(m, c->args, false, &error);
        send_or_fail(c, m, r, error);
        return 0;
}

/* The generated name is the result's `sandbox`, the name every other tool takes. */
static int claim_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        const char *path, *name, *fingerprint, *outcome;
        int r;

        if ((r = sd_bus_message_read(reply, "osss", &path, &name, &fingerprint, &outcome)) < 0)
                return r;
        if (!o || sbx_json_put(o, "sandbox", json_object_new_string(name)) < 0 ||
            sbx_json_put(o, "outcome", json_object_new_string(outcome)) < 0 ||
            sbx_json_put(o, "fingerprint", json_object_new_string(fingerprint)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

static const Tool ops[] = {
        { .name = "sandbox_claim", .start = claim_start, .on_reply = claim_reply },
        { .name = "sandbox_lifetimes", .start = lifetimes_start, .on_reply = lifetimes_reply },
        { .name = "sandbox_egress", .start = egress_start, .on_reply = lifetimes_reply },
        { .name = "sandbox_lease", .start = lease_start, .on_reply = lease_reply },
        { .name = "sandbox_release", .start = release_start },
};

void mcp_leases_done(Server *s) {
        for (size_t i = 0; i < s->n_leases; i++) {
                safe_close(s->lease_fds[i]);
                free(s->lease_names[i]);
        }
        free(s->lease_fds);
        free(s->lease_names);
}

/* An operation by name: this file's, or mcp-tools.c's. */
static const Tool *op_find(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (streq(ops[i].name, name))
                        return &ops[i];
        for (size_t i = 0; i < mcp_n_tools; i++)
                if (streq(mcp_tools[i].name, name))
                        return &mcp_tools[i];
        return NULL;
}

/* ---- the tools ------------------------------------------------------------------- */

#define STR(d) "{\"type\":\"string\",\"description\":\"" d "\"}"
#define INT(d) "{\"type\":\"integer\",\"minimum\":0,\"description\":\"" d "\"}"
#define P_SANDBOX "\"sandbox\":" STR("The sandbox's name (the calling user's own).")
#define P_PROCESS "\"process\":" STR("A process id from process_start or process action list.")
#define P_CMD "\"command\":{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"array\",\"items\":{\"type\":\"string\"}}]," \
        "\"description\":\"A string for /bin/sh -c, or an argv array.\"}"
#define P_ENV "\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}}"
#define P_WDIR "\"working_dir\":" STR("Absolute.")
#define P_ENC "\"encoding\":{\"enum\":[\"text\",\"base64\"]}"
#define P_SPEC \
        "\"image\":" STR("Image (default: the host's).") "," \
        "\"snapshot\":" STR("Made from this snapshot instead.") "," P_WDIR "," \
        "\"cpus\":" INT("CPUs.") ",\"memory\":" INT("MiB.") "," P_ENV "," \
        "\"volumes\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"host\":{\"type\":\"string\"}," \
                "\"guest\":{\"type\":\"string\"},\"mode\":{\"enum\":[\"ro\",\"rw\"]}},\"required\":[\"host\",\"guest\"]}}," \
        "\"ports\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{\"host\":{\"type\":\"integer\"}," \
                "\"guest\":{\"type\":\"integer\"}},\"required\":[\"guest\"]},\"description\":\"host 0: any free port.\"}," \
        "\"network_isolated\":{\"type\":\"boolean\"}"
#define P_LIFETIMES \
        "\"idle_timeout\":" INT("Seconds unused, then stopped (or paused: on_idle); 0 never.") "," \
        "\"expire_after\":" INT("Seconds (from now; at creation from then), then deleted; 0 never.") "," \
        "\"on_idle\":{\"enum\":[\"stop\",\"pause\"]}," \
        "\"idle_counts_processes\":{\"type\":\"boolean\",\"description\":\"A background process nobody reads " \
                "keeps it from idling (default false).\"}"
#define P_EGRESS \
        "\"egress\":{\"type\":\"object\",\"properties\":{\"mode\":{\"enum\":[\"default\",\"none\",\"allowlist\"]}," \
        "\"allow\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"description\":\"Network it may reach; " \
        "allow: CIDR[:PORT[/tcp|udp]] or NAME[:PORT].\"}"
#define ACTION(...) "\"action\":{\"enum\":[" __VA_ARGS__ "]}"
#define OBJ(props, required) \
        "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{" props "},\"required\":[" required "]}"
#define ANY_RESULT "{\"type\":\"object\"}"

static int facade_start(Call *c);

#define TOOL(n, t, d, in, ro, de, id) \
        { .name = n, .title = t, .description = d, .input_schema = in, .output_schema = ANY_RESULT, \
          .read_only = ro, .destructive = de, .idempotent = id, .start = facade_start }

const Tool mcp_agent_tools[] = {
        TOOL("sandbox_list", "List sandboxes",
             "Lists your sandboxes (name, state, owner, verdict), filtered by labels and state. Use it to find a "
             "sandbox you made earlier.",
             OBJ("\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
                 "\"state\":{\"enum\":[\"running\",\"paused\",\"stopped\"]}", ""), true, false, true),
        TOOL("sandbox_ensure", "Get or create a sandbox",
             "Use first: returns the running sandbox `sandbox` if it matches the spec (starting it if stopped), else "
             "creates it (on_mismatch recreate replaces a different one). Lifetimes given are applied to one found "
             "too. Without `sandbox`: a new one (warm if pooled) under a generated name (name_prefix), returned as "
             "`sandbox`. Then use run, file_*, process_*.",
             OBJ(P_SANDBOX "," P_SPEC ",\"labels\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"}},"
                 P_LIFETIMES "," P_EGRESS ",\"on_mismatch\":{\"enum\":[\"fail\",\"recreate\"]},\"stop_timeout\":" INT("Seconds.")
                 ",\"runtime\":" STR("runc (default) or a host policy runtime, e.g. gvisor (isolated, no volumes).") ","
                 "\"name_prefix\":{\"type\":\"string\"}", ""), false, true, false),
        TOOL("sandbox", "Change a sandbox",
             "Acts on a sandbox: start, stop (force revokes others' leases), pause, resume, delete, snapshot "
             "(snapshot_id), lifetimes (change idle_timeout, expire_after from now, on_idle, idle_counts_processes), "
             "egress (change what it may reach), lease (keep others from stopping or deleting it, and it from idling, for "
             "this session), release.",
             OBJ(P_SANDBOX "," ACTION("\"start\",\"stop\",\"pause\",\"resume\",\"delete\",\"snapshot\",\"lifetimes\","
                                      "\"egress\",\"lease\",\"release\"") "," P_EGRESS ","
                 "\"timeout\":" INT("stop: seconds before SIGKILL.") ",\"force\":{\"type\":\"boolean\"},"
                 "\"snapshot_id\":{\"type\":\"string\"}," P_LIFETIMES, "\"sandbox\",\"action\""), false, true, false),
        TOOL("sandbox_info", "Look at a sandbox",
             "Reads a sandbox: inspect (state, verdict, labels, lifetimes), ports (published host ports), usage "
             "(CPU, memory, pids), verify (compare with a spec: the spec arguments as sandbox_ensure's).",
             OBJ(P_SANDBOX "," ACTION("\"inspect\",\"ports\",\"usage\",\"verify\"") "," P_SPEC, "\"sandbox\""),
             true, false, true),
        TOOL("snapshot", "Snapshots",
             "Lists your snapshots, or deletes one (snapshot_id). Take one with the sandbox tool's action snapshot.",
             OBJ(ACTION("\"list\",\"delete\"") ",\"snapshot_id\":{\"type\":\"string\"}", "\"action\""),
             false, true, false),
        TOOL("run", "Run a command",
             "Runs `command` in the sandbox and waits for it: exit_code (124 timed out), stdout, stderr. For commands "
             "that end; use process_start for servers and long jobs. wait: seconds to queue when your runs are at "
             "their limit (parallel calls).",
             OBJ(P_SANDBOX "," P_CMD ",\"timeout\":" INT("Seconds (default 60).") "," P_ENV "," P_WDIR ","
                 "\"stdin\":{\"type\":\"string\"},\"output_limit\":" INT("Bytes kept a stream.") ","
                 "\"wait\":" INT("Seconds."), "\"sandbox\",\"command\""), false, false, false),
        TOOL("process_start", "Start a background process",
             "Starts `command` detached and returns its `process` id at once: for servers and long jobs. It outlives "
             "this session; read it with the process tool.",
             OBJ(P_SANDBOX "," P_CMD "," P_ENV "," P_WDIR ",\"wait\":" INT("Seconds."), "\"sandbox\",\"command\""),
             false, false, false),
        TOOL("process", "A background process",
             "output: what `process` wrote since `cursor` (omitted: the oldest kept; pass next_cursor back; the read "
             "with running false is the last); kill (signal, default KILL); list: the processes of `sandbox`.",
             OBJ(P_PROCESS "," P_SANDBOX "," ACTION("\"output\",\"kill\",\"list\"") ",\"cursor\":{\"type\":\"string\"},"
                 P_ENC ",\"signal\":{\"type\":\"string\"}", "\"action\""), false, true, false),
        TOOL("file_read", "Read a file",
             "Reads a file of the sandbox (at most 4 MiB): text, or base64 with encoding.",
             OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\"}," P_ENC, "\"sandbox\",\"path\""), true, false, true),
        TOOL("file_write", "Write a file",
             "Writes a whole file in the sandbox (its directory must exist); content as text or base64.",
             OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}," P_ENC ","
                 "\"mode\":{\"type\":\"integer\"}", "\"sandbox\",\"path\",\"content\""), false, true, true),
        TOOL("files", "List or remove files",
             "list: the entries under a directory of the sandbox (depth, limit); remove: a file or (recursive) a tree.",
             OBJ(P_SANDBOX ",\"path\":{\"type\":\"string\"}," ACTION("\"list\",\"remove\"") ","
                 "\"depth\":{\"type\":\"integer\"},\"limit\":{\"type\":\"integer\"},\"recursive\":{\"type\":\"boolean\"}",
                 "\"sandbox\",\"path\",\"action\""), false, true, false),
        TOOL("policy", "What the host allows",
             "The host policy for you: images, volume roots, limits. Use it before choosing an image or lifetimes.",
             "{\"type\":\"object\",\"additionalProperties\":false,\"properties\":{}}", true, false, true),
};
const size_t mcp_n_agent_tools = ELEMENTSOF(mcp_agent_tools);

/* Each tool's actions (the first is the default) and the operation of each. */
static const struct {
        const char *tool, *action, *op;
} routes[] = {
        { "sandbox_list", NULL, "sandbox_list" },
        { "sandbox_ensure", NULL, "sandbox_ensure" },
        { "sandbox", "start", "sandbox_start" },
        { "sandbox", "stop", "sandbox_stop" },
        { "sandbox", "pause", "sandbox_pause" },
        { "sandbox", "resume", "sandbox_resume" },
        { "sandbox", "delete", "sandbox_delete" },
        { "sandbox", "snapshot", "sandbox_snapshot" },
        { "sandbox", "lifetimes", "sandbox_lifetimes" },
        { "sandbox", "egress", "sandbox_egress" },
        { "sandbox", "lease", "sandbox_lease" },
        { "sandbox", "release", "sandbox_release" },
        { "sandbox_info", "inspect", "sandbox_inspect" },
        { "sandbox_info", "ports", "sandbox_ports" },
        { "sandbox_info", "usage", "sandbox_usage" },
        { "sandbox_info", "verify", "sandbox_verify" },
        { "snapshot", "list", "snapshot_list" },
        { "snapshot", "delete", "snapshot_delete" },
        { "run", NULL, "run" },
        { "process_start", NULL, "process_start" },
        { "process", "output", "process_output" },
        { "process", "kill", "process_kill" },
        { "process", "list", "process_list" },
        { "file_read", NULL, "file_read" },
        { "file_write", NULL, "file_write" },
        { "files", "list", "file_list" },
        { "files", "remove", "file_remove" },
        { "policy", NULL, "policy" },
};

static const char *route(const char *tool, const char *action) {
        for (size_t i = 0; i < ELEMENTSOF(routes); i++)
                if (streq(routes[i].tool, tool) && (!action || !routes[i].action || streq(routes[i].action, action)))
                        return routes[i].op;
        return NULL;
}

/* The operations that read the sandbox as "name" (mcp-tools.c's lifecycle ones). */
static bool reads_name(const char *op) {
        return !streq(op, "run") && !streq(op, "process_start") && !streq(op, "process_list") &&
                !startswith(op, "file_") && (startswith(op, "sandbox_"));
}

static int facade_start(Call *c) {
        _cleanup_(json_object_putp) json_object *args = json_object_new_object();
        const char *action = NULL, *op_name;
        const Tool *op;
        char *error = NULL;

        if (!args)
                return -ENOMEM;
        if (arg_string(c->args, "action", false, &action, &error) < 0) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error);
                free(error);
                return 0;
        }
        op_name = route(c->tool->name, action);
        if (streq_ptr(op_name, "sandbox_ensure") && !json_object_object_get_ex(c->args, "sandbox", NULL))
                op_name = "sandbox_claim";
        else if (json_object_object_get_ex(c->args, "name_prefix", NULL)) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs",
                          "argument 'name_prefix': only without `sandbox` (the name is then generated)");
                return 0;
        }
        if (!op_name || !(op = op_find(op_name))) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", "argument 'action': not one of this tool's");
                return 0;
        }
        json_object_object_foreach(c->args, key, value) {
                const char *as = streq(key, "sandbox") && reads_name(op_name) ? "name" : key;

                if (!streq(key, "action") && json_object_object_add(args, as, json_object_get(value)) < 0)
                        return -ENOMEM;
        }
        json_object_put(c->args);
        c->args = TAKE_PTR(args);
        c->tool = op;
        return op->start(c);
}
