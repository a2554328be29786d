/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "pyint.h"
#include "verdict.h"

#define CPU_NANOS INT64_C(1000000000)
#define MIB INT64_C(1048576)

const char *sbx_verdict_to_string(SbxVerdict v) {
        static const char *const names[_SBX_VERDICT_MAX] = {
                [SBX_VERDICT_MATCH] = "match",
                [SBX_VERDICT_MISMATCH] = "mismatch",
                [SBX_VERDICT_UNVERIFIED] = "unverified",
        };
        return v >= 0 && v < _SBX_VERDICT_MAX ? names[v] : NULL;
}

/* Python compares (raw or 0) with int(cpus * 1e9) and memory * MiB: an observed
 * value is "right" only when the product is representable and equal. */
static bool cpus_differ(const SbxSpec *desired, const SbxObserved *o) {
        int64_t want;
        if (__builtin_mul_overflow(desired->cpus, CPU_NANOS, &want))
                return true;
        return (o->has_raw_nano_cpus ? o->raw_nano_cpus : 0) != want;
}

static bool memory_differs(const SbxSpec *desired, const SbxObserved *o) {
        int64_t want;
        if (__builtin_mul_overflow(desired->memory, MIB, &want))
                return true;
        return (o->has_raw_memory_bytes ? o->raw_memory_bytes : 0) != want;
}

SbxVerdict sbx_verdict(const SbxSpec *desired, const SbxFingerprints *desired_fingerprints, const SbxObserved *o,
                       int64_t current_version) {
        int64_t version;

        if (!o->fingerprint_label || !o->version_label)
                return SBX_VERDICT_UNVERIFIED;
        /* int() failing and a number too large for int64 both mean "not current". */
        if (sbx_py_int_parse(o->version_label, &version) < 0 || version != current_version)
                return SBX_VERDICT_UNVERIFIED;
        /* A label written by xagent on any Python version attests the same spec: a
         * repr() is a Python literal, so equal strings mean equal specs. */
        if (!sbx_fingerprints_contain(desired_fingerprints, o->fingerprint_label))
                return SBX_VERDICT_MISMATCH;
        if (cpus_differ(desired, o) || memory_differs(desired, o))
                return SBX_VERDICT_MISMATCH;
        return SBX_VERDICT_MATCH;
}

unsigned sbx_spec_diff(const SbxSpec *a, const SbxSpec *b) {
        unsigned m = 0;
        bool same;

        if (a->template_type != b->template_type)
                m |= SBX_SPEC_FIELD_TEMPLATE_TYPE;
        if (!streq_ptr(a->image, b->image))
                m |= SBX_SPEC_FIELD_IMAGE;
        if (!streq_ptr(a->snapshot_id, b->snapshot_id))
                m |= SBX_SPEC_FIELD_SNAPSHOT_ID;
        if (!streq_ptr(a->working_dir, b->working_dir))
                m |= SBX_SPEC_FIELD_WORKING_DIR;
        if (a->cpus != b->cpus)
                m |= SBX_SPEC_FIELD_CPUS;
        if (a->memory != b->memory)
                m |= SBX_SPEC_FIELD_MEMORY;

        same = a->n_env == b->n_env;
        for (size_t i = 0; same && i < a->n_env; i++)
                same = streq(a->env[i].key, b->env[i].key) && streq(a->env[i].value, b->env[i].value);
        if (!same)
                m |= SBX_SPEC_FIELD_ENV;

        same = a->n_volumes == b->n_volumes;
        for (size_t i = 0; same && i < a->n_volumes; i++)
                same = streq(a->volumes[i].host, b->volumes[i].host) &&
                       streq(a->volumes[i].guest, b->volumes[i].guest) &&
                       streq(a->volumes[i].mode, b->volumes[i].mode);
        if (!same)
                m |= SBX_SPEC_FIELD_VOLUMES;

        if (a->network_isolated != b->network_isolated)
                m |= SBX_SPEC_FIELD_NETWORK_ISOLATED;

        same = a->n_ports == b->n_ports;
        for (size_t i = 0; same && i < a->n_ports; i++)
                same = a->ports[i].host == b->ports[i].host && a->ports[i].guest == b->ports[i].guest;
        if (!same)
                m |= SBX_SPEC_FIELD_PORTS;
        return m;
}

unsigned sbx_verify_mismatched_fields(const SbxSpec *desired, const SbxSpec *stored, const char *stored_fingerprint,
                                      const SbxObserved *o) {
        unsigned m = 0;

        if (stored && o->fingerprint_label && streq_ptr(stored_fingerprint, o->fingerprint_label))
                m |= sbx_spec_diff(desired, stored);
        if (cpus_differ(desired, o))
                m |= SBX_SPEC_FIELD_CPUS;
        if (memory_differs(desired, o))
                m |= SBX_SPEC_FIELD_MEMORY;
        return m;
}
