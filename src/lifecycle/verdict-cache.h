/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an inspect told about a container that a list does not: its verdict, whether
 * it is hardened, its image reference and creation time. Lists use it instead of
 * working it out again per container (docs/lifecycle.md). A judgement is good only
 * while the observation it was worked out from is the one a read of the container
 * would use (observation-cache.h: the rule of docs/api.md, "Reads from
 * observations": no event since, the stream followed, not past observation_max_age)
 * and its row is the same one (the row's fingerprint is part of the key); Docker's
 * events forget it too. Shared by all workers (a mutex); bounded: when full it
 * starts over. */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
#include "observation-cache.h"
#include "verdict.h"

#define SBX_VERDICT_CACHE_MAX 4096U

typedef struct SbxJudgement {
        SbxVerdict verdict;
        bool hardened;
        char *image;
        uint64_t created_us;
} SbxJudgement;

typedef struct SbxVerdictCache SbxVerdictCache;

SbxVerdictCache *sbx_verdict_cache_new(void);
SbxVerdictCache *sbx_verdict_cache_free(SbxVerdictCache *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxVerdictCache *, sbx_verdict_cache_free);

/* row_fingerprint: the fingerprint of the row about this container, "" without one;
 * seen: the observation of it a read would use now (sbx_observation_cache_get()).
 * Returns true and a copy in *ret (free ret->image) on a hit: a judgement of that
 * very observation. One of an older observation is forgotten. */
bool sbx_verdict_cache_get(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           const SbxSeen *seen, SbxJudgement *ret);
/* j as worked out from seen (of which the entry keeps a reference). */
void sbx_verdict_cache_put(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           SbxSeen *seen, const SbxJudgement *j);
void sbx_verdict_cache_forget(SbxVerdictCache *c, const char *container_id);
/* Everything (events may have been missed). */
void sbx_verdict_cache_clear(SbxVerdictCache *c);
unsigned sbx_verdict_cache_size(SbxVerdictCache *c);
