/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Warm pools and ClaimSandbox (docs/lifecycle.md, "Warm pools"). Docker cannot change a
 * container's labels, and a sandbox's owner, name and fingerprint are labels: so a
 * member is made with its final name already — one the service generated in its
 * owner's namespace, "<name_prefix>-<8 hex>" — and waits, verified and started, under
 * the container name of that name with POOL_SUFFIX. A claim is then one inspect, a
 * rename to the final container name and the store's row: an intent written first
 * (container_name: the member's) makes a claim cut anywhere a member again (before
 * the rename: intent.c keeps it) or a sandbox (after: the row is written from the
 * intent) — never both, never neither. */

#include <pwd.h>
#include <stdio.h>
#include <sys/random.h>

#include "config.h"
#include "docker-container.h"
#include "docker-image.h"
#include "egress-apply.h"
#include "egress-arm.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "owner-info.h"
#include "spec-json.h"
#include "user-labels.h"

/* The pool's owner, by name or uid, as the user database has it now. */
static int pool_owner(const SbxPolicyPool *pool, SbxOwnerInfo *ret, SbxError *error) {
        struct passwd pw, *found = NULL;
        char buf[4096];
        uid_t uid = pool->uid;

        if (pool->user) {
                if (getpwnam_r(pool->user, &pw, buf, sizeof buf, &found) != 0 || !found)
                        return sbx_error_set(error, SBX_ERROR_ACCESS_DENIED, "warm_pools: no user '%s'", pool->user);
                uid = found->pw_uid;
        }
        return sbx_owner_info_lookup(uid, ret, error);
}

static bool pool_is_for(const SbxPolicyPool *pool, const SbxOwner *owner) {
        return pool->user ? streq_ptr(pool->user, owner->name) : pool->uid == owner->uid;
}

/* A name generated in owner's namespace: "<prefix>-<8 hex>" (Docker-level). */
static int generate_name(uid_t owner, const char *prefix, char **ret) {
        _cleanup_free_ char *plain = NULL;
        uint8_t b[4];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        if (asprintf(&plain, "%s-%02x%02x%02x%02x", prefix, b[0], b[1], b[2], b[3]) < 0)
                return -ENOMEM;
        return sbx_name_qualify(owner, plain, ret);
}

/* Whether a Docker-level name is one generate_name() made with prefix. */
static bool named_with(const char *name, const char *prefix) {
        const char *plain;
        size_t n = strlen(prefix);

        (void) sbx_name_unqualify(name, &plain);
        return strncmp(plain, prefix, n) == 0 && plain[n] == '-' && strlen(plain + n + 1) == 8 &&
                strspn(plain + n + 1, "0123456789abcdef") == 8;
}

static const char *label_of(json_object *c, const char *key) {
        json_object *labels = json_object_object_get(c, "Labels"), *v;

        return labels && json_object_object_get_ex(labels, key, &v) ? json_object_get_string(v) : NULL;
}

/* One listed member: its Docker-level name (NULL: nobody's), its owner. */
typedef struct Member {
        const char *id;
        char *name;
        uid_t owner;
        const char *fingerprint, *digest, *image_id;
        bool running;
} Member;

static void member_done(Member *m) {
        free(m->name);
}

static int member_of(json_object *c, Member *ret) {
        *ret = (Member) {
                .id = json_object_get_string(json_object_object_get(c, "Id")),
                .fingerprint = label_of(c, SBX_LABEL_SPEC_FINGERPRINT),
                .digest = label_of(c, SBX_LABEL_POOL),
                .image_id = json_object_get_string(json_object_object_get(c, "ImageID")),
                .running = streq_ptr(json_object_get_string(json_object_object_get(c, "State")), "running"),
        };
        if (!ret->id || lc_listed_owner(c, &ret->owner) < 0)
                return 0;
        if (sbx_name_from_labels(label_of(c, SBX_LABEL_SANDBOX_NAME), ret->owner, &ret->name) == -ENOMEM)
                return -ENOMEM;
        return 0;
}

/* This instance's members (of owner and fingerprint, unless SBX_STORE_ANY_OWNER and
 * NULL): one list, of the containers with a pool label only (a member's, or a claimed
 * one's), not every sandbox's (the refill at start-up competes with the first answers). */
static int list_members(SbxLifecycle *l, uid_t owner, const char *fp, json_object **ret, SbxError *error) {
        _cleanup_free_ char *service = NULL, *by_owner = NULL, *by_fp = NULL;
        const char *filters[6] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, SBX_LABEL_POOL };
        size_t n = 2;

        if (!l->service_id)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "warm pools need the service's own label");
        if (asprintf(&service, "%s=%s", SBX_LABEL_SERVICE, l->service_id) < 0)
                return -ENOMEM;
        filters[n++] = service;
        if (owner != SBX_STORE_ANY_OWNER) {
                if (asprintf(&by_owner, "%s=%u", SBX_LABEL_OWNER, (unsigned) owner) < 0)
                        return -ENOMEM;
                filters[n++] = by_owner;
        }
        if (fp) {
                if (asprintf(&by_fp, "%s=%s", SBX_LABEL_SPEC_FINGERPRINT, fp) < 0)
                        return -ENOMEM;
                filters[n++] = by_fp;
        }
        return sbx_docker_container_list(l->docker, filters, ret, error);
}

/* The image id the pool's image reference names now (NULL: none, logged). */
static char *image_id_now(SbxLifecycle *l, const char *image) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        SbxError e = SBX_ERROR_NULL;
        char *id = NULL;

        if (sbx_docker_image_inspect(l->docker, image, &j, &e) >= 0)
                id = strdup(json_object_get_string(json_object_object_get(j, "Id")) ?: "");
        else
                log_warning("Warm pool of %s: %s", image, e.message ?: "the image cannot be inspected");
        sbx_error_free(&e);
        return id;
}

/* The member's lock, and its inspect: 1, or 0 when it is gone or no member any more
 * (claimed meanwhile). */
static int lock_member(SbxLifecycle *l, const char *name, const char *id, SbxKeyedLockHandle **ret_lock,
                       SbxObserved **ret, SbxError *error) {
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, ret_lock)) < 0)
                return r;
        r = lc_inspect_container(l, id, ret, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        return r < 0 ? r : lc_is_pool_name((*ret)->name);
}

/* Removes a member (its name's lock held; still one: a claim may have taken it). */
static int remove_member(SbxLifecycle *l, const char *name, const char *id, const char *why, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        int r;

        if ((r = lock_member(l, name, id, &lock, &o, error)) <= 0)
                return r;
        if ((r = lc_remove_container(l, id, error)) > 0)
                log_info("Removed warm pool member %s: %s", id, why);
        return r;
}

/* The pool of a member under the policy in force, or -1. */
static ssize_t pool_of(const SbxPolicy *p, const uid_t *uids, const Member *m) {
        if (!m->name || !streq_ptr(m->digest, p->digest))
                return -1;
        for (size_t i = 0; i < p->n_warm_pools; i++)
                if (uids[i] == m->owner && streq_ptr(m->fingerprint, p->warm_pools[i].fingerprint) &&
                    named_with(m->name, p->warm_pools[i].name_prefix))
                        return (ssize_t) i;
        return -1;
}

/* One new member of pool i. */
static int add_member(SbxLifecycle *l, const SbxPolicyPool *pool, const SbxOwner *owner, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *name = NULL;
        int r = generate_name(owner->uid, pool->name_prefix, &name);

        if (r < 0 || (r = lc_create_member(l, name, pool->spec, owner, &pool->egress, &o, error)) < 0)
                return r;
        log_info("Warm pool member %s made for uid %u (%s)", o->id, (unsigned) owner->uid, pool->spec->image);
        return 0;
}

typedef struct Refill {
        SbxOwnerInfo *owners;   /* per pool; uids[i] (uid_t) -1: none */
        uid_t *uids;
        char **image_ids;       /* per pool: what its image names now, or NULL */
        int64_t *have;          /* per pool: healthy members */
        int64_t total;
} Refill;

static void refill_done(Refill *f, size_t n) {
        for (size_t i = 0; f->image_ids && i < n; i++)
                free(f->image_ids[i]);
        free(f->owners);
        free(f->uids);
        free(f->image_ids);
        free(f->have);
}

/* Each listed member kept (its pool's, running, of the image its reference names now,
 * within the sizes) or removed. */
static int sort_members(SbxLifecycle *l, json_object *list, Refill *f, SbxPoolStats *st, SbxError *error) {
        const SbxPolicy *p = l->policy;

        for (size_t k = 0; k < json_object_array_length(list); k++) {
                json_object *c = json_object_array_get_idx(list, k);
                _cleanup_(member_done) Member m = {};
                const char *why = NULL;
                ssize_t i;
                int r;

                if (!lc_listed_pool_member(c))
                        continue;
                if ((r = member_of(c, &m)) < 0)
                        return r;
                i = pool_of(p, f->uids, &m);
                if (i < 0)
                        why = "no pool of the policy in force makes it";
                else if (!m.running)
                        why = "it is not running";
                else if (!f->image_ids[i] || !streq_ptr(m.image_id, f->image_ids[i]))
                        why = "its image reference names another image now";
                else if (f->have[i] >= p->warm_pools[i].size || f->total >= p->max_pooled)
                        why = "its pool is full";
                if (!why) {
                        f->have[i]++;
                        f->total++;
                        st->kept++;
                        continue;
                }
                if (!m.id || !m.name)
                        continue;
                if ((r = remove_member(l, m.name, m.id, why, error)) < 0)
                        return r;
                st->removed += r > 0;
        }
        return 0;
}

int sbx_lifecycle_pool_refill(SbxLifecycle *l, SbxPoolStats *ret, SbxError *error) {
        const SbxPolicy *p = l->policy;
        _cleanup_(json_object_putp) json_object *list = NULL;
        SbxPoolStats st = {};
        size_t n = p->n_warm_pools;
        Refill f = {
                .owners = calloc(n + 1, sizeof(SbxOwnerInfo)), .uids = calloc(n + 1, sizeof(uid_t)),
                .image_ids = calloc(n + 1, sizeof(char *)), .have = calloc(n + 1, sizeof(int64_t)),
        };
        int r = 0;

        if (!f.owners || !f.uids || !f.image_ids || !f.have) {
                refill_done(&f, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                SbxError e = SBX_ERROR_NULL;

                f.uids[i] = (uid_t) -1;
                if (pool_owner(&p->warm_pools[i], &f.owners[i], &e) >= 0)
                        f.uids[i] = f.owners[i].owner.uid;
                else
                        log_warning("warm_pools[%zu]: %s", i, e.message ?: "no such user");
                sbx_error_free(&e);
                f.image_ids[i] = image_id_now(l, p->warm_pools[i].spec->image);
        }
        if ((r = list_members(l, SBX_STORE_ANY_OWNER, NULL, &list, error)) < 0 ||
            (r = sort_members(l, list, &f, &st, error)) < 0)
                goto finish;
        for (size_t i = 0; i < n; i++)
                while (f.uids[i] != (uid_t) -1 && f.image_ids[i] && f.have[i] < p->warm_pools[i].size &&
                       f.total < p->max_pooled) {
                        SbxError e = SBX_ERROR_NULL;

                        r = add_member(l, &p->warm_pools[i], &f.owners[i].owner, &e);
                        if (r < 0) {
                                log_warning("warm_pools[%zu]: a member could not be made: %s", i,
                                            e.message ?: strerror(-r));
                                sbx_error_free(&e);
                                st.failed++;
                                r = 0;
                                break;          /* again at the next refill */
                        }
                        f.have[i]++;
                        f.total++;
                        st.made++;
                }
finish:
        refill_done(&f, n);
        if (ret)
                *ret = st;
        return r;
}

int sbx_lifecycle_pool_status(SbxLifecycle *l, uid_t owner, unsigned *ret_ready, SbxError *error) {
        const SbxPolicy *p = l->policy;
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ uid_t *uids = calloc(p->n_warm_pools + 1, sizeof(uid_t));
        int r;

        if (!uids)
                return -ENOMEM;
        for (size_t i = 0; i < p->n_warm_pools; i++) {
                SbxOwnerInfo info;
                SbxError e = SBX_ERROR_NULL;

                uids[i] = pool_owner(&p->warm_pools[i], &info, &e) >= 0 ? info.owner.uid : (uid_t) -1;
                sbx_error_free(&e);
                ret_ready[i] = 0;
        }
        if ((r = list_members(l, owner, NULL, &list, error)) < 0)
                return r;
        for (size_t k = 0; k < json_object_array_length(list); k++) {
                json_object *c = json_object_array_get_idx(list, k);
                _cleanup_(member_done) Member m = {};
                ssize_t i;

                if (!lc_listed_pool_member(c))
                        continue;
                if ((r = member_of(c, &m)) < 0)
                        return r;
                if ((i = pool_of(p, uids, &m)) >= 0 && m.running)
                        ret_ready[i]++;
        }
        return 0;
}

/* A claim's sandbox, under the member's name now its own. */
typedef struct Claim {
        const char *name;
        const SbxSpec *spec;
        const SbxOwner *owner;
        const SbxCreateOptions *options;
        const SbxPolicyPool *pool;
        char *final_name;
        char *json;
        char *labels_json;
        char *egress_json;
        int64_t created_us;
} Claim;

static void claim_done(Claim *c) {
        free(c->final_name);
        free(c->json);
        free(c->labels_json);
        free(c->egress_json);
}

static int claim_prepare(SbxLifecycle *l, Claim *c, SbxError *error) {
        const SbxEgress *egress = c->options->egress ?: &(SbxEgress) {};
        int r;

        if ((r = sbx_policy_check_spec(l->policy, c->owner, c->spec, l->docker_socket, error)) < 0 ||
            (r = sbx_container_name(c->name, &c->final_name)) < 0 ||
            (r = sbx_spec_to_json_string(c->spec, &c->json)) < 0 ||
            (r = sbx_user_labels_to_string(c->options->labels, &c->labels_json)) < 0 ||
            (r = sbx_egress_to_json(egress, &c->egress_json)) < 0)
                return r;
        c->created_us = (int64_t) sbx_now_realtime_us();
        return 0;
}

/* The intent: the claim counts against the owner's limit from here on, and a claim
 * cut from here on is settled by it (intent.c). */
static int claim_intent(SbxLifecycle *l, const Claim *c, const SbxObserved *o, const char *fp, SbxError *error) {
        int r = sbx_store_put_intent(l->store, &(SbxIntentRow) {
                .name = (char *) c->name,
                .owner_uid = c->owner->uid,
                .owner_gid = c->owner->gid,
                .container_name = o->name,
                .fingerprint = (char *) fp,
                .spec_json = c->json,
                .created_us = c->created_us,
                .labels_json = c->labels_json,
        }, (unsigned) l->policy->max_sandboxes_per_user, error);

        return r < 0 ? r : sbx_policy_check_count(l->policy, (size_t) r, error);
}

static void claim_undo_intent(SbxLifecycle *l, const char *name) {
        SbxError e = SBX_ERROR_NULL;

        if (sbx_store_delete_intent(l->store, name, &e) < 0)
                log_warning("Could not end a claim's intent: %s", e.message ?: "unknown error");
        sbx_error_free(&e);
}

/* After the intent: the options' egress, the rename, the row. */
static int claim_commit(SbxLifecycle *l, Claim *c, SbxObserved *o, const char *fp, SbxError *error) {
        SbxLifetimeRow lifetime;
        bool has_lifetime = lc_lifetime_row(c->name, c->created_us, &c->options->lifetime, &lifetime);
        int r;

        if (!streq(c->egress_json, c->pool->egress_json) &&
            (r = lc_egress_arm(l, o->id, o, c->options->egress ?: &(SbxEgress) {}, 0, error)) < 0) {
                SbxError e = SBX_ERROR_NULL;

                if (lc_remove_container(l, o->id, &e) < 0)   /* its rules are not known */
                        log_warning("Could not remove warm pool member %s: %s", o->id, e.message ?: "");
                sbx_error_free(&e);
                return r;
        }
        r = sbx_docker_container_rename(l->docker, o->id, c->final_name, error);
        lc_changed(l, o->id);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return lc_remap(error, SBX_ERROR_SANDBOX_EXISTS, "Container name '%s' is taken", c->final_name);
        if (r < 0)
                return r;
        free(o->name);
        if (!(o->name = strdup(c->final_name)))
                return -ENOMEM;
        return sbx_store_put_sandbox_with_lifetime(l->store, &(SbxSandboxRow) {
                .name = (char *) c->name,
                .owner_uid = c->owner->uid,
                .owner_gid = c->owner->gid,
                .container_id = o->id,
                .spec_json = c->json,
                .fingerprint = (char *) fp,
                .contract_version = SBX_CONTRACT_VERSION,
                .state = SBX_SANDBOX_RUNNING,
                .created_us = c->created_us,
                .labels_json = c->labels_json,
                .egress_json = c->egress_json,
        }, has_lifetime ? &lifetime : NULL, error);
}

/* Claims the member (name, id): 1 and the sandbox, 0 when it is no longer one to hand
 * out (taken, gone, not running, another image or posture now: removed). */
static int claim_member(SbxLifecycle *l, Claim *c, const char *id, const char *fp, SbxSandbox **ret,
                        SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *image_id = NULL;
        const SbxFingerprints *fps = NULL;
        const SbxSpec *stored = NULL;
        const char *missing;
        int r;

        if ((r = lock_member(l, c->name, id, &lock, &o, error)) <= 0)
                return r;
        missing = lc_lacks(l, o);
        image_id = image_id_now(l, c->spec->image);
        if (o->state != SBX_STATE_RUNNING || missing || !image_id || !streq_ptr(o->image_digest, image_id)) {
                log_info("Warm pool member %s is not handed out: %s", o->id,
                         o->state != SBX_STATE_RUNNING ? "it is not running" : missing ? "it lacks the posture"
                                                                                       : "its image is not the one its reference names");
                r = lc_remove_container(l, o->id, error);
                return r < 0 ? r : 0;
        }
        if ((r = claim_prepare(l, c, error)) < 0 || (r = claim_intent(l, c, o, fp, error)) < 0)
                return r;
        if ((r = claim_commit(l, c, o, fp, error)) < 0) {
                /* Not renamed: a member again (or gone); renamed: the intent records it. */
                if (lc_is_pool_name(o->name))
                        claim_undo_intent(l, c->name);
                return r;
        }
        if ((r = sbx_spec_memo_get(l->specs, c->json, &stored, &fps)) < 0 ||
            (r = lc_make_sandbox(l, c->name, o, &(SbxSandboxRow) { .owner_gid = c->owner->gid,
                                                                   .fingerprint = (char *) fp,
                                                                   .created_us = c->created_us,
                                                                   .labels_json = c->labels_json },
                                 stored, fps, NULL, ret)) < 0)
                return r;
        TAKE_PTR(o);
        lc_take_lifetime(c->name, c->created_us, &c->options->lifetime, *ret);
        return 1;
}

/* The pool of the policy in force that makes this claim's members, or NULL. */
static const SbxPolicyPool *pool_for(const SbxPolicy *p, const SbxOwner *owner, const char *fp, const char *prefix) {
        for (size_t i = 0; i < p->n_warm_pools; i++)
                if (pool_is_for(&p->warm_pools[i], owner) && streq(p->warm_pools[i].fingerprint, fp) &&
                    streq(p->warm_pools[i].name_prefix, prefix))
                        return &p->warm_pools[i];
        return NULL;
}

static int claim_warm(SbxLifecycle *l, const SbxPolicyPool *pool, const SbxSpec *spec, const SbxOwner *owner,
                      const SbxCreateOptions *options, const char *fp, SbxSandbox **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        int r = list_members(l, owner->uid, fp, &list, error);

        for (size_t k = 0; r >= 0 && k < json_object_array_length(list); k++) {
                json_object *c = json_object_array_get_idx(list, k);
                _cleanup_(member_done) Member m = {};

                if (!lc_listed_pool_member(c) || (r = member_of(c, &m)) < 0)
                        continue;
                if (!m.running || !m.name || m.owner != owner->uid || !streq_ptr(m.digest, l->policy->digest) ||
                    !named_with(m.name, pool->name_prefix))
                        continue;
                _cleanup_(claim_done) Claim claim = { .name = m.name, .spec = spec, .owner = owner,
                                                      .options = options, .pool = pool };
                if ((r = claim_member(l, &claim, m.id, fp, ret, error)) != 0)
                        return r;
        }
        return r;
}

int sbx_lifecycle_claim(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, const SbxCreateOptions *options,
                        const char *name_prefix, SbxSandbox **ret, bool *ret_warm, SbxError *error) {
        _cleanup_free_ char *name = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        const SbxPolicyPool *pool;
        const char *prefix = name_prefix ?: SBX_POOL_DEFAULT_NAME_PREFIX;
        int r = sbx_spec_fingerprint(spec, l->policy->python_version, fp);

        if (r < 0)
                return r;
        /* Members run under the default runtime: a claim asking for another is cold. */
        pool = spec->template_type == SBX_TEMPLATE_IMAGE && !lc_runtime_asked(options->runtime)
                       ? pool_for(l->policy, owner, fp, prefix)
                       : NULL;
        if (pool && (r = claim_warm(l, pool, spec, owner, options, fp, ret, error)) != 0) {
                *ret_warm = r > 0;
                return r < 0 ? r : 0;
        }
        *ret_warm = false;
        if ((r = generate_name(owner->uid, prefix, &name)) < 0)
                return r;
        return sbx_lifecycle_create_with(l, name, spec, owner, options, ret, error);
}
