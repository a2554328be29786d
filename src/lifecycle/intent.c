/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The intents of creates (docs/lifecycle.md, Create): an interrupted create settled
 * under its name's lock, and the reservation an adopted row takes within the
 * owner's limit. */

#include <inttypes.h>
#include <stdio.h>

#include "config.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"

/* Whether the container is this instance's (made since containers say so). */
static bool ours(SbxLifecycle *l, const SbxObserved *o) {
        return l->service_id && streq_ptr(sbx_observed_get_label(o, SBX_LABEL_SERVICE), l->service_id);
}

/* Whether the container is the one the intent was about to make. */
static bool made_by(SbxLifecycle *l, const SbxObserved *o, const SbxIntentRow *in) {
        const char *name = sbx_observed_get_label(o, SBX_LABEL_SANDBOX_NAME);

        return ours(l, o) && o->owner_valid && o->owner == in->owner_uid && streq_ptr(name, in->name) &&
                streq_ptr(o->fingerprint_label, in->fingerprint);
}

/* Until the create's own deadline (every Docker call of it shares the operation's
 * budget, which began before the intent was written) has passed, Docker may still
 * carry out a create request that reached it: the intent is kept that long. */
static uint64_t intent_deadline_us(SbxLifecycle *l, const SbxIntentRow *in) {
        return in->created_us > 0 ? (uint64_t) in->created_us + (uint64_t) l->policy->docker_timeout * 1000000U : 0;
}

/* Finishes or undoes an interrupted create, with its name's lock held: a container
 * still under the provisional name was never verified and is removed; one renamed to
 * its final name passed verification and is recorded from the intent. Returns 1 if
 * a sandbox was recorded, SETTLE_IN_FLIGHT if neither is there and the create's
 * deadline has not passed (the intent stays), 0 otherwise; on a Docker or store
 * failure the intent stays, for the next try. */
int lc_settle_intent(SbxLifecycle *l, const SbxIntentRow *in, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *pending = NULL, *final = NULL;
        _cleanup_free_ char *final_name = NULL;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(in->name, &shown);
        r = lc_inspect_container(l, in->container_name, &pending, error);
        if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        sbx_error_free(error);
        if (pending && made_by(l, pending, in) && lc_is_pool_name(in->container_name)) {
                /* A claim cut before its rename (pool.c): the member stays one. */
                log_notice("A claim of '%s' was interrupted before its rename: container %s stays a warm pool's "
                           "member", shown, pending->id);
        } else if (pending && made_by(l, pending, in)) {
                if ((r = lc_remove_container(l, pending->id, error)) < 0)
                        return r;
                log_notice("Removed container %s of an interrupted create of '%s' (never verified)",
                           pending->id, shown);
        } else if (!pending) {
                if ((r = sbx_container_name(in->name, &final_name)) < 0)
                        return r;
                r = lc_inspect_container(l, final_name, &final, error);
                if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return r;
                sbx_error_free(error);
                if (final && made_by(l, final, in)) {
                        /* Writing the row ends the intent (store.h). */
                        r = sbx_store_put_sandbox(l->store, &(SbxSandboxRow) {
                                .name = in->name,
                                .owner_uid = in->owner_uid,
                                .owner_gid = in->owner_gid,
                                .container_id = final->id,
                                .spec_json = in->spec_json,
                                .fingerprint = in->fingerprint,
                                .contract_version = SBX_CONTRACT_VERSION,
                                .state = final->state == SBX_STATE_RUNNING ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                                .created_us = in->created_us,
                                .labels_json = in->labels_json,
                        }, error);
                        if (r < 0)
                                return r;
                        log_notice("Recorded sandbox '%s' (container %s) of an interrupted create", shown,
                                   final->id);
                        return 1;
                }
                /* Looked for after the deadline: what Docker never made, it never will. */
                if (sbx_now_realtime_us() < intent_deadline_us(l, in))
                        return SETTLE_IN_FLIGHT;
        }
        r = sbx_store_delete_intent(l->store, in->name, error);
        return r < 0 ? r : 0;
}

/* The interrupted create of the name, if any, settled first (with the lock held). */
int lc_settle_name(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        int r = sbx_store_get_intent(l->store, name, &in, error);
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (r <= 0)
                return r;
        r = lc_settle_intent(l, in, error);
        if (r < 0 && sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE)) {
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                return lc_remap(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                "An interrupted create of '%s' is still to be undone: %s", shown, why ?: "");
        }
        if (r == SETTLE_IN_FLIGHT) {
                uint64_t deadline = intent_deadline_us(l, in), now = sbx_now_realtime_us();

                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "An interrupted create of '%s' may still be carried out by Docker; try again "
                                     "in %" PRIu64 " s", shown, (deadline > now ? deadline - now : 0) / 1000000U + 1);
        }
        return r;
}

/* Records a row for a container found without one (adopted: by the reconciliation,
 * or by an ensure that reuses it), within the owner's max_sandboxes_per_user: an
 * intent reserves the place, counted with the owner's rows and creates in flight in
 * one transaction (as a create's does), and the row ends it. Returns 1 if recorded,
 * 0 when the owner has no place left: the container stays as it is, listed
 * unverified without a row — it is not this service's to remove. */
int lc_put_adopted(SbxLifecycle *l, const SbxSandboxRow *row, const SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *reserved = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(row->name, &shown);
        /* No container has this provisional name: an intent left by a crash here is
         * settled by the final name, or dropped (and the adoption made again). */
        if (asprintf(&reserved, "%s" PENDING_SUFFIX, o->name && o->name[0] == '/' ? o->name + 1 : o->name ?: "") < 0)
                return -ENOMEM;
        r = sbx_store_put_intent(l->store, &(SbxIntentRow) {
                .name = row->name,
                .owner_uid = row->owner_uid,
                .owner_gid = row->owner_gid,
                .container_name = reserved,
                .fingerprint = row->fingerprint,
                .spec_json = row->spec_json,
        }, (unsigned) l->policy->max_sandboxes_per_user, error);
        if (r < 0)
                return r;
        if (l->policy->max_sandboxes_per_user > 0 && r >= l->policy->max_sandboxes_per_user) {
                log_notice("Sandbox '%s' (container %s) is not recorded: uid %u has max_sandboxes_per_user (%" PRIi64
                           ") sandboxes already; it stays, unverified", shown, o->id,
                           (unsigned) row->owner_uid, l->policy->max_sandboxes_per_user);
                return 0;
        }
        r = sbx_store_put_sandbox(l->store, row, error);
        if (r < 0 && sbx_store_delete_intent(l->store, row->name, &e) < 0)
                log_warning("Could not drop the reservation of '%s': %s", shown,
                            e.message ?: "unknown error");
        sbx_error_free(&e);
        return r < 0 ? r : 1;
}
