/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The host policy's "warm_pools" and "max_pooled" (docs/lifecycle.md, "Warm pools"), and
 * the policy's digest. A pool's spec is finalized with the policy's default image and
 * fingerprinted under its python_version, so it is read after every other key. A spec
 * with volumes or a fixed host port is refused: a member is made before anyone asks,
 * with nothing of a caller's file system, and two members cannot hold one host port. */

#include <gnutls/crypto.h>
#include <inttypes.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "policy-internal.h"
#include "spec-json.h"

#define ALPHANUMERICAL "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

static void pool_done(SbxPolicyPool *pool) {
        free(pool->user);
        sbx_spec_free(pool->spec);
        free(pool->spec_json);
        free(pool->name_prefix);
        sbx_egress_done(&pool->egress);
        free(pool->egress_json);
}

void policy_pools_free(SbxPolicy *p) {
        for (size_t i = 0; i < p->n_warm_pools; i++)
                pool_done(&p->warm_pools[i]);
        free(p->warm_pools);
        p->warm_pools = NULL;
        p->n_warm_pools = 0;
}

int sbx_pool_name_prefix_check(const char *field, const char *s, SbxError *error) {
        size_t n = strlen(s);

        if (n == 0 || n > SBX_POOL_NAME_PREFIX_MAX || !strchr(ALPHANUMERICAL, s[0]) ||
            strspn(s, ALPHANUMERICAL "_.-") != n)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not 1–%d of [A-Za-z0-9_.-] starting with a letter or a digit", field,
                                     s, SBX_POOL_NAME_PREFIX_MAX);
        return 0;
}

static int parse_user(const char *field, json_object *v, SbxPolicyPool *pool, SbxError *error) {
        int64_t x;

        if (json_object_is_type(v, json_type_int)) {
                x = json_object_get_int64(v);
                if (x < 0 || x >= (int64_t) (uid_t) -1)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %" PRIi64 " is not a uid", field, x);
                pool->uid = (uid_t) x;
                return 0;
        }
        if (!json_object_is_type(v, json_type_string) || isempty(json_object_get_string(v)))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be a user name or a uid", field);
        pool->user = strdup(json_object_get_string(v));
        return pool->user ? 0 : -ENOMEM;
}

/* The spec, finalized; volumes and fixed host ports refused naming the pool. */
static int parse_spec(const SbxPolicy *p, const char *field, json_object *v, SbxPolicyPool *pool, SbxError *error) {
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an object (a spec)", field);
        if ((r = sbx_spec_from_json_string(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN), &pool->spec,
                                           error)) < 0 ||
            (r = sbx_spec_finalize(pool->spec, p->default_image, error)) < 0) {
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                sbx_error_free(error);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s", field, why ?: "invalid");
        }
        if (pool->spec->n_volumes > 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: a warm pool's spec has no volumes (a member is made before anyone asks)",
                                     field);
        for (size_t i = 0; i < pool->spec->n_ports; i++)
                if (pool->spec->ports[i].host != 0)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: a warm pool's spec has no fixed host port (%lld; 0 lets Docker "
                                             "choose)", field, (long long) pool->spec->ports[i].host);
        if (!policy_image_allowed(p, pool->spec->template_type == SBX_TEMPLATE_IMAGE ? pool->spec->image : ""))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: the image is not matched by allowed_images "
                                     "(a pool's spec is an image's)", field);
        if ((r = sbx_spec_to_json_string(pool->spec, &pool->spec_json)) < 0)
                return r;
        return sbx_spec_fingerprint(pool->spec, p->python_version, pool->fingerprint);
}

static int parse_options(const SbxPolicy *p, const char *field, json_object *v, SbxPolicyPool *pool,
                         SbxError *error) {
        const char *prefix = SBX_POOL_DEFAULT_NAME_PREFIX;
        char sub[512];
        int r;

        if (v && !json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an object", field);
        if (v) {
                json_object_object_foreach(v, k, val) {
                        snprintf(sub, sizeof sub, "%s.%s", field, k);
                        if (streq(k, "name_prefix")) {
                                if ((r = sbx_json_get_text(sub, val, &prefix, error)) < 0 ||
                                    (r = sbx_pool_name_prefix_check(sub, prefix, error)) < 0)
                                        return r;
                        } else if (streq(k, "egress")) {
                                _cleanup_(json_object_putp) json_object *e = NULL;

                                /* the stored form ({mode, allow}), "allow" optional */
                                if (!json_object_is_type(val, json_type_object))
                                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                                             "%s: must be an object {mode, allow}", sub);
                                if (json_object_deep_copy(val, &e, NULL) < 0)
                                        return -ENOMEM;
                                if (!json_object_object_get_ex(e, "allow", NULL) &&
                                    json_object_object_add(e, "allow", json_object_new_array()) < 0)
                                        return -ENOMEM;
                                sbx_egress_done(&pool->egress);
                                if ((r = sbx_egress_from_json(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN),
                                                              &pool->egress, error)) < 0 ||
                                    (r = sbx_egress_check(&p->egress, &pool->egress, error)) < 0) {
                                        _cleanup_free_ char *why = TAKE_PTR(error->message);
                                        sbx_error_free(error);
                                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s", sub, why ?: "");
                                }
                        } else
                                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                                     "%s: unknown key (known: name_prefix, egress)", sub);
                }
        }
        if (pool->spec->network_isolated && pool->egress.mode != SBX_EGRESS_MODE_DEFAULT)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s.egress: a network_isolated spec reaches nothing", field);
        if (!(pool->name_prefix = strdup(prefix)))
                return -ENOMEM;
        return sbx_egress_to_json(&pool->egress, &pool->egress_json);
}

static int parse_pool(const SbxPolicy *p, const char *field, json_object *v, SbxPolicyPool *pool,
                      SbxError *error) {
        json_object *user = NULL, *spec = NULL, *options = NULL, *size = NULL;
        char sub[96];
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: must be an object { \"user\", \"spec\", \"options\", \"size\" }", field);
        json_object_object_foreach(v, k, val) {
                if (streq(k, "user"))
                        user = val;
                else if (streq(k, "spec"))
                        spec = val;
                else if (streq(k, "options"))
                        options = val;
                else if (streq(k, "size"))
                        size = val;
                else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key '%s'", field, k);
        }
        if (!user || !spec || !size)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.%s: missing", field,
                                     !user ? "user" : !spec ? "spec" : "size");
        snprintf(sub, sizeof sub, "%s.user", field);
        if ((r = parse_user(sub, user, pool, error)) < 0)
                return r;
        snprintf(sub, sizeof sub, "%s.spec", field);
        if ((r = parse_spec(p, sub, spec, pool, error)) < 0)
                return r;
        snprintf(sub, sizeof sub, "%s.options", field);
        if ((r = parse_options(p, sub, options, pool, error)) < 0)
                return r;
        if (!json_object_is_type(size, json_type_int) || json_object_get_int64(size) < 1 ||
            json_object_get_int64(size) > SBX_POLICY_MAX_POOL_SIZE)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.size: must be a whole number within 1–%d",
                                     field, SBX_POLICY_MAX_POOL_SIZE);
        pool->size = json_object_get_int64(size);
        return 0;
}

int policy_parse_pools(SbxPolicy *p, json_object *v, SbxError *error) {
        size_t n;
        int r;

        if (!v)
                return 0;
        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "warm_pools: must be an array of objects");
        n = json_object_array_length(v);
        policy_pools_free(p);
        if (n == 0)
                return 0;
        if (!(p->warm_pools = calloc(n, sizeof(SbxPolicyPool))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[48];

                p->n_warm_pools = i + 1;
                snprintf(field, sizeof field, "warm_pools[%zu]", i);
                if ((r = parse_pool(p, field, json_object_array_get_idx(v, i), &p->warm_pools[i], error)) < 0)
                        return r;
        }
        return 0;
}

int policy_digest(SbxPolicy *p, const char *text) {
        uint8_t d[32];
        gnutls_datum_t datum = { .data = d, .size = SBX_POLICY_DIGEST_LEN / 2 };
        size_t size = sizeof p->digest;

        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), d) < 0 ||
            gnutls_hex_encode(&datum, p->digest, &size) < 0)
                return -EIO;
        return 0;
}
