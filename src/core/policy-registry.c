/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The host policy's "registries" key and the decision on a pull (docs/security.md,
 * "Images"): which registries images may come from, and the CA each one's
 * certificate must be signed by. Only the text is judged here; the service reads
 * the CA file at each pull. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image-ref.h"
#include "json-util.h"
#include "policy-internal.h"

static void registries_free_n(SbxPolicyRegistry *r, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(r[i].host);
                free(r[i].ca);
        }
        free(r);
}

void policy_registries_free(SbxPolicy *p) {
        registries_free_n(p->registries, p->n_registries);
        p->registries = NULL;
        p->n_registries = 0;
}

/* The host as a reference names it: parsed as one ("HOST[:PORT]/x"). */
static int check_host(const char *field, const char *s, SbxError *error) {
        _cleanup_free_ char *ref = NULL;
        SbxImageRef r = {};
        bool same;

        if (asprintf(&ref, "%s/x", s) < 0)
                return -ENOMEM;
        same = sbx_image_ref_parse(ref, &r, NULL) >= 0 && streq(r.registry, s);
        sbx_image_ref_done(&r);
        if (!same)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not a registry as a reference names one (HOST[:PORT] with a '.' "
                                     "or a port, or localhost)", field, s);
        return 0;
}

static int parse_registry(const char *field, json_object *v, SbxPolicyRegistry *ret, SbxError *error) {
        json_object *host = NULL, *ca = NULL;
        const char *h, *c;
        char sub[96];
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: must be an object { \"host\": …, \"ca\": … }", field);
        json_object_object_foreach(v, k, val) {
                if (streq(k, "host"))
                        host = val;
                else if (streq(k, "ca"))
                        ca = val;
                else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key '%s'", field, k);
        }
        if (!host || !ca)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.%s: missing", field, host ? "ca" : "host");
        snprintf(sub, sizeof sub, "%s.host", field);
        if ((r = sbx_json_get_text(sub, host, &h, error)) < 0 || (r = check_host(sub, h, error)) < 0)
                return r;
        snprintf(sub, sizeof sub, "%s.ca", field);
        if ((r = sbx_json_get_text(sub, ca, &c, error)) < 0)
                return r;
        if (c[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: '%s' is not an absolute path", sub, c);
        ret->host = strdup(h);
        ret->ca = strdup(c);
        return ret->host && ret->ca ? 0 : -ENOMEM;
}

int policy_parse_registries(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        SbxPolicyRegistry *regs;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an array of objects", key);
        n = json_object_array_length(v);
        if (n > SBX_POLICY_MAX_REGISTRIES)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: more than %d registries", key,
                                     SBX_POLICY_MAX_REGISTRIES);
        if (!(regs = calloc(n + 1, sizeof(SbxPolicyRegistry))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[64];

                snprintf(field, sizeof field, "%s[%zu]", key, i);
                r = parse_registry(field, json_object_array_get_idx(v, i), &regs[i], error);
                for (size_t j = 0; r >= 0 && j < i; j++)
                        if (strcasecmp(regs[j].host, regs[i].host) == 0)
                                r = sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.host: '%s' is listed twice",
                                                  field, regs[i].host);
                if (r < 0) {
                        registries_free_n(regs, i + 1);
                        return r;
                }
        }
        policy_registries_free(p);
        p->registries = regs;
        p->n_registries = n;
        return 0;
}

int sbx_policy_check_pull(const SbxPolicy *p, const char *reference, SbxImageRef *ret_ref,
                          const SbxPolicyRegistry **ret_registry, SbxError *error) {
        SbxImageRef ref = {};
        int r;

        if ((r = sbx_image_ref_parse(reference, &ref, error)) < 0)
                return r;
        if (p->n_registries == 0)
                r = sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                  "Pulling is off: the host policy lists no registries (key registries)");
        else if (!policy_image_allowed(p, reference))
                r = sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                  "image: '%s' is not matched by the host policy's allowed_images", reference);
        for (size_t i = 0; r >= 0 && i < p->n_registries; i++)
                if (strcasecmp(p->registries[i].host, ref.registry) == 0) {
                        *ret_registry = &p->registries[i];
                        *ret_ref = ref;
                        return 0;
                }
        if (r >= 0)
                r = sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                  "registry: '%s' (of '%s') is not in the host policy's registries", ref.registry,
                                  reference);
        sbx_image_ref_done(&ref);
        return r;
}
