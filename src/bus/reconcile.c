/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "audit.h"
#include "exec.h"
#include "naming.h"
#include "log.h"
#include "reconcile.h"
#include "time-util.h"
#include "work.h"

typedef struct ReconcileJob {
        Manager *m;
        uint64_t seq;                   /* the registry's when the job was made */
        int r;
        SbxError error;
        SbxReconcileStats stats;
        SbxSandbox **list;
        size_t n;
        char *api_version;
} ReconcileJob;

/* Docker's calls each with its own limit (no budget). */
static void reconcile_run(void *job, SbxLifecycle *l) {
        ReconcileJob *j = job;

        j->r = sbx_lifecycle_reconcile(l, &j->stats, &j->error);
        if (j->r >= 0)
                j->r = sbx_lifecycle_list_judged(l, SBX_STORE_ANY_OWNER, &j->list, &j->n, &j->error);
        if (j->r >= 0 && sbx_docker_api_version(l->docker))
                j->api_version = strdup(sbx_docker_api_version(l->docker));
}

/* After the first reconciliation: the execs a dead instance left running are killed,
 * on a worker, while the daemon serves (again after a failure, at the next one). */
typedef struct SweepJob {
        Manager *m;
        int r;
} SweepJob;

static void sweep_run(void *job, SbxLifecycle *l) {
        SweepJob *j = job;
        SbxError e = SBX_ERROR_NULL;

        j->r = sbx_lifecycle_exec_sweep(l, NULL, &e);
        if (j->r < 0)
                log_warning("Killing the execs an earlier instance left running failed (again at the next "
                            "reconciliation): %s", e.message ?: strerror(-j->r));
        sbx_error_free(&e);
}

static void sweep_done(void *job) {
        SweepJob *j = job;

        if (j->r < 0)
                j->m->execs_swept = false;
        else if (j->m->after_sweep)
                j->m->after_sweep(j->m);
        free(j);
}

static void sweep_refused(void *job, int r, const SbxError *e) {
        SweepJob *j = job;

        j->m->execs_swept = false;              /* again after the next reconciliation */
        free(j);
}

static const WorkKind sweep_work = {
        .name = "exec-sweep", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .run = sweep_run, .done = sweep_done, .refused = sweep_refused,
};

static void sweep_execs(Manager *m) {
        SweepJob *j;

        if (m->execs_swept || !(j = calloc(1, sizeof(SweepJob))))
                return;
        j->m = m;
        m->execs_swept = true;
        (void) work_submit(m, &sweep_work, 0, j);
}

typedef struct Stale {
        uint64_t mark;                  /* this reconciliation's */
        char **names;
        size_t n;
} Stale;

static void collect_stale(SandboxEntry *e, void *userdata) {
        Stale *st = userdata;
        char *copy;

        if (e->listed != st->mark && (copy = strdup(e->name)))
                st->names[st->n++] = copy;
}

static void count_entry(SandboxEntry *e, void *userdata) {
        (*(size_t *) userdata)++;
}

static void reconcile_free(ReconcileJob *j) {
        sbx_sandbox_list_free(j->list, j->n);
        sbx_error_free(&j->error);
        free(j->api_version);
        free(j);
}

static void reconcile_done(void *job) {
        ReconcileJob *j = job;
        Manager *m = j->m;
        size_t n_entries = 0;

        m->reconciling = false;
        /* An interrupted create Docker may still carry out: looked at again later. */
        if (j->r >= 0 && j->stats.in_flight > 0)
                manager_reconcile_later(m);
        if (j->r < 0) {
                log_warning("Reconciling the store with Docker failed (again in %u s): %s", SBX_RECONCILE_RETRY_S,
                            j->error.message ?: strerror(-j->r));
                manager_reconcile_later(m);
        }
        else if (j->seq != m->registry.seq && m->reconcile_again < 3)
                /* Objects came or went meanwhile: this list may be older than they are. */
                m->reconcile_again++;
        else {
                Stale st = { .mark = ++m->reconcile_mark };

                for (size_t i = 0; i < j->n; i++) {
                        const SbxSandbox *s = j->list[i];
                        SandboxEntry *e;

                        (void) registry_put(&m->registry, s);
                        if ((e = registry_get(&m->registry, s->name)))
                                e->listed = st.mark;
                        /* Started while nobody followed Docker's events: its egress is
                         * read back, and loaded again if it is not in force. */
                        if (s->has_row && sbx_state_is_up(s->state))
                                manager_rearm_egress(m, s->name, s->container_id);
                }
                /* Gone while nobody followed Docker's events. */
                registry_foreach(&m->registry, count_entry, &n_entries);
                st.names = calloc(n_entries + 1, sizeof(char *));
                if (st.names)
                        registry_foreach(&m->registry, collect_stale, &st);
                for (size_t i = 0; i < st.n; i++)
                        registry_drop(&m->registry, st.names[i]);
                strv_free(st.names);
                if (j->api_version) {
                        free(m->docker_api_version);
                        m->docker_api_version = TAKE_PTR(j->api_version);
                }
                m->reconcile_again = 0;
                /* Every container looked at: lists judge each from now on. */
                atomic_store(&m->lists_judged, true);
                sweep_execs(m);
                log_debug("Reconciled: %zu sandboxes; %u creates settled, %u recorded again, %u removed, %u rows "
                          "dropped, %u repaired", j->n, j->stats.settled, j->stats.adopted, j->stats.removed,
                          j->stats.dropped, j->stats.repaired);
        }
        reconcile_free(j);
        if (m->reconcile_again > 0)
                manager_reconcile(m);
}

static void reconcile_refused(void *job, int r, const SbxError *e) {
        ReconcileJob *j = job;

        j->m->reconciling = false;
        log_warning("No worker for the reconciliation now; again on Docker's next connection");
        reconcile_free(j);
}

static const WorkKind reconcile_work = {
        .name = "reconcile", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .run = reconcile_run, .done = reconcile_done, .refused = reconcile_refused,
};

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_reconcile(userdata);
        return 0;
}

void manager_reconcile_later(Manager *m) {
        int r;

        if (m->retry_source) {
                if (sd_event_source_get_enabled(m->retry_source, NULL) > 0)
                        return;         /* already on its way */
                r = sd_event_source_set_time_relative(m->retry_source, SBX_RECONCILE_RETRY_S * 1000000ULL);
                if (r >= 0)
                        r = sd_event_source_set_enabled(m->retry_source, SD_EVENT_ONESHOT);
        } else
                r = sd_event_add_time_relative(m->event, &m->retry_source, CLOCK_MONOTONIC,
                                               SBX_RECONCILE_RETRY_S * 1000000ULL, 0, on_retry, m);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule a reconciliation: %m");
}

void manager_reconcile(Manager *m) {
        ReconcileJob *j;

        if (m->reconciling) {
                m->reconcile_again = MAX(m->reconcile_again, 1U);
                return;
        }
        j = calloc(1, sizeof(ReconcileJob));
        if (!j) {
                log_error("Out of memory: no reconciliation");
                return;
        }
        *j = (ReconcileJob) { .m = m, .seq = m->registry.seq };
        m->reconciling = true;
        if (m->reconcile_again > 0)
                m->reconcile_again--;
        (void) work_submit(m, &reconcile_work, 0, j);
}

static int on_first(sd_event_source *s, uint64_t usec, void *userdata) {
        manager_reconcile(userdata);
        return 0;
}

void manager_reconcile_after_calls(Manager *m) {
        int r;

        if (m->reconcile_mark > 0 || m->n_busy == 0 || m->reconciling) {
                manager_reconcile(m);
                return;
        }
        if (m->first_source)
                r = sd_event_source_get_enabled(m->first_source, NULL) > 0 ? 0 :
                    sd_event_source_set_time_relative(m->first_source, SBX_FIRST_RECONCILE_WAIT_MS * 1000ULL);
        else
                r = sd_event_add_time_relative(m->event, &m->first_source, CLOCK_MONOTONIC,
                                               SBX_FIRST_RECONCILE_WAIT_MS * 1000ULL, 0, on_first, m);
        if (r >= 0 && (r = sd_event_source_set_enabled(m->first_source, SD_EVENT_ONESHOT)) >= 0)
                return;
        log_warning_errno(r, "Cannot wait for the calls in flight: reconciling now: %m");
        manager_reconcile(m);
}

typedef struct ForgetJob {
        Manager *m;
        char *name;
        char *container_id;
} ForgetJob;

static void rearm_run(void *job, SbxLifecycle *l) {
        ForgetJob *j = job;
        SbxError e = SBX_ERROR_NULL;
        const char *shown;
        int r;

        (void) sbx_name_unqualify(j->name, &shown);
        r = sbx_lifecycle_rearm_egress(l, j->name, j->container_id, &e);
        if (r != 0)
                audit_record(&(AuditRecord) { .uid = 0, .verb = "rearm-egress", .target = shown,
                                              .outcome = r > 0 ? "ok" : "failed",
                                              .reason = r > 0 ? "started outside the service: egress loaded again"
                                                              : e.message ?: strerror(-r) });
        sbx_error_free(&e);
}

static void forget_run(void *job, SbxLifecycle *l) {
        ForgetJob *j = job;
        SbxError e = SBX_ERROR_NULL;

        if (sbx_lifecycle_forget(l, j->name, j->container_id, &e) < 0)
                log_warning("'%s': the row of removed container %s stays until the next start-up: %s", j->name,
                            j->container_id, e.message ?: "out of memory");
        sbx_error_free(&e);
}

static void forget_done(void *job) {
        ForgetJob *j = job;

        free(j->name);
        free(j->container_id);
        free(j);
}

static void forget_refused(void *job, int r, const SbxError *e) {
        forget_done(job);               /* the row goes at the next start-up's reconciliation;
                                         * a start's egress at the next event or start */
}

static unsigned named_budget(const void *job, const SbxPolicy *p) {
        return (unsigned) p->docker_timeout;
}

static const WorkKind forget_work = {
        .name = "forget", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .run = forget_run, .done = forget_done, .refused = forget_refused,
};

static const WorkKind rearm_work = {
        .name = "rearm-egress", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .budget = named_budget, .run = rearm_run, .done = forget_done, .refused = forget_refused,
};

static void submit_named(Manager *m, const char *name, const char *container_id, const WorkKind *kind) {
        ForgetJob *j = calloc(1, sizeof(ForgetJob));

        if (!j || !(j->name = strdup(name)) || !(j->container_id = strdup(container_id))) {
                if (j)
                        forget_done(j);
                return;
        }
        j->m = m;
        (void) work_submit(m, kind, 0, j);
}

void manager_forget(Manager *m, const char *name, const char *container_id) {
        submit_named(m, name, container_id, &forget_work);
}

void manager_rearm_egress(Manager *m, const char *name, const char *container_id) {
        submit_named(m, name, container_id, &rearm_work);
}

/* A change behind the service's back (docker update, rename): the object's
 * properties from Docker's answer now, announced if they differ. */
typedef struct DescribeJob {
        Manager *m;
        char *name;
        char *container_id;             /* the event's */
        SbxObservationTicket ticket;    /* taken before Docker was asked */
        SbxSandbox *sandbox;
} DescribeJob;

static unsigned describe_budget(const void *job, const SbxPolicy *p) {
        return (unsigned) p->docker_timeout;
}

static void describe_run(void *job, SbxLifecycle *l) {
        DescribeJob *j = job;
        SbxError e = SBX_ERROR_NULL;

        j->ticket = sbx_observation_cache_ticket(l->observations);
        if (sbx_lifecycle_inspect(l, j->name, &j->sandbox, &e) < 0 && !sbx_error_is(&e, SBX_ERROR_NO_SUCH_SANDBOX))
                log_debug("'%s' changed behind the service's back; its properties stay until the next read: %s",
                          j->name, e.message ?: "out of memory");
        sbx_error_free(&e);
}

static void describe_free(DescribeJob *j) {
        sbx_sandbox_free(j->sandbox);
        free(j->name);
        free(j->container_id);
        free(j);
}

static void describe_done(void *job) {
        DescribeJob *j = job;
        SandboxEntry *e = registry_get(&j->m->registry, j->name);

        if (e)
                e->relooking = false;
        /* Only about the container the object still shows, and only if nothing
         * happened to it since Docker was asked (a stop, another event): what that
         * did to the object is newer than this answer. */
        if (j->sandbox && e && streq_ptr(e->container_id, j->container_id) &&
            streq_ptr(j->sandbox->container_id, j->container_id) &&
            sbx_observation_cache_quiet_since(j->m->observations, j->container_id, j->ticket))
                (void) registry_put(&j->m->registry, j->sandbox);
        describe_free(j);
}

static void describe_refused(void *job, int r, const SbxError *e) {
        DescribeJob *j = job;
        SandboxEntry *entry = registry_get(&j->m->registry, j->name);

        if (entry)
                entry->relooking = false;
        describe_free(j);               /* its properties stay until the next read */
}

static const WorkKind describe_work = {
        .name = "redescribe", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_SERVICE,
        .budget = describe_budget, .run = describe_run, .done = describe_done, .refused = describe_refused,
};

/* Returns whether the job is on its way. */
static bool redescribe(Manager *m, const char *name, const char *container_id) {
        DescribeJob *j = calloc(1, sizeof(DescribeJob));

        if (!j || !(j->name = strdup(name)) || !(j->container_id = strdup(container_id))) {
                if (j)
                        describe_free(j);
                return false;
        }
        j->m = m;
        return work_submit(m, &describe_work, 0, j) >= 0;
}

void manager_redescribe(Manager *m, const char *name, const char *container_id) {
        (void) redescribe(m, name, container_id);
}

void manager_relook(Manager *m, SandboxEntry *e) {
        if (e->relooking || !e->container_id || !e->container_id[0] ||
            sbx_now_monotonic_us() < e->looked_us + manager_observation_max_age_us(m))
                return;
        e->relooking = redescribe(m, e->name, e->container_id);
}
