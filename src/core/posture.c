/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <strings.h>

#include "bitmask.h"
#include "container-body.h"
#include "posture.h"
#include "runtime.h"

static const char *const item_names[SBX_POSTURE_ITEM_COUNT] = {
        "user",
        "privileged",
        "cap_drop",
        "cap_add",
        "security_opt",
        "devices",
        "ipc_mode",
        "pid_mode",
        "uts_mode",
        "volumes_from",
        "pids_limit",
        "memory_swap",
        "network_mode",
        "publish_address",
        "init",
        "mounts",
        "log",
        "runtime",
};

SBX_DEFINE_BIT_NAMES(SbxPostureItem, sbx_posture_item_to_string, sbx_posture_items_to_names, item_names,
                     SBX_POSTURE_ITEM_COUNT)

/* The first process is this service's init, from its volume, mounted read-only. */
static bool init_ok(const SbxObserved *o) {
        return o->n_entrypoint == 1 && streq(o->entrypoint[0], SBX_INIT_PATH) && o->init_volume &&
                startswith(o->init_volume, SBX_INIT_VOLUME_PREFIX) && !o->init_volume_rw;
}

static bool log_ok(const SbxObserved *o) {
        return streq_ptr(o->log_type, SBX_LOG_DRIVER) && streq_ptr(o->log_max_size, SBX_LOG_MAX_SIZE) &&
                streq_ptr(o->log_max_file, SBX_LOG_MAX_FILE);
}

static bool is_no_new_privileges(const char *opt) {
        /* The spellings Docker accepts for turning it on. */
        return streq(opt, "no-new-privileges") || streq(opt, "no-new-privileges:true") ||
                streq(opt, "no-new-privileges=true");
}

/* This service only ever asks for no-new-privileges. Any other entry — a seccomp,
 * AppArmor or SELinux override, systempaths=unconfined, no-new-privileges:false —
 * was not ours and can only weaken or alter the confinement. */
static bool security_opt_ok(const SbxObserved *o) {
        if (o->n_security_opt == 0)
                return false;
        for (size_t i = 0; i < o->n_security_opt; i++)
                if (!is_no_new_privileges(o->security_opt[i]))
                        return false;
        return true;
}

/* Docker reports "private" for a private IPC namespace (the default, and what
 * this service asks for); "none" is private without /dev/shm and stricter still.
 * "host", "shareable" and "container:<id>" share it. */
static bool ipc_mode_ok(const SbxObserved *o) {
        return streq_ptr(o->ipc_mode, "private") || streq_ptr(o->ipc_mode, "none");
}

/* PID and UTS namespaces have no "private" keyword: "" is the container's own
 * namespace; "host" and "container:<id>" share one. */
static bool namespace_mode_ok(const char *mode) {
        return isempty(mode);
}

/* Created without a network mode, Docker stores "bridge" (or "default" on older
 * engines, which means the bridge on Linux). "host", "container:<id>" and user
 * networks are all refused. */
static bool network_mode_ok(const SbxObserved *o, const SbxPostureExpect *e) {
        if (e->network_isolated)
                return streq_ptr(o->network_mode, "none");
        return isempty(o->network_mode) || streq(o->network_mode, "bridge") || streq(o->network_mode, "default");
}

static bool publish_address_ok(const SbxObserved *o, const SbxPostureExpect *e) {
        for (size_t i = 0; i < o->n_bindings; i++)
                if (!streq_ptr(o->bindings[i].host_ip, e->publish_address))
                        return false;
        return true;
}

/* gVisor asked for: the engine reports runsc and, where the host shows it, the first
 * process is runsc's sandbox. Anything else: not gVisor's by either account (a
 * changed default runtime or a mapping changed behind the back shows in the process). */
static bool runtime_ok(const SbxObserved *o, const SbxPostureExpect *e) {
        if (e->host_process == SBX_HOST_PROCESS_GONE)
                return false;
        if (sbx_runtime_engine_is_gvisor(e->engine_runtime))
                return streq_ptr(o->runtime, e->engine_runtime) && e->host_process != SBX_HOST_PROCESS_OTHER;
        if (e->engine_runtime && !streq_ptr(o->runtime, e->engine_runtime))
                return false;
        return !sbx_runtime_engine_is_gvisor(o->runtime) && e->host_process != SBX_HOST_PROCESS_GVISOR;
}

unsigned sbx_posture_check(const SbxObserved *o, const SbxPostureExpect *e) {
        unsigned m = 0;

        if (!streq_ptr(o->user, SBX_INIT_USER))
                m |= SBX_POSTURE_USER;
        if (o->privileged)
                m |= SBX_POSTURE_PRIVILEGED;
        if (!(o->n_cap_drop == 1 && strcasecmp(o->cap_drop[0], "ALL") == 0))
                m |= SBX_POSTURE_CAP_DROP;
        if (o->n_cap_add > 0)
                m |= SBX_POSTURE_CAP_ADD;
        if (!security_opt_ok(o))
                m |= SBX_POSTURE_SECURITY_OPT;
        if (o->n_devices > 0 || o->n_device_cgroup_rules > 0 || o->n_device_requests > 0)
                m |= SBX_POSTURE_DEVICES;
        if (!ipc_mode_ok(o))
                m |= SBX_POSTURE_IPC_MODE;
        if (!namespace_mode_ok(o->pid_mode))
                m |= SBX_POSTURE_PID_MODE;
        if (!namespace_mode_ok(o->uts_mode))
                m |= SBX_POSTURE_UTS_MODE;
        if (o->n_volumes_from > 0)
                m |= SBX_POSTURE_VOLUMES_FROM;
        if (!o->has_pids_limit || o->pids_limit != e->pids_limit)
                m |= SBX_POSTURE_PIDS_LIMIT;
        if (!o->has_memory_swap || o->memory_swap != e->memory_bytes)
                m |= SBX_POSTURE_MEMORY_SWAP;
        if (!network_mode_ok(o, e))
                m |= SBX_POSTURE_NETWORK_MODE;
        if (!publish_address_ok(o, e))
                m |= SBX_POSTURE_PUBLISH_ADDRESS;
        if (!init_ok(o))
                m |= SBX_POSTURE_INIT;
        if (o->n_other_mounts > 0)
                m |= SBX_POSTURE_MOUNTS;
        if (!log_ok(o))
                m |= SBX_POSTURE_LOG;
        if (!runtime_ok(o, e))
                m |= SBX_POSTURE_RUNTIME;
        return m;
}
