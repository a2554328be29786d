/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "bitmask.h"
#include "publish.h"

#define NANOS_PER_CPU INT64_C(1000000000)
#define BYTES_PER_MIB (INT64_C(1024) * 1024)

/* The spec's first SBX_PUBLISH_FIELD_COUNT names are the publish fields' (publish.h). */
SBX_DEFINE_BIT_NAMES(SbxPublishField, sbx_publish_field_to_string, sbx_publish_fields_to_names, sbx_spec_field_names,
                     SBX_PUBLISH_FIELD_COUNT)

static bool volume_eq(const SbxVolume *a, const SbxVolume *b) {
        return streq(a->host, b->host) && streq(a->guest, b->guest) && streq(a->mode, b->mode);
}

static bool volumes_contain(const SbxVolume *l, size_t n, const SbxVolume *v) {
        for (size_t i = 0; i < n; i++)
                if (volume_eq(&l[i], v))
                        return true;
        return false;
}

/* set(a) == set(b): each side's every element is in the other. Quadratic, and
 * without allocation; the lists are short (SBX_MAX_VOLUMES). */
static bool volume_sets_equal(const SbxVolume *a, size_t na, const SbxVolume *b, size_t nb) {
        for (size_t i = 0; i < na; i++)
                if (!volumes_contain(b, nb, &a[i]))
                        return false;
        for (size_t i = 0; i < nb; i++)
                if (!volumes_contain(a, na, &b[i]))
                        return false;
        return true;
}

static bool ports_contain(const SbxPort *l, size_t n, const SbxPort *p) {
        for (size_t i = 0; i < n; i++)
                if (l[i].host == p->host && l[i].guest == p->guest)
                        return true;
        return false;
}

static bool port_sets_equal(const SbxPort *a, size_t na, const SbxPort *b, size_t nb) {
        for (size_t i = 0; i < na; i++)
                if (!ports_contain(b, nb, &a[i]))
                        return false;
        for (size_t i = 0; i < nb; i++)
                if (!ports_contain(a, na, &b[i]))
                        return false;
        return true;
}

/* (observed or 0) != desired * unit; a product that overflows matches nothing. */
static bool scaled_differs(bool has_observed, int64_t observed, int64_t desired, int64_t unit) {
        int64_t want;

        if (__builtin_mul_overflow(desired, unit, &want))
                return true;
        return (has_observed ? observed : 0) != want;
}

unsigned sbx_find_publish_mismatches(const SbxSpec *d, const char *resolved_image, const SbxObserved *o) {
        unsigned m = 0;

        if (!streq_ptr(o->image_ref, resolved_image))
                m |= SBX_PUBLISH_IMAGE;
        if (!volume_sets_equal(o->volumes, o->n_volumes, d->volumes, d->n_volumes))
                m |= SBX_PUBLISH_VOLUMES;
        if (!port_sets_equal(o->ports, o->n_ports, d->ports, d->n_ports))
                m |= SBX_PUBLISH_PORTS;
        if (!streq_ptr(o->working_dir, d->working_dir))
                m |= SBX_PUBLISH_WORKING_DIR;
        if (o->network_isolated != d->network_isolated)
                m |= SBX_PUBLISH_NETWORK_ISOLATED;
        if (scaled_differs(o->has_raw_nano_cpus, o->raw_nano_cpus, d->cpus, NANOS_PER_CPU))
                m |= SBX_PUBLISH_CPUS;
        if (scaled_differs(o->has_raw_memory_bytes, o->raw_memory_bytes, d->memory, BYTES_PER_MIB))
                m |= SBX_PUBLISH_MEMORY;
        return m;
}
