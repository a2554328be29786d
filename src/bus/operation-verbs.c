/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdatomic.h>
#include <stdio.h>

#include "audit.h"
#include "bus-inspection.h"
#include "bus-polkit.h"
#include "bus-pool.h"
#include "config.h"
#include "listing.h"
#include "naming.h"
#include "operation-verbs.h"
#include "owner-info.h"
#include "time-util.h"
#include "user-labels.h"
#include "verdict.h"

const char *operation_target(const Operation *o) {
        return o->display ?: o->snapshot_display ?: o->reference ?: "-";
}

/* Worker side ------------------------------------------------------------- */

/* A new sandbox's lifetime, stored with its row (docs/lifecycle.md). */
static SbxNewLifetime new_lifetime(const Operation *o) {
        return (SbxNewLifetime) { .idle_timeout_s = o->lifetime.idle_timeout_s,
                                  .expire_after_s = o->lifetime.expire_after_s,
                                  .on_idle_pause = o->lifetime.on_idle_pause,
                                  .counts_processes = o->lifetime.counts_processes };
}

static uint64_t expire_at(uint64_t from_us, uint32_t after_s) {
        return after_s ? from_us + (uint64_t) after_s * 1000000U : 0;
}

/* A sandbox's lifetimes changed (SetSandboxLifetimes, an ensure that found it): what
 * is given replaces what was stored, expire_after counts from now, the rest stays;
 * the change is a use (docs/lifecycle.md). */
static int change_lifetime(Operation *o, SbxLifecycle *l) {
        const SbxLifetime *t = &o->lifetime;
        uint64_t now = sbx_now_realtime_us();
        SbxLifetimeRow was;
        int r = sbx_store_get_lifetime(l->store, o->name, &was, &o->error);

        if (r < 0)
                return r;
        free(was.name);
        o->lifetime_row = (SbxLifetimeRow) {
                .name = o->name,
                .idle_timeout_s = t->has_idle_timeout ? t->idle_timeout_s : was.idle_timeout_s,
                .expire_at_us = t->has_expire_after ? expire_at(now, t->expire_after_s) : was.expire_at_us,
                .on_idle_pause = t->has_on_idle ? t->on_idle_pause : was.on_idle_pause,
                .counts_processes = t->has_counts_processes ? t->counts_processes : was.counts_processes,
                .last_activity_us = now,
        };
        return sbx_store_put_lifetime(l->store, &o->lifetime_row, &o->error);
}

static int run_set_lifetimes(Operation *o, SbxLifecycle *l) {
        int r = sbx_lifecycle_inspect(l, o->name, &o->sandbox, &o->error);

        return r < 0 ? r : change_lifetime(o, l);
}

/* Option pull "missing": the image pulled first unless the host has it. */
static int pull_missing(Operation *o, SbxLifecycle *l) {
        if (!o->pull_missing || o->spec->template_type != SBX_TEMPLATE_IMAGE)
                return 0;
        return sbx_lifecycle_pull_missing(l, o->spec->image, &o->error);
}

static int run_create(Operation *o, SbxLifecycle *l) {
        SbxOwnerInfo info;
        int r = sbx_owner_info_lookup(o->uid, &info, &o->error);

        if (r >= 0)
                r = pull_missing(o, l);
        if (r >= 0)
                r = sbx_lifecycle_create_with(l, o->name, o->spec, &info.owner,
                                              &(SbxCreateOptions) { .labels = o->labels, .lifetime = new_lifetime(o),
                                                                    .egress = &o->egress, .runtime = o->runtime },
                                              &o->sandbox, &o->error);
        return r;
}

/* The name is the service's to choose (a member's, or generated): the operation's
 * from here on. */
static int run_claim(Operation *o, SbxLifecycle *l) {
        SbxOwnerInfo info;
        int r = sbx_owner_info_lookup(o->uid, &info, &o->error);

        if (r >= 0)
                r = pull_missing(o, l);
        if (r >= 0)
                r = sbx_lifecycle_claim(l, o->spec, &info.owner,
                                        &(SbxCreateOptions) { .labels = o->labels, .lifetime = new_lifetime(o),
                                                              .egress = &o->egress, .runtime = o->runtime },
                                        o->name_prefix, &o->sandbox, &o->warm, &o->error);
        if (r >= 0 && !(o->name = strdup(o->sandbox->name)))
                r = -ENOMEM;
        if (r >= 0)
                (void) sbx_name_unqualify(o->name, &o->display);
        return r;
}

static int run_ensure(Operation *o, SbxLifecycle *l) {
        SbxOwnerInfo info;
        int r = sbx_owner_info_lookup(o->uid, &info, &o->error);

        if (r >= 0)
                r = pull_missing(o, l);
        if (r < 0)
                return r;
        /* A new sandbox's lifetime is the options' (with the policy's default), stored with
         * its row; one that was there gets what was given, as SetSandboxLifetimes gives it. */
        r = sbx_lifecycle_ensure(l, o->name, o->spec, &info.owner,
                                    &(SbxEnsureOptions) { .recreate = o->recreate, .stop_timeout_s = o->timeout_s,
                                                          .labels = o->labels, .busy_leases = o->busy_leases,
                                                          .lifetime = new_lifetime(o), .egress = &o->egress,
                                                          .runtime = o->runtime },
                                    &o->sandbox, &o->outcome, &o->error);
        if (r >= 0 && o->outcome != SBX_ENSURE_CREATED && o->outcome != SBX_ENSURE_RECREATED &&
            sbx_lifetime_given(&o->lifetime))
                r = change_lifetime(o, l);
        return r;
}

static int run_inspect(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_inspect(l, o->name, &o->sandbox, &o->error);
}

static int run_refresh(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_refresh(l, o->name, &o->sandbox, &o->error);
}

static int run_verify(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_verify(l, o->name, o->spec, &o->verdict, &o->fields, &o->sandbox, &o->error);
}

static int run_start(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_start(l, o->name, &o->error);
}

static int run_stop(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_stop(l, o->name, o->timeout_s, &o->error);
}

static int run_pause(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pause(l, o->name, true, &o->error);
}

static int run_resume(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pause(l, o->name, false, &o->error);
}

static int run_set_egress(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_set_egress(l, o->name, &o->egress, &o->error);
}

static int run_delete(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_delete(l, o->name, &o->error);
}

static int run_snapshot(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_snapshot(l, o->name, o->snapshot_id, &o->image_id, &o->error);
}

static int run_delete_snapshot(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_delete_snapshot(l, o->snapshot_id, &o->error);
}

static int run_list(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_list(l, o->all ? SBX_STORE_ANY_OWNER : o->uid, &o->list, &o->n_list, &o->error);
}

static int run_list_snapshots(Operation *o, SbxLifecycle *l) {
        return sbx_store_list_snapshots(l->store, o->all ? SBX_STORE_ANY_OWNER : o->uid, &o->snapshots, &o->error);
}

/* Processes run as the sandbox's owner: a sandbox nobody owns runs nothing. */
static int check_owned(Operation *o) {
        if (!o->owner_valid)
                return sbx_error_set(&o->error, SBX_ERROR_ACCESS_DENIED,
                                     "Sandbox '%s' has no valid owner label; nothing can run in it", o->display);
        return 0;
}

/* Before using a sandbox: its owner is valid, and with the option resume a paused
 * one is resumed first (a stopped one stays NotRunning). */
static int check_usable(Operation *o, SbxLifecycle *l) {
        int r = check_owned(o);

        if (r < 0 || !o->resume)
                return r;
        r = sbx_lifecycle_pause(l, o->name, false, &o->error);
        if (r > 0)
                o->resumed = true;
        return r < 0 ? r : 0;
}

static SbxExecRequest exec_request(Operation *o) {
        return (SbxExecRequest) {
                .argv = o->argv, .env = o->exec.env, .working_dir = o->exec.working_dir, .tty = o->exec.tty,
                .rows = o->exec.rows, .cols = o->exec.cols,
        };
}

static int run_exec(Operation *o, SbxLifecycle *l) {
        SbxExecRequest req = exec_request(o);
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_exec_capture(l, o->name, &req, o->exec.stdin_data,
                                                      o->exec.stdin_size, o->exec.timeout_s, o->exec.output_limit,
                                                      o->exec.timeout_result, &o->exec_result, &o->error);
}

static int run_start_exec(Operation *o, SbxLifecycle *l) {
        SbxExecRequest req = exec_request(o);
        int r = check_usable(o, l);

        req.check_start = true;
        if (r >= 0 && o->exec.detach)
                return sbx_lifecycle_detach_start(l, o->name, &req, o->uid, &o->exec_process, &o->error);
        return r < 0 ? r : sbx_lifecycle_exec_start(l, o->name, &req, &o->exec_process, &o->error);
}

static int run_usage(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_usage(l, o->name, &o->usage, &o->error);
}

static int run_copy_to(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_copy_to(l, o->name, o->guest_path, o->fds[0], &o->error);
}

static int run_copy_from(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_copy_from(l, o->name, o->guest_path, o->fds[0], &o->error);
}

/* The file calls go over the sandbox's kept channel (channel.h), as its owner. */
static int run_read_file(Operation *o, SbxLifecycle *l) {
        uint64_t cap = (uint64_t) l->policy->max_file_bytes;
        int r = check_usable(o, l);

        if (r >= 0 && o->fds[0] >= 0)       /* option fd: no cap but the file's end */
                return sbx_lifecycle_read_file_fd(l, o->name, o->guest_path, o->file.offset,
                                                  o->file.has_length ? o->file.length : UINT64_MAX, o->fds[0],
                                                  &o->file_data, &o->error);
        /* A length past the cap (4 GiB, say) is capped, not refused: the reply says eof. */
        return r < 0 ? r : sbx_lifecycle_read_file(l, o->name, o->guest_path, o->file.offset,
                                                   o->file.has_length ? MIN(o->file.length, cap) : cap,
                                                   &o->file_data, &o->error);
}

static int run_write_file(Operation *o, SbxLifecycle *l) {
        unsigned flags = (o->file.append ? SBX_WRITE_APPEND : 0) | (o->file.make_parents ? SBX_WRITE_MAKE_PARENTS : 0);
        int r = check_usable(o, l);

        if (r >= 0 && o->fds[0] >= 0)
                return sbx_lifecycle_write_file_fd(l, o->name, o->guest_path, o->fds[0], o->file.mode, flags, &o->error);
        return r < 0 ? r : sbx_lifecycle_write_file(l, o->name, o->guest_path, o->data, o->data_size,
                                                    o->file.mode, flags, &o->error);
}

static int run_list_files(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_list_files(l, o->name, o->guest_path, o->file.depth, o->file.limit,
                                                    &o->entries, &o->n_entries, &o->truncated, &o->error);
}

static int run_remove_file(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_remove_file(l, o->name, o->guest_path, o->file.recursive, &o->error);
}

/* PullImage (docs/api.md): the worker's progress kept for the main thread's
 * PullProgress (bus-pull.h). */
static void on_pull_progress(uint64_t done, uint64_t total, void *userdata) {
        Operation *o = userdata;

        atomic_store(&o->pull_done, done);
        atomic_store(&o->pull_total, total);
}

static int run_pull(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pull(l, o->reference, on_pull_progress, o, &o->image_id, &o->error);
}

/* Main thread: what the leases allow -------------------------------------- */

/* Other connections' leases on the sandbox refuse a stop, delete, pause. */
static int busy(Operation *o, const char *hint) {
        unsigned n = leases_count(&o->m->leases, o->name, sd_bus_message_get_sender(o->call));

        if (n == 0)
                return 0;
        return sbx_error_set(&o->error, SBX_ERROR_SANDBOX_BUSY, "Sandbox '%s' is busy: %u lease%s held by %s%s",
                             o->display, n, n == 1 ? "" : "s", n == 1 ? "another connection" : "other connections",
                             hint);
}

/* Option force: every lease on the sandbox ends (LeaseRevoked), audited. */
static void revoke_leases(Operation *o) {
        char reason[128], owner[32];
        unsigned n;

        snprintf(reason, sizeof reason, "revoked by uid %u (%s with option force)", (unsigned) o->uid,
                 operation_verbs[o->verb].name);
        n = leases_revoke(&o->m->leases, o->name, reason);
        if (n == 0)
                return;
        snprintf(reason, sizeof reason, "%u lease%s revoked (%s with option force)", n, n == 1 ? "" : "s",
                 operation_verbs[o->verb].name);
        snprintf(owner, sizeof owner, "%u", (unsigned) o->owner);
        audit_record(&(AuditRecord) { .uid = o->uid, .verb = "revoke-leases", .target = operation_target(o),
                                      .owner = o->owner_valid ? owner : NULL, .outcome = "ok", .reason = reason });
}

static int admit_stop(Operation *o) {
        if (o->force) {
                revoke_leases(o);
                return 0;
        }
        return busy(o, " (option force revokes them)");
}

static int admit_delete(Operation *o) {
        return busy(o, " (StopSandbox with option force revokes them)");
}

static int admit_pause(Operation *o) {
        return busy(o, "");
}

/* A replacement is refused on the worker, where it is known to be one. */
static int admit_ensure(Operation *o) {
        if (o->recreate && !o->force)
                o->busy_leases = leases_count(&o->m->leases, o->name, sd_bus_message_get_sender(o->call));
        return 0;
}

/* The per-user cap, before a worker is asked (held again when the lease is made). */
static int admit_acquire(Operation *o) {
        unsigned n = leases_of_user(&o->m->leases, o->uid);

        if (n < (unsigned) o->m->policy->max_leases_per_user)
                return 0;
        return sbx_error_set(&o->error, SBX_ERROR_LIMITS_EXCEEDED, "max_leases_per_user: uid %u holds %u leases already",
                             (unsigned) o->uid, n);
}

/* Main thread: replies ---------------------------------------------------- */

/* A sandbox made now has the lifetime stored with it (or none: a replacement's is new
 * too). */
static int apply_create(Operation *o) {
        int r = registry_put(&o->m->registry, o->sandbox);

        if (r >= 0 && (o->verb == VERB_CREATE || o->verb == VERB_CLAIM || o->outcome == SBX_ENSURE_CREATED ||
                       o->outcome == SBX_ENSURE_RECREATED))
                registry_set_lifetime(&o->m->registry, &(SbxLifetimeRow) {
                        .name = o->name, .idle_timeout_s = o->sandbox->idle_timeout_s,
                        .expire_at_us = o->sandbox->expire_at_us, .on_idle_pause = o->sandbox->on_idle_pause,
                        .counts_processes = o->sandbox->idle_counts_processes,
                        .last_activity_us = o->sandbox->last_activity_us });
        else if (r >= 0 && o->lifetime_row.name)      /* an ensure that found it, lifetimes given */
                registry_set_lifetime(&o->m->registry, &o->lifetime_row);
        return r;
}

static int reply_create(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "os", registry_get(&o->m->registry, o->name)->path, o->sandbox->fingerprint);
}

/* A member taken: its pool is refilled at once. */
static int apply_claim(Operation *o) {
        int r = apply_create(o);

        if (r >= 0 && o->warm)
                bus_pool_refill(o->m);
        return r;
}

static int reply_claim(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "osss", registry_get(&o->m->registry, o->name)->path, o->display,
                                     o->sandbox->fingerprint, o->warm ? "warm" : "cold");
}

/* GetPoolStatus: under the policy the job ran under (bus-pool.h). */
static int run_pool_status(Operation *o, SbxLifecycle *l) {
        o->pool_policy = sbx_policy_ref(l->policy);
        if (!(o->pool_ready = calloc(l->policy->n_warm_pools + 1, sizeof(unsigned))))
                return -ENOMEM;
        return sbx_lifecycle_pool_status(l, o->all ? SBX_STORE_ANY_OWNER : o->uid, o->pool_ready, &o->error);
}

static int reply_pool_status(Operation *o, sd_bus_message *reply) {
        return bus_pool_append_status(reply, o->pool_policy, o->pool_ready, o->uid, o->all, &o->error);
}

static int apply_ensure(Operation *o) {
        int r = apply_create(o);

        if (r >= 0 && o->force && o->outcome == SBX_ENSURE_RECREATED)
                revoke_leases(o);
        return r;
}

static int reply_ensure(Operation *o, sd_bus_message *reply) {
        int r = reply_create(o, reply);

        return r < 0 ? r : sd_bus_message_append(reply, "s", sbx_ensure_outcome_to_string(o->outcome));
}

static int apply_put(Operation *o) {
        return registry_put(&o->m->registry, o->sandbox);
}

static int reply_get(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "o", registry_get(&o->m->registry, o->name)->path);
}

/* What the service holds of it, from the registry (leases.h, deadlines.h): never
 * kept with a description, since it changes without an event. */
static void take_held_facts(SbxSandbox *s, const SandboxEntry *e) {
        s->leases = e->leases;
        s->last_activity_us = e->last_activity_us;
        s->idle_timeout_s = e->idle_timeout_s;
        s->on_idle_pause = e->on_idle_pause;
        s->idle_counts_processes = e->idle_counts_processes;
        s->expire_at_us = e->expire_at_us;
}

/* What an inspect worked out from an observation is kept for the reads after it,
 * while the observation stands; not where a read looks at the host anyway. */
static void keep_described(Operation *o) {
        if (!o->sandbox->seen || sbx_observed_checks_host(o->sandbox->observed) ||
            manager_observation_max_age_us(o->m) == 0)
                return;
        registry_describe(&o->m->registry, TAKE_PTR(o->sandbox));
        manager_sweep_described_later(o->m);
}

static int apply_inspect(Operation *o) {
        SandboxEntry *e;
        int r;

        if (o->answered_here) {
                e = registry_get(&o->m->registry, o->name);
                if (e && e->described)
                        take_held_facts(e->described, e);
                return 0;
        }
        if ((r = registry_put(&o->m->registry, o->sandbox)) < 0)
                return r;
        take_held_facts(o->sandbox, registry_get(&o->m->registry, o->name));
        return 0;
}

static int reply_inspect(Operation *o, sd_bus_message *reply) {
        int r;

        if (o->answered_here)
                return registry_append_inspection(registry_get(&o->m->registry, o->name), reply);
        if ((r = bus_append_inspection(reply, o->sandbox)) < 0)
                return r;
        keep_described(o);              /* for the reads after it (the answer is built) */
        return 0;
}

/* What the same look found of the stored spec is the object's (its Verdict); a
 * registry that cannot take it keeps the object's old Verdict, and the caller is
 * still told what was found. */
static int apply_verify(Operation *o) {
        if (o->sandbox && !o->answered_here)
                (void) registry_put(&o->m->registry, o->sandbox);
        return 0;
}

static int reply_verify(Operation *o, sd_bus_message *reply) {
        const char *names[SBX_SPEC_FIELD_COUNT + 3];
        size_t n;
        int r = sd_bus_message_append(reply, "s", sbx_verdict_to_string(o->verdict));

        n = sbx_spec_fields_to_names(o->fields, names);
        if (o->fields & SBX_VERIFY_FIELD_EGRESS)
                names[n++] = "egress";
        if (o->fields & SBX_VERIFY_FIELD_RUNTIME)
                names[n++] = "runtime";
        names[n] = NULL;
        return r < 0 ? r : sd_bus_message_append_strv(reply, (char **) names);
}

/* Main thread ------------------------------------------------------------ */

/* The registry's kept description of the sandbox, if a read can be answered from it
 * here: its observation still stands (the lookup takes the observations' mutex,
 * held only for a table look-up), and nothing on the host needs looking at. */
static const SbxSandbox *kept_description(Operation *o) {
        const SbxSandbox *s = registry_described(registry_get(&o->m->registry, o->name), o->m->observations,
                                                 manager_observation_max_age_us(o->m));

        return s && !sbx_observed_checks_host(s->observed) ? s : NULL;
}

static int answer_inspect(Operation *o) {
        if (!kept_description(o))
                return 0;
        o->answered_here = true;
        return 1;
}

/* A match, or a verdict with no fields; which fields differ is told by the stored
 * spec, read on a worker. */
static int answer_verify(Operation *o) {
        const SbxSandbox *s = kept_description(o);
        SandboxEntry *e = registry_get(&o->m->registry, o->name);
        const SbxFingerprints *fps;
        SbxFingerprints buf;
        SbxVerdict v;

        /* Egress not read back in force when it was described: a worker reads it now. */
        if (!s || s->egress_enforced == 0 || registry_fingerprints_of(e, o->spec, &buf, &fps) < 0)
                return 0;
        v = sbx_verdict(o->spec, fps, s->observed, SBX_CONTRACT_VERSION);
        if (v == SBX_VERDICT_MISMATCH)
                return 0;
        if (fps == &buf)
                registry_keep_verified(e, TAKE_PTR(o->spec), fps);
        o->verdict = v;
        o->fields = 0;
        o->answered_here = true;
        return 1;
}

static int apply_start(Operation *o) {
        const SandboxEntry *e = registry_get(&o->m->registry, o->name);

        /* A start that changed nothing leaves a paused sandbox paused. */
        if (!(o->r == 0 && e && e->state == SBX_STATE_PAUSED))
                registry_started(&o->m->registry, o->name);
        return 0;
}

static int apply_resume(Operation *o) {
        registry_started(&o->m->registry, o->name);
        return 0;
}

static int apply_stop(Operation *o) {
        registry_stopped(&o->m->registry, o->name);
        return 0;
}

static int apply_pause(Operation *o) {
        registry_paused(&o->m->registry, o->name);
        return 0;
}

static int apply_delete(Operation *o) {
        registry_drop(&o->m->registry, o->name);
        return 0;
}

/* The lease's pipe is made now, on the main thread that watches it (leases.h); the
 * reply takes a copy of the caller's end. */
static int apply_acquire(Operation *o) {
        const SbxPolicy *p = o->m->policy;
        int r = registry_put(&o->m->registry, o->sandbox);

        return r < 0 ? r : leases_acquire(&o->m->leases, o->name, o->uid, sd_bus_message_get_sender(o->call),
                                          (unsigned) p->max_leases_per_user, (unsigned) p->max_leases_per_sandbox,
                                          &o->lease_fd, &o->error);
}

static int reply_acquire(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "h", o->lease_fd);
}

static int apply_set_lifetimes(Operation *o) {
        int r = registry_put(&o->m->registry, o->sandbox);

        if (r >= 0)
                registry_set_lifetime(&o->m->registry, &o->lifetime_row);
        return r;
}

/* A snapshot's image, a pull's. */
static int reply_image_id(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "s", o->image_id);
}

/* FindSandboxes: whether s has the filter's state and labels. */
static bool found(const Operation *o, const SandboxEntry *e) {
        if (o->verb != VERB_FIND)
                return true;
        return (!o->find_state || streq(o->find_state, sbx_state_to_string(e->state))) &&
                sbx_user_labels_match(e->labels, o->labels);
}

/* What the list found, into the objects. */
static int apply_list(Operation *o) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < o->n_list; i++)
                r = o->list[i]->unjudged ? registry_listed(&o->m->registry, o->list[i])
                                         : registry_put(&o->m->registry, o->list[i]);
        return r;
}

/* ListSandboxes: from the list itself, the objects updated after the reply. */
static int reply_listing(Operation *o, sd_bus_message *reply) {
        return listing_reply(o->m, &o->list, &o->n_list, o->all ? NULL : &o->uid, reply);
}

/* FindSandboxes with its filter. */
static int reply_list(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssuso)");

        for (size_t i = 0; r >= 0 && i < o->n_list; i++) {
                const SbxSandbox *s = o->list[i];
                const SandboxEntry *e = registry_get(&o->m->registry, s->name);

                if (!e || !(o->all || (s->owner_valid && s->owner == o->uid)) || !found(o, e))
                        continue;
                r = sd_bus_message_append(reply, "(ssuso)", e->display, sbx_state_to_string(s->state),
                                          (uint32_t) s->owner, sbx_verdict_to_string(s->verdict), e->path);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int reply_list_snapshots(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(sssut)");

        for (SbxSnapshotRow **s = o->snapshots; r >= 0 && s && *s; s++) {
                const char *id, *source = "";

                (void) sbx_name_unqualify((*s)->id, &id);
                if ((*s)->source_sandbox)
                        (void) sbx_name_unqualify((*s)->source_sandbox, &source);
                r = sd_bus_message_append(reply, "(sssut)", id, source, (*s)->image_id, (uint32_t) (*s)->owner_uid,
                                          (uint64_t) (*s)->created_us);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int reply_exec(Operation *o, sd_bus_message *reply) {
        const SbxExecResult *x = &o->exec_result;
        int r = sd_bus_message_append(reply, "i", (int32_t) x->exit_status);

        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->out ?: "", x->out_size);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->err ?: "", x->err_size);
        return r < 0 ? r : sd_bus_message_append(reply, "b", x->truncated);
}

/* The exec object (made by the interface that took the call: bus-exec.h) takes over
 * the process, the descriptors and the slot. */
static int reply_start_exec(Operation *o, sd_bus_message *reply) {
        const char *path;
        int r;

        r = o->publish_exec(o->m, TAKE_PTR(o->exec_process), &(ExecStartArgs) {
                .sandbox = o->display, .name = o->name, .argv0 = o->argv[0], .owner = o->owner, .caller = o->uid,
                .caller_name = sd_bus_message_get_sender(o->call), .timeout_s = o->exec.timeout_s,
                .fds = { TAKE_FD(o->fds[0]), TAKE_FD(o->fds[1]), TAKE_FD(o->fds[2]) },
        }, &path);
        o->exec_slot = false;
        return r < 0 ? r : sd_bus_message_append(reply, "o", path);
}

static int reply_usage(Operation *o, sd_bus_message *reply) {
        return bus_append_usage(reply, &o->usage);
}

static int reply_read_file(Operation *o, sd_bus_message *reply) {
        const SbxFileData *d = &o->file_data;
        int r = sd_bus_message_append_array(reply, 'y', d->data ? (const void *) d->data : "", d->size);

        return r < 0 ? r : sd_bus_message_append(reply, "a{sv}", 4, "size", "t", d->file_size, "mode", "u",
                                                 (uint32_t) d->mode, "mtime", "t", d->mtime_us, "eof", "b", d->eof);
}

static int reply_list_files(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssttu)");

        for (size_t i = 0; r >= 0 && i < o->n_entries; i++) {
                const SbxFileEntry *e = &o->entries[i];

                r = sd_bus_message_append(reply, "(ssttu)", e->name, e->kind, e->size, e->mtime_us, e->mode);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_message_append(reply, "b", o->truncated);
}

static int reply_none(Operation *o, sd_bus_message *reply) {
        return 0;
}

#define A_INSPECT SBX_POLKIT_ACTION_INSPECT
#define A_CREATE  SBX_POLKIT_ACTION_CREATE
#define A_MANAGE  SBX_POLKIT_ACTION_MANAGE
#define A_EXEC    SBX_POLKIT_ACTION_EXEC
#define A_EXEC_OTHERS SBX_POLKIT_ACTION_EXEC_OTHERS
#define A_PULL    SBX_POLKIT_ACTION_PULL

const VerbInfo operation_verbs[_VERB_MAX] = {
        [VERB_CREATE] = { .name = "create", .own_action = A_CREATE, .changes = true, .run = run_create,
                .apply = apply_create, .reply = reply_create },
        [VERB_GET] = { .name = "get", .own_action = A_INSPECT, .run = run_inspect, .apply = apply_put,
                .reply = reply_get },
        [VERB_INSPECT] = { .name = "inspect", .own_action = A_INSPECT, .run = run_inspect, .apply = apply_inspect,
                .reply = reply_inspect,
                .answer = answer_inspect },
        /* InspectSandbox with Docker asked now (docs/api.md#reads-from-observations) */
        [VERB_REFRESH] = { .name = "refresh", .own_action = A_INSPECT, .run = run_refresh, .apply = apply_inspect,
                .reply = reply_inspect },
        [VERB_VERIFY] = { .name = "verify", .own_action = A_INSPECT, .run = run_verify, .apply = apply_verify,
                .reply = reply_verify,
                .answer = answer_verify },
        [VERB_START] = { .name = "start", .own_action = A_MANAGE, .changes = true, .run = run_start,
                .apply = apply_start, .reply = reply_none, .activity = true },
        [VERB_STOP] = { .name = "stop", .own_action = A_MANAGE, .changes = true, .run = run_stop, .apply = apply_stop,
                .reply = reply_none,
                .admit = admit_stop },
        [VERB_DELETE] = { .name = "delete", .own_action = A_MANAGE, .changes = true, .run = run_delete,
                .apply = apply_delete, .reply = reply_none, .admit = admit_delete },
        [VERB_SNAPSHOT] = { .name = "snapshot", .own_action = A_MANAGE, .changes = true, .run = run_snapshot,
                .reply = reply_image_id },
        [VERB_DELETE_SNAPSHOT] = { .name = "delete-snapshot", .own_action = A_MANAGE, .changes = true,
                .run = run_delete_snapshot, .reply = reply_none },
        [VERB_LIST] = { .name = "list", .own_action = A_INSPECT, .lists = true, .run = run_list,
                .reply = reply_listing },
        [VERB_LIST_SNAPSHOTS] = { .name = "list-snapshots", .own_action = A_INSPECT, .lists = true,
                .run = run_list_snapshots, .reply = reply_list_snapshots },
        [VERB_EXEC] = { .name = "exec", .own_action = A_EXEC, .changes = true, .run = run_exec, .reply = reply_exec,
                .others_action = A_EXEC_OTHERS, .exec = true, .activity = true },
        [VERB_START_EXEC] = { .name = "start-exec", .own_action = A_EXEC, .changes = true, .run = run_start_exec,
                .reply = reply_start_exec, .others_action = A_EXEC_OTHERS, .exec = true, .fds = true,
                .activity = true },
        [VERB_USAGE] = { .name = "usage", .own_action = A_EXEC, .run = run_usage, .reply = reply_usage,
                .others_action = A_EXEC_OTHERS },
        [VERB_COPY_TO] = { .name = "copy-to", .own_action = A_EXEC, .changes = true, .run = run_copy_to,
                .reply = reply_none, .others_action = A_EXEC_OTHERS, .exec = true, .fds = true, .activity = true },
        [VERB_COPY_FROM] = { .name = "copy-from", .own_action = A_EXEC, .changes = true, .run = run_copy_from,
                .reply = reply_none, .others_action = A_EXEC_OTHERS, .exec = true, .fds = true, .activity = true },
        /* creates or starts the caller's own; replacing it (recreate) also needs manage */
        [VERB_ENSURE] = { .name = "ensure", .own_action = A_CREATE, .changes = true, .run = run_ensure,
                .apply = apply_ensure, .reply = reply_ensure, .admit = admit_ensure, .activity = true },
        /* The file calls start no process (the kept channel's exec holds no slot). The
         * read and the listing are reads (the read share, the read workers), audited
         * all the same, like the copies; the write and the removal are state changes. */
        [VERB_READ_FILE] = { .name = "read-file", .own_action = A_EXEC, .run = run_read_file,
                .reply = reply_read_file, .others_action = A_EXEC_OTHERS, .audited = true, .fds = true,
                .activity = true },
        [VERB_WRITE_FILE] = { .name = "write-file", .own_action = A_EXEC, .changes = true, .run = run_write_file,
                .reply = reply_none, .others_action = A_EXEC_OTHERS, .fds = true, .activity = true },
        [VERB_LIST_FILES] = { .name = "list-files", .own_action = A_EXEC, .run = run_list_files,
                .reply = reply_list_files, .others_action = A_EXEC_OTHERS, .audited = true, .activity = true },
        [VERB_REMOVE_FILE] = { .name = "remove-file", .own_action = A_EXEC, .changes = true, .run = run_remove_file,
                .reply = reply_none, .others_action = A_EXEC_OTHERS, .activity = true },
        /* ListSandboxes filtered (by labels, state) */
        [VERB_FIND] = { .name = "find", .own_action = A_INSPECT, .lists = true, .run = run_list,
                .apply = apply_list, .reply = reply_list },
        /* Docker's freezer */
        [VERB_PAUSE] = { .name = "pause", .own_action = A_MANAGE, .changes = true, .run = run_pause,
                .apply = apply_pause, .reply = reply_none, .admit = admit_pause },
        [VERB_RESUME] = { .name = "resume", .own_action = A_MANAGE, .changes = true, .run = run_resume,
                .apply = apply_resume, .reply = reply_none, .activity = true },
        /* a use of the sandbox, as an exec is (docs/security.md) */
        [VERB_ACQUIRE] = { .name = "acquire", .own_action = A_EXEC, .changes = true, .run = run_inspect,
                .apply = apply_acquire, .reply = reply_acquire, .others_action = A_EXEC_OTHERS, .admit = admit_acquire,
                .activity = true },
        /* E2B's setTimeout: the idle timeout, the expiry from now, what idling does */
        [VERB_SET_LIFETIMES] = { .name = "set-lifetimes", .own_action = A_MANAGE, .changes = true,
                .run = run_set_lifetimes, .apply = apply_set_lifetimes, .reply = reply_none, .activity = true },
        /* SetSandboxEgress: the network it may reach (docs/security.md) */
        [VERB_SET_EGRESS] = { .name = "set-egress", .own_action = A_MANAGE, .changes = true, .run = run_set_egress,
                .reply = reply_none },
        /* an image for the host, through the policy's registries (bus-pull.h) */
        [VERB_PULL] = { .name = "pull", .own_action = A_PULL, .changes = true, .run = run_pull,
                .reply = reply_image_id },
        /* a warm pool's member, or a create under a generated name (docs/lifecycle.md) */
        /* what the warm pools hold (bus-pool.h) */
        [VERB_POOL_STATUS] = { .name = "pool-status", .own_action = A_INSPECT, .lists = true,
                .run = run_pool_status, .reply = reply_pool_status },
        [VERB_CLAIM] = { .name = "claim", .own_action = A_CREATE, .changes = true, .run = run_claim,
                .apply = apply_claim, .reply = reply_claim },
};

