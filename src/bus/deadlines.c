/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit.h"
#include "bus-error.h"
#include "bus-exec-internal.h"
#include "deadlines.h"
#include "log.h"
#include "naming.h"
#include "time-util.h"
#include "work.h"

static const char *const verb_names[] = {
        [SBX_DEADLINE_EXPIRE] = "expire", [SBX_DEADLINE_IDLE_STOP] = "idle-stop",
        [SBX_DEADLINE_IDLE_PAUSE] = "idle-pause",
};

/* LOAD: the stored lifetimes; FLUSH: activities (and re-based times) written back. */
typedef struct LifetimesJob {
        Manager *m;
        bool load;
        SbxLifetimeRow *rows;
        bool *rebased;                  /* FLUSH: the row's times moved with a wall-clock step */
        size_t n_rows;
        int r;
        SbxError error;
} LifetimesJob;

/* An expiry or idle stop/pause of the sandbox that fell due. */
typedef struct DeadlineJob {
        Manager *m;
        SbxDeadlineAction action;
        char *name;
        char *container_id;             /* the sandbox that fell due */
        uint64_t created_us;
        UseWatch *watch;                /* a use since the tick (idle ones) */
        int r;                          /* 1: acted; 0: nothing (not that sandbox, no longer due) */
        SbxError error;
} DeadlineJob;

static void tick(Manager *m);

static void lifetimes_free(LifetimesJob *j) {
        sbx_lifetime_rows_free(j->rows, j->n_rows);
        free(j->rebased);
        sbx_error_free(&j->error);
        free(j);
}

static void lifetimes_run(void *job, SbxLifecycle *l) {
        LifetimesJob *j = job;

        if (j->load) {
                j->r = sbx_store_list_lifetimes(l->store, &j->rows, &j->n_rows, &j->error);
                return;
        }
        for (size_t i = 0; i < j->n_rows; i++) {
                const SbxLifetimeRow *row = &j->rows[i];

                if (j->rebased[i])
                        (void) sbx_store_rebase_lifetime(l->store, row->name, row->last_activity_us,
                                                         row->expire_at_us, NULL);
                else
                        (void) sbx_store_touch_lifetime(l->store, row->name, row->last_activity_us, NULL);
        }
}

static void lifetimes_settle(LifetimesJob *j) {
        Manager *m = j->m;

        if (!j->load) {
                m->deadlines_flushing = false;
                return;
        }
        for (size_t i = 0; j->r >= 0 && i < j->n_rows; i++)
                registry_set_lifetime(&m->registry, &j->rows[i]);
        if (j->r < 0)
                log_warning("Reading the sandboxes' lifetimes failed: %s", j->error.message ?: strerror(-j->r));
        m->deadlines_loaded = j->r >= 0;
}

static void lifetimes_done(void *job) {
        LifetimesJob *j = job;
        Manager *m = j->m;
        bool load = j->load;

        lifetimes_settle(j);
        lifetimes_free(j);
        if (load)
                tick(m);        /* what is overdue, at once */
}

static void lifetimes_refused(void *job, int r, const SbxError *e) {
        LifetimesJob *j = job;

        j->r = r < 0 ? r : -EIO;
        if (e && e->message)
                (void) sbx_error_set(&j->error, e->kind, "%s", e->message);
        lifetimes_settle(j);
        lifetimes_free(j);
}

static const WorkKind lifetimes_work = {
        .name = "lifetimes", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .run = lifetimes_run, .done = lifetimes_done, .refused = lifetimes_refused,
};

/* Deadlines ---------------------------------------------------------------- */

static void deadline_free(DeadlineJob *j) {
        free(j->name);
        free(j->container_id);
        use_watch_unref(j->watch);
        sbx_error_free(&j->error);
        free(j);
}

/* On the worker, under the name's lock: no use began since the tick. */
static bool still_idle(void *userdata) {
        const DeadlineJob *j = userdata;

        return !j->watch || !j->watch->used;
}

static unsigned deadline_budget(const void *job, const SbxPolicy *p) {
        return sbx_docker_stop_budget((unsigned) p->docker_timeout, SBX_STOP_TIMEOUT_DEFAULT);
}

static void deadline_run(void *job, SbxLifecycle *l) {
        DeadlineJob *j = job;

        j->r = sbx_lifecycle_deadline(l, &(SbxDeadline) {
                .name = j->name, .container_id = j->container_id, .created_us = j->created_us,
                .action = j->action, .stop_timeout_s = SBX_STOP_TIMEOUT_DEFAULT,
                .still_due = j->action == SBX_DEADLINE_EXPIRE ? NULL : still_idle, .userdata = j,
        }, &j->error);
}

static void audit_deadline(const DeadlineJob *j, const SandboxEntry *e) {
        char owner[32];
        const char *display;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        (void) sbx_name_unqualify(j->name, &display);
        if (e && e->owner_valid)
                snprintf(owner, sizeof owner, "%u", (unsigned) e->owner);
        if (j->r < 0)
                sbx_bus_error_from(&error, &j->error, j->r);
        audit_record(&(AuditRecord) {
                .uid = 0, .verb = verb_names[j->action], .target = display,
                .owner = e && e->owner_valid ? owner : NULL,
                .outcome = j->r < 0 ? error.name : "ok", .reason = j->r < 0 ? error.message : NULL,
        });
}

/* The entry of the sandbox that fell due, if the name still shows it. */
static SandboxEntry *entry_of(const DeadlineJob *j) {
        SandboxEntry *e = registry_get(&j->m->registry, j->name);

        return e && streq_ptr(e->container_id, j->container_id) ? e : NULL;
}

/* The entry this job was submitted for is free for the next tick's look. */
static void release_entry(DeadlineJob *j) {
        SandboxEntry *e = registry_get(&j->m->registry, j->name);

        if (e && e->watch == j->watch) {
                e->deadline_due = false;
                e->watch = use_watch_unref(e->watch);
        }
}

/* What it did to the registry: the same effect as the stop, pause or delete calls'. */
static void deadline_settle(DeadlineJob *j) {
        Registry *reg = &j->m->registry;
        SandboxEntry *e = entry_of(j);

        release_entry(j);
        if (j->r == 0) {
                log_debug("%s of %s: not done (another sandbox of the name, or in use again)", verb_names[j->action],
                          j->name);
                return;
        }
        audit_deadline(j, e);
        if (j->r < 0 && !sbx_error_is(&j->error, SBX_ERROR_NO_SUCH_SANDBOX)) {
                log_warning("%s of %s failed (tried again): %s", verb_names[j->action], j->name,
                            j->error.message ?: strerror(-j->r));
                return;
        }
        if (!e)
                return;
        if (j->action == SBX_DEADLINE_EXPIRE || j->r < 0)
                registry_drop(reg, j->name);
        else if (j->action == SBX_DEADLINE_IDLE_STOP)
                registry_stopped(reg, j->name);
        else
                registry_paused(reg, j->name);
}

static void deadline_done(void *job) {
        deadline_settle(job);
        deadline_free(job);
}

static void deadline_refused(void *job, int r, const SbxError *e) {
        release_entry(job);                             /* again at the next tick */
        deadline_free(job);
}

static const WorkKind deadline_work = {
        .name = "deadline", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .budget = deadline_budget, .run = deadline_run, .done = deadline_done, .refused = deadline_refused,
};

/* The deadline of e, on a worker; e->deadline_due until it is settled. */
static void submit_deadline(Manager *m, SandboxEntry *e, SbxDeadlineAction action) {
        DeadlineJob *j = calloc(1, sizeof(DeadlineJob));

        if (!j || !(j->name = strdup(e->name)) || !(j->container_id = strdup(e->container_id ?: "")) ||
            !(j->watch = use_watch_new())) {
                if (j)
                        deadline_free(j);
                return;
        }
        j->m = m;
        j->action = action;
        j->created_us = e->created_us;
        use_watch_unref(e->watch);
        e->watch = use_watch_ref(j->watch);
        e->deadline_due = true;
        (void) work_submit(m, &deadline_work, 0, j);
}

/* A running exec in the sandbox is activity when someone is there: a captured or
 * streamed one's caller, an Attach session. A detached process nobody is attached to
 * is activity only with idle_counts_processes (docs/lifecycle.md, "Idle stop and
 * expiry"): one that writes nothing and is read by nobody does not hold the sandbox
 * forever; reading its output is a use (bus-detached.c). */
static bool exec_running(Manager *m, const SandboxEntry *e) {
        FOREACH_EXEC(x, m)
                if (x->running && streq_ptr(x->name, e->name) &&
                    (!x->detached || x->n_attached > 0 || e->idle_counts_processes))
                        return true;
        return false;
}

typedef struct Scan {
        Manager *m;
        uint64_t now;
        SbxLifetimeRow *flush;
        bool *rebased;
        size_t n_flush, max_flush;
} Scan;

static void look_at(SandboxEntry *e, void *userdata) {
        Scan *s = userdata;
        uint64_t idle_us = (uint64_t) e->idle_timeout_s * 1000000U;
        bool in_use;

        if (!e->has_lifetime || e->deadline_due)
                return;
        in_use = e->leases > 0 || e->active > 0 || exec_running(s->m, e);
        if (in_use)
                registry_touch(&s->m->registry, e->name, s->now);
        if (e->expire_at_us > 0 && s->now >= e->expire_at_us)
                submit_deadline(s->m, e, SBX_DEADLINE_EXPIRE);
        else if (idle_us > 0 && e->state == SBX_STATE_RUNNING && !in_use && s->now >= e->last_activity_us + idle_us)
                submit_deadline(s->m, e, e->on_idle_pause ? SBX_DEADLINE_IDLE_PAUSE : SBX_DEADLINE_IDLE_STOP);
        if ((e->last_activity_us > e->activity_stored_us || e->rebased) && s->n_flush < s->max_flush &&
            (s->flush[s->n_flush].name = strdup(e->name))) {
                s->flush[s->n_flush].last_activity_us = e->last_activity_us;
                s->flush[s->n_flush].expire_at_us = e->expire_at_us;
                s->rebased[s->n_flush++] = e->rebased;
                e->activity_stored_us = e->last_activity_us;
                e->rebased = false;
        }
}

static void count(SandboxEntry *e, void *userdata) {
        (*(size_t *) userdata)++;
}

static void flush(Manager *m, Scan *s) {
        LifetimesJob *j;

        if (s->n_flush == 0 || !(j = calloc(1, sizeof(LifetimesJob)))) {
                sbx_lifetime_rows_free(s->flush, s->n_flush);
                free(s->rebased);
                return;
        }
        *j = (LifetimesJob) { .m = m, .rows = s->flush, .rebased = s->rebased, .n_rows = s->n_flush };
        m->deadlines_flushing = true;
        (void) work_submit(m, &lifetimes_work, 0, j);
}

static void tick(Manager *m) {
        Scan s = { .m = m, .now = manager_now_us(m) };
        bool pending;

        /* Acted on once the store and Docker agree (the first reconciliation applied). */
        if (!m->deadlines_loaded || m->reconcile_mark == 0 || m->terminating)
                return;
        registry_foreach(&m->registry, count, &s.max_flush);
        if (!m->deadlines_flushing && s.max_flush > 0) {
                s.flush = calloc(s.max_flush, sizeof(SbxLifetimeRow));
                s.rebased = calloc(s.max_flush, sizeof(bool));
        }
        if (!s.flush || !s.rebased)
                s.max_flush = 0;
        registry_foreach(&m->registry, look_at, &s);
        flush(m, &s);
        /* The last deadline gone: the idle exit counts from now. */
        pending = registry_deadlines_pending(&m->registry);
        if (m->deadlines_held && !pending && m->n_busy == 0)
                (void) manager_arm_idle(m);
        m->deadlines_held = pending;
}

static int on_tick(sd_event_source *source, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        tick(m);
        (void) sd_event_source_set_time_relative(source, m->deadline_tick_usec);
        return 0;
}

void deadlines_start(Manager *m) {
        LifetimesJob *j;
        int r;

        if (m->deadline_timer)
                return;
        if (m->deadline_tick_usec == 0)
                m->deadline_tick_usec = (uint64_t) DEADLINES_TICK_S * 1000000U;
        (void) manager_now_us(m);       /* the service's clock begins */
        r = sd_event_add_time_relative(m->event, &m->deadline_timer, CLOCK_MONOTONIC, m->deadline_tick_usec, 0,
                                       on_tick, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->deadline_timer, SD_EVENT_ON);
        if (r >= 0 && !(j = calloc(1, sizeof(LifetimesJob))))
                r = -ENOMEM;
        if (r < 0) {
                log_warning_errno(r, "Cannot follow the sandboxes' deadlines: %m");
                return;
        }
        *j = (LifetimesJob) { .m = m, .load = true };
        (void) work_submit(m, &lifetimes_work, 0, j);
}

void deadlines_stop(Manager *m) {
        m->deadline_timer = sd_event_source_disable_unref(m->deadline_timer);
}
