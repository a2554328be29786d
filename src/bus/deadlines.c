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

typedef enum DeadlineKind {
        DEADLINE_LOAD,                  /* the stored lifetimes */
        DEADLINE_FLUSH,                 /* activities written back */
        DEADLINE_EXPIRE,
        DEADLINE_IDLE_STOP,
        DEADLINE_IDLE_PAUSE,
} DeadlineKind;

static const char *const verb_names[] = {
        [DEADLINE_EXPIRE] = "expire", [DEADLINE_IDLE_STOP] = "idle-stop", [DEADLINE_IDLE_PAUSE] = "idle-pause",
};

typedef struct DeadlineJob {
        Manager *m;
        DeadlineKind kind;
        char *name;                     /* EXPIRE, IDLE_*: the sandbox */
        SbxLifetimeRow *rows;           /* LOAD: read; FLUSH: to write (name, last_activity_us) */
        size_t n_rows;
        int r;
        SbxError error;
} DeadlineJob;

static void job_free(DeadlineJob *j) {
        free(j->name);
        sbx_lifetime_rows_free(j->rows, j->n_rows);
        sbx_error_free(&j->error);
        free(j);
}

static int act(DeadlineJob *j, SbxLifecycle *l) {
        switch (j->kind) {
        case DEADLINE_LOAD:
                return sbx_store_list_lifetimes(l->store, &j->rows, &j->n_rows, &j->error);
        case DEADLINE_FLUSH:
                for (size_t i = 0; i < j->n_rows; i++)
                        (void) sbx_store_touch_lifetime(l->store, j->rows[i].name, j->rows[i].last_activity_us,
                                                        NULL);
                return 0;
        case DEADLINE_EXPIRE:
                return sbx_lifecycle_delete(l, j->name, &j->error);
        case DEADLINE_IDLE_STOP:
                return sbx_lifecycle_stop(l, j->name, SBX_STOP_TIMEOUT_DEFAULT, &j->error);
        case DEADLINE_IDLE_PAUSE:
                return sbx_lifecycle_pause(l, j->name, true, &j->error);
        }
        return -EINVAL;
}

static void job_run(void *job, void *ctx) {
        DeadlineJob *j = job;
        SbxLifecycle *l = ctx;

        if (!l) {
                j->r = sbx_error_set(&j->error, SBX_ERROR_IO, "The worker could not open the store or Docker client");
                return;
        }
        l->policy = manager_policy_ref(j->m);
        sbx_docker_set_deadline(l->docker, sbx_docker_stop_budget((unsigned) l->policy->docker_timeout,
                                                                  SBX_STOP_TIMEOUT_DEFAULT));
        j->r = act(j, l);
        l->policy = sbx_policy_unref((SbxPolicy *) l->policy);
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
                .uid = 0, .verb = verb_names[j->kind], .target = display,
                .owner = e && e->owner_valid ? owner : NULL,
                .outcome = j->r < 0 ? error.name : "ok", .reason = j->r < 0 ? error.message : NULL,
        });
}

static void tick(Manager *m);

static void settle(DeadlineJob *j) {
        Registry *reg = &j->m->registry;
        SandboxEntry *e = j->name ? registry_get(reg, j->name) : NULL;

        if (e)
                e->deadline_due = false;
        if (j->kind == DEADLINE_LOAD) {
                for (size_t i = 0; j->r >= 0 && i < j->n_rows; i++)
                        registry_set_lifetime(reg, &j->rows[i]);
                if (j->r < 0)
                        log_warning("Reading the sandboxes' lifetimes failed: %s", j->error.message ?: strerror(-j->r));
                j->m->deadlines_loaded = j->r >= 0;
                return;
        }
        if (j->kind == DEADLINE_FLUSH) {
                j->m->deadlines_flushing = false;
                return;
        }
        audit_deadline(j, e);
        if (j->r < 0 && !sbx_error_is(&j->error, SBX_ERROR_NO_SUCH_SANDBOX)) {
                log_warning("%s of %s failed (tried again): %s", verb_names[j->kind], j->name,
                            j->error.message ?: strerror(-j->r));
                return;
        }
        if (j->kind == DEADLINE_EXPIRE || j->r < 0)
                registry_drop(reg, j->name);
        else if (j->kind == DEADLINE_IDLE_STOP)
                registry_set_state(reg, j->name, SBX_STATE_STOPPED, "exited");
        else
                registry_set_state(reg, j->name, SBX_STATE_PAUSED, "paused");
}

static void job_done(void *job) {
        DeadlineJob *j = job;
        Manager *m = j->m;
        bool load = j->kind == DEADLINE_LOAD;

        settle(j);
        job_free(j);
        if (load)
                tick(m);        /* what is overdue, at once */
        manager_idle(m, 0);
}

static int submit(Manager *m, DeadlineKind kind, const char *name, SbxLifetimeRow *rows, size_t n_rows) {
        DeadlineJob *j = calloc(1, sizeof(DeadlineJob));
        int r;

        if (!j) {
                sbx_lifetime_rows_free(rows, n_rows);
                return -ENOMEM;
        }
        *j = (DeadlineJob) { .m = m, .kind = kind, .rows = rows, .n_rows = n_rows };
        if ((name && !(j->name = strdup(name))) || (r = manager_busy(m, 0)) < 0) {
                job_free(j);
                return -ENOMEM;
        }
        r = sbx_worker_pool_submit(m->pool, job_run, job_done, j);
        if (r < 0) {
                job_free(j);
                manager_idle(m, 0);
        }
        return r;
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
        size_t n_flush, max_flush;
} Scan;

static void look_at(SandboxEntry *e, void *userdata) {
        Scan *s = userdata;
        uint64_t idle_us = (uint64_t) e->idle_timeout_s * 1000000U;

        if (!e->has_lifetime || e->deadline_due)
                return;
        if (e->leases > 0 || e->active > 0 || exec_running(s->m, e))
                registry_touch(&s->m->registry, e->name, s->now);
        if (e->expire_at_us > 0 && s->now >= e->expire_at_us)
                e->deadline_due = submit(s->m, DEADLINE_EXPIRE, e->name, NULL, 0) >= 0;
        else if (idle_us > 0 && e->state == SBX_STATE_RUNNING && e->leases == 0 && e->active == 0 &&
                 !exec_running(s->m, e) && s->now >= e->last_activity_us + idle_us)
                e->deadline_due = submit(s->m, e->on_idle_pause ? DEADLINE_IDLE_PAUSE : DEADLINE_IDLE_STOP,
                                         e->name, NULL, 0) >= 0;
        if (e->last_activity_us > e->activity_stored_us && s->n_flush < s->max_flush &&
            (s->flush[s->n_flush].name = strdup(e->name))) {
                s->flush[s->n_flush++].last_activity_us = e->last_activity_us;
                e->activity_stored_us = e->last_activity_us;
        }
}

static void count(SandboxEntry *e, void *userdata) {
        (*(size_t *) userdata)++;
}

static void tick(Manager *m) {
        Scan s = { .m = m, .now = sbx_now_realtime_us() };
        bool pending;

        /* Acted on once the store and Docker agree (the first reconciliation applied). */
        if (!m->deadlines_loaded || m->reconcile_mark == 0 || m->terminating)
                return;
        registry_foreach(&m->registry, count, &s.max_flush);
        if (!m->deadlines_flushing && s.max_flush > 0)
                s.flush = calloc(s.max_flush, sizeof(SbxLifetimeRow));
        if (!s.flush)
                s.max_flush = 0;
        registry_foreach(&m->registry, look_at, &s);
        if (s.n_flush > 0)
                m->deadlines_flushing = submit(m, DEADLINE_FLUSH, NULL, s.flush, s.n_flush) >= 0;
        else
                free(s.flush);
        /* The last deadline gone: the idle exit counts from now. */
        pending = registry_deadlines_pending(&m->registry);
        if (m->deadlines_held && !pending && m->n_busy == 0)
                (void) manager_arm_idle(m);
        m->deadlines_held = pending;
}

static int on_tick(sd_event_source *source, uint64_t usec, void *userdata) {
        Manager *m = userdata;

        tick(m);
        (void) sd_event_source_set_time_relative(source, (uint64_t) DEADLINES_TICK_S * 1000000U);
        return 0;
}

void deadlines_start(Manager *m) {
        int r;

        if (m->deadline_timer)
                return;
        r = sd_event_add_time_relative(m->event, &m->deadline_timer, CLOCK_MONOTONIC,
                                       (uint64_t) DEADLINES_TICK_S * 1000000U, 0, on_tick, m);
        if (r >= 0)
                r = sd_event_source_set_enabled(m->deadline_timer, SD_EVENT_ON);
        if (r < 0 || submit(m, DEADLINE_LOAD, NULL, NULL, 0) < 0)
                log_warning_errno(r, "Cannot follow the sandboxes' deadlines: %m");
}

void deadlines_stop(Manager *m) {
        m->deadline_timer = sd_event_source_disable_unref(m->deadline_timer);
}
