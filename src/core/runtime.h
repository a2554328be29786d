/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Container runtimes (docs/security.md, "Runtimes"): the host policy's "runtimes" maps
 * the names a caller may ask for to the engine's registered runtimes; "runc", the
 * default, is always offered and is the engine's own default runtime. A runtime whose
 * engine runtime is gVisor's runsc is of the kind gVisor: with Debian 12's runsc
 * (release 20221219) only network_isolated sandboxes without volumes run under it, its
 * guest processes are bounded inside the guest (RLIMIT_NPROC) and the pids cgroup
 * gets its own threads as headroom. Pure: the engine's GET /info is read by the
 * caller. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_RUNTIME_DEFAULT "runc"
#define SBX_RUNTIME_NAME_MAX 32
#define SBX_POLICY_MAX_RUNTIMES 16
/* The label a sandbox's asked runtime is recorded on at create (absent: the default). */
#define SBX_LABEL_RUNTIME "xagent.sandbox.runtime"

/* gVisor: the engine runtime's name, and the first process it starts on the host. */
#define SBX_RUNSC_ENGINE_RUNTIME "runsc"
#define SBX_RUNSC_SANDBOX_ARGV0 "runsc-sandbox"
/* The gVisor release whose network stack starts on kernels >= 6.7 (upstream
 * gvisor#10704, fixed in release-20240807.0). */
#define SBX_RUNSC_NETWORK_FIX_RELEASE "20240807"
/* The pids cgroup counts each guest process as several host tasks (measured: ~7) and
 * runsc's own threads (~109 idle): its limit is the policy's pids_limit per guest
 * process times this, plus the base. */
#define SBX_RUNSC_TASKS_PER_PROCESS 16
#define SBX_RUNSC_BASE_TASKS 256

typedef struct SbxPolicyRuntime {
        char *name;             /* what a caller asks for */
        char *engine_runtime;   /* the engine's registered runtime (HostConfig.Runtime) */
} SbxPolicyRuntime;

typedef struct SbxRuntimes {
        SbxPolicyRuntime *items;
        size_t n;
} SbxRuntimes;

void sbx_runtimes_done(SbxRuntimes *r);

/* The policy's "runtimes": { NAME: { "engine_runtime": ENGINE_NAME }, … }. Each NAME
 * well-formed (sbx_runtime_name_valid) and not "runc"; ENGINE_NAME likewise well-formed.
 * InvalidArgs naming the key. */
int sbx_runtimes_parse(SbxRuntimes *r, const char *key, json_object *v, SbxError *error);

/* [a-z0-9][a-z0-9._-]*, at most SBX_RUNTIME_NAME_MAX bytes. */
bool sbx_runtime_name_valid(const char *name) _pure_;

/* The engine runtime of name: "runc" for the default, else the policy's, NULL if the
 * policy does not offer it. */
const char *sbx_runtimes_engine(const SbxRuntimes *r, const char *name) _pure_;
/* The engine runtime is gVisor's. */
bool sbx_runtime_engine_is_gvisor(const char *engine_runtime) _pure_;

/* A caller's option: malformed is InvalidArgs, well-formed but not offered (the
 * engine's own names included) is PolicyViolation naming it and what is offered. */
int sbx_runtimes_check(const SbxRuntimes *r, const char *name, SbxError *error);

/* What runs under it: gVisor takes only network_isolated sandboxes without volumes
 * (PolicyViolation naming why). */
int sbx_runtimes_check_sandbox(const SbxRuntimes *r, const char *name, bool network_isolated, size_t n_volumes,
                               SbxError *error);

/* Each runtime's engine runtime is among the engine's registered ones (GET /info's
 * "Runtimes" object). InvalidArgs naming the first that is not. */
int sbx_runtimes_check_engine(const SbxRuntimes *r, json_object *info, SbxError *error);

/* The pids cgroup limit and the guest's RLIMIT_NPROC (0: none) of a sandbox under
 * the engine runtime, for the policy's pids_limit. */
int64_t sbx_runtime_pids_limit(const char *engine_runtime, int64_t pids_limit) _pure_;
int64_t sbx_runtime_guest_nproc(const char *engine_runtime, int64_t pids_limit) _pure_;
