/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "attested.h"
#include "fingerprint.h"
#include "labels.h"

#define CPU_NANOS INT64_C(1000000000)
#define MIB INT64_C(1048576)

/* What the container says, once: everything but the ambiguous variables. */
typedef struct Attested {
        const SbxObserved *o;
        SbxTemplateType type;
        const char *image;              /* image template: Config.Image */
        const char *snapshot_id;        /* snapshot template: its label */
        int64_t cpus;
        int64_t memory;
        SbxPort *ports;                 /* every port binding */
        const SbxEnvVar **certain;      /* variables that came from the spec */
        size_t n_certain;
        const SbxEnvVar **ambiguous;    /* variables the image has with the same value */
        size_t n_ambiguous;
} Attested;

static void attested_done(Attested *a) {
        free(a->ports);
        free(a->certain);
        free(a->ambiguous);
}

/* The value Docker merged in from the image for key: the last "key=…" entry. */
static const char *image_env_get(char *const *image_env, const char *key) {
        size_t len = strlen(key);
        const char *value = NULL;

        for (char *const *e = image_env; e && *e; e++)
                if (strncmp(*e, key, len) == 0 && (*e)[len] == '=')
                        value = *e + len + 1;
        return value;
}

static int split_env(const SbxObserved *o, char *const *image_env, Attested *a) {
        a->certain = calloc(o->n_env + 1, sizeof(SbxEnvVar *));
        a->ambiguous = calloc(o->n_env + 1, sizeof(SbxEnvVar *));
        if (!a->certain || !a->ambiguous)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_env; i++) {
                const char *from_image = image_env_get(image_env, o->env[i].key),
                           *from_engine = image_env_get(o->engine_env, o->env[i].key);

                /* The image's, or one the engine may have added (Podman's), with this
                 * value: maybe the spec's. */
                if (streq_ptr(from_image, o->env[i].value) || streq_ptr(from_engine, o->env[i].value))
                        a->ambiguous[a->n_ambiguous++] = &o->env[i];
                else
                        a->certain[a->n_certain++] = &o->env[i];
        }
        return 0;
}

/* A whole, positive multiple of unit: what spec value * unit was sent. */
static bool whole_units(bool has, int64_t raw, int64_t unit, int64_t *ret) {
        if (!has || raw <= 0 || raw % unit != 0)
                return false;
        *ret = raw / unit;
        return true;
}

/* HostPort as sent: the decimal port, or "" for the ephemeral one (0). */
static bool host_port(const char *s, int64_t *ret) {
        int64_t v = 0;

        for (const char *p = s; *p; p++) {
                if (*p < '0' || *p > '9')
                        return false;
                v = v * 10 + (*p - '0');
                if (v > SBX_MAX_PORT)
                        return false;
        }
        *ret = v;
        return true;
}

/* Fills a from o: 1, or 0 when no spec can have made this container. */
static int read_container(const SbxObserved *o, Attested *a) {
        const char *type = sbx_observed_get_label(o, SBX_LABEL_TEMPLATE_TYPE);

        a->o = o;
        if (streq_ptr(type, sbx_template_type_to_string(SBX_TEMPLATE_IMAGE))) {
                a->type = SBX_TEMPLATE_IMAGE;
                a->image = o->image_ref;
                if (isempty(a->image))
                        return 0;
        } else if (streq_ptr(type, sbx_template_type_to_string(SBX_TEMPLATE_SNAPSHOT))) {
                a->type = SBX_TEMPLATE_SNAPSHOT;
                a->snapshot_id = sbx_observed_get_label(o, SBX_LABEL_SNAPSHOT_ID);
                if (isempty(a->snapshot_id))
                        return 0;
        } else
                return 0;
        if (!whole_units(o->has_raw_nano_cpus, o->raw_nano_cpus, CPU_NANOS, &a->cpus) ||
            !whole_units(o->has_raw_memory_bytes, o->raw_memory_bytes, MIB, &a->memory))
                return 0;

        a->ports = calloc(o->n_bindings + 1, sizeof(SbxPort));
        if (!a->ports)
                return -ENOMEM;
        for (size_t i = 0; i < o->n_bindings; i++) {
                if (!host_port(o->bindings[i].host_port, &a->ports[i].host))
                        return 0;
                a->ports[i].guest = o->bindings[i].guest;
        }
        return 1;
}

/* The candidate with the ambiguous variables of mask, normalized. 0 when it is no
 * contract-valid spec. */
static int candidate(const Attested *a, unsigned mask, SbxSpec **ret) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();
        const SbxObserved *o = a->o;
        int r;

        if (!s)
                return -ENOMEM;
        s->template_type = a->type;
        s->cpus = a->cpus;
        s->memory = a->memory;
        s->network_isolated = o->network_isolated;
        if ((a->image && !(s->image = strdup(a->image))) ||
            (a->snapshot_id && !(s->snapshot_id = strdup(a->snapshot_id))) ||
            (o->working_dir && !(s->working_dir = strdup(o->working_dir))))
                return -ENOMEM;

        for (size_t i = 0; i < a->n_certain; i++)
                if ((r = sbx_spec_add_env(s, a->certain[i]->key, a->certain[i]->value)) < 0)
                        return r;
        for (size_t i = 0; i < a->n_ambiguous; i++)
                if ((mask & (1u << i)) &&
                    (r = sbx_spec_add_env(s, a->ambiguous[i]->key, a->ambiguous[i]->value)) < 0)
                        return r;
        for (size_t i = 0; i < o->n_volumes; i++)
                if ((r = sbx_spec_add_volume(s, o->volumes[i].host, o->volumes[i].guest, o->volumes[i].mode)) < 0)
                        return r;
        for (size_t i = 0; i < o->n_bindings; i++)
                if ((r = sbx_spec_add_port(s, a->ports[i].host, a->ports[i].guest)) < 0)
                        return r;

        r = sbx_spec_normalize(s, NULL);
        if (r >= 0)
                r = sbx_spec_validate_contract(s, NULL);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return 0;
        *ret = TAKE_PTR(s);
        return 1;
}

/* 1 when s's fingerprint under some Python version is hex. */
static int proven(const SbxSpec *s, const char *hex) {
        SbxFingerprints f;
        int r;

        r = sbx_spec_fingerprints(s, &f);
        if (r == -ENOMEM)
                return r;
        return r >= 0 && sbx_fingerprints_contain(&f, hex);
}

int sbx_spec_from_container(const SbxObserved *o, char *const *image_env, SbxSpec **ret) {
        _cleanup_(attested_done) Attested a = {};
        int r;

        if (!o->fingerprint_label)
                return 0;
        r = read_container(o, &a);
        if (r <= 0)
                return r;
        if ((r = split_env(o, image_env, &a)) < 0)
                return r;
        if (a.n_ambiguous > SBX_ATTESTED_MAX_AMBIGUOUS_ENV)
                return 0;

        /* The spec that set none of the ambiguous variables first: the usual case. */
        for (unsigned mask = 0; mask < (1u << a.n_ambiguous); mask++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;

                r = candidate(&a, mask, &s);
                if (r < 0)
                        return r;
                if (r == 0)
                        continue;
                r = proven(s, o->fingerprint_label);
                if (r < 0)
                        return r;
                if (r > 0) {
                        *ret = TAKE_PTR(s);
                        return 1;
                }
        }
        return 0;
}
