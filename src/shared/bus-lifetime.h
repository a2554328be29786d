/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A sandbox's lifetime (docs/lifecycle.md, "Idle stop and expiry"): the create and
 * ensure options idle_timeout u (seconds without activity, then stopped or paused),
 * expire_after u (seconds after creation, then deleted) and on_idle s ("stop", the
 * default, or "pause"); and the integers every a{sv} reader of the daemon and the
 * client share. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-read.h"
#include "error.h"
#include "policy.h"

typedef struct SbxLifetime {
        uint32_t idle_timeout_s;        /* 0: never */
        uint32_t expire_after_s;        /* 0: never */
        bool on_idle_pause;             /* on_idle "pause" (else "stop") */
        bool counts_processes;          /* idle_counts_processes: a running process is activity */
        bool has_idle_timeout;          /* given (else the policy's default_idle_timeout) */
        bool has_expire_after, has_on_idle, has_counts_processes;       /* given */
} SbxLifetime;

/* Whether any lifetime option was given (an ensure that finds its sandbox applies them,
 * as SetSandboxLifetimes does). */
static inline bool sbx_lifetime_given(const SbxLifetime *l) {
        return l->has_idle_timeout || l->has_expire_after || l->has_on_idle || l->has_counts_processes;
}


/* One entry of a create's, ensure's or SetSandboxLifetimes' options, its variant next:
 * key is a lifetime option (idle_timeout, expire_after, on_idle,
 * idle_counts_processes: read into *l), else InvalidArgs "KEY: unknown option". */
int sbx_bus_read_lifetime_entry(sd_bus_message *m, const char *key, SbxLifetime *l, SbxError *error);

/* The host policy's bounds (PolicyViolation naming the key and the cap) and its
 * default idle timeout for one not given. */
int sbx_lifetime_apply_policy(SbxLifetime *l, const SbxPolicy *p, SbxError *error);
/* The bounds alone (a change of lifetimes: what is not given stays as it is). */
int sbx_lifetime_check_policy(const SbxLifetime *l, const SbxPolicy *p, SbxError *error);
