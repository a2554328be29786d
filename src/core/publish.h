/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Publish verification (contract §6, xagent's _find_publish_mismatches): after a
 * create, the seven fields a container must show as asked for. The result is a
 * bitmask of SbxPublishField; bit order is xagent's report order, so the names
 * come out as xagent lists them. Field names only, never values. */

#include <stddef.h>

#include "observed.h"
#include "spec.h"

typedef enum SbxPublishField {
        SBX_PUBLISH_IMAGE            = 1u << 0,
        SBX_PUBLISH_VOLUMES          = 1u << 1,
        SBX_PUBLISH_PORTS            = 1u << 2,
        SBX_PUBLISH_WORKING_DIR      = 1u << 3,
        SBX_PUBLISH_NETWORK_ISOLATED = 1u << 4,
        SBX_PUBLISH_CPUS             = 1u << 5,
        SBX_PUBLISH_MEMORY           = 1u << 6,
} SbxPublishField;

#define SBX_PUBLISH_FIELD_COUNT 7

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
