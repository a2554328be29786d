/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Docker create body of a sandbox (docs/security.md): generated from the canonical
 * spec plus the fixed hardened posture, never from caller-supplied host
 * configuration. */

#include <json-c/json.h>
#include <sys/types.h>

#include "spec.h"

/* The first process (src/init/xagent-sandbox-init.c): mounted read-only from the
 * host through a Docker volume whose name starts with SBX_INIT_VOLUME_PREFIX, run
 * as SBX_INIT_USER (not the owner), so nothing of the owner's runs and nothing can
 * be reached in the container before the service has checked its mounts
 * (docs/security.md). The guest directory is reserved: no volume and no working
 * directory may lie in it. */
#define SBX_INIT_GUEST_DIR "/.xagent-sandbox"
#define SBX_INIT_PATH SBX_INIT_GUEST_DIR "/xagent-sandbox-init"
#define SBX_INIT_VOLUME_PREFIX "xagent-sandbox-init"
#define SBX_INIT_USER "65534:65534"

/* The container's log is bounded: nothing should write to it, and whatever does
 * gets at most this much. */
#define SBX_LOG_DRIVER "json-file"
#define SBX_LOG_MAX_SIZE "1m"
#define SBX_LOG_MAX_FILE "2"

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
} SbxContainerParams;

/* The body for POST /containers/create. */
int sbx_container_body(const SbxContainerParams *p, json_object **ret);
