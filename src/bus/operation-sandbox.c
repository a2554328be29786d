/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One sandbox's reads and state changes, its snapshots, and image pulls: their rows,
 * arguments and results (operation-verbs.h). */

#include <stdatomic.h>

#include "bus-inspection.h"
#include "bus-polkit.h"
#include "bus-pull.h"
#include "config.h"
#include "operation-verbs.h"
#include "verdict.h"

/* The families -------------------------------------------------------------- */

static int inspect_take(Operation *o, OperationArgs *args) {
        o->inspect = (InspectJob) { .lease_fd = -1 };
        return 0;
}

static void inspect_done(Operation *o) {
        sbx_sandbox_free(o->inspect.sandbox);
        safe_close(o->inspect.lease_fd);
}

const VerbFamily verb_family_inspect = { .take = inspect_take, .done = inspect_done };

static void verify_args_done(OperationArgs *args) {
        args->verify.spec = sbx_spec_free(args->verify.spec);
}

static int verify_take(Operation *o, OperationArgs *args) {
        o->verify = (VerifyJob) { .args = args->verify };
        args->verify = (VerifyArgs) {};
        return 0;
}

static void verify_done(Operation *o) {
        sbx_spec_free(o->verify.args.spec);
        sbx_sandbox_free(o->verify.sandbox);
}

const VerbFamily verb_family_verify = { .take = verify_take, .args_done = verify_args_done, .done = verify_done };

static int stop_take(Operation *o, OperationArgs *args) {
        o->stop = (StopJob) { .args = args->stop };
        return 0;
}

const VerbFamily verb_family_stop = { .take = stop_take };

static void snapshot_done(Operation *o) {
        free(o->snapshot.image_id);
}

const VerbFamily verb_family_snapshot = { .done = snapshot_done };

static int pull_take(Operation *o, OperationArgs *args) {
        if (args->pull.reference && !(o->pull.reference = strdup(args->pull.reference)))
                return -ENOMEM;
        return 0;
}

static void pull_done(Operation *o) {
        free(o->pull.reference);
        free(o->pull.image_id);
        sd_event_source_disable_unref(o->pull.timer);
}

const VerbFamily verb_family_pull = { .take = pull_take, .done = pull_done };

/* Nothing to take or free: the usage is numbers. */
const VerbFamily verb_family_usage = {};

/* Worker side ------------------------------------------------------------- */

static int run_inspect(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_inspect(l, o->name, &o->inspect.sandbox, &o->error);
}

static int run_refresh(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_refresh(l, o->name, &o->inspect.sandbox, &o->error);
}

static int run_verify(Operation *o, SbxLifecycle *l) {
        VerifyJob *j = &o->verify;

        return sbx_lifecycle_verify(l, o->name, j->args.spec, &j->verdict, &j->fields, &j->sandbox, &o->error);
}

static int run_start(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_start(l, o->name, &o->error);
}

static int run_stop(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_stop(l, o->name, o->stop.args.timeout_s, &o->error);
}

static int run_pause(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pause(l, o->name, true, &o->error);
}

static int run_resume(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pause(l, o->name, false, &o->error);
}

static int run_delete(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_delete(l, o->name, &o->error);
}

static int run_snapshot(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_snapshot(l, o->name, o->snapshot_id, &o->snapshot.image_id, &o->error);
}

static int run_delete_snapshot(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_delete_snapshot(l, o->snapshot_id, &o->error);
}

static int run_usage(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_usage(l, o->name, &o->usage.usage, &o->error);
}

/* PullImage (docs/api.md): the worker's progress kept for the main thread's
 * PullProgress (bus-pull.h). */
static void on_pull_progress(uint64_t done, uint64_t total, void *userdata) {
        PullJob *j = userdata;

        atomic_store(&j->done, done);
        atomic_store(&j->total, total);
}

static int run_pull(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pull(l, o->pull.reference, on_pull_progress, &o->pull, &o->pull.image_id, &o->error);
}

/* Main thread: what the leases allow -------------------------------------- */

static int admit_stop(Operation *o) {
        if (o->stop.args.force) {
                verb_revoke_leases(o);
                return 0;
        }
        return verb_busy(o, " (option force revokes them)");
}

static int admit_delete(Operation *o) {
        return verb_busy(o, " (StopSandbox with option force revokes them)");
}

static int admit_pause(Operation *o) {
        return verb_busy(o, "");
}

/* The per-user cap, before a worker is asked (held again when the lease is made). */
static int admit_acquire(Operation *o) {
        unsigned n = leases_of_user(&o->m->leases, o->uid);

        if (n < (unsigned) o->m->policy->max_leases_per_user)
                return 0;
        return sbx_error_set(&o->error, SBX_ERROR_LIMITS_EXCEEDED,
                             "max_leases_per_user: uid %u holds %u leases already", (unsigned) o->uid, n);
}

/* Main thread: budgets ------------------------------------------------------ */

/* A stop: its timeout and a margin (at least docker_timeout). */
static unsigned budget_stop(const Operation *o, unsigned docker_timeout) {
        return sbx_docker_stop_budget(docker_timeout, o->stop.args.timeout_s);
}

static unsigned budget_snapshot(const Operation *o, unsigned docker_timeout) {
        return docker_timeout + SBX_DOCKER_COMMIT_TIMEOUT_S;
}

static const char *pull_template(const Operation *o, const char **ret_source) {
        *ret_source = o->pull.reference;
        return "image";
}

/* Main thread: answers from the registry ------------------------------------ */

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
        VerifyJob *j = &o->verify;
        const SbxFingerprints *fps;
        SbxFingerprints buf;
        SbxVerdict v;

        /* Egress not read back in force when it was described: a worker reads it now. */
        if (!s || s->egress_enforced == 0 || registry_fingerprints_of(e, j->args.spec, &buf, &fps) < 0)
                return 0;
        v = sbx_verdict(j->args.spec, fps, s->observed, SBX_CONTRACT_VERSION);
        if (v == SBX_VERDICT_MISMATCH)
                return 0;
        if (fps == &buf)
                registry_keep_verified(e, TAKE_PTR(j->args.spec), fps);
        j->verdict = v;
        j->fields = 0;
        o->answered_here = true;
        return 1;
}

/* Main thread: effects and replies ------------------------------------------ */

static int apply_put(Operation *o) {
        return registry_put(&o->m->registry, o->inspect.sandbox);
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
        const SbxSandbox *s = o->inspect.sandbox;

        if (!s->seen || sbx_observed_checks_host(s->observed) || manager_observation_max_age_us(o->m) == 0)
                return;
        registry_describe(&o->m->registry, TAKE_PTR(o->inspect.sandbox));
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
        if ((r = registry_put(&o->m->registry, o->inspect.sandbox)) < 0)
                return r;
        take_held_facts(o->inspect.sandbox, registry_get(&o->m->registry, o->name));
        return 0;
}

static int reply_inspect(Operation *o, sd_bus_message *reply) {
        int r;

        if (o->answered_here)
                return registry_append_inspection(registry_get(&o->m->registry, o->name), reply);
        if ((r = bus_append_inspection(reply, o->inspect.sandbox)) < 0)
                return r;
        keep_described(o);              /* for the reads after it (the answer is built) */
        return 0;
}

/* What the same look found of the stored spec is the object's (its Verdict); a
 * registry that cannot take it keeps the object's old Verdict, and the caller is
 * still told what was found. */
static int apply_verify(Operation *o) {
        if (o->verify.sandbox && !o->answered_here)
                (void) registry_put(&o->m->registry, o->verify.sandbox);
        return 0;
}

/* The verdict and the fields that differ (as, not cast from const). */
static int reply_verify(Operation *o, sd_bus_message *reply) {
        const char *names[SBX_SPEC_FIELD_COUNT + 3];
        unsigned fields = o->verify.fields;
        size_t n;
        int r = sd_bus_message_append(reply, "s", sbx_verdict_to_string(o->verify.verdict));

        n = sbx_spec_fields_to_names(fields, names);
        if (fields & SBX_VERIFY_FIELD_EGRESS)
                names[n++] = "egress";
        if (fields & SBX_VERIFY_FIELD_RUNTIME)
                names[n++] = "runtime";
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "s");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append(reply, "s", names[i]);
        return r < 0 ? r : sd_bus_message_close_container(reply);
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
        int r = registry_put(&o->m->registry, o->inspect.sandbox);

        return r < 0 ? r : leases_acquire(&o->m->leases, o->name, o->uid, sd_bus_message_get_sender(o->call),
                                          (unsigned) p->max_leases_per_user, (unsigned) p->max_leases_per_sandbox,
                                          &o->inspect.lease_fd, &o->error);
}

static int reply_acquire(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "h", o->inspect.lease_fd);
}

static int reply_snapshot(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "s", o->snapshot.image_id);
}

/* The last progress before the reply. */
static int apply_pull(Operation *o) {
        bus_pull_flush(o);
        return 0;
}

static int reply_pull(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "s", o->pull.image_id);
}

static int reply_usage(Operation *o, sd_bus_message *reply) {
        return bus_append_usage(reply, &o->usage.usage);
}

/* The rows ------------------------------------------------------------------ */

#define A_INSPECT SBX_POLKIT_ACTION_INSPECT
#define A_MANAGE  SBX_POLKIT_ACTION_MANAGE

const VerbInfo verb_get = {
        .name = "get", .work = &verb_work_read, .family = &verb_family_inspect, .own_action = A_INSPECT,
        .run = run_inspect, .apply = apply_put, .reply = reply_get,
};

const VerbInfo verb_inspect = {
        .name = "inspect", .work = &verb_work_read, .family = &verb_family_inspect, .own_action = A_INSPECT,
        .run = run_inspect, .apply = apply_inspect, .reply = reply_inspect, .answer = answer_inspect,
};

/* InspectSandbox with Docker asked now (docs/api.md#reads-from-observations) */
const VerbInfo verb_refresh = {
        .name = "refresh", .work = &verb_work_read, .family = &verb_family_inspect, .own_action = A_INSPECT,
        .run = run_refresh, .apply = apply_inspect, .reply = reply_inspect,
};

const VerbInfo verb_verify = {
        .name = "verify", .work = &verb_work_read, .family = &verb_family_verify, .own_action = A_INSPECT,
        .run = run_verify, .apply = apply_verify, .reply = reply_verify, .answer = answer_verify,
};

const VerbInfo verb_start = {
        .name = "start", .work = &verb_work_change, .own_action = A_MANAGE, .run = run_start, .apply = apply_start,
        .reply = verb_reply_none, .activity = true,
};

const VerbInfo verb_stop = {
        .name = "stop", .work = &verb_work_change, .family = &verb_family_stop, .own_action = A_MANAGE, .run = run_stop,
        .apply = apply_stop, .reply = verb_reply_none, .admit = admit_stop, .budget = budget_stop,
};

const VerbInfo verb_delete = {
        .name = "delete", .work = &verb_work_change, .own_action = A_MANAGE, .run = run_delete, .apply = apply_delete,
        .reply = verb_reply_none, .admit = admit_delete,
};

/* Docker's freezer */
const VerbInfo verb_pause = {
        .name = "pause", .work = &verb_work_change, .own_action = A_MANAGE, .run = run_pause, .apply = apply_pause,
        .reply = verb_reply_none, .admit = admit_pause,
};

const VerbInfo verb_resume = {
        .name = "resume", .work = &verb_work_change, .own_action = A_MANAGE, .run = run_resume, .apply = apply_resume,
        .reply = verb_reply_none, .activity = true,
};

/* a use of the sandbox, as an exec is (docs/security.md) */
const VerbInfo verb_acquire = {
        .name = "acquire", .work = &verb_work_change, .family = &verb_family_inspect,
        .own_action = SBX_POLKIT_ACTION_EXEC, .run = run_inspect, .apply = apply_acquire, .reply = reply_acquire,
        .others_action = SBX_POLKIT_ACTION_EXEC_OTHERS, .admit = admit_acquire, .activity = true,
};

const VerbInfo verb_snapshot = {
        .name = "snapshot", .work = &verb_work_change, .family = &verb_family_snapshot, .own_action = A_MANAGE,
        .run = run_snapshot, .reply = reply_snapshot, .budget = budget_snapshot,
};

const VerbInfo verb_delete_snapshot = {
        .name = "delete-snapshot", .work = &verb_work_change, .own_action = A_MANAGE, .run = run_delete_snapshot,
        .reply = verb_reply_none,
};

const VerbInfo verb_usage = {
        .name = "usage", .work = &verb_work_read, .family = &verb_family_usage, .own_action = SBX_POLKIT_ACTION_EXEC,
        .run = run_usage, .reply = reply_usage, .others_action = SBX_POLKIT_ACTION_EXEC_OTHERS,
};

/* an image for the host, through the policy's registries (bus-pull.h); as long as
 * the image is big: the engine's own time limits apply */
const VerbInfo verb_pull = {
        .name = "pull", .work = &verb_work_change, .family = &verb_family_pull, .own_action = SBX_POLKIT_ACTION_PULL,
        .run = run_pull, .apply = apply_pull, .reply = reply_pull, .budget = verb_budget_none,
        .template = pull_template, .submitted = bus_pull_watch,
};
