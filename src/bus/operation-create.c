/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The verbs that make sandboxes (create, ensure, claim) and change their lifetimes and
 * egress: their rows, arguments and results (operation-verbs.h). */

#include <stdio.h>

#include "bus-polkit.h"
#include "bus-pool.h"
#include "naming.h"
#include "operation-verbs.h"
#include "owner-info.h"
#include "time-util.h"

/* The families -------------------------------------------------------------- */

static void create_args_free(CreateArgs *a) {
        a->spec = sbx_spec_free(a->spec);
        json_object_put(TAKE_PTR(a->labels));
        sbx_egress_done(&a->egress);
        a->name_prefix = mfree(a->name_prefix);
}

static void create_args_done(OperationArgs *args) {
        create_args_free(&args->create);
}

static int create_take(Operation *o, OperationArgs *args) {
        o->create = (CreateJob) { .args = args->create };
        o->create.args.runtime = NULL;
        if (args->create.runtime)
                snprintf(o->create.runtime, sizeof o->create.runtime, "%s", args->create.runtime);
        args->create = (CreateArgs) {};
        return 0;
}

static void create_done(Operation *o) {
        create_args_free(&o->create.args);
        sbx_sandbox_free(o->create.sandbox);
}

const VerbFamily verb_family_create = { .take = create_take, .args_done = create_args_done, .done = create_done };

static int lifetimes_take(Operation *o, OperationArgs *args) {
        o->lifetimes = (LifetimesJob) { .args = args->lifetimes };
        return 0;
}

static void lifetimes_done(Operation *o) {
        sbx_sandbox_free(o->lifetimes.sandbox);
}

const VerbFamily verb_family_lifetimes = { .take = lifetimes_take, .done = lifetimes_done };

static void egress_args_done(OperationArgs *args) {
        sbx_egress_done(&args->egress.egress);
}

static int egress_take(Operation *o, OperationArgs *args) {
        o->egress = (EgressJob) { .args = args->egress };
        args->egress = (EgressArgs) {};
        return 0;
}

static void egress_done(Operation *o) {
        sbx_egress_done(&o->egress.args.egress);
}

const VerbFamily verb_family_egress = { .take = egress_take, .args_done = egress_args_done, .done = egress_done };

/* Worker side ------------------------------------------------------------- */

/* A new sandbox's lifetime, stored with its row (docs/lifecycle.md). */
static SbxNewLifetime new_lifetime(const CreateJob *j) {
        const SbxLifetime *t = &j->args.lifetime;

        return (SbxNewLifetime) { .idle_timeout_s = t->idle_timeout_s, .expire_after_s = t->expire_after_s,
                                  .on_idle_pause = t->on_idle_pause, .counts_processes = t->counts_processes };
}

static SbxCreateOptions create_options(const CreateJob *j) {
        return (SbxCreateOptions) { .labels = j->args.labels, .lifetime = new_lifetime(j), .egress = &j->args.egress,
                                    .runtime = j->runtime };
}

static uint64_t expire_at(uint64_t from_us, uint32_t after_s) {
        return after_s ? from_us + (uint64_t) after_s * 1000000U : 0;
}

/* A sandbox's lifetimes changed (SetSandboxLifetimes, an ensure that found it): what
 * is given replaces what was stored, expire_after counts from now, the rest stays;
 * the change is a use (docs/lifecycle.md). The row as stored in *row. */
static int change_lifetime(Operation *o, SbxLifecycle *l, const SbxLifetime *t, SbxLifetimeRow *row) {
        uint64_t now = sbx_now_realtime_us();
        SbxLifetimeRow was;
        int r = sbx_store_get_lifetime(l->store, o->name, &was, &o->error);

        if (r < 0)
                return r;
        free(was.name);
        *row = (SbxLifetimeRow) {
                .name = o->name,
                .idle_timeout_s = t->has_idle_timeout ? t->idle_timeout_s : was.idle_timeout_s,
                .expire_at_us = t->has_expire_after ? expire_at(now, t->expire_after_s) : was.expire_at_us,
                .on_idle_pause = t->has_on_idle ? t->on_idle_pause : was.on_idle_pause,
                .counts_processes = t->has_counts_processes ? t->counts_processes : was.counts_processes,
                .last_activity_us = now,
        };
        return sbx_store_put_lifetime(l->store, row, &o->error);
}

static int run_set_lifetimes(Operation *o, SbxLifecycle *l) {
        int r = sbx_lifecycle_inspect(l, o->name, &o->lifetimes.sandbox, &o->error);

        return r < 0 ? r : change_lifetime(o, l, &o->lifetimes.args.lifetime, &o->lifetimes.row);
}

/* The owner, and with option pull "missing" the image pulled first unless the host
 * has it. */
static int before_create(Operation *o, SbxLifecycle *l, SbxOwnerInfo *info) {
        const SbxSpec *spec = o->create.args.spec;
        int r = sbx_owner_info_lookup(o->uid, info, &o->error);

        if (r < 0 || !o->create.args.pull_missing || spec->template_type != SBX_TEMPLATE_IMAGE)
                return r;
        return sbx_lifecycle_pull_missing(l, spec->image, &o->error);
}

static int run_create(Operation *o, SbxLifecycle *l) {
        CreateJob *j = &o->create;
        SbxCreateOptions options = create_options(j);
        SbxOwnerInfo info;
        int r = before_create(o, l, &info);

        return r < 0 ? r : sbx_lifecycle_create_with(l, o->name, j->args.spec, &info.owner, &options, &j->sandbox,
                                                     &o->error);
}

/* The name is the service's to choose (a member's, or generated): the operation's
 * from here on. */
static int run_claim(Operation *o, SbxLifecycle *l) {
        CreateJob *j = &o->create;
        SbxCreateOptions options = create_options(j);
        SbxOwnerInfo info;
        int r = before_create(o, l, &info);

        if (r >= 0)
                r = sbx_lifecycle_claim(l, j->args.spec, &info.owner, &options,
                                        j->args.name_prefix, &j->sandbox, &j->warm, &o->error);
        if (r >= 0 && !(o->name = strdup(j->sandbox->name)))
                r = -ENOMEM;
        if (r >= 0)
                (void) sbx_name_unqualify(o->name, &o->display);
        return r;
}

static int run_ensure(Operation *o, SbxLifecycle *l) {
        CreateJob *j = &o->create;
        SbxOwnerInfo info;
        int r = before_create(o, l, &info);

        if (r < 0)
                return r;
        /* A new sandbox's lifetime is the options' (with the policy's default), stored with
         * its row; one that was there gets what was given, as SetSandboxLifetimes gives it. */
        r = sbx_lifecycle_ensure(l, o->name, j->args.spec, &info.owner,
                                 &(SbxEnsureOptions) { .recreate = j->args.recreate,
                                                       .stop_timeout_s = j->args.stop_timeout_s,
                                                       .labels = j->args.labels, .busy_leases = j->busy_leases,
                                                       .lifetime = new_lifetime(j), .egress = &j->args.egress,
                                                       .runtime = j->runtime },
                                 &j->sandbox, &j->outcome, &o->error);
        if (r >= 0 && j->outcome != SBX_ENSURE_CREATED && j->outcome != SBX_ENSURE_RECREATED &&
            sbx_lifetime_given(&j->args.lifetime))
                r = change_lifetime(o, l, &j->args.lifetime, &j->lifetime_row);
        return r;
}

static int run_set_egress(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_set_egress(l, o->name, &o->egress.args.egress, &o->error);
}

/* Main thread ------------------------------------------------------------- */

/* A replacement is refused on the worker, where it is known to be one. */
static int admit_ensure(Operation *o) {
        if (o->create.args.recreate && !o->create.args.force)
                o->create.busy_leases = leases_count(&o->m->leases, o->name, sd_bus_message_get_sender(o->call));
        return 0;
}

/* A pull is as long as the image is big: the engine's own time limits apply. */
static unsigned budget_create(const Operation *o, unsigned docker_timeout) {
        return o->create.args.pull_missing ? 0 : docker_timeout;
}

/* A replacing ensure: the stop before its create. */
static unsigned budget_ensure(const Operation *o, unsigned docker_timeout) {
        const CreateArgs *a = &o->create.args;

        if (a->pull_missing)
                return 0;
        return docker_timeout + (a->recreate ? a->stop_timeout_s + SBX_DOCKER_STOP_MARGIN_S : 0);
}

/* Pulling an image first is a pull. */
static void create_more_actions(const Operation *o, const char **ret_then, const char **ret_last) {
        if (o->create.args.pull_missing)
                *(*ret_then ? ret_last : ret_then) = SBX_POLKIT_ACTION_PULL;
}

/* Replacing a sandbox deletes one, and changing the lifetimes of one found is a
 * SetSandboxLifetimes: what manage allows. */
static void ensure_more_actions(const Operation *o, const char **ret_then, const char **ret_last) {
        if (o->create.args.recreate || sbx_lifetime_given(&o->create.args.lifetime))
                *ret_then = SBX_POLKIT_ACTION_MANAGE;
        create_more_actions(o, ret_then, ret_last);
}

/* A create names its template under a key of its own: an image reference is "image",
 * a snapshot id "snapshot" — a rule keyed on an image prefix never matches a snapshot
 * that happens to be named like one. */
static const char *create_template(const Operation *o, const char **ret_source) {
        const SbxSpec *spec = o->create.args.spec;
        bool image = spec->template_type == SBX_TEMPLATE_IMAGE;

        *ret_source = image ? spec->image : spec->snapshot_id;
        return image ? "image" : "snapshot";
}

/* A sandbox made now has the lifetime stored with it (or none: a replacement's is new
 * too). */
static int apply_create(Operation *o) {
        const CreateJob *j = &o->create;
        const SbxSandbox *s = j->sandbox;
        int r = registry_put(&o->m->registry, j->sandbox);

        if (r >= 0 && (o->verb != VERB_ENSURE || j->outcome == SBX_ENSURE_CREATED ||
                       j->outcome == SBX_ENSURE_RECREATED))
                registry_set_lifetime(&o->m->registry, &(SbxLifetimeRow) {
                        .name = o->name, .idle_timeout_s = s->idle_timeout_s, .expire_at_us = s->expire_at_us,
                        .on_idle_pause = s->on_idle_pause, .counts_processes = s->idle_counts_processes,
                        .last_activity_us = s->last_activity_us });
        else if (r >= 0 && j->lifetime_row.name)      /* an ensure that found it, lifetimes given */
                registry_set_lifetime(&o->m->registry, &j->lifetime_row);
        return r;
}

static int reply_create(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "os", registry_get(&o->m->registry, o->name)->path,
                                     o->create.sandbox->fingerprint);
}

/* A member taken: its pool is refilled at once. */
static int apply_claim(Operation *o) {
        int r = apply_create(o);

        if (r >= 0 && o->create.warm)
                bus_pool_refill(o->m);
        return r;
}

static int reply_claim(Operation *o, sd_bus_message *reply) {
        return sd_bus_message_append(reply, "osss", registry_get(&o->m->registry, o->name)->path, o->display,
                                     o->create.sandbox->fingerprint, o->create.warm ? "warm" : "cold");
}

static const char *claim_ok_reason(const Operation *o) {
        return o->create.warm ? "warm" : "cold";
}

static int apply_ensure(Operation *o) {
        int r = apply_create(o);

        if (r >= 0 && o->create.args.force && o->create.outcome == SBX_ENSURE_RECREATED)
                verb_revoke_leases(o);
        return r;
}

static int reply_ensure(Operation *o, sd_bus_message *reply) {
        int r = reply_create(o, reply);

        return r < 0 ? r : sd_bus_message_append(reply, "s", sbx_ensure_outcome_to_string(o->create.outcome));
}

static int apply_set_lifetimes(Operation *o) {
        int r = registry_put(&o->m->registry, o->lifetimes.sandbox);

        if (r >= 0)
                registry_set_lifetime(&o->m->registry, &o->lifetimes.row);
        return r;
}

/* The rows ------------------------------------------------------------------ */

const VerbInfo verb_create = {
        .name = "create", .work = &verb_work_change, .family = &verb_family_create,
        .own_action = SBX_POLKIT_ACTION_CREATE, .run = run_create, .apply = apply_create, .reply = reply_create,
        .budget = budget_create, .more_actions = create_more_actions, .template = create_template,
};

/* creates or starts the caller's own; replacing it (recreate) also needs manage */
const VerbInfo verb_ensure = {
        .name = "ensure", .work = &verb_work_change, .family = &verb_family_create,
        .own_action = SBX_POLKIT_ACTION_CREATE, .run = run_ensure, .apply = apply_ensure, .reply = reply_ensure,
        .admit = admit_ensure, .activity = true, .budget = budget_ensure, .more_actions = ensure_more_actions,
        .template = create_template,
};

/* a warm pool's member, or a create under a generated name (docs/lifecycle.md) */
const VerbInfo verb_claim = {
        .name = "claim", .work = &verb_work_change, .family = &verb_family_create,
        .own_action = SBX_POLKIT_ACTION_CREATE, .run = run_claim, .apply = apply_claim, .reply = reply_claim,
        .budget = budget_create, .more_actions = create_more_actions, .template = create_template,
        .ok_reason = claim_ok_reason,
};

/* E2B's setTimeout: the idle timeout, the expiry from now, what idling does */
const VerbInfo verb_set_lifetimes = {
        .name = "set-lifetimes", .work = &verb_work_change, .family = &verb_family_lifetimes,
        .own_action = SBX_POLKIT_ACTION_MANAGE, .run = run_set_lifetimes, .apply = apply_set_lifetimes,
        .reply = verb_reply_none, .activity = true,
};

/* SetSandboxEgress: the network it may reach (docs/security.md) */
const VerbInfo verb_set_egress = {
        .name = "set-egress", .work = &verb_work_change, .family = &verb_family_egress,
        .own_action = SBX_POLKIT_ACTION_MANAGE, .run = run_set_egress, .reply = verb_reply_none,
};
