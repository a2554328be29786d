/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Pre-create conflict checks (xagent-contract.md §7), on the caller's raw volume and port
 * lists, before anything is created. Paths are canonicalized here. The first
 * conflict in input order is RuntimeConflict with xagent's message text, which
 * spells the two sides as Python tuple reprs. */

#include <stddef.h>

#include "error.h"
#include "spec.h"

/* Same host path with a different (guest, mode) — one would be dropped — or the
 * same guest path with a different (host, mode) — Docker refuses duplicate mount
 * points. Identical triples after canonicalization are fine. */
int sbx_check_volume_conflicts(const SbxVolume *volumes, size_t n, SbxError *error);

/* Same guest port with a different host port, or the same non-zero host port
 * with a different guest port. Host port 0 (ephemeral) is exempt from the
 * host-side check; exact duplicates are fine. */
int sbx_check_port_conflicts(const SbxPort *ports, size_t n, SbxError *error);

/* Volumes, then ports, as xagent's create() does. */
int sbx_check_spec_conflicts(const SbxSpec *spec, SbxError *error);
