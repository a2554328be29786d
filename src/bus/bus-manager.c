/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "bus-args.h"
#include "bus-error.h"
#include "bus-egress.h"
#include "bus-exec.h"
#include "bus-labels.h"
#include "bus-manager.h"
#include "bus-pool.h"
#include "image-ref.h"
#include "bus-sandbox.h"
#include "bus-spec.h"
#include "config.h"
#include "docker-tls.h"
#include "naming.h"
#include "operation.h"
#include "owner-info.h"

/* The by-name methods act in the caller's own namespace: the name is read and checked
 * here, and the method's body is the per-sandbox object's (bus-sandbox.h), given the
 * name instead of an object. Nothing is looked up before polkit has said yes
 * (operation-state.h): a name that is not the caller's sandbox is NoSuchSandbox after
 * the authorization. */
static int resolve_name(sd_bus_message *msg, Manager *m, Verb verb, const char **ret, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        int r = bus_read_name(msg, "name", ret, &e);

        return r < 0 ? operation_refuse(m, msg, verb, NULL, &e, r, error) : 0;
}

#define BY_NAME(fn, verb, body)                                                         \
        static int fn(sd_bus_message *msg, void *userdata, sd_bus_error *error) {      \
                Manager *m = userdata;                                                  \
                const char *name;                                                       \
                int r = resolve_name(msg, m, verb, &name, error);                       \
                return r < 0 ? r : body;                                                \
        }
BY_NAME(method_get, VERB_GET, operation_start(m, msg, VERB_GET, &(OperationArgs) { .name = name }, error))
BY_NAME(method_inspect, VERB_INSPECT, bus_sandbox_method_simple(msg, m, name, NULL, VERB_INSPECT, error))
BY_NAME(method_refresh, VERB_REFRESH, bus_sandbox_method_simple(msg, m, name, NULL, VERB_REFRESH, error))
BY_NAME(method_start, VERB_START, bus_sandbox_method_simple(msg, m, name, NULL, VERB_START, error))
BY_NAME(method_pause, VERB_PAUSE, bus_sandbox_method_simple(msg, m, name, NULL, VERB_PAUSE, error))
BY_NAME(method_resume, VERB_RESUME, bus_sandbox_method_simple(msg, m, name, NULL, VERB_RESUME, error))
BY_NAME(method_delete, VERB_DELETE, bus_sandbox_method_simple(msg, m, name, NULL, VERB_DELETE, error))
BY_NAME(method_usage, VERB_USAGE, bus_sandbox_method_simple(msg, m, name, NULL, VERB_USAGE, error))
BY_NAME(method_verify, VERB_VERIFY, bus_sandbox_method_verify(msg, m, name, NULL, error))
BY_NAME(method_stop, VERB_STOP, bus_sandbox_method_stop(msg, m, name, NULL, error))
BY_NAME(method_set_egress, VERB_SET_EGRESS, bus_sandbox_method_set_egress(msg, m, name, NULL, error))
BY_NAME(method_acquire, VERB_ACQUIRE, bus_sandbox_method_acquire(msg, m, name, NULL, error))
BY_NAME(method_snapshot, VERB_SNAPSHOT, bus_sandbox_method_snapshot(msg, m, name, NULL, error))
BY_NAME(method_set_lifetimes, VERB_SET_LIFETIMES, bus_sandbox_method_set_lifetimes(msg, m, name, NULL, error))
BY_NAME(method_exec, VERB_EXEC, bus_sandbox_method_exec(msg, m, name, NULL, false, error))
BY_NAME(method_start_exec, VERB_START_EXEC, bus_sandbox_method_exec(msg, m, name, NULL, true, error))
BY_NAME(method_copy_to, VERB_COPY_TO, bus_sandbox_method_copy(msg, m, name, NULL, true, error))
BY_NAME(method_copy_from, VERB_COPY_FROM, bus_sandbox_method_copy(msg, m, name, NULL, false, error))
BY_NAME(method_read_file, VERB_READ_FILE, bus_sandbox_method_file(msg, m, name, NULL, VERB_READ_FILE, error))
BY_NAME(method_write_file, VERB_WRITE_FILE, bus_sandbox_method_file(msg, m, name, NULL, VERB_WRITE_FILE, error))
BY_NAME(method_list_files, VERB_LIST_FILES, bus_sandbox_method_file(msg, m, name, NULL, VERB_LIST_FILES, error))
BY_NAME(method_remove_file, VERB_REMOVE_FILE, bus_sandbox_method_file(msg, m, name, NULL, VERB_REMOVE_FILE, error))
#undef BY_NAME

/* The caller's own sandbox's execs (those it may read); no polkit: the same as its
 * introspection lists. */
static int method_list_execs(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_free_ char *qualified = NULL;
        Manager *m = userdata;
        const char *name;
        uid_t uid;
        int r;

        if ((r = bus_read_name(msg, "name", &name, &e)) < 0)
                return sbx_bus_error_from(error, &e, r);
        if (caller_cache_uid(&m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sbx_name_qualify(uid, name, &qualified)) < 0)
                return r;
        return bus_exec_list(m, msg, qualified, NULL, error);
}

/* Option runtime (docs/security.md, "Runtimes"): offered by the policy, and what runs
 * under it (gVisor: network_isolated, no volumes). "" is the default. */
static int bus_admit_runtime(Manager *m, const char *runtime, const SbxSpec *spec, SbxError *e) {
        if (isempty(runtime))
                return 0;
        return sbx_runtimes_check_sandbox(&m->policy->runtimes, runtime, spec->network_isolated, spec->n_volumes, e);
}

static int method_create(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(json_object_putp) json_object *labels = NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        Manager *m = userdata;
        const char *name = NULL;
        char runtime[SBX_RUNTIME_NAME_MAX + 1];
        SbxLifetime lifetime;
        bool pull_missing;
        int r;

        if ((r = bus_read_name(msg, "name", &name, &e)) < 0 || (r = bus_read_spec_arg(msg, m, true, &spec, &e)) < 0 ||
            (r = sbx_bus_read_create_options(msg, &labels, &lifetime, &pull_missing, &egress, runtime, &e)) < 0 ||
            (r = sbx_lifetime_apply_policy(&lifetime, m->policy, &e)) < 0 ||
            (r = sbx_egress_admit(m->policy, &egress, spec->network_isolated, &e)) < 0 ||
            (r = bus_admit_runtime(m, runtime, spec, &e)) < 0)
                return operation_refuse(m, msg, VERB_CREATE, name, &e, r, error);
        return operation_start(m, msg, VERB_CREATE,
                               &(OperationArgs) { .name = name,
                                                  .create = { .spec = TAKE_PTR(spec), .labels = TAKE_PTR(labels),
                                                              .lifetime = lifetime, .pull_missing = pull_missing,
                                                              .egress = sbx_egress_take(&egress),
                                                              .runtime = runtime } }, error);
}

static int method_claim(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(json_object_putp) json_object *labels = NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        _cleanup_free_ char *name_prefix = NULL;
        Manager *m = userdata;
        char runtime[SBX_RUNTIME_NAME_MAX + 1];
        SbxLifetime lifetime;
        bool pull_missing;
        int r;

        if ((r = bus_read_spec_arg(msg, m, true, &spec, &e)) < 0 ||
            (r = sbx_bus_read_claim_options(msg, &labels, &lifetime, &pull_missing, &egress, runtime, &name_prefix,
                                            &e)) < 0 ||
            (r = sbx_lifetime_apply_policy(&lifetime, m->policy, &e)) < 0 ||
            (r = sbx_egress_admit(m->policy, &egress, spec->network_isolated, &e)) < 0 ||
            (r = bus_admit_runtime(m, runtime, spec, &e)) < 0)
                return operation_refuse(m, msg, VERB_CLAIM, NULL, &e, r, error);
        return operation_start(m, msg, VERB_CLAIM,
                               &(OperationArgs) { .create = { .spec = TAKE_PTR(spec), .labels = TAKE_PTR(labels),
                                                              .lifetime = lifetime, .pull_missing = pull_missing,
                                                              .egress = sbx_egress_take(&egress), .runtime = runtime,
                                                              .name_prefix = TAKE_PTR(name_prefix) } }, error);
}

static int method_pool_status(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return operation_start(userdata, msg, VERB_POOL_STATUS, &(OperationArgs) {}, error);
}

static int method_ensure(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(json_object_putp) json_object *labels = NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        Manager *m = userdata;
        const char *name = NULL;
        unsigned stop_timeout;
        char runtime[SBX_RUNTIME_NAME_MAX + 1];
        SbxLifetime lifetime;
        bool recreate, force, pull_missing;
        int r;

        if ((r = bus_read_name(msg, "name", &name, &e)) < 0 || (r = bus_read_spec_arg(msg, m, true, &spec, &e)) < 0 ||
            (r = sbx_bus_read_ensure_options(msg, &recreate, &stop_timeout, &labels, &force, &lifetime, &pull_missing,
                                             &egress, runtime, &e)) < 0 ||
            (r = sbx_lifetime_apply_policy(&lifetime, m->policy, &e)) < 0 ||
            (r = sbx_egress_admit(m->policy, &egress, spec->network_isolated, &e)) < 0 ||
            (r = bus_admit_runtime(m, runtime, spec, &e)) < 0 ||
            (r = bus_check_stop_timeout(m, "stop_timeout", stop_timeout, &e)) < 0)
                return operation_refuse(m, msg, VERB_ENSURE, name, &e, r, error);
        return operation_start(m, msg, VERB_ENSURE,
                               &(OperationArgs) { .name = name,
                                                  .create = { .spec = TAKE_PTR(spec), .recreate = recreate,
                                                              .force = force, .stop_timeout_s = stop_timeout,
                                                              .labels = TAKE_PTR(labels), .lifetime = lifetime,
                                                              .pull_missing = pull_missing,
                                                              .egress = sbx_egress_take(&egress),
                                                              .runtime = runtime } }, error);
}

static int method_delete_snapshot(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        const char *id;
        int r;

        if ((r = bus_read_snapshot_id(msg, &id, &e)) < 0)
                return operation_refuse(userdata, msg, VERB_DELETE_SNAPSHOT, NULL, &e, r, error);
        return operation_start(userdata, msg, VERB_DELETE_SNAPSHOT, &(OperationArgs) { .snapshot_id = id }, error);
}

/* PullImage: the reference's form checked here, the policy on the worker (bus-pull.h). */
static int method_pull(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxImageRef ref = {};
        const char *reference = NULL;
        int r;

        r = sd_bus_message_read(msg, "s", &reference);
        if (r < 0)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "reference: not a string");
        if (r >= 0)
                r = sbx_image_ref_parse(reference, &ref, &e);
        sbx_image_ref_done(&ref);
        if (r >= 0)
                r = sbx_bus_read_no_options(msg, &e);
        if (r < 0)
                return operation_refuse(userdata, msg, VERB_PULL, reference, &e, r, error);
        return operation_start(userdata, msg, VERB_PULL, &(OperationArgs) { .pull = { .reference = reference } }, error);
}

static int method_list(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return operation_start(userdata, msg, VERB_LIST, &(OperationArgs) {}, error);
}

static int method_find(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        OperationArgs args = {};
        int r = sbx_bus_read_find_filter(msg, &args.find.labels, &args.find.state, &e);

        if (r < 0)
                return operation_refuse(userdata, msg, VERB_FIND, NULL, &e, r, error);
        return operation_start(userdata, msg, VERB_FIND, &args, error);
}

static int method_list_snapshots(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        return operation_start(userdata, msg, VERB_LIST_SNAPSHOTS, &(OperationArgs) {}, error);
}

/* An entry KEY of an a{sv} whose value has signature SIG: opened, then closed. */
static int open_entry(sd_bus_message *reply, const char *key, const char *sig) {
        int r = sd_bus_message_open_container(reply, 'e', "sv");

        if (r >= 0)
                r = sd_bus_message_append(reply, "s", key);
        return r < 0 ? r : sd_bus_message_open_container(reply, 'v', sig);
}

static int close_entry(sd_bus_message *reply) {
        int r = sd_bus_message_close_container(reply);

        return r < 0 ? r : sd_bus_message_close_container(reply);
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

/* The registries images may be pulled from, by host (their CA files are the
 * administrator's business). */
static int append_registries(sd_bus_message *reply, const SbxPolicy *p) {
        int r = open_entry(reply, "registries", "as");

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < p->n_registries; i++)
                r = sd_bus_message_append(reply, "s", p->registries[i].host);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : close_entry(reply);
}

/* "runtimes": each name a caller may ask for, and the engine runtime it runs under. */
static int append_runtimes(sd_bus_message *reply, const SbxPolicy *p) {
        int r = open_entry(reply, "runtimes", "a{ss}");

        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "{ss}");
        if (r >= 0)
                r = sd_bus_message_append(reply, "{ss}", SBX_RUNTIME_DEFAULT, SBX_RUNTIME_DEFAULT);
        for (size_t i = 0; r >= 0 && i < p->runtimes.n; i++)
                r = sd_bus_message_append(reply, "{ss}", p->runtimes.items[i].name, p->runtimes.items[i].engine_runtime);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : close_entry(reply);
}

/* What applies to the caller: the limits, the images, its own volume roots. No
 * polkit: it tells a caller nothing but what it may do itself. */
static int method_get_policy(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        Manager *m = userdata;
        const SbxPolicy *p = m->policy;
        SbxOwnerInfo info;
        char identity[SBX_DOCKER_TLS_FINGERPRINT_MAX];
        uid_t uid;
        int r;

        if (caller_cache_uid(&m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sbx_owner_info_lookup(uid, &info, &e)) < 0)
                return sbx_bus_error_from(error, &e, r);
        if ((r = sd_bus_message_new_method_return(msg, &reply)) < 0 ||
            (r = sd_bus_message_open_container(reply, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "default_image", "s", p->default_image)) < 0 ||
            (r = open_entry(reply, "allowed_images", "as")) < 0 ||
            (r = sd_bus_message_append_strv(reply, p->allowed_images)) < 0 ||
            (r = close_entry(reply)) < 0 ||
            (r = open_entry(reply, "volume_roots", "a(sas)")) < 0 ||
            (r = append_roots(reply, p, &info.owner)) < 0 ||
            (r = close_entry(reply)) < 0 ||
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
            (r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}", "max_leases_per_user", "t",
                                       (uint64_t) p->max_leases_per_user, "max_leases_per_sandbox", "t",
                                       (uint64_t) p->max_leases_per_sandbox, "max_idle_timeout", "t",
                                       (uint64_t) p->max_idle_timeout, "max_expire_after", "t",
                                       (uint64_t) p->max_expire_after, "default_idle_timeout", "t",
                                       (uint64_t) p->default_idle_timeout)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}{sv}{sv}{sv}{sv}", "max_disk_mib", "t", (uint64_t) p->max_disk_mib,
                                       "disk_enforcement", "s", SBX_POLICY_DISK_ENFORCEMENT,
                                       "max_file_bytes", "t", (uint64_t) p->max_file_bytes,
                                       "max_process_output", "t", (uint64_t) p->max_process_output,
                                       "observation_max_age", "t", (uint64_t) p->observation_max_age)) < 0 ||
            (r = sd_bus_message_append(reply, "{sv}", "max_image_mib", "t", (uint64_t) p->max_image_mib)) < 0 ||
            (r = append_registries(reply, p)) < 0 ||
            (r = append_runtimes(reply, p)) < 0 ||
            /* Which engine, and who it proved to be (its certificate, a tcp:// one). */
            (r = sd_bus_message_append(reply, "{sv}{sv}", "engine", "s", m->docker_host,
                                       "engine_identity", "s", sbx_docker_tls_engine_identity(identity))) < 0 ||
            (r = sbx_bus_append_policy_egress(reply, &p->egress)) < 0 ||
            (r = bus_pool_append_policy(reply, p, &info.owner)) < 0 ||
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
        SD_BUS_METHOD_WITH_ARGS("ClaimSandbox", SD_BUS_ARGS("a{sv}", spec, "a{sv}", options),
                                SD_BUS_RESULT("o", sandbox, "s", name, "s", fingerprint, "s", outcome),
                                method_claim, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetPoolStatus", SD_BUS_NO_ARGS, SD_BUS_RESULT("aa{sv}", pools),
                                method_pool_status, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSandbox", SD_BUS_ARGS("s", name), SD_BUS_RESULT("o", sandbox),
                                method_get, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("InspectSandbox", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a{sv}", inspection),
                                method_inspect, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RefreshSandbox", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a{sv}", inspection),
                                method_refresh, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("VerifySandbox", SD_BUS_ARGS("s", name, "a{sv}", spec),
                                SD_BUS_RESULT("s", verdict, "as", mismatched_fields),
                                method_verify, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StartSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_start, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StopSandbox", SD_BUS_ARGS("s", name, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_stop, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("AcquireSandbox", SD_BUS_ARGS("s", name, "a{sv}", options), SD_BUS_RESULT("h", lease),
                                method_acquire, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetSandboxLifetimes", SD_BUS_ARGS("s", name, "a{sv}", options), SD_BUS_NO_RESULT,
                                method_set_lifetimes, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SetSandboxEgress", SD_BUS_ARGS("s", name, "a{sv}", egress), SD_BUS_NO_RESULT,
                                method_set_egress, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("PauseSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_pause, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ResumeSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_resume, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("DeleteSandbox", SD_BUS_ARGS("s", name), SD_BUS_NO_RESULT,
                                method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("SnapshotSandbox", SD_BUS_ARGS("s", name, "s", snapshot_id),
                                SD_BUS_RESULT("s", image_id),
                                method_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("DeleteSnapshot", SD_BUS_ARGS("s", snapshot_id), SD_BUS_NO_RESULT,
                                method_delete_snapshot, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListSandboxes", SD_BUS_NO_ARGS, SD_BUS_RESULT("a(ssuso)", sandboxes),
                                method_list, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("FindSandboxes", SD_BUS_ARGS("a{sv}", filter), SD_BUS_RESULT("a(ssuso)", sandboxes),
                                method_find, SD_BUS_VTABLE_UNPRIVILEGED),
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
        SD_BUS_METHOD_WITH_ARGS("ListExecs", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a(osbi)", execs),
                                method_list_execs, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyToSandbox", SD_BUS_ARGS("s", name, "s", guest_dir, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_to, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("CopyFromSandbox",
                                SD_BUS_ARGS("s", name, "s", guest_path, "h", tar, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_copy_from, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("GetSandboxUsage", SD_BUS_ARGS("s", name), SD_BUS_RESULT("a{sv}", usage),
                                method_usage, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadFile", SD_BUS_ARGS("s", name, "s", path, "a{sv}", options),
                                SD_BUS_RESULT("ay", data, "a{sv}", info), method_read_file, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("WriteFile", SD_BUS_ARGS("s", name, "s", path, "ay", data, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_write_file, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ListFiles", SD_BUS_ARGS("s", name, "s", path, "a{sv}", options),
                                SD_BUS_RESULT("a(ssttu)", entries, "b", truncated), method_list_files,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("RemoveFile", SD_BUS_ARGS("s", name, "s", path, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_remove_file, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("PullImage", SD_BUS_ARGS("s", reference, "a{sv}", options),
                                SD_BUS_RESULT("s", image_id), method_pull, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("PullProgress", SD_BUS_ARGS("s", reference, "t", done, "t", total), 0),
        SD_BUS_SIGNAL_WITH_ARGS("SandboxNew", SD_BUS_ARGS("s", name, "o", sandbox), 0),
        SD_BUS_SIGNAL_WITH_ARGS("SandboxRemoved", SD_BUS_ARGS("s", name, "o", sandbox), 0),
        SD_BUS_VTABLE_END
};

int bus_manager_register(Manager *m) {
        return sd_bus_add_object_vtable(m->bus, NULL, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, bus_manager_vtable, m);
}
