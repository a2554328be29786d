/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdarg.h>

#include "bus-manager.h"
#include "busstr.h"
#include "bus-sandbox.h"
#include "operation.h"

int bus_sandbox_path(const char *name, char **ret) {
        return sd_bus_path_encode(SBX_BUS_SANDBOX_PREFIX, name, ret);
}

/* Who may read an object's properties: its owner and root. Others go through
 * InspectSandbox, where polkit is asked about manage-others. A property read
 * with no call behind it is a broadcast (PropertiesChanged, InterfacesAdded):
 * it carries no spec contents. */
static int may_read(sd_bus *bus, const SandboxEntry *e, bool *ret_broadcast, sd_bus_error *error) {
        sd_bus_message *call = sd_bus_get_current_message(bus);
        uid_t uid;

        *ret_broadcast = !call;
        if (!call)
                return 0;
        if (bus_caller_uid(call, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if (uid == 0 || (e->owner_valid && e->owner == uid))
                return 0;
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "Sandbox '%s' belongs to another user; its Inspect asks for manage-others", e->display);
}

static int append_value(sd_bus_message *reply, const SandboxEntry *e, const char *property, bool broadcast) {
        if (streq(property, "Name"))
                return sd_bus_message_append(reply, "s", e->display);
        if (streq(property, "Owner"))
                return sd_bus_message_append(reply, "u", (uint32_t) e->owner);
        if (streq(property, "ContainerId"))
                return sd_bus_message_append(reply, "s", e->container_id ?: "");
        if (streq(property, "State"))
                return sd_bus_message_append(reply, "s", sbx_state_to_string(e->state));
        if (streq(property, "Status"))
                return sd_bus_message_append(reply, "s", e->status ?: "");
        if (streq(property, "Image"))
                return sd_bus_message_append(reply, "s", broadcast ? "" : e->image ?: "");
        if (streq(property, "Fingerprint"))
                return sd_bus_message_append(reply, "s", broadcast ? "" : e->fingerprint ?: "");
        if (streq(property, "Verdict"))
                return sd_bus_message_append(reply, "s", sbx_verdict_to_string(e->verdict));
        if (streq(property, "CreatedAt"))
                return sd_bus_message_append(reply, "t", e->created_us);
        return -ENOENT;
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        bool broadcast;
        int r = may_read(bus, e, &broadcast, error);

        return r < 0 ? r : append_value(reply, e, property, broadcast);
}

/* The properties as the vtable below has them: signature, and whether a change is
 * announced with the value (or only invalidated: spec contents). */
static const struct {
        const char *name, *signature;
        bool invalidates;
} properties[] = {
        { "Name", "s", false }, { "Owner", "u", false }, { "ContainerId", "s", false },
        { "State", "s", false }, { "Status", "s", false }, { "Image", "s", true },
        { "Fingerprint", "s", true }, { "Verdict", "s", false }, { "CreatedAt", "t", false },
};

static int append_property(sd_bus_message *m, const SandboxEntry *e, size_t i) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', properties[i].name)) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', properties[i].signature)) < 0 ||
            (r = append_value(m, e, properties[i].name, true)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int bus_sandbox_append_interfaces(sd_bus_message *m, const SandboxEntry *e) {
        static const char *const standard[] = {
                "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
        };
        int r;

        if ((r = sd_bus_message_append(m, "o", e->path)) < 0 || (r = sd_bus_message_open_container(m, 'a', "{sa{sv}}")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(standard); i++)
                if ((r = sd_bus_message_append(m, "{sa{sv}}", standard[i], 0)) < 0)
                        return r;
        if ((r = sd_bus_message_open_container(m, 'e', "sa{sv}")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', SBX_BUS_SANDBOX_INTERFACE)) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        /* As sd-bus's own: the values of the properties that announce them. */
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (!properties[i].invalidates && (r = append_property(m, e, i)) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static bool named(const char *const *names, const char *name) {
        for (; names && *names; names++)
                if (streq(*names, name))
                        return true;
        return false;
}

int bus_sandbox_append_changed(sd_bus_message *m, const SandboxEntry *e, const char *const *names) {
        int r;

        if ((r = sd_bus_message_append(m, "s", SBX_BUS_SANDBOX_INTERFACE)) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (!properties[i].invalidates && named(names, properties[i].name) &&
                    (r = append_property(m, e, i)) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_open_container(m, 'a', "s")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (properties[i].invalidates && named(names, properties[i].name) &&
                    (r = sd_bus_message_append_basic(m, 's', properties[i].name)) < 0)
                        return r;
        return sd_bus_message_close_container(m);
}

#define ENTRY_METHOD(fn, verb)                                                                  \
        static int fn(sd_bus_message *msg, void *userdata, sd_bus_error *error) {              \
                SandboxEntry *e = userdata;                                                     \
                return operation_start(e->manager, msg, verb,                                   \
                                       &(OperationArgs) { .object = e }, error);               \
        }
ENTRY_METHOD(method_start, VERB_START)
ENTRY_METHOD(method_delete, VERB_DELETE)
ENTRY_METHOD(method_inspect, VERB_INSPECT)
ENTRY_METHOD(method_usage, VERB_USAGE)
#undef ENTRY_METHOD

static int method_stop(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_stop(msg, e->manager, NULL, e, error);
}

static int method_snapshot(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_snapshot(msg, e->manager, NULL, e, error);
}

static int method_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_exec(msg, e->manager, NULL, e, false, error);
}

static int method_start_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_exec(msg, e->manager, NULL, e, true, error);
}

static int method_copy_to(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_copy(msg, e->manager, NULL, e, true, error);
}

static int method_copy_from(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_copy(msg, e->manager, NULL, e, false, error);
}

static int method_verify(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        return bus_method_verify(msg, e->manager, NULL, e, error);
}

#define PROP(name, sig, flags) SD_BUS_PROPERTY(name, sig, property_get, 0, flags)

static const sd_bus_vtable sandbox_vtable[] = {
        SD_BUS_VTABLE_START(0),
        PROP("Name", "s", SD_BUS_VTABLE_PROPERTY_CONST),
        PROP("Owner", "u", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("ContainerId", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("State", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("Status", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        /* spec contents: never in a broadcast */
        PROP("Image", "s", SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        PROP("Fingerprint", "s", SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        PROP("Verdict", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("CreatedAt", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_start, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT, method_stop,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Delete", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Snapshot", SD_BUS_ARGS("s", snapshot_id), SD_BUS_RESULT("s", image_id),
                                method_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Verify", SD_BUS_ARGS("a{sv}", spec),
                                SD_BUS_RESULT("s", verdict, "as", mismatched_fields), method_verify,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inspect", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", inspection), method_inspect,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Exec", SD_BUS_ARGS("as", argv, "a{sv}", options),
                                SD_BUS_RESULT("i", exit_status, "ay", stdout, "ay", stderr, "b", truncated),
                                method_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StartExec",
                                SD_BUS_ARGS("as", argv, "a{sv}", options, "h", stdin, "h", stdout, "h", stderr),
                                SD_BUS_RESULT("o", exec), method_start_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyTo", SD_BUS_ARGS("s", guest_dir, "h", tar, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_copy_to, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyFrom", SD_BUS_ARGS("s", guest_path, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_from, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetUsage", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", usage), method_usage,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

static int find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        SandboxEntry *e;

        if (sd_bus_path_decode(path, SBX_BUS_SANDBOX_PREFIX, &name) <= 0)
                return 0;
        e = manager_get_sandbox(userdata, name);
        if (!e)
                return 0;
        *found = e;
        return 1;
}

typedef struct Enumeration {
        char **paths;
        size_t n;
        bool all;
        uid_t uid;
        int r;
} Enumeration;

static void enumerate_one(SandboxEntry *e, void *userdata) {
        Enumeration *en = userdata;

        if (en->r < 0 || !(en->all || (e->owner_valid && e->owner == en->uid)))
                return;
        en->paths[en->n] = strdup(e->path);
        if (!en->paths[en->n])
                en->r = -ENOMEM;
        else
                en->n++;
}

static void count_one(SandboxEntry *e, void *userdata) {
        (*(size_t *) userdata)++;
}

/* Introspection and the ObjectManager show a caller its own sandboxes (root:
 * everyone's). polkit cannot be asked from here, so manage-others holders see
 * the others through ListSandboxes. */
static int enumerate(sd_bus *bus, const char *path, void *userdata, char ***ret_nodes, sd_bus_error *error) {
        Manager *m = userdata;
        sd_bus_message *call = sd_bus_get_current_message(bus);
        Enumeration en = {};
        size_t total = 0;

        if (!call || bus_caller_uid(call, &en.uid) < 0) {
                *ret_nodes = NULL;
                return 0;
        }
        en.all = en.uid == 0;
        manager_foreach_sandbox(m, count_one, &total);
        en.paths = calloc(total + 1, sizeof(char *));
        if (!en.paths)
                return -ENOMEM;
        manager_foreach_sandbox(m, enumerate_one, &en);
        if (en.r < 0) {
                for (size_t i = 0; i < en.n; i++)
                        free(en.paths[i]);
                free(en.paths);
                return en.r;
        }
        *ret_nodes = en.paths;
        return 0;
}

int bus_sandbox_register(Manager *m) {
        int r = sd_bus_add_fallback_vtable(m->bus, NULL, SBX_BUS_SANDBOX_PREFIX, SBX_BUS_SANDBOX_INTERFACE,
                                           sandbox_vtable, find, m);
        if (r < 0)
                return r;
        return sd_bus_add_node_enumerator(m->bus, NULL, SBX_BUS_SANDBOX_PREFIX, enumerate, m);
}

/* Inspection ---------------------------------------------------------------- */

static int append_entry(sd_bus_message *r, const char *key, const char *sig, ...) {
        va_list ap;
        int k;

        if ((k = sd_bus_message_open_container(r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(r, 'v', sig)) < 0)
                return k;
        va_start(ap, sig);
        k = sd_bus_message_appendv(r, sig, ap);
        va_end(ap);
        if (k < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        return sd_bus_message_close_container(r);
}

static int open_entry(sd_bus_message *r, const char *key, const char *sig) {
        int k;

        if ((k = sd_bus_message_open_container(r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(r, 'v', sig)) < 0)
                return k;
        return sd_bus_message_open_container(r, 'a', sig + 1);
}

static int close_entry(sd_bus_message *r) {
        int k;

        if ((k = sd_bus_message_close_container(r)) < 0 || (k = sd_bus_message_close_container(r)) < 0)
                return k;
        return sd_bus_message_close_container(r);
}

/* Strings sd-bus cannot carry (Unicode noncharacters, which Docker and xagent
 * accept) never make an inspection fail: when any string of a key's value cannot
 * be sent as it is, every string of that key is sent escaped
 * (sbx_bus_string_escape()) and the key is listed in "escaped". */
typedef struct Inspection {
        sd_bus_message *r;
        bool escape;            /* the strings of the key being written */
        const char *escaped[16];   /* at most the 13 keys holding Docker's strings */
        size_t n_escaped;
} Inspection;

static void begin_key(Inspection *in, const char *key, bool ok) {
        in->escape = !ok;
        if (!ok && in->n_escaped < ELEMENTSOF(in->escaped))
                in->escaped[in->n_escaped++] = key;
}

static int put_str(Inspection *in, const char *s) {
        _cleanup_free_ char *e = NULL;
        int k;

        if (!in->escape)
                return sd_bus_message_append_basic(in->r, 's', s);
        if ((k = sbx_bus_string_escape(s, &e)) < 0)
                return k;
        return sd_bus_message_append_basic(in->r, 's', e);
}

static int append_string(Inspection *in, const char *key, const char *s) {
        int k;

        begin_key(in, key, sbx_bus_string_ok(s));
        if ((k = sd_bus_message_open_container(in->r, 'e', "sv")) < 0 ||
            (k = sd_bus_message_append_basic(in->r, 's', key)) < 0 ||
            (k = sd_bus_message_open_container(in->r, 'v', "s")) < 0 ||
            (k = put_str(in, s)) < 0 ||
            (k = sd_bus_message_close_container(in->r)) < 0)
                return k;
        return sd_bus_message_close_container(in->r);
}

static bool pairs_ok(const SbxEnvVar *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (!sbx_bus_string_ok(v[i].key) || !sbx_bus_string_ok(v[i].value))
                        return false;
        return true;
}

static int append_pairs(Inspection *in, const char *key, const SbxEnvVar *v, size_t n) {
        int k = open_entry(in->r, key, "a{ss}");

        begin_key(in, key, pairs_ok(v, n));
        for (size_t i = 0; k >= 0 && i < n; i++)
                if ((k = sd_bus_message_open_container(in->r, 'e', "ss")) >= 0 && (k = put_str(in, v[i].key)) >= 0 &&
                    (k = put_str(in, v[i].value)) >= 0)
                        k = sd_bus_message_close_container(in->r);
        return k < 0 ? k : close_entry(in->r);
}

static bool volumes_ok(const SbxObserved *o) {
        for (size_t i = 0; i < o->n_volumes; i++)
                if (!sbx_bus_string_ok(o->volumes[i].host) || !sbx_bus_string_ok(o->volumes[i].guest) ||
                    !sbx_bus_string_ok(o->volumes[i].mode))
                        return false;
        return true;
}

static int append_volumes(Inspection *in, const SbxObserved *o) {
        int k = open_entry(in->r, "volumes", "a(sss)");

        begin_key(in, "volumes", volumes_ok(o));
        for (size_t i = 0; k >= 0 && i < o->n_volumes; i++)
                if ((k = sd_bus_message_open_container(in->r, 'r', "sss")) >= 0 &&
                    (k = put_str(in, o->volumes[i].host)) >= 0 && (k = put_str(in, o->volumes[i].guest)) >= 0 &&
                    (k = put_str(in, o->volumes[i].mode)) >= 0)
                        k = sd_bus_message_close_container(in->r);
        return k < 0 ? k : close_entry(in->r);
}

static int append_networks(Inspection *in, const SbxObserved *o) {
        int k = open_entry(in->r, "networks", "as");
        bool ok = true;

        for (size_t i = 0; i < o->n_runtime_networks; i++)
                ok = ok && sbx_bus_string_ok(o->runtime_networks[i]);
        begin_key(in, "networks", ok);
        for (size_t i = 0; k >= 0 && i < o->n_runtime_networks; i++)
                k = put_str(in, o->runtime_networks[i]);
        return k < 0 ? k : close_entry(in->r);
}

static int append_ports(sd_bus_message *r, const SbxObserved *o) {
        int k = open_entry(r, "ports", "a(qq)");

        for (size_t i = 0; k >= 0 && i < o->n_ports; i++)
                k = sd_bus_message_append(r, "(qq)", (uint16_t) o->ports[i].host, (uint16_t) o->ports[i].guest);
        return k < 0 ? k : close_entry(r);
}

/* What Docker bound: host port 0 shows the port it chose. Host addresses are IP
 * literals Docker parsed; anything else is left out rather than sent. */
static int append_bound_ports(sd_bus_message *r, const SbxObserved *o) {
        int k = open_entry(r, "bound_ports", "a(sqq)");

        for (size_t i = 0; k >= 0 && i < o->n_bound_ports; i++) {
                const SbxBoundPort *b = &o->bound_ports[i];

                if (strspn(b->host_ip, "0123456789abcdefABCDEF.:") != strlen(b->host_ip))
                        continue;
                k = sd_bus_message_append(r, "(sqq)", b->host_ip, (uint16_t) b->host, (uint16_t) b->guest);
        }
        return k < 0 ? k : close_entry(r);
}

int bus_append_usage(sd_bus_message *reply, const SbxUsage *u) {
        int k;

        if ((k = sd_bus_message_open_container(reply, 'a', "{sv}")) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "cpu_usage_ns", "t", u->cpu_usage_ns)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "memory_bytes", "t", u->memory_bytes)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "memory_limit_bytes", "t", u->memory_limit_bytes)) < 0 ||
            (k = sd_bus_message_append(reply, "{sv}", "pids", "t", u->pids)) < 0)
                return k;
        if (u->has_net &&
            ((k = sd_bus_message_append(reply, "{sv}", "net_rx_bytes", "t", u->net_rx_bytes)) < 0 ||
             (k = sd_bus_message_append(reply, "{sv}", "net_tx_bytes", "t", u->net_tx_bytes)) < 0))
                return k;
        return sd_bus_message_close_container(reply);
}

/* The strings Docker reports, each possibly escaped. */
static int append_docker_strings(Inspection *in, const SbxSandbox *s) {
        const SbxObserved *o = s->observed;
        int k;

        if ((k = append_string(in, "status", s->status)) < 0 ||
            (k = append_string(in, "container_id", s->container_id)) < 0 ||
            (k = append_string(in, "image_ref", o->image_ref ?: "")) < 0 ||
            (k = append_string(in, "image_id", o->image_digest ?: "")) < 0 ||
            (k = append_pairs(in, "env", o->env, o->n_env)) < 0 ||
            (k = append_volumes(in, o)) < 0 ||
            (k = append_networks(in, o)) < 0 ||
            (k = append_pairs(in, "labels", o->labels, o->n_labels)) < 0 ||
            (k = append_string(in, "created_at", o->created_at ?: "")) < 0 ||
            (k = append_string(in, "working_dir", o->working_dir ?: "")) < 0 ||
            (k = append_string(in, "fingerprint_label", o->fingerprint_label ?: "")) < 0 ||
            (k = append_string(in, "version_label", o->version_label ?: "")) < 0)
                return k;
        return append_string(in, "user", o->user ?: "");
}

int bus_append_inspection(sd_bus_message *r, const SbxSandbox *s) {
        const SbxObserved *o = s->observed;
        Inspection in = { .r = r };
        int k;

        if ((k = sd_bus_message_open_container(r, 'a', "{sv}")) < 0 ||
            (k = append_entry(r, "state", "s", sbx_state_to_string(s->state))) < 0 ||
            (k = append_entry(r, "nano_cpus", "t", (uint64_t) (o->has_raw_nano_cpus ? o->raw_nano_cpus : 0))) < 0 ||
            (k = append_entry(r, "memory_bytes", "t",
                              (uint64_t) (o->has_raw_memory_bytes ? o->raw_memory_bytes : 0))) < 0 ||
            (k = append_ports(r, o)) < 0 ||
            (k = append_bound_ports(r, o)) < 0 ||
            (k = append_entry(r, "network_isolated", "b", (int) o->network_isolated)) < 0 ||
            (k = append_entry(r, "owner", "u", (uint32_t) s->owner)) < 0 ||
            (k = append_entry(r, "hardened", "b", (int) s->hardened)) < 0 ||
            (k = append_entry(r, "verdict", "s", sbx_verdict_to_string(s->verdict))) < 0 ||
            (k = append_docker_strings(&in, s)) < 0 ||
            (k = open_entry(r, "escaped", "as")) < 0)
                return k;
        for (size_t i = 0; k >= 0 && i < in.n_escaped; i++)
                k = sd_bus_message_append_basic(r, 's', in.escaped[i]);
        if (k < 0 || (k = close_entry(r)) < 0)
                return k;
        return sd_bus_message_close_container(r);
}
