/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "bus-error.h"
#include "bus-manager.h"
#include "bus-spec.h"
#include "config.h"
#include "operation.h"
#include "owner-info.h"

static int read_name(sd_bus_message *msg, const char *field, const char **ret, SbxError *e) {
        int r = sd_bus_message_read_basic(msg, 's', ret);

        if (r < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: malformed", field);
        return sbx_name_validate(field, *ret, e);
}

/* Snapshot ids: a name, and no longer than an image tag can carry. */
static int read_snapshot_id(sd_bus_message *msg, const char **ret, SbxError *e) {
        int r = read_name(msg, "snapshot_id", ret, e);

        if (r < 0)
                return r;
        if (strlen(*ret) > SBX_MAX_SNAPSHOT_ID_LEN)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "snapshot_id: longer than %d bytes",
                                     SBX_MAX_SNAPSHOT_ID_LEN);
        return 0;
}

static int by_name(sd_bus_message *msg, Manager *m, Verb verb, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, verb, NULL, &e, r, error);
        return operation_start(m, msg, verb, &(OperationArgs) { .name = name }, error);
}

static int method_get(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return by_name(msg, userdata, VERB_GET, error);
}

static int method_inspect(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return by_name(msg, userdata, VERB_INSPECT, error);
}

static int method_start(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return by_name(msg, userdata, VERB_START, error);
}

static int method_delete(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return by_name(msg, userdata, VERB_DELETE, error);
}

/* The spec argument with the host's default image: admissible for create,
 * contract-valid (all that xagent's from_parts() accepts) for verify. */
static int read_spec(sd_bus_message *msg, Manager *m, bool admissible, SbxSpec **ret, SbxError *e) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = sbx_bus_read_spec(msg, &spec, e)) < 0 ||
            (r = (admissible ? sbx_spec_finalize : sbx_spec_complete)(spec, m->policy->default_image, e)) < 0)
                return r;
        *ret = TAKE_PTR(spec);
        return 0;
}

/* A stop holds its sandbox's lock while it waits: the policy bounds it. */
static int check_stop_timeout(Manager *m, const char *key, unsigned timeout, SbxError *e) {
        if ((uint64_t) timeout > (uint64_t) m->policy->max_stop_timeout)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: %u s is more than max_stop_timeout (%" PRIi64 " s)",
                                     key, timeout, m->policy->max_stop_timeout);
        return 0;
}

static const char *target_of(const char *name, const SandboxEntry *object) {
        return name ?: object->display;
}

int bus_method_verify(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                      sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = read_spec(msg, m, false, &spec, &e)) < 0)
                return operation_refuse(msg, VERB_VERIFY, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_VERIFY,
                               &(OperationArgs) { .name = name, .object = object, .spec = TAKE_PTR(spec) }, error);
}

static int method_verify(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_VERIFY, NULL, &e, r, error);
        return bus_method_verify(msg, userdata, name, NULL, error);
}

int bus_method_stop(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                    sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        unsigned timeout;
        int r;

        if ((r = sbx_bus_read_stop_options(msg, &timeout, &e)) < 0)
                return operation_refuse(msg, VERB_STOP, target_of(name, object), &e, r, error);
        if ((r = check_stop_timeout(m, "timeout", timeout, &e)) < 0)
                return operation_refuse(msg, VERB_STOP, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_STOP,
                               &(OperationArgs) { .name = name, .object = object, .timeout_s = timeout }, error);
}

static int method_stop(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_STOP, NULL, &e, r, error);
        return bus_method_stop(msg, userdata, name, NULL, error);
}

int bus_method_snapshot(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                        sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *id;
        int r;

        if ((r = read_snapshot_id(msg, &id, &e)) < 0)
                return operation_refuse(msg, VERB_SNAPSHOT, target_of(name, object), &e, r, error);
        return operation_start(m, msg, VERB_SNAPSHOT,
                               &(OperationArgs) { .name = name, .object = object, .snapshot_id = id }, error);
}

static int method_snapshot(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_SNAPSHOT, NULL, &e, r, error);
        return bus_method_snapshot(msg, userdata, name, NULL, error);
}

static int method_create(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        Manager *m = userdata;
        const char *name = NULL;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0 || (r = read_spec(msg, m, true, &spec, &e)) < 0 ||
            (r = sbx_bus_read_create_options(msg, &e)) < 0)
                return operation_refuse(msg, VERB_CREATE, name, &e, r, error);
        return operation_start(m, msg, VERB_CREATE, &(OperationArgs) { .name = name, .spec = TAKE_PTR(spec) }, error);
}

static int method_ensure(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        Manager *m = userdata;
        const char *name = NULL;
        unsigned stop_timeout;
        bool recreate;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0 || (r = read_spec(msg, m, true, &spec, &e)) < 0 ||
            (r = sbx_bus_read_ensure_options(msg, &recreate, &stop_timeout, &e)) < 0)
                return operation_refuse(msg, VERB_ENSURE, name, &e, r, error);
        if ((r = check_stop_timeout(m, "stop_timeout", stop_timeout, &e)) < 0)
                return operation_refuse(msg, VERB_ENSURE, name, &e, r, error);
        return operation_start(m, msg, VERB_ENSURE,
                               &(OperationArgs) { .name = name, .spec = TAKE_PTR(spec), .recreate = recreate,
                                                  .timeout_s = stop_timeout }, error);
}

static int method_delete_snapshot(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *id;
        int r;

        if ((r = read_snapshot_id(msg, &id, &e)) < 0)
                return operation_refuse(msg, VERB_DELETE_SNAPSHOT, NULL, &e, r, error);
        return operation_start(userdata, msg, VERB_DELETE_SNAPSHOT, &(OperationArgs) { .snapshot_id = id }, error);
}

/* A descriptor a caller passed, for the relay (docker-relay.h): a copy, and nothing
 * else. It is neither looked at (fstat), opened anew, read nor written here: the
 * arguments are read before polkit has said yes, and whatever the relay does with it
 * happens after, with the caller's own open file description (its access mode, its
 * file status flags). An O_PATH descriptor is refused: it grants no reading or
 * writing, and reopening what it names (as /proc/self/fd/N) would be an open by root
 * on the caller's behalf. */
static int take_caller_fd(int fd, const char *field, int *ret, SbxError *e) {
        int flags = fcntl(fd, F_GETFL), copy;

        if (flags < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: not a valid descriptor", field);
        if (flags & O_PATH)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS,
                                     "%s: an O_PATH descriptor, which can be neither read nor written; pass one "
                                     "opened for reading or writing", field);
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        *ret = copy;
        return 0;
}

static int read_fds(sd_bus_message *msg, int fds[static 3], SbxError *e) {
        static const char *const fields[3] = { "stdin", "stdout", "stderr" };
        int in[3], r;

        if ((r = sd_bus_message_read(msg, "hhh", &in[0], &in[1], &in[2])) < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "stdin, stdout, stderr: malformed (%s)", strerror(-r));
        for (size_t i = 0; i < 3; i++)
                if ((r = take_caller_fd(in[i], fields[i], &fds[i], e)) < 0)
                        return r;
        return 0;
}

int bus_method_exec(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool streaming,
                    sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxExecOptions options = {};
        OperationArgs args = OPERATION_ARGS_INIT(.name = name, .object = object, .exec = &options);
        Verb verb = streaming ? VERB_START_EXEC : VERB_EXEC;
        int r;

        if ((r = sbx_bus_read_argv(msg, &args.argv, &e)) < 0 ||
            (r = sbx_bus_read_exec_options(msg, streaming, &options, &e)) < 0 ||
            (streaming && (r = read_fds(msg, args.fds, &e)) < 0)) {
                operation_args_done(&args, verb);
                return operation_refuse(msg, verb, name ?: object->display, &e, r, error);
        }
        r = operation_start(m, msg, verb, &args, error);
        sbx_exec_options_done(&options);
        return r;
}

static int method_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_EXEC, NULL, &e, r, error);
        return bus_method_exec(msg, userdata, name, NULL, false, error);
}

static int method_start_exec(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_START_EXEC, NULL, &e, r, error);
        return bus_method_exec(msg, userdata, name, NULL, true, error);
}

/* (s guest path, h tar, a{sv} options): no option is defined yet. */
int bus_method_copy(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool to,
                    sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *field = to ? "guest_dir" : "guest_path", *path = NULL;
        OperationArgs args = OPERATION_ARGS_INIT(.name = name, .object = object);
        Verb verb = to ? VERB_COPY_TO : VERB_COPY_FROM;
        int fd, r;

        r = sd_bus_message_read(msg, "sh", &path, &fd);
        if (r < 0)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "%s, tar: malformed", field);
        else if (path[0] != '/' || strlen(path) > SBX_MAX_PATH_LEN)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "%s: '%.64s' is not an absolute path", field, path);
        else if ((r = take_caller_fd(fd, "tar", &args.fds[0], &e)) >= 0)
                r = sbx_bus_read_create_options(msg, &e);
        if (r < 0) {
                operation_args_done(&args, verb);
                return operation_refuse(msg, verb, name ?: object->display, &e, r, error);
        }
        args.guest_path = path;
        return operation_start(m, msg, verb, &args, error);
}

static int method_copy_to(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_COPY_TO, NULL, &e, r, error);
        return bus_method_copy(msg, userdata, name, NULL, true, error);
}

static int method_copy_from(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *name;
        int r;

        if ((r = read_name(msg, "name", &name, &e)) < 0)
                return operation_refuse(msg, VERB_COPY_FROM, NULL, &e, r, error);
        return bus_method_copy(msg, userdata, name, NULL, false, error);
}

static int method_usage(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return by_name(msg, userdata, VERB_USAGE, error);
}

static int method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return operation_start(userdata, msg, VERB_LIST, &(OperationArgs) {}, error);
}

static int method_list_snapshots(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return operation_start(userdata, msg, VERB_LIST_SNAPSHOTS, &(OperationArgs) {}, error);
}

static int append_roots(sd_bus_message *reply, const SbxPolicy *p, const SbxOwner *owner) {
        int r = sd_bus_message_open_container(reply, 'a', "(sas)");

        for (size_t i = 0; r >= 0 && i < p->n_volume_roots; i++) {
                _cleanup_free_ char *root = NULL;
                const char *modes[3] = {};
                size_t n = 0;

                /* A root the owner's name or home cannot fill applies to nothing. */
                if (sbx_policy_expand_root(p->volume_roots[i].path, owner, &root) < 0 || !root)
                        continue;
                if (p->volume_roots[i].modes & SBX_VOLUME_MODE_RO)
                        modes[n++] = "ro";
                if (p->volume_roots[i].modes & SBX_VOLUME_MODE_RW)
                        modes[n++] = "rw";
                if ((r = sd_bus_message_open_container(reply, 'r', "sas")) < 0 ||
                    (r = sd_bus_message_append(reply, "s", root)) < 0 ||
                    (r = sd_bus_message_append_strv(reply, (char **) modes)) < 0)
                        return r;
                r = sd_bus_message_close_container(reply);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

/* What applies to the caller: the limits, the images, its own volume roots. No
 * polkit: it tells a caller nothing but what it may do itself. */
static int method_get_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        Manager *m = userdata;
        const SbxPolicy *p = m->policy;
        SbxOwnerInfo info;
        uid_t uid;
        int r;

        if (bus_caller_uid(msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sbx_owner_info_lookup(uid, &info, &e)) < 0)
                return sbx_bus_error_from(error, &e, r);
        if ((r = sd_bus_message_new_method_return(msg, &reply)) < 0 ||
            (r = sd_bus_message_open_container(reply, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "default_image", "s", p->default_image)) < 0 ||
            (r = sd_bus_message_open_container(reply, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append(reply, "s", "allowed_images")) < 0 ||
            (r = sd_bus_message_open_container(reply, 'v', "as")) < 0 ||
            (r = sd_bus_message_append_strv(reply, p->allowed_images)) < 0 ||
            (r = sd_bus_message_close_container(reply)) < 0 ||
            (r = sd_bus_message_close_container(reply)) < 0 ||
            (r = sd_bus_message_open_container(reply, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append(reply, "s", "volume_roots")) < 0 ||
            (r = sd_bus_message_open_container(reply, 'v', "a(sas)")) < 0 ||
            (r = append_roots(reply, p, &info.owner)) < 0 ||
            (r = sd_bus_message_close_container(reply)) < 0 ||
            (r = sd_bus_message_close_container(reply)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}{sv}",
                                       "max_cpus", "t", (uint64_t) p->max_cpus,
                                       "max_memory_mib", "t", (uint64_t) p->max_memory_mib,
                                       "max_sandboxes_per_user", "t", (uint64_t) p->max_sandboxes_per_user,
                                       "max_operations_per_user", "t", (uint64_t) p->max_operations_per_user,
                                       "max_reads_per_user", "t", (uint64_t) p->max_reads_per_user,
                                       "max_execs_per_user", "t", (uint64_t) p->max_execs_per_user,
                                       "max_execs", "t", (uint64_t) p->max_execs,
                                       "max_stop_timeout", "t", (uint64_t) p->max_stop_timeout,
                                       "docker_timeout", "t", (uint64_t) p->docker_timeout,
                                       "pids_limit", "t", (uint64_t) p->pids_limit,
                                       "host_port_min", "q", (uint16_t) p->host_port_min,
                                       "publish_address", "s", p->publish_address,
                                       "python_version", "s",
                                       sbx_python_version_to_string(p->python_version))) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}{sv}", "max_disk_mib", "t", (uint64_t) p->max_disk_mib,
                                       "disk_enforcement", "s", SBX_POLICY_DISK_ENFORCEMENT)) < 0 ||
            (r = sd_bus_message_close_container(reply)) < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

static int property_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                            sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_docker_api_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                       sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        return sd_bus_message_append(reply, "s", m->docker_api_version ?: "");
}

static int property_contract_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "u", (uint32_t) SBX_CONTRACT_VERSION);
}

const sd_bus_vtable bus_manager_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("ContractVersion", "u", property_contract_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("DockerApiVersion", "s", property_docker_api_version, 0, 0),
        SD_BUS_METHOD_WITH_ARGS("CreateSandbox",
                                SD_BUS_ARGS("s", name, "a{sv}", spec, "a{sv}", options),
                                SD_BUS_RESULT("o", sandbox, "s", fingerprint),
                                method_create, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("EnsureSandbox",
                                SD_BUS_ARGS("s", name, "a{sv}", spec, "a{sv}", options),
                                SD_BUS_RESULT("o", sandbox, "s", fingerprint, "s", outcome),
                                method_ensure, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSandbox", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", sandbox),
                                method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("InspectSandbox", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a{sv}", inspection),
                                method_inspect, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("VerifySandbox", SD_BUS_ARGS("s", name, "a{sv}", spec),
                                SD_BUS_RESULT("s", verdict, "as", mismatched_fields),
                                method_verify, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StartSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_start, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StopSandbox", SD_BUS_ARGS("s", name, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("DeleteSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SnapshotSandbox", SD_BUS_ARGS("s", name, "s", snapshot_id),
                                SD_BUS_RESULT("s", image_id),
                                method_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("DeleteSnapshot", SD_BUS_ARGS("s", snapshot_id), SD_BUS_NO_RESULT,
                                method_delete_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSandboxes", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssuso)", sandboxes),
                                method_list, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSnapshots", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(sssut)", snapshots),
                                method_list_snapshots, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetPolicy", SD_BUS_NO_ARGS, SD_BUS_RESULT("a{sv}", policy),
                                method_get_policy, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ExecSandbox", SD_BUS_ARGS("s", name, "as", argv, "a{sv}", options),
                                SD_BUS_RESULT("i", exit_status, "ay", stdout, "ay", stderr, "b", truncated),
                                method_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StartExec",
                                SD_BUS_ARGS("s", name, "as", argv, "a{sv}", options, "h", stdin, "h", stdout,
                                            "h", stderr),
                                SD_BUS_RESULT("o", exec),
                                method_start_exec, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyToSandbox", SD_BUS_ARGS("s", name, "s", guest_dir, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_to, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyFromSandbox",
                                SD_BUS_ARGS("s", name, "s", guest_path, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_from, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSandboxUsage", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a{sv}", usage),
                                method_usage, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("SandboxNew", SD_BUS_ARGS("s", name, "o", sandbox), 0),
        SD_BUS_SIGNAL_WITH_ARGS("SandboxRemoved", SD_BUS_ARGS("s", name, "o", sandbox), 0),
        SD_BUS_VTABLE_END
};

int bus_manager_register(Manager *m) {
        return sd_bus_add_object_vtable(m->bus, NULL, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, bus_manager_vtable, m);
}
