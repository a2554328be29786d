/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The lists — sandboxes, found sandboxes, snapshots — and the warm pools' status:
 * their rows, arguments and results (operation-verbs.h). */

#include "bus-polkit.h"
#include "bus-pool.h"
#include "listing.h"
#include "naming.h"
#include "operation-verbs.h"
#include "user-labels.h"

/* The families -------------------------------------------------------------- */

static void find_args_free(FindArgs *a) {
        json_object_put(TAKE_PTR(a->labels));
        a->state = mfree(a->state);
}

static void list_args_done(OperationArgs *args) {
        find_args_free(&args->find);
}

static int list_take(Operation *o, OperationArgs *args) {
        o->list = (ListJob) { .filter = args->find };
        args->find = (FindArgs) {};
        return 0;
}

static void list_done(Operation *o) {
        find_args_free(&o->list.filter);
        sbx_sandbox_list_free(o->list.list, o->list.n_list);
        sbx_snapshot_row_list_free(o->list.snapshots);
}

const VerbFamily verb_family_list = { .take = list_take, .args_done = list_args_done, .done = list_done };

static void pool_done(Operation *o) {
        free(o->pool.ready);
        sbx_policy_unref(o->pool.policy);
}

const VerbFamily verb_family_pool = { .done = pool_done };

/* Worker side ------------------------------------------------------------- */

static uid_t whose(const Operation *o) {
        return o->all ? SBX_STORE_ANY_OWNER : o->uid;
}

static int run_list(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_list(l, whose(o), &o->list.list, &o->list.n_list, &o->error);
}

static int run_list_snapshots(Operation *o, SbxLifecycle *l) {
        return sbx_store_list_snapshots(l->store, whose(o), &o->list.snapshots, &o->error);
}

/* GetPoolStatus: under the policy the job ran under (bus-pool.h). */
static int run_pool_status(Operation *o, SbxLifecycle *l) {
        o->pool.policy = sbx_policy_ref(l->policy);
        if (!(o->pool.ready = calloc(l->policy->n_warm_pools + 1, sizeof(unsigned))))
                return -ENOMEM;
        return sbx_lifecycle_pool_status(l, whose(o), o->pool.ready, &o->error);
}

/* Main thread --------------------------------------------------------------- */

/* FindSandboxes: whether s has the filter's state and labels. */
static bool found(const Operation *o, const SandboxEntry *e) {
        const FindArgs *f = &o->list.filter;

        if (o->verb != VERB_FIND)
                return true;
        return (!f->state || streq(f->state, sbx_state_to_string(e->state))) &&
                sbx_user_labels_match(e->labels, f->labels);
}

/* What the list found, into the objects. */
static int apply_list(Operation *o) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < o->list.n_list; i++)
                r = o->list.list[i]->unjudged ? registry_listed(&o->m->registry, o->list.list[i])
                                              : registry_put(&o->m->registry, o->list.list[i]);
        return r;
}

/* ListSandboxes: from the list itself, the objects updated after the reply (listing.h). */
static int reply_listing(Operation *o, sd_bus_message *reply) {
        return listing_reply(o->m, &o->list.list, &o->list.n_list, o->all ? NULL : &o->uid, reply);
}

/* FindSandboxes with its filter. */
static int reply_list(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssuso)");

        for (size_t i = 0; r >= 0 && i < o->list.n_list; i++) {
                const SbxSandbox *s = o->list.list[i];
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

        for (SbxSnapshotRow **s = o->list.snapshots; r >= 0 && s && *s; s++) {
                const char *id, *source = "";

                (void) sbx_name_unqualify((*s)->id, &id);
                if ((*s)->source_sandbox)
                        (void) sbx_name_unqualify((*s)->source_sandbox, &source);
                r = sd_bus_message_append(reply, "(sssut)", id, source, (*s)->image_id, (uint32_t) (*s)->owner_uid,
                                          (uint64_t) (*s)->created_us);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int reply_pool_status(Operation *o, sd_bus_message *reply) {
        return bus_pool_append_status(reply, o->pool.policy, o->pool.ready, o->uid, o->all, &o->error);
}

/* The rows ------------------------------------------------------------------ */

const VerbInfo verb_list = {
        .name = "list", .work = &verb_work_read, .family = &verb_family_list, .own_action = SBX_POLKIT_ACTION_INSPECT,
        .lists = true, .run = run_list, .reply = reply_listing,
};

/* ListSandboxes filtered (by labels, state) */
const VerbInfo verb_find = {
        .name = "find", .work = &verb_work_read, .family = &verb_family_list, .own_action = SBX_POLKIT_ACTION_INSPECT,
        .lists = true, .run = run_list, .apply = apply_list, .reply = reply_list,
};

const VerbInfo verb_list_snapshots = {
        .name = "list-snapshots", .work = &verb_work_read, .family = &verb_family_list,
        .own_action = SBX_POLKIT_ACTION_INSPECT, .lists = true, .run = run_list_snapshots,
        .reply = reply_list_snapshots,
};

/* what the warm pools hold (bus-pool.h) */
const VerbInfo verb_pool_status = {
        .name = "pool-status", .work = &verb_work_read, .family = &verb_family_pool,
        .own_action = SBX_POLKIT_ACTION_INSPECT, .lists = true, .run = run_pool_status, .reply = reply_pool_status,
};
