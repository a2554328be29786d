/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <stdlib.h>

#include "bus-pool.h"
#include "log.h"
#include "work.h"

typedef struct RefillJob {
        Manager *m;
        int r;
        SbxError error;
        SbxPoolStats stats;
} RefillJob;

static void refill_run(void *job, SbxLifecycle *l) {
        RefillJob *j = job;

        j->r = sbx_lifecycle_pool_refill(l, &j->stats, &j->error);
}

static void refill_finish(Manager *m) {
        m->pool_refilling = false;
        if (m->pool_again) {
                m->pool_again = false;
                bus_pool_refill(m);
        }
}

static void refill_done(void *job) {
        RefillJob *j = job;

        if (j->r < 0)
                log_warning("Warm pools not refilled (again at the next refill): %s",
                            j->error.message ?: strerror(-j->r));
        else if (j->stats.made > 0 || j->stats.removed > 0 || j->stats.failed > 0)
                log_info("Warm pools: %u kept, %u made, %u removed, %u could not be made", j->stats.kept,
                         j->stats.made, j->stats.removed, j->stats.failed);
        refill_finish(j->m);
        sbx_error_free(&j->error);
        free(j);
}

static void refill_refused(void *job, int r, const SbxError *e) {
        RefillJob *j = job;

        j->m->pool_again = false;
        refill_finish(j->m);
        free(j);
}

static const WorkKind refill_work = {
        .name = "pool-refill", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .cancellable = true, .run = refill_run, .done = refill_done, .refused = refill_refused,
};

void bus_pool_refill(Manager *m) {
        RefillJob *j;

        if (m->terminating || m->releasing)
                return;
        if (m->pool_refilling) {
                m->pool_again = true;
                return;
        }
        if (!(j = calloc(1, sizeof(RefillJob))))
                return;
        j->m = m;
        m->pool_refilling = true;
        (void) work_submit(m, &refill_work, 0, j);
}

/* Only while the policy has pools (the first refill at start-up also removes the
 * members of pools a changed policy no longer has). */
static int on_tick(sd_event_source *source, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        if (m->policy->n_warm_pools > 0)
                bus_pool_refill(m);
        (void) sd_event_source_set_time_relative(source, m->pool_tick_usec);
        return 0;
}

void bus_pool_start(Manager *m) {
        int r;

        if (m->pool_timer)
                return;
        if (m->pool_tick_usec == 0)
                m->pool_tick_usec = (uint64_t) POOL_TICK_S * 1000000U;
        r = sd_event_add_time_relative(m->event, &m->pool_timer, CLOCK_MONOTONIC, m->pool_tick_usec, 0, on_tick, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->pool_timer, SD_EVENT_ON);
        if (r < 0) {
                log_warning_errno(r, "Cannot refill the warm pools: %m");
                return;
        }
        bus_pool_refill(m);
}

void bus_pool_stop(Manager *m) {
        m->pool_timer = sd_event_source_disable_unref(m->pool_timer);
}

static bool pool_shown(const SbxPolicyPool *pool, const SbxOwner *caller) {
        if (caller->uid == 0)
                return true;
        return pool->user ? streq_ptr(pool->user, caller->name) : pool->uid == caller->uid;
}

static int append_pool(sd_bus_message *reply, const SbxPolicyPool *pool) {
        char uid[32];

        snprintf(uid, sizeof uid, "%u", (unsigned) pool->uid);
        return sd_bus_message_append(reply, "a{sv}", 5, "user", "s", pool->user ?: uid, "spec", "s", pool->spec_json,
                                     "name_prefix", "s", pool->name_prefix, "egress", "s", pool->egress_json,
                                     "size", "t", (uint64_t) pool->size);
}

int bus_pool_append_policy(sd_bus_message *reply, const SbxPolicy *p, const SbxOwner *caller) {
        int r = sd_bus_message_open_container(reply, 'e', "sv");

        if (r >= 0)
                r = sd_bus_message_append(reply, "s", "warm_pools");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'v', "aa{sv}");
        if (r >= 0)
                r = sd_bus_message_open_container(reply, 'a', "a{sv}");
        for (size_t i = 0; r >= 0 && i < p->n_warm_pools; i++)
                if (pool_shown(&p->warm_pools[i], caller))
                        r = append_pool(reply, &p->warm_pools[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_message_append(reply, "{sv}", "max_pooled", "t", (uint64_t) p->max_pooled);
}
