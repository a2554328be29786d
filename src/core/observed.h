/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The observed container: xagent's ObservedRuntimeFacts + SandboxInspection
 * (xagent-contract.md §4), parsed from Docker's container-inspect JSON, plus the facts the
 * hardened posture is judged on (docs/security.md) and the owner label.
 *
 * Observed facts are backend-native: nothing here is canonicalized (a tampered
 * or rewritten mount source must stay detectable). Optional Docker values are
 * NULL pointers for strings and has_* flags for integers (Python's None). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "spec.h"

typedef enum SbxState {
        SBX_STATE_STOPPED,
        SBX_STATE_RUNNING,
        SBX_STATE_PAUSED,       /* running, frozen (PauseSandbox): Docker's State.Running is true */
        _SBX_STATE_MAX,
} SbxState;

/* One entry of HostConfig.PortBindings as Docker reports it, kept for the
 * posture check (HostIp) — including the bindings xagent's ports skip. */
typedef struct SbxPortBinding {
        int64_t guest;
        char *host_port;        /* raw HostPort, "" when absent */
        char *host_ip;          /* raw HostIp, "" when absent */
} SbxPortBinding;

/* A port Docker actually bound (NetworkSettings.Ports): for host port 0, the one
 * it chose. */
typedef struct SbxBoundPort {
        char *host_ip;
        int64_t host;
        int64_t guest;
} SbxBoundPort;

typedef struct SbxObserved {
        char *id;                       /* top-level Id; NULL if absent */
        char *name;                     /* top-level Name without Docker's leading "/"; NULL if absent */
        SbxState state;
        char *raw_status;               /* State.Status, "" when absent; never NULL */
        char *image_ref;                /* Config.Image (nullable) */
        char *image_digest;             /* top-level Image: the image ID "sha256:…" (nullable) */
        bool has_raw_nano_cpus;
        int64_t raw_nano_cpus;          /* HostConfig.NanoCpus, not divided */
        bool has_raw_memory_bytes;
        int64_t raw_memory_bytes;       /* HostConfig.Memory */
        SbxEnvVar *env;                 /* Config.Env as a dict: first-seen order, later value wins */
        size_t n_env;
        char **engine_env;              /* "K=V" of Config.Env the engine may have added itself
                                         * (SBX_ENGINE_ENV_KEY, dialect.h), NULL-terminated */
        size_t n_engine_env;
        SbxVolume *volumes;             /* bind Mounts: (Source, Destination, "ro"|"rw"), Docker order */
        size_t n_volumes;
        SbxPort *ports;                 /* (HostPort, guest) for each non-empty HostPort, Docker order */
        size_t n_ports;
        bool network_isolated;          /* Config.NetworkDisabled */
        char **runtime_networks;        /* keys of NetworkSettings.Networks, NULL-terminated */
        size_t n_runtime_networks;
        char **engine_addresses;        /* each network's Gateway/32, IPAddress/IPPrefixLen and the
                                         * IPv6 twins ("ADDR/PREFIX"), NULL-terminated or NULL */
        size_t n_engine_addresses;
        char *sandbox_key;              /* NetworkSettings.SandboxKey: its network namespace's file
                                         * (nullable) */
        SbxEnvVar *labels;              /* Config.Labels, Docker order */
        size_t n_labels;
        char *created_at;               /* top-level Created (nullable) */
        char *working_dir;              /* Config.WorkingDir, raw (nullable) */
        const char *fingerprint_label;  /* points into labels; NULL if missing or blank */
        const char *version_label;      /* likewise */

        /* Ownership: the xagent.sandbox.owner label. Missing or blank → uid 0
         * (docs/security.md); not a canonical decimal uid → owner_valid is false and the
         * container is nobody's (only manage-others may touch it); owner is then 0
         * and must not be used. */
        bool owner_valid;
        uid_t owner;

        /* Posture facts (docs/security.md). String lists are NULL-terminated. */
        char *user;                     /* Config.User (nullable) */
        bool privileged;                /* HostConfig.Privileged */
        char **cap_drop;
        size_t n_cap_drop;
        char **cap_add;
        size_t n_cap_add;
        char **security_opt;
        size_t n_security_opt;
        size_t n_devices;               /* HostConfig.Devices */
        size_t n_device_cgroup_rules;   /* HostConfig.DeviceCgroupRules */
        size_t n_device_requests;       /* HostConfig.DeviceRequests */
        char **volumes_from;
        size_t n_volumes_from;
        bool has_pids_limit;
        int64_t pids_limit;             /* HostConfig.PidsLimit */
        bool has_memory_swap;
        int64_t memory_swap;            /* HostConfig.MemorySwap */
        char *network_mode;             /* HostConfig.NetworkMode (nullable) */
        char *ipc_mode;                 /* HostConfig.IpcMode (nullable) */
        char *pid_mode;                 /* HostConfig.PidMode (nullable) */
        char *uts_mode;                 /* HostConfig.UTSMode (nullable) */
        char *runtime;                  /* HostConfig.Runtime (nullable) */
        SbxPortBinding *bindings;       /* every PortBindings entry */
        size_t n_bindings;
        SbxBoundPort *bound_ports;      /* NetworkSettings.Ports, TCP, Docker order; none when stopped */
        size_t n_bound_ports;

        /* What makes a start safe (docs/security.md): the first process, its volume, the
         * other mounts and the log's bounds. */
        int64_t pid;                    /* State.Pid: the first process on the host, 0 if none */
        char *started_at;               /* State.StartedAt (nullable) */
        char **entrypoint;              /* Config.Entrypoint */
        size_t n_entrypoint;
        char *init_volume;              /* Name of the volume mounted at SBX_INIT_GUEST_DIR (nullable) */
        bool init_volume_rw;
        size_t n_other_mounts;          /* Mounts that are neither binds nor that volume */
        char *log_type;                 /* HostConfig.LogConfig.Type (nullable) */
        char *log_max_size;             /* its Config["max-size"] (nullable) */
        char *log_max_file;             /* its Config["max-file"] (nullable) */
} SbxObserved;

const char *sbx_state_to_string(SbxState s) _pure_;
/* "running" in any ASCII case → running; "paused" → paused (xagent reads it as
 * stopped: xagent-contract.md §4; its verdict never depends on the state); everything
 * else (created, exited, dead, restarting, "", unknown) → stopped. */
SbxState sbx_state_from_status(const char *raw_status) _pure_;

/* Whether its processes exist: running or paused (Docker's State.Running). */
static inline bool sbx_state_is_up(SbxState s) {
        return s == SBX_STATE_RUNNING || s == SBX_STATE_PAUSED;
}

/* Parses a container-inspect object. A missing or null Config / HostConfig /
 * State is {}; wrong types anywhere are BackendError naming the JSON path. */
int sbx_observed_from_json(json_object *attrs, SbxObserved **ret, SbxError *error);
/* The same from the JSON text. Malformed JSON is BackendError. */
int sbx_observed_from_string(const char *json, SbxObserved **ret, SbxError *error);

SbxObserved *sbx_observed_free(SbxObserved *o);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxObserved *, sbx_observed_free);

/* The value of a label, NULL if absent. */
const char *sbx_observed_get_label(const SbxObserved *o, const char *key) _pure_;
/* The value of an environment variable, NULL if absent. */
const char *sbx_observed_get_env(const SbxObserved *o, const char *key) _pure_;
