/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Start, stop and delete (docs/lifecycle.md): a start checks the volumes again and
 * verifies what the container has mounted. */

#include "channel.h"
#include "docker-container.h"
#include "egress-apply.h"
#include "egress-arm.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "mount-check.h"
#include "owner-info.h"
#include "posture.h"
#include "runtime.h"
#include "timestamp.h"

/* A start is safe only for a container whose first process is this service's init
 * running as another uid (docs/security.md). root's containers (xagent's own among them)
 * are exempt: nothing can give root more than it has. */
static int check_startable(SbxLifecycle *l, const char *name, const SbxObserved *o, SbxError *error) {
        const char *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned posture;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (!o->owner_valid)
                return sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                                     "Sandbox '%s' has no valid owner label; it is not started", shown);
        if (o->owner == 0)
                return 0;
        posture = lc_posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0);
        if (posture == 0)
                return 0;
        sbx_posture_items_to_names(posture, items);
        return sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                             "Sandbox '%s' does not carry the current hardened posture (first: %s); it is not "
                             "started: delete it and create it again", shown, items[0]);
}

/* After a start, or for one found running: what the container has mounted must be
 * what its sources name now, as checked; else it is stopped at once. */
static int verify_mounts_or_stop(SbxLifecycle *l, const char *id, uint64_t since_us, const SbxSpec *view,
                                 const Pins *pins, SbxError *error) {
        _cleanup_(sbx_mount_table_done) SbxMountTable mounts = {};
        SbxError e = SBX_ERROR_NULL;
        int r;

        r = sbx_container_mounts(l->docker, id, since_us, SBX_MOUNT_REPORT_TIMEOUT_MS, &mounts, error);
        if (r >= 0)
                r = sbx_mounts_verify(&mounts, view->volumes, pins->fds, view->n_volumes, error);
        if (r >= 0)
                return 0;
        if (sbx_docker_container_stop(l->docker, id, 0, &e) < 0)
                log_error("Could not stop container %s after a failed mount check: %s", id,
                          e.message ?: "unknown error");
        lc_changed(l, id);
        sbx_error_free(&e);
        return r;
}

/* After a start: a container that does not run under the runtime it asked for is
 * stopped again, RuntimeConflict naming posture.runtime. */
static int check_runtime_or_stop(SbxLifecycle *l, const char *name, const char *id, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;
        const char *shown;
        int r;

        if ((r = lc_inspect_container(l, id, &o, error)) < 0 || lc_runtime_as_asked(l, o))
                return r;
        (void) sbx_name_unqualify(name, &shown);
        if (sbx_docker_container_stop(l->docker, id, 0, &e) < 0)
                log_error("Could not stop container %s after a runtime check: %s", id, e.message ?: "unknown error");
        lc_changed(l, id);
        sbx_error_free(&e);
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                             "Sandbox '%s' does not run under the runtime it asked for (%s): posture.runtime; it "
                             "was stopped", shown, sbx_observed_get_label(o, SBX_LABEL_RUNTIME) ?: SBX_RUNTIME_DEFAULT);
}

/* Checks the volumes Docker will mount (the container's own Mounts and working
 * directory) for the owner as at create, starts the container if it is not
 * running, and verifies its mounts. */
static int start_checked(SbxLifecycle *l, const char *name, const char *id, const SbxObserved *o,
                         const SbxEgress *egress, SbxError *error) {
        _cleanup_(lc_pins_done) Pins pins = {};
        SbxOwnerInfo info;
        const SbxSpec view = {
                .volumes = o->volumes,
                .n_volumes = o->n_volumes,
                .working_dir = o->working_dir ?: (char *) "/",
        };
        uint64_t since = sbx_now_realtime_us();
        int r, started = 0;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = check_startable(l, name, o, error)) < 0 ||
            (r = sbx_owner_info_lookup(o->owner, &info, error)) < 0 ||
            (r = sbx_policy_check_guest_paths(&view, error)) < 0 ||
            (r = sbx_policy_check_volumes(l->policy, &info.owner, &view, l->docker_socket, error)) < 0 ||
            (r = lc_pin_volumes(l, &view, &info.owner, &pins, error)) < 0)
                return r;
        if (sbx_state_is_up(o->state)) {
                /* Found running (or paused: a start leaves it so): judged by the report
                 * of the start it runs from. */
                if (!o->started_at || sbx_parse_rfc3339_usec(o->started_at, &since) < 0)
                        since = 0;
                since = since > MOUNT_REPORT_SLACK_US ? since - MOUNT_REPORT_SLACK_US : 0;
        } else {
                sbx_mount_report_new_second(l->docker);
                since = sbx_now_realtime_us();
                r = sbx_docker_container_start(l->docker, id, error);
                lc_changed(l, id);
                if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
                if (r < 0)
                        return r;
                started = r == 0;
        }
        /* Only this service's init reports the mounts; check_startable() lets a
         * container without it start only for root (xagent's own, say). */
        if (o->init_volume && (r = verify_mounts_or_stop(l, id, since, &view, &pins, error)) < 0)
                return r;
        if (started && (r = check_runtime_or_stop(l, name, id, error)) < 0)
                return r;
        /* A start is a new network namespace: its egress loaded before anyone is told. */
        r = lc_egress_arm(l, id, started ? NULL : o, egress,
                          (started ? LC_EGRESS_NEW : 0) | LC_EGRESS_STOP_ON_FAILURE, error);
        return r < 0 ? r : started;
}

/* What Docker did is done: a store write that fails after it does not make the
 * operation fail (docs/lifecycle.md). The row is repaired by the start-up
 * reconciliation (sbx_lifecycle_reconcile); until then a row that says stopped keeps
 * an owner's exec out, the safe side. */
static void store_after_docker(SbxLifecycle *l, const char *name, int r, SbxError *e) {
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (r < 0)
                log_warning("'%s': Docker's part is done, but the store was not updated (repaired at the next "
                            "start-up): %s", shown, e->message ?: strerror(-r));
        sbx_error_free(e);
}

/* Start and stop: under the lock, converge the container and the row's state. */
int lc_set_running_locked(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s,
                          SbxError *error) {
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_egress_done) SbxEgress egress = {};
        int r, changed = 0;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = lc_locate_existing(l, name, &o, &row, error)) < 0 ||
            (running && (r = lc_egress_of_row(row, &egress, error)) < 0))
                return r;

        /* Until its mounts are verified the row says stopped, so nothing of the owner's
         * runs in it (exec.c) should the check fail and the stop too, or this process die. */
        if (running && (r = sbx_store_update_sandbox_state(l->store, name, SBX_SANDBOX_STOPPED, error)) < 0)
                return r;
        if (running)
                r = start_checked(l, name, o->id, o, &egress, error);
        else if (sbx_state_is_up(o->state)) {
                sbx_channels_forget(l->channels, o->id);        /* its program ends before the stop */
                /* A frozen container gets no SIGTERM: thawed first, then stopped. */
                r = o->state == SBX_STATE_PAUSED ? sbx_docker_container_pause(l->docker, o->id, false, error) : 0;
                if (r >= 0)
                        r = sbx_docker_container_stop(l->docker, o->id, timeout_s, error);
                lc_changed(l, o->id);
        }
        else
                r = 1;
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        if (r < 0)
                return r;
        changed = running ? r : r == 0;
        store_after_docker(l, name, sbx_store_update_sandbox_state(l->store, name, running ? SBX_SANDBOX_RUNNING :
                                                                   SBX_SANDBOX_STOPPED, &e), &e);
        return changed;
}

static int set_running(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return lc_set_running_locked(l, name, running, timeout_s, error);
}

/* Pause (Docker's freezer) or resume, with the name's lock held: 1 if it changed. The
 * row keeps "running": the processes are all there, with their memory. */
int lc_pause_locked(SbxLifecycle *l, const char *name, bool pause, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        const char *shown;
        int r;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = lc_locate_existing(l, name, &o, &row, error)) < 0)
                return r;
        if (!sbx_state_is_up(o->state))
                return sbx_error_set(error, SBX_ERROR_NOT_RUNNING, "Sandbox '%s' is %s: only a running sandbox is "
                                     "paused or resumed", shown, sbx_state_to_string(o->state));
        if ((o->state == SBX_STATE_PAUSED) == pause)
                return 0;
        /* The kept channel's program is frozen with the rest: a file call opens a new
         * one after the resume (and is NotRunning meanwhile, as an exec is). */
        if (pause)
                sbx_channels_forget(l->channels, o->id);
        r = sbx_docker_container_pause(l->docker, o->id, pause, error);
        lc_changed(l, o->id);
        /* A resumed sandbox runs on with its egress read back (loaded again if it is not). */
        if (r >= 0 && !pause) {
                _cleanup_(sbx_egress_done) SbxEgress egress = {};

                if ((r = lc_egress_of_row(row, &egress, error)) < 0 ||
                    (r = lc_egress_arm(l, o->id, o, &egress, LC_EGRESS_STOP_ON_FAILURE, error)) < 0)
                        return r;
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return lc_remap(error, SBX_ERROR_NOT_RUNNING, "Sandbox '%s' could not be %s: Docker says it is "
                                "not running (or already %s)", shown, pause ? "paused" : "resumed",
                                pause ? "paused" : "running");
        return r < 0 ? r : 1;
}

int sbx_lifecycle_pause(SbxLifecycle *l, const char *name, bool pause, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return lc_pause_locked(l, name, pause, error);
}

int sbx_lifecycle_start(SbxLifecycle *l, const char *name, SbxError *error) {
        return set_running(l, name, true, 0, error);
}

int sbx_lifecycle_stop(SbxLifecycle *l, const char *name, unsigned timeout_s, SbxError *error) {
        return set_running(l, name, false, timeout_s, error);
}

int lc_delete_locked(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r, removed = 0;

        if ((r = lc_settle_name(l, name, error)) < 0 || (r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        /* By the id the row records (a container this service made for that name);
         * else, or when it is gone, whatever carries the name (xagent's own, say). */
        if (row && (r = removed = lc_remove_container(l, row->container_id, error)) < 0)
                return r;
        if (!removed) {
                if ((r = lc_find_container(l, name, true, &id, error)) < 0 ||
                    (r > 0 && (r = removed = lc_remove_container(l, id, error)) < 0))
                        return r;
        }
        sbx_channels_forget(l->channels, row ? row->container_id : NULL);
        sbx_channels_forget(l->channels, id);
        r = sbx_store_delete_sandbox(l->store, name, &e);
        if (removed) {
                store_after_docker(l, name, r, &e);
                return 1;
        }
        if (r < 0) {
                sbx_error_move(error, &e);      /* nothing was done: the store's error is the answer */
                return r;
        }
        return r > 0;
}

int sbx_lifecycle_delete(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return lc_delete_locked(l, name, error);
}

/* The stored row of the name is the sandbox that fell due. */
static int is_the_one(SbxLifecycle *l, const SbxDeadline *d, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r = sbx_store_get_sandbox(l->store, d->name, &row, error);

        if (r <= 0)
                return r;
        if (!streq_ptr(row->container_id, d->container_id))
                return 0;
        return d->created_us == 0 || row->created_us <= 0 || (uint64_t) row->created_us == d->created_us;
}

int sbx_lifecycle_deadline(SbxLifecycle *l, const SbxDeadline *d, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if (!d->container_id)
                return 0;
        if ((r = lc_lock_key(l, "sandbox", d->name, &lock)) < 0 || (r = is_the_one(l, d, error)) <= 0)
                return r;
        if (d->still_due && !d->still_due(d->userdata))
                return 0;
        switch (d->action) {
        case SBX_DEADLINE_EXPIRE:
                r = lc_delete_locked(l, d->name, error);
                break;
        case SBX_DEADLINE_IDLE_STOP:
                r = lc_set_running_locked(l, d->name, false, d->stop_timeout_s, error);
                break;
        case SBX_DEADLINE_IDLE_PAUSE:
                r = lc_pause_locked(l, d->name, true, error);
                break;
        default:
                return -EINVAL;
        }
        return r < 0 ? r : 1;
}
