/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The observations reads are answered from (docs/api.md#reads-from-observations): the rule of observation.h,
 * shared by the event thread and every worker (a mutex), holding what an inspect
 * told about a container (SbxSeen, reference-counted: a read keeps using the one it
 * got while an event drops it from the table). */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "mount-check.h"
#include "observation.h"
#include "observed.h"

typedef struct SbxSeen {
        atomic_uint n_ref;
        SbxObserved *observed;
        bool has_report;                /* the mount table its init reported (mount-check.h) */
        SbxMountTable report;
} SbxSeen;

/* Takes o. NULL without memory (o is then freed). */
SbxSeen *sbx_seen_new(SbxObserved *o);
SbxSeen *sbx_seen_ref(SbxSeen *s);
SbxSeen *sbx_seen_unref(SbxSeen *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSeen *, sbx_seen_unref);

typedef struct SbxObservationCache SbxObservationCache;

SbxObservationCache *sbx_observation_cache_new(void);
SbxObservationCache *sbx_observation_cache_free(SbxObservationCache *c);

/* From the event thread: the stream is (again) connected, or lost; one event. */
void sbx_observation_cache_connected(SbxObservationCache *c);
void sbx_observation_cache_lost(SbxObservationCache *c);
void sbx_observation_cache_event(SbxObservationCache *c, const char *container_id, const char *action);
/* This service changed the container (or may have: a request that failed): as an
 * event, so an answer in flight from before is not kept either. */
void sbx_observation_cache_changed(SbxObservationCache *c, const char *container_id);
/* RefreshSandbox. */
void sbx_observation_cache_drop(SbxObservationCache *c, const char *container_id);

SbxObservationTicket sbx_observation_cache_ticket(SbxObservationCache *c);
/* sbx_observations_quiet_since(). */
bool sbx_observation_cache_quiet_since(SbxObservationCache *c, const char *container_id, SbxObservationTicket ticket);
/* Keeps a reference to seen if the rule allows. */
void sbx_observation_cache_put(SbxObservationCache *c, const char *container_id, SbxObservationTicket ticket,
                               uint64_t max_age_us, SbxSeen *seen);
/* Whether seen is still the observation a read of container_id would use (the
 * same one: no event, no refresh since, not past max_age). What was worked out
 * from it stands as long as this holds. */
bool sbx_observation_cache_holds(SbxObservationCache *c, const char *container_id, const SbxSeen *seen,
                                 uint64_t max_age_us);
/* Whether a read of it looks at the host: a running container's bind mounts are
 * judged by its init's report against the host's directories, on every read
 * (docs/api.md#reads-from-observations), which may block on the file system. */
bool sbx_observed_checks_host(const SbxObserved *o);
/* A new reference to a usable observation, or NULL. */
SbxSeen *sbx_observation_cache_get(SbxObservationCache *c, const char *container_id, uint64_t max_age_us);
size_t sbx_observation_cache_size(SbxObservationCache *c);
/* Frees the observations past their age (a retiring worker, before malloc_trim). */
void sbx_observation_cache_sweep(SbxObservationCache *c);
