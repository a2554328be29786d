/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Publish verification (xagent-contract.md §6, xagent's _find_publish_mismatches): after a
 * create, the seven fields a container must show as asked for. The result is a
 * bitmask of SbxPublishField: the first seven bits of SbxSpecField (spec.h), with
 * their names; bit order is xagent's report order, so the names come out as
 * xagent lists them. Field names only, never values. */

#include <stddef.h>

#include "observed.h"
#include "spec.h"

typedef enum SbxPublishField {
        SBX_PUBLISH_IMAGE            = SBX_SPEC_FIELD_IMAGE,
        SBX_PUBLISH_VOLUMES          = SBX_SPEC_FIELD_VOLUMES,
        SBX_PUBLISH_PORTS            = SBX_SPEC_FIELD_PORTS,
        SBX_PUBLISH_WORKING_DIR      = SBX_SPEC_FIELD_WORKING_DIR,
        SBX_PUBLISH_NETWORK_ISOLATED = SBX_SPEC_FIELD_NETWORK_ISOLATED,
        SBX_PUBLISH_CPUS             = SBX_SPEC_FIELD_CPUS,
        SBX_PUBLISH_MEMORY           = SBX_SPEC_FIELD_MEMORY,
} SbxPublishField;

#define SBX_PUBLISH_FIELD_COUNT 7
/* The seven are the spec's lowest bits, so its name table serves both. */
_Static_assert(SBX_PUBLISH_MEMORY == 1u << (SBX_PUBLISH_FIELD_COUNT - 1) &&
               SBX_PUBLISH_FIELD_COUNT <= SBX_SPEC_FIELD_COUNT, "publish fields are the spec's first bits");

/* Compares a normalized spec and the image it resolved to (for a snapshot: the
 * snapshot's image tag) with the observed container. image and working_dir
 * exactly; volumes and ports as sets (order and duplicates ignored, observed
 * paths not canonicalized); cpus/memory against the raw NanoCpus / Memory, a
 * missing value counting as 0. Returns the mismatching fields, 0 if none. */
unsigned sbx_find_publish_mismatches(const SbxSpec *desired, const char *resolved_image,
                                     const SbxObserved *o) _pure_;

/* "image", "volumes", …; NULL if not exactly one bit. */
const char *sbx_publish_field_to_string(SbxPublishField f) _pure_;

/* Fills names with the names of the bits set in mask, in xagent's order, then a
 * NULL. Returns the number of names. */
size_t sbx_publish_fields_to_names(unsigned mask, const char *names[static SBX_PUBLISH_FIELD_COUNT + 1]);
