/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Store and Docker made to agree (docs/lifecycle.md, Start-up, reconciliation and
 * Docker's events), and the row a removed container's event drops. */

#include "attested.h"
#include "config.h"
#include "docker-container.h"
#include "docker-image.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "owner-info.h"
#include "spec-json.h"
#include "user-labels.h"

/* The group of Config.User "uid:gid"; the owner's primary group if it says none. */
static int user_gid(const SbxObserved *o, gid_t *ret, SbxError *error) {
        const char *colon = o->user ? strchr(o->user, ':') : NULL;
        SbxOwnerInfo info;
        char *end;
        unsigned long v;
        int r;

        if (colon) {
                errno = 0;
                v = strtoul(colon + 1, &end, 10);
                if (errno == 0 && end != colon + 1 && !*end && v < (gid_t) -1) {
                        *ret = (gid_t) v;
                        return 0;
                }
        }
        if ((r = sbx_owner_info_lookup(o->owner, &info, error)) < 0)
                return r;
        *ret = info.owner.gid;
        return 0;
}

/* The image's own environment, which Docker merged into the container's, and its
 * labels, which Docker merged into the container's too (NULL both when the image is
 * gone). */
static int image_facts(SbxLifecycle *l, const char *image, char ***ret_env, json_object **ret_labels,
                       SbxError *error) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        json_object *config, *env, *labels;
        char **v;
        size_t n;
        int r;

        *ret_env = NULL;
        *ret_labels = NULL;
        r = sbx_docker_image_inspect(l->docker, image, &j, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(j, "Config", &config))
                return 0;
        if (json_object_object_get_ex(config, "Labels", &labels) && json_object_is_type(labels, json_type_object))
                *ret_labels = json_object_get(labels);
        if (!json_object_object_get_ex(config, "Env", &env) || !json_object_is_type(env, json_type_array))
                return 0;
        n = json_object_array_length(env);
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0, k = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(env, i);

                if (!json_object_is_type(e, json_type_string))
                        continue;
                if (!(v[k++] = strdup(json_object_get_string(e)))) {
                        strv_free(v);
                        return -ENOMEM;
                }
        }
        *ret_env = v;
        return 0;
}

/* The caller's labels the container carries, in the store's form (user-labels.h). */
static int container_labels(const SbxObserved *o, json_object *image_labels, char **ret) {
        _cleanup_(json_object_putp) json_object *labels = NULL;
        int r = sbx_user_labels_from_docker(o->labels, o->n_labels, image_labels, &labels);

        return r < 0 ? r : sbx_user_labels_to_string(labels, ret);
}

/* adopt_or_remove(): proven, but its owner has no place left (lc_put_adopted()). */
#define ADOPT_OVER_LIMIT 2
/* … a warm pool's member by now (listed while it was being made): its pool's. */
#define ADOPT_POOL_MEMBER 3

/* An owner-labelled container without a row (its name's lock held): adopted when it
 * provably passed verification — its final name, and a spec rebuilt from it whose
 * fingerprint is its label (attested.h) — and its owner is below the limit, else
 * removed (docs/lifecycle.md). Returns 1 if adopted, 0 if removed or gone,
 * ADOPT_OVER_LIMIT if left as it is. */
static int adopt_or_remove(SbxLifecycle *l, const char *name, const char *id, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_free_ char *json = NULL, *labels = NULL;
        _cleanup_strv_free_ char **env = NULL;
        _cleanup_(json_object_putp) json_object *image_labels = NULL;
        gid_t gid;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        r = lc_inspect_container(l, id, &o, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        if (lc_is_pool_name(o->name))
                return ADOPT_POOL_MEMBER;
        if (o->name && !lc_has_suffix(o->name, PENDING_SUFFIX) && o->image_digest) {
                if ((r = image_facts(l, o->image_digest, &env, &image_labels, error)) < 0)
                        return r;
                r = sbx_spec_from_container(o, env, &spec);
                if (r < 0)
                        return r;
        }
        if (spec) {
                const char *missing = lc_lacks(l, o);

                /* The caller's labels are on the container too: a lost store loses none. */
                if ((r = sbx_spec_to_json_string(spec, &json)) < 0 || (r = user_gid(o, &gid, error)) < 0 ||
                    (r = container_labels(o, image_labels, &labels)) < 0)
                        return r;
                /* Running, it is judged by what it has mounted and by its posture: only a
                 * hardened one whose mounts are what its sources name is recorded
                 * running, the row that lets its owner's processes in (exec.c); else the
                 * row says stopped and its owner's Start checks (and refuses one that is
                 * not hardened). */
                r = lc_put_adopted(l, &(SbxSandboxRow) {
                        .name = (char *) name,
                        .owner_uid = o->owner,
                        .owner_gid = gid,
                        .container_id = o->id,
                        .spec_json = json,
                        .fingerprint = (char *) o->fingerprint_label,
                        .contract_version = SBX_CONTRACT_VERSION,
                        .labels_json = labels,
                        .state = o->state == SBX_STATE_RUNNING && (!missing || o->owner == 0) && lc_mounts_truthful(l, o, NULL)
                                ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                }, o, error);
                if (r <= 0)
                        return r < 0 ? r : ADOPT_OVER_LIMIT;
                log_notice("Sandbox '%s' (container %s) had no row: its spec is proven by its fingerprint label; "
                           "recorded again%s%s%s", shown, o->id, missing ? " (it does not carry the current "
                           "posture, first: " : "", missing ?: "", missing ? "; hardened is false)" : "");
                return 1;
        }
        if ((r = lc_remove_container(l, o->id, error)) < 0)
                return r;
        log_notice("Removed container %s of '%s': it had no row and nothing proves it passed verification",
                   o->id, shown);
        return 0;
}

/* A row that said running for a container the list saw stopped: both were read
 * before now, and a start (an ensure's) may have come between, which wrote the row
 * after starting the container. So under the name's lock, with the row read again
 * and Docker asked again, and only a row still running for a container still down
 * is put right: never one the start just wrote. */
static int repair_state(SbxLifecycle *l, const char *name, const char *id, SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        int r;

        if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 || (r = sbx_store_get_sandbox(l->store, name, &row, error)) <= 0)
                return r;
        if (!streq(row->container_id, id) || row->state != SBX_SANDBOX_RUNNING)
                return 0;
        r = lc_inspect_container(l, id, &o, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);          /* gone: its row goes with the next reconciliation */
                return 0;
        }
        if (r < 0 || sbx_state_is_up(o->state))
                return r < 0 ? r : 0;
        if ((r = sbx_store_update_sandbox_state(l->store, name, SBX_SANDBOX_STOPPED, error)) > 0)
                st->repaired++;
        return r < 0 ? r : 0;
}

/* One listed container of an owner (its owner label given): a row that names another
 * container or none → adopted or removed, under the lock, with the store read again. */
static int reconcile_container(SbxLifecycle *l, json_object *c, SbxSandboxRow **rows, size_t n_rows,
                               SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        _cleanup_free_ char *name = NULL;
        json_object *labels, *label, *id, *state;
        SbxSandboxRow **listed;
        uid_t owner;
        int r;

        if (!json_object_object_get_ex(c, "Id", &id) || !json_object_object_get_ex(c, "Labels", &labels) ||
            !json_object_object_get_ex(labels, SBX_LABEL_SANDBOX_NAME, &label))
                return 0;
        /* A warm pool's member is no sandbox: its pool keeps it or removes it (pool.c). */
        if (lc_listed_pool_member(c))
                return 0;
        /* Only this instance's own containers (the service label; xagent's and older
         * ones have none) are recorded again or removed. */
        if (!l->service_id || !(label = json_object_object_get(labels, SBX_LABEL_SERVICE)) ||
            !streq_ptr(json_object_get_string(label), l->service_id) ||
            !json_object_object_get_ex(labels, SBX_LABEL_OWNER, NULL) || lc_listed_owner(c, &owner) < 0)
                return 0;       /* not ours, or nobody's: a blank owner is no sandbox (labels.h) */
        r = sbx_name_from_labels(json_object_get_string(json_object_object_get(labels, SBX_LABEL_SANDBOX_NAME)),
                                 owner, &name);
        if (r == -EBADMSG)
                return 0;               /* labels this service never writes: nobody's */
        if (r < 0)
                return r;
        st->owned++;
        listed = bsearch(name, rows, n_rows, sizeof(SbxSandboxRow *), lc_row_cmp);
        if (listed && streq((*listed)->container_id, json_object_get_string(id))) {
                /* Known: a row that says running for a container that is not is put right. */
                state = json_object_object_get(c, "State");
                if ((*listed)->state == SBX_SANDBOX_RUNNING &&
                    !sbx_state_is_up(sbx_state_from_status(json_object_get_string(state))))
                        return repair_state(l, name, json_object_get_string(id), st, error);
                return 0;
        }

        if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 ||
            (r = sbx_store_get_intent(l->store, name, &in, error)) < 0 ||
            (r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        /* Recorded meanwhile, or an interrupted create still to be settled (by its intent). */
        if (in || (row && streq(row->container_id, json_object_get_string(id))))
                return 0;
        r = adopt_or_remove(l, name, json_object_get_string(id), error);
        if (r == ADOPT_POOL_MEMBER)
                return 0;
        if (r == ADOPT_OVER_LIMIT)
                st->over_limit++;
        else if (r > 0)
                st->adopted++;
        else if (r == 0)
                st->removed++;
        return r;
}

/* A row whose container is not among those listed: dropped once Docker confirms it is
 * gone (under the lock, with the row read again). */
static int reconcile_row(SbxLifecycle *l, const SbxSandboxRow *listed, SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        int r;

        if ((r = sbx_lifecycle_lock(l, listed->name, &lock)) < 0 ||
            (r = sbx_store_get_sandbox(l->store, listed->name, &row, error)) <= 0)
                return r;
        if (!streq(row->container_id, listed->container_id))
                return 0;
        r = sbx_docker_container_inspect(l->docker, row->container_id, &attrs, error);
        if (r >= 0 || !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r < 0 ? r : 0;
        sbx_error_free(error);
        if ((r = sbx_store_delete_sandbox(l->store, row->name, error)) < 0)
                return r;
        st->dropped++;
        return 0;
}

static bool listed_id(json_object *list, const char *id) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i), *j;

                if (json_object_object_get_ex(c, "Id", &j) && streq_ptr(json_object_get_string(j), id))
                        return true;
        }
        return false;
}

int sbx_lifecycle_reconcile(SbxLifecycle *l, SbxReconcileStats *ret, SbxError *error) {
        static const char *const managed[] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, NULL };
        _cleanup_(sbx_intent_row_list_freep) SbxIntentRow **intents = NULL;
        _cleanup_(sbx_sandbox_row_list_freep) SbxSandboxRow **rows = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        SbxReconcileStats st = {};
        int r, n_rows;

        /* Interrupted creates first: afterwards, a container without a row is not one
         * that an intent explains. */
        if ((r = sbx_store_list_intents(l->store, &intents, error)) < 0)
                return r;
        for (SbxIntentRow **in = intents; *in; in++) {
                _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
                _cleanup_(sbx_intent_row_freep) SbxIntentRow *again = NULL;

                if ((r = sbx_lifecycle_lock(l, (*in)->name, &lock)) < 0 ||
                    (r = sbx_store_get_intent(l->store, (*in)->name, &again, error)) < 0)
                        return r;
                if (r > 0 && (r = lc_settle_intent(l, again, error)) < 0)
                        return r;
                if (r == SETTLE_IN_FLIGHT)
                        st.in_flight++;
                else
                        st.settled++;
        }

        if ((n_rows = sbx_store_list_sandboxes(l->store, SBX_STORE_ANY_OWNER, &rows, error)) < 0 ||
            (r = sbx_docker_container_list(l->docker, managed, &list, error)) < 0)
                return n_rows < 0 ? n_rows : r;
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if ((r = reconcile_container(l, json_object_array_get_idx(list, i), rows, (size_t) n_rows, &st,
                                             error)) < 0)
                        return r;
        for (int i = 0; i < n_rows; i++)
                if (!listed_id(list, rows[i]->container_id) && (r = reconcile_row(l, rows[i], &st, error)) < 0)
                        return r;
        if ((r = lc_settle_snapshot_intents(l, &st, error)) < 0)
                return r;

        if (n_rows == 0 && st.owned > 0)
                log_warning("The store %s held no sandboxes, but %u containers of this service exist: rows rebuilt "
                            "from the containers (%u recorded again, %u removed without proof of verification)",
                            sbx_store_path(l->store), st.owned, st.adopted, st.removed);
        if (ret)
                *ret = st;
        return 0;
}

int sbx_lifecycle_forget(SbxLifecycle *l, const char *name, const char *container_id, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r;

        if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 || (r = sbx_store_get_sandbox(l->store, name, &row, error)) <= 0)
                return r;
        if (!streq(row->container_id, container_id))
                return 0;
        return sbx_store_delete_sandbox(l->store, name, error);
}
