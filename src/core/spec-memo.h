/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The stored specs a worker reads, each parsed, normalized and fingerprinted once.
 * A sandbox's stored spec never changes, so its JSON text is the key; a read of a
 * sandbox then judges the container Docker reports now against the spec without
 * parsing JSON and hashing the spec's repr() under every Python version again.
 * SBX_SPEC_MEMO_SIZE entries, replaced in turn. Not thread-safe: one per worker. */

#include "fingerprint.h"
#include "macro.h"
#include "spec.h"

#define SBX_SPEC_MEMO_SIZE 8

typedef struct SbxSpecMemo SbxSpecMemo;

SbxSpecMemo *sbx_spec_memo_new(void);
SbxSpecMemo *sbx_spec_memo_free(SbxSpecMemo *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSpecMemo *, sbx_spec_memo_free);

/* The normalized spec stored as json and its fingerprints, valid until the next call:
 * 1; 0 when json is NULL or not a spec that can be read back and fingerprinted (that
 * is remembered too); -ENOMEM. */
int sbx_spec_memo_get(SbxSpecMemo *m, const char *json, const SbxSpec **ret_spec,
                      const SbxFingerprints **ret_fingerprints);
