/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Docker create body of a sandbox (docs/security.md): generated from the canonical
 * spec plus the fixed hardened posture, never from caller-supplied host
 * configuration. */

#include <json-c/json.h>
#include <sys/types.h>

#include "sandbox-init.h"
#include "spec.h"

/* The container's log is bounded: nothing should write to it, and whatever does
 * gets at most this much. */
#define SBX_LOG_DRIVER "json-file"
#define SBX_LOG_MAX_SIZE "1m"
#define SBX_LOG_MAX_FILE "2"

/* A working directory strictly inside a volume's guest path is never given to Docker:
 * runc creates a missing one as root at every start, in whatever the volume's path
 * leads to by then (a swap after the check). Config.WorkingDir is then "/", the label
 * keeps the spec's, and execs get it as their own WorkingDir (runc's exec changes
 * into it, as root first, and creates nothing). The label is always written, blank
 * when Config.WorkingDir is the spec's: an image cannot supply it. */
#define SBX_LABEL_WORKING_DIR "xagent.sandbox.working_dir"
#define SBX_CONFIG_WORKING_DIR_IN_VOLUME "/"

/* Config.WorkingDir for the spec. */
const char *sbx_container_config_working_dir(const SbxSpec *spec);
/* The spec's working directory, from the container's Config.WorkingDir, its label
 * SBX_LABEL_WORKING_DIR (NULL: none) and its bind volumes: the label's when
 * Config.WorkingDir is "/" and the label lies strictly inside one of the volumes,
 * else Config.WorkingDir. */
const char *sbx_container_spec_working_dir(const char *config_working_dir, const char *label,
                                           const SbxVolume *volumes, size_t n_volumes);

typedef struct SbxContainerParams {
        const char *name;               /* the sandbox name (label) */
        const SbxSpec *spec;            /* normalized, admissible */
        const char *image;              /* resolved image reference (a snapshot's tag) */
        const char *fingerprint;        /* "" = nothing to attest */
        uid_t uid;                      /* the owner (label); processes it starts run as uid:gid */
        const char *init_volume;        /* the Docker volume holding the first process */
        int64_t pids_limit;             /* from the host policy */
        const char *publish_address;    /* from the host policy */
        const char *service;            /* the label SBX_LABEL_SERVICE; NULL = none */
        const char *runtime;            /* the asked runtime (runtime.h), recorded on SBX_LABEL_RUNTIME;
                                         * NULL = the default, no label */
        const char *engine_runtime;     /* its HostConfig.Runtime (NULL: the engine's default), which
                                         * also decides the pids limit and the guest's RLIMIT_NPROC */
} SbxContainerParams;

/* The body for POST /containers/create. */
int sbx_container_body(const SbxContainerParams *p, json_object **ret);
