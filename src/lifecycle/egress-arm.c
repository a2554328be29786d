/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Egress armed in a sandbox (docs/security.md, "Egress"): what its row stores made to be
 * in force after a start, a create or a claim, by SetSandboxEgress, and again after a
 * start the service did not make; failing closed, the container is stopped. The
 * rules are loaded and read back by egress-apply.c. */

#include <string.h>

#include "docker-container.h"
#include "egress-apply.h"
#include "egress-arm.h"
#include "lifecycle-internal.h"
#include "log.h"

/* Fail closed: the container is stopped; the error names egress. */
static int stop_closed(SbxLifecycle *l, const char *id, int r, SbxError *error) {
        SbxError e = SBX_ERROR_NULL;

        if (sbx_docker_container_stop(l->docker, id, 0, &e) < 0)
                log_error("Could not stop container %s after egress failed: %s", id, e.message ?: "unknown error");
        lc_changed(l, id);
        sbx_error_free(&e);
        if (!sbx_error_is(error, SBX_ERROR_RUNTIME_CONFLICT) && !sbx_error_is(error, SBX_ERROR_POLICY_VIOLATION)) {
                const char *m = error->message ?: strerror(-r);

                return lc_remap(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: the rules could not be applied: %s", m);
        }
        return r;
}

int lc_egress_arm(SbxLifecycle *l, const char *id, const SbxObserved *o, const SbxEgress *e, unsigned flags,
                  SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *fresh = NULL;
        const char *why = NULL;
        int r;

        /* The process that runs now (a start made a new one, and a new namespace). */
        if (!o || o->pid <= 0) {
                if ((r = lc_inspect_container(l, id, &fresh, error)) < 0)
                        return r;
                o = fresh;
        }
        if (!sbx_egress_needs_rules(&l->policy->egress, e, o->network_isolated))
                return 0;
        /* A namespace just made has no rules: loaded at once; else only when they differ. */
        r = (flags & LC_EGRESS_NEW) ? 0 : lc_egress_check(l, o, e, &why, error);
        if (r == 0)
                r = lc_egress_apply(l, o, e, error);
        else if (r > 0 && sbx_egress_n_names(e) > 0)
                r = lc_egress_serve_names(l, o, e, true, error);
        if (r >= 0)
                return 0;
        if (flags & LC_EGRESS_STOP_ON_FAILURE)
                return stop_closed(l, id, r, error);
        return r;
}

int sbx_lifecycle_set_egress(SbxLifecycle *l, const char *name, const SbxEgress *egress, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_free_ char *json = NULL;
        const char *shown;
        int r;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0 ||
            (r = lc_locate_existing(l, name, &o, &row, error)) < 0)
                return r;
        if (!row)
                return sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                                     "Sandbox '%s' was not made by this service (no record): its egress is not its "
                                     "to change", shown);
        if (o->network_isolated && egress->mode != SBX_EGRESS_MODE_NONE && egress->mode != SBX_EGRESS_MODE_DEFAULT)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "egress.mode: sandbox '%s' is network_isolated: its egress stays none", shown);
        /* Stored first: a start from here on loads it; a failure below stops the sandbox. */
        if ((r = sbx_egress_to_json(egress, &json)) < 0 ||
            (r = sbx_store_set_sandbox_egress(l->store, name, json, error)) < 0)
                return r;
        if (!sbx_state_is_up(o->state))
                return 0;
        r = lc_egress_arm(l, o->id, o, egress, LC_EGRESS_STOP_ON_FAILURE, error);
        lc_changed(l, o->id);
        return r;
}

int sbx_lifecycle_rearm_egress(SbxLifecycle *l, const char *name, const char *container_id, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        const char *why = NULL;
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0 || (r = lc_locate(l, name, &o, &row, error)) <= 0)
                return r;
        if (!streq_ptr(o->id, container_id) || !sbx_state_is_up(o->state) ||
            (r = lc_egress_of_row(row, &egress, error)) < 0)
                return r < 0 ? r : 0;
        r = lc_egress_check(l, o, &egress, &why, error);
        if (r != 0)
                sbx_error_free(error);  /* unreadable: loaded again all the same */
        /* In force (a daemon restarted, say): its names served again if they are not. */
        if (r > 0) {
                if (sbx_egress_n_names(&egress) == 0 || lc_egress_serve_names(l, o, &egress, true, error) >= 0)
                        return 0;
                sbx_error_free(error);  /* loaded again, with its resolver */
        }
        r = lc_egress_arm(l, o->id, o, &egress, LC_EGRESS_NEW | LC_EGRESS_STOP_ON_FAILURE, error);
        lc_changed(l, o->id);
        return r < 0 ? r : 1;
}
