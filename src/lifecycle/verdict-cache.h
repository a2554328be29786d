/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an inspect told about a container that a list does not: its verdict, whether
 * it is hardened, its image reference and creation time. Lists use it instead of an
 * inspect per container (docs/lifecycle.md). An entry is good while the container
 * has not started, died, been updated, renamed or removed since (Docker's events
 * forget it) and while its row is the same one (the row's fingerprint is part of the
 * key). Shared by all workers (a mutex); bounded: when full it starts over. */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"
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

/* row_fingerprint: the fingerprint of the row about this container, "" without one.
 * Returns true and a copy in *ret (free ret->image) on a hit. */
bool sbx_verdict_cache_get(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           SbxJudgement *ret);
void sbx_verdict_cache_put(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           const SbxJudgement *j);
void sbx_verdict_cache_forget(SbxVerdictCache *c, const char *container_id);
/* Everything (events may have been missed). */
void sbx_verdict_cache_clear(SbxVerdictCache *c);
unsigned sbx_verdict_cache_size(SbxVerdictCache *c);
