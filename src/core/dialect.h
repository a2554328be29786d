/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The engine's dialect (docs/engines.md): Docker, or Podman through its
 * Docker-compatible API, recognised from GET /version. Podman answers some of the
 * facts the posture and the publish checks read in its own words; each such answer
 * is rewritten here into Docker's, and only where the rewrite is provably the same
 * fact (docs/security.md, "Podman"). Anything else is left as Podman said it, so
 * it fails the check it would fail on Docker: nothing here turns a weaker posture
 * into a hardened one. Pure: the answers come in as JSON. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "macro.h"

typedef enum SbxEngineKind {
        SBX_ENGINE_DOCKER,
        SBX_ENGINE_PODMAN,
} SbxEngineKind;

/* What Podman names the component of its /version answer. */
#define SBX_PODMAN_COMPONENT "Podman Engine"
/* The size Podman 4.3.1 reports (libpod inspect, HostConfig.LogConfig.Size) for
 * the log bound this service asks for (max-size 1m: one file cut at 10^6 bytes). */
#define SBX_PODMAN_LOG_SIZE "1MB"
/* The most capabilities a default set may list (Linux has 41). */
#define SBX_DIALECT_CAPS_MAX 64U

typedef struct SbxDialect {
        SbxEngineKind kind;
        /* Podman: the capabilities it grants a container that drops none
         * (/libpod/info host.security.capabilities), upper case, without "CAP_". */
        char *default_caps[SBX_DIALECT_CAPS_MAX];
        size_t n_default_caps;
} SbxDialect;

void sbx_dialect_done(SbxDialect *d);

/* What the kernel enforces on a running container (docker-cgroup.h), in the units
 * of Docker's HostConfig: bytes, bytes of memory plus swap, processes, CPUs * 10^9;
 * 0 = unlimited. has_*: read. */
typedef struct SbxKernelLimits {
        bool has_memory, has_memory_swap, has_pids, has_nano_cpus;
        int64_t memory, memory_swap, pids, nano_cpus;
        /* its first process's capability sets (/proc/PID/status): any held, in the
         * bounding, permitted or effective set */
        bool has_caps, holds_caps;
} SbxKernelLimits;

/* Puts what the kernel enforces in the place of the HostConfig limits the engine
 * reports: a limit changed or dropped behind the answer's back is then what is
 * judged. A first process that holds any capability has dropped none, whatever
 * CapDrop says (CapDrop then reads []). */
int sbx_dialect_apply_kernel_limits(json_object *inspect, const SbxKernelLimits *k);

/* The engine from a GET /version answer: Podman when a Components[] entry is named
 * SBX_PODMAN_COMPONENT, else Docker. */
SbxEngineKind sbx_engine_from_version(json_object *version);

/* Whether an engine's /info (compat: SecurityOptions "name=rootless") or
 * /libpod/info (host.security.rootless) says it runs rootless. */
bool sbx_engine_rootless(json_object *info);

/* Podman's default capability set from /libpod/info: host.security.capabilities
 * ("CAP_A,CAP_B,…"). An answer without one, or with more than
 * SBX_DIALECT_CAPS_MAX, is BackendError: nothing could then prove CapDrop. */
int sbx_dialect_set_default_caps(SbxDialect *d, json_object *libpod_info, SbxError *error);

/* The member the Podman dialect adds to an inspect answer: the Config.Env entries
 * Podman may have added itself (PATH, TERM, container, HOME, HOSTNAME), which a
 * spec's fingerprint is then proven with or without (attested.h), like the
 * image's. Not a member either engine answers. */
#define SBX_ENGINE_ENV_KEY "XagentSandboxEngineEnv"

/* Rewrites a container-inspect answer (compat route) into Docker's words, in
 * place. libpod: the same container's /libpod/containers/{id}/json (NULL when not
 * read), for the log bound the compat answer does not carry. A no-op for Docker. */
int sbx_dialect_normalize_inspect(const SbxDialect *d, json_object *inspect, json_object *libpod);

/* Whether the engine reports host port 0 as the port it chose at create, in the
 * place of the request (so that nothing can tell a request for 0 from one for that
 * port): a spec asking for 0 cannot be verified there. */
static inline bool sbx_dialect_echoes_host_port_0(const SbxDialect *d) {
        return !d || d->kind == SBX_ENGINE_DOCKER;
}

/* The first second a report line of a process started at since_us may be stamped
 * with: Podman stamps its log lines in whole seconds (docs/security.md). */
uint64_t sbx_dialect_report_since(const SbxDialect *d, uint64_t since_us);

/* The init volume's driver "o" option: Podman chowns a named volume to the
 * container's user on its first mount — on a read-only bind that fails — unless
 * the volume names its owner (uid=0,gid=0: root's, which the directory is). */
const char *sbx_dialect_init_volume_o(const SbxDialect *d);

/* Whether a snapshot (a commit) can be made: not on Podman, whose commit (4.3.1)
 * ignores the labels given for the image (labels.h: a snapshot's image attests
 * nothing and belongs to no one), so the image would keep the sandbox's owner and
 * fingerprint labels and lack the token an interrupted snapshot is found by
 * (PolicyViolation naming that). */
int sbx_dialect_check_commit(const SbxDialect *d, SbxError *error);
