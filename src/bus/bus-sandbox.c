/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>

#include "bus-args.h"
#include "bus-egress.h"
#include "bus-exec.h"
#include "bus-labels.h"
#include "bus-sandbox.h"
#include "bus-spec.h"
#include "operation.h"
#include "reconcile.h"

/* An entry's Manager: the one whose registry holds it. */
static Manager *manager_of(const SandboxEntry *e) {
        return (Manager *) ((char *) e->registry - offsetof(Manager, registry));
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
        if (caller_cache_uid(&manager_of(e)->callers, call, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if (uid == 0 || (e->owner_valid && e->owner == uid))
                return 0;
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "Sandbox '%s' belongs to another user; its Inspect asks for manage-others", e->display);
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        SandboxEntry *e = userdata;
        bool broadcast;
        int r = may_read(bus, e, &broadcast, error);

        if (r < 0)
                return r;
        /* What Docker says of it, past observation_max_age: looked at again, the
         * change announced (docs/api.md, "Reads from observations"). */
        if (!broadcast && (streq(property, "Verdict") || streq(property, "State") || streq(property, "Status")))
                manager_relook(manager_of(e), e);
        return sandbox_entry_append_property(reply, e, property, broadcast);
}

/* The method bodies, shared with the Manager's by-name methods (bus-manager.c):
 * name (in the caller's namespace) or object (that sandbox, its owner's) is set. */

int bus_sandbox_method_simple(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, Verb verb,
                              sd_bus_error *error) {
        return operation_start(m, msg, verb, &(OperationArgs) { .name = name, .object = object }, error);
}

static const char *target_of(const char *name, const SandboxEntry *object) {
        return name ?: object->display;
}

int bus_sandbox_method_verify(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                              sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = bus_read_spec_arg(msg, m, false, &spec, &e)) < 0)
                return operation_refuse(m, msg, VERB_VERIFY, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_VERIFY,
                               &(OperationArgs) { .name = name, .object = object,
                                                  .verify = { .spec = TAKE_PTR(spec) } }, error);
}

int bus_sandbox_method_stop(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                            sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxStopOptions options;
        int r;

        if ((r = sbx_bus_read_stop_options(msg, &options, &e)) < 0)
                return operation_refuse(m, msg, VERB_STOP, target_of(name, object), &e, r, error);
        if ((r = bus_check_stop_timeout(m, "timeout", options.timeout, &e)) < 0)
                return operation_refuse(m, msg, VERB_STOP, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_STOP,
                               &(OperationArgs) { .name = name, .object = object,
                                                  .stop = { .timeout_s = options.timeout, .force = options.force } },
                               error);
}

/* (a{sv} egress): checked against the policy here, before polkit is asked; whether the
 * sandbox is network_isolated is the lifecycle's to tell. */
int bus_sandbox_method_set_egress(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                  sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        int r;

        if ((r = sbx_bus_read_egress(msg, &egress, &e)) < 0 ||
            (r = sbx_egress_admit(m->policy, &egress, false, &e)) < 0)
                return operation_refuse(m, msg, VERB_SET_EGRESS, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_SET_EGRESS,
                               &(OperationArgs) { .name = name, .object = object,
                                                  .egress = { .egress = sbx_egress_take(&egress) } }, error);
}

/* (a{sv} options): none yet. The lease's descriptor is the reply's. */
int bus_sandbox_method_acquire(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                               sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        int r = sbx_bus_read_no_options(msg, &e);

        if (r < 0)
                return operation_refuse(m, msg, VERB_ACQUIRE, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_ACQUIRE, &(OperationArgs) { .name = name, .object = object }, error);
}

/* (a{sv} options): the lifetime keys, each bounded by the policy; what is not given stays. */
int bus_sandbox_method_set_lifetimes(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                     sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxLifetime lifetime;
        int r;

        if ((r = sbx_bus_read_lifetime_options(msg, &lifetime, &e)) < 0 ||
            (r = sbx_lifetime_check_policy(&lifetime, m->policy, &e)) < 0)
                return operation_refuse(m, msg, VERB_SET_LIFETIMES, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_SET_LIFETIMES,
                               &(OperationArgs) { .name = name, .object = object,
                                                  .lifetimes = { .lifetime = lifetime } }, error);
}

int bus_sandbox_method_snapshot(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *id;
        int r;

        if ((r = bus_read_snapshot_id(msg, &id, &e)) < 0)
                return operation_refuse(m, msg, VERB_SNAPSHOT, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_SNAPSHOT,
                               &(OperationArgs) { .name = name, .object = object, .snapshot_id = id }, error);
}

int bus_sandbox_method_exec(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                            bool streaming, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        OperationArgs args = { .name = name, .object = object,
                               .exec = { .fds = { -1, -1, -1 }, .publish = streaming ? bus_exec_publish : NULL } };
        Verb verb = streaming ? VERB_START_EXEC : VERB_EXEC;
        int r;

        if ((r = sbx_bus_read_argv(msg, &args.exec.argv, &e)) < 0 ||
            (r = sbx_bus_read_exec_options(msg, streaming, &args.exec.options, &e)) < 0 ||
            (streaming && (r = bus_read_fds(msg, args.exec.fds, &e)) < 0)) {
                operation_args_done(&args, verb);
                return operation_refuse(m, msg, verb, name ?: object->display, &e, r, error);
        }
        return operation_start(m, msg, verb, &args, error);
}

/* (s guest path, h tar, a{sv} options): options: resume b. */
int bus_sandbox_method_copy(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool to,
                            sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *field = to ? "guest_dir" : "guest_path", *path = NULL;
        OperationArgs args = { .name = name, .object = object, .copy = { .fd = -1 } };
        Verb verb = to ? VERB_COPY_TO : VERB_COPY_FROM;
        int fd, r;

        r = sd_bus_message_read(msg, "sh", &path, &fd);
        if (r < 0)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "%s, tar: malformed", field);
        else if (path[0] != '/' || strlen(path) > SBX_MAX_PATH_LEN)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "%s: '%.64s' is not an absolute path", field, path);
        else if ((r = bus_take_caller_fd(fd, "tar", &args.copy.fd, &e)) >= 0)
                r = sbx_bus_read_copy_options(msg, &args.copy.resume, &e);
        if (r < 0) {
                operation_args_done(&args, verb);
                return operation_refuse(m, msg, verb, name ?: object->display, &e, r, error);
        }
        args.copy.guest_path = path;
        return operation_start(m, msg, verb, &args, error);
}

static SbxFileVerb file_verb_of(Verb verb) {
        switch (verb) {
        case VERB_READ_FILE:
                return SBX_FILE_READ;
        case VERB_WRITE_FILE:
                return SBX_FILE_WRITE;
        case VERB_LIST_FILES:
                return SBX_FILE_LIST;
        default:
                return SBX_FILE_REMOVE;
        }
}

/* (s path[, ay data], a{sv} options). WriteFile's data stays in the call's message,
 * which the operation holds until its reply. */
int bus_sandbox_method_file(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, Verb verb,
                            sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        OperationArgs args = { .name = name, .object = object, .file = { .fd = -1 } };
        FileArgs *a = &args.file;
        int r = sbx_bus_read_file_path(msg, &a->guest_path, &e);

        if (r >= 0 && verb == VERB_WRITE_FILE) {
                r = sd_bus_message_read_array(msg, 'y', &a->data, &a->data_size);
                if (r < 0)
                        r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "data: malformed (%s)", strerror(-r));
                else if ((uint64_t) a->data_size > (uint64_t) m->policy->max_file_bytes)
                        r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "data: %zu bytes, more than the host policy's "
                                          "max_file_bytes (%" PRIi64 ")", a->data_size, m->policy->max_file_bytes);
        }
        if (r >= 0)
                r = sbx_bus_read_file_options(msg, file_verb_of(verb), &a->options, &e);
        /* Option fd: the data goes through the descriptor, bounded by the disk budget
         * alone; the message's data must then be empty. */
        if (r >= 0 && a->options.fd >= 0 && a->data_size > 0)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "data: %zu bytes with option fd; the data comes "
                                  "from fd alone (pass empty data)", a->data_size);
        if (r >= 0 && a->options.fd >= 0)
                r = bus_take_caller_fd(a->options.fd, "fd", &a->fd, &e);
        if (r < 0) {
                operation_args_done(&args, verb);
                return operation_refuse(m, msg, verb, target_of(name, object), &e, r, error);
        }
        return operation_start(m, msg, verb, &args, error);
}

/* The object's handlers: the body with the object. */
#define ENTRY_METHOD(fn, call)                                                                  \
        static int fn(sd_bus_message *msg, void *userdata, sd_bus_error *error) {              \
                SandboxEntry *e = userdata;                                                     \
                return call;                                                                    \
        }
ENTRY_METHOD(method_start, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_START, error))
ENTRY_METHOD(method_delete, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_DELETE, error))
ENTRY_METHOD(method_pause, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_PAUSE, error))
ENTRY_METHOD(method_resume, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_RESUME, error))
ENTRY_METHOD(method_inspect, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_INSPECT, error))
ENTRY_METHOD(method_refresh, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_REFRESH, error))
ENTRY_METHOD(method_usage, bus_sandbox_method_simple(msg, manager_of(e), NULL, e, VERB_USAGE, error))
ENTRY_METHOD(method_stop, bus_sandbox_method_stop(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_set_egress, bus_sandbox_method_set_egress(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_acquire, bus_sandbox_method_acquire(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_snapshot, bus_sandbox_method_snapshot(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_set_lifetimes, bus_sandbox_method_set_lifetimes(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_verify, bus_sandbox_method_verify(msg, manager_of(e), NULL, e, error))
ENTRY_METHOD(method_exec, bus_sandbox_method_exec(msg, manager_of(e), NULL, e, false, error))
ENTRY_METHOD(method_start_exec, bus_sandbox_method_exec(msg, manager_of(e), NULL, e, true, error))
ENTRY_METHOD(method_copy_to, bus_sandbox_method_copy(msg, manager_of(e), NULL, e, true, error))
ENTRY_METHOD(method_list_execs, bus_exec_list(manager_of(e), msg, e->name, &e->owner, error))
ENTRY_METHOD(method_copy_from, bus_sandbox_method_copy(msg, manager_of(e), NULL, e, false, error))
ENTRY_METHOD(method_read_file, bus_sandbox_method_file(msg, manager_of(e), NULL, e, VERB_READ_FILE, error))
ENTRY_METHOD(method_write_file, bus_sandbox_method_file(msg, manager_of(e), NULL, e, VERB_WRITE_FILE, error))
ENTRY_METHOD(method_list_files, bus_sandbox_method_file(msg, manager_of(e), NULL, e, VERB_LIST_FILES, error))
ENTRY_METHOD(method_remove_file, bus_sandbox_method_file(msg, manager_of(e), NULL, e, VERB_REMOVE_FILE, error))
#undef ENTRY_METHOD

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
        /* the owner's metadata: never in a broadcast either */
        PROP("Labels", "a{ss}", SD_BUS_VTABLE_PROPERTY_EMITS_INVALIDATION),
        PROP("Leases", "u", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("LastActivity", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("IdleTimeout", "u", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("OnIdle", "s", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        PROP("ExpiresAt", "t", SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Start", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_start, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Stop", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT, method_stop,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Delete", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetEgress", SD_BUS_ARGS("a{sv}", egress), SD_BUS_NO_RESULT, method_set_egress,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Pause", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_pause, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Resume", SD_BUS_NO_ARGS, SD_BUS_NO_RESULT, method_resume, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Acquire", SD_BUS_ARGS("a{sv}", options), SD_BUS_RESULT("h", lease), method_acquire,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetLifetimes", SD_BUS_ARGS("a{sv}", options), SD_BUS_NO_RESULT,
                                method_set_lifetimes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Snapshot", SD_BUS_ARGS("s", snapshot_id), SD_BUS_RESULT("s", image_id),
                                method_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Verify", SD_BUS_ARGS("a{sv}", spec),
                                SD_BUS_RESULT("s", verdict, "as", mismatched_fields), method_verify,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Inspect", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", inspection), method_inspect,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Refresh", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", inspection), method_refresh,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Exec", SD_BUS_ARGS("as", argv, "a{sv}", options),
                                SD_BUS_RESULT("i", exit_status, "ay", stdout, "ay", stderr, "b", truncated),
                                method_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StartExec",
                                SD_BUS_ARGS("as", argv, "a{sv}", options, "h", stdin, "h", stdout, "h", stderr),
                                SD_BUS_RESULT("o", exec), method_start_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListExecs", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(osbi)", execs), method_list_execs,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyTo", SD_BUS_ARGS("s", guest_dir, "h", tar, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_copy_to, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyFrom", SD_BUS_ARGS("s", guest_path, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_from, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetUsage", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", usage), method_usage,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadFile", SD_BUS_ARGS("s", path, "a{sv}", options),
                                SD_BUS_RESULT("ay", data, "a{sv}", info), method_read_file, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("WriteFile", SD_BUS_ARGS("s", path, "ay", data, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_write_file, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListFiles", SD_BUS_ARGS("s", path, "a{sv}", options),
                                SD_BUS_RESULT("a(ssttu)", entries, "b", truncated), method_list_files,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveFile", SD_BUS_ARGS("s", path, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_remove_file, SD_BUS_VTABLE_UNPRIVILEGED),
        /* to the holder alone: its lease was ended by another's force (or the sandbox went) */
        SD_BUS_SIGNAL_WITH_ARGS("LeaseRevoked", SD_BUS_ARGS("s", reason), 0),
        SD_BUS_VTABLE_END
};

static int find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                sd_bus_error *error) {
        _cleanup_free_ char *name = NULL;
        SandboxEntry *e;

        if (sd_bus_path_decode(path, SBX_BUS_SANDBOX_PREFIX, &name) <= 0)
                return 0;
        e = registry_get(&((Manager *) userdata)->registry, name);
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

        if (!call || caller_cache_uid(&m->callers, call, &en.uid) < 0) {
                *ret_nodes = NULL;
                return 0;
        }
        en.all = en.uid == 0;
        registry_foreach(&m->registry, count_one, &total);
        en.paths = calloc(total + 1, sizeof(char *));
        if (!en.paths)
                return -ENOMEM;
        registry_foreach(&m->registry, enumerate_one, &en);
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
