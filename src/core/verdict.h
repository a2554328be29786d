/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* xagent's spec_matches_inspection() (xagent-contract.md §5), and which spec fields differ
 * when it says mismatch. */

#include "fingerprint.h"
#include "observed.h"
#include "spec.h"

typedef enum SbxVerdict {
        SBX_VERDICT_MATCH,
        SBX_VERDICT_MISMATCH,
        SBX_VERDICT_UNVERIFIED,
        _SBX_VERDICT_MAX,
} SbxVerdict;

const char *sbx_verdict_to_string(SbxVerdict v) _pure_;

/* The verdict of a normalized desired spec against a container, first rule that
 * fires: a missing or blank fingerprint or version label, a version label
 * Python's int() refuses, or a version other than current_version → unverified;
 * a fingerprint label equal to none of the desired spec's fingerprints (one per
 * Python version xagent may run on, sbx_spec_fingerprints()), or NanoCpus /
 * Memory (missing = 0) other than the desired cpus and memory → mismatch; else
 * match. */
SbxVerdict sbx_verdict(const SbxSpec *desired, const SbxFingerprints *desired_fingerprints,
                       const SbxObserved *observed, int64_t current_version);

/* The fields in which two normalized specs differ. */
unsigned sbx_spec_diff(const SbxSpec *a, const SbxSpec *b) _pure_;

/* For a mismatch: the fields that differ, as far as can be told. The container's
 * attested spec is known only from the stored row (stored, nullable) and only when
 * the row's fingerprint is the container's label (stored_fingerprint); then the
 * fields where desired and stored differ are named. cpus and memory are also
 * compared with what Docker reports now. */
unsigned sbx_verify_mismatched_fields(const SbxSpec *desired, const SbxSpec *stored, const char *stored_fingerprint,
                                      const SbxObserved *observed);
