/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Docker create body of a sandbox (DESIGN §3): generated from the canonical
 * spec plus the fixed hardened posture, never from caller-supplied host
 * configuration. */

#include <json-c/json.h>
#include <sys/types.h>

#include "spec.h"

#define SBX_CONTAINER_COMMAND "tail", "-f", "/dev/null"

typedef struct SbxContainerParams {
        const char *name;               /* the sandbox name (label) */
        const SbxSpec *spec;            /* normalized, admissible */
        const char *image;              /* resolved image reference (a snapshot's tag) */
        const char *fingerprint;        /* "" = nothing to attest */
        uid_t uid;                      /* the owner: Config.User and the owner label */
        gid_t gid;
        int64_t pids_limit;             /* from the host policy */
        const char *publish_address;    /* from the host policy */
} SbxContainerParams;

/* The body for POST /containers/create. */
int sbx_container_body(const SbxContainerParams *p, json_object **ret);
