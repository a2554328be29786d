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

static void reconcile_run(void *job, void *ctx) {
        ReconcileJob *j = job;
        SbxLifecycle *l = ctx;

        if (!l) {
                j->r = sbx_error_set(&j->error, SBX_ERROR_IO, "the worker could not open the store or Docker client");
                return;
        }
        l->policy = manager_policy_ref(j->m);
        sbx_docker_set_deadline(l->docker, 0);          /* each call its own limit */
        j->r = sbx_lifecycle_reconcile(l, &j->stats, &j->error);
        if (j->r >= 0)
                j->r = sbx_lifecycle_list(l, SBX_STORE_ANY_OWNER, &j->list, &j->n, &j->error);
        if (j->r >= 0 && sbx_docker_api_version(l->docker))
                j->api_version = strdup(sbx_docker_api_version(l->docker));
        l->policy = sbx_policy_unref((SbxPolicy *) l->policy);
}

/* After the first reconciliation: the execs a dead instance left running are killed,
 * on a worker, while the daemon serves (again after a failure, at the next one). */
typedef struct SweepJob {
        Manager *m;
        int r;
} SweepJob;

static void sweep_run(void *job, void *ctx) {
        SweepJob *j = job;
        SbxLifecycle *l = ctx;
        SbxError e = SBX_ERROR_NULL;

        if (!l) {
                j->r = -EIO;
                return;
        }
        sbx_docker_set_deadline(l->docker, 0);
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
        manager_idle(j->m, 0);
        free(j);
}

static void sweep_execs(Manager *m) {
        SweepJob *j;

        if (m->execs_swept || !(j = calloc(1, sizeof(SweepJob))))
                return;
        if (manager_busy(m, 0) < 0) {
                free(j);
                return;
        }
        j->m = m;
        m->execs_swept = true;
        if (sbx_worker_pool_submit(m->pool, sweep_run, sweep_done, j) < 0) {
                m->execs_swept = false;
                manager_idle(m, 0);
                free(j);
        }
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
                sweep_execs(m);
                log_debug("Reconciled: %zu sandboxes; %u creates settled, %u recorded again, %u removed, %u rows "
                          "dropped, %u repaired", j->n, j->stats.settled, j->stats.adopted, j->stats.removed,
                          j->stats.dropped, j->stats.repaired);
        }
        sbx_sandbox_list_free(j->list, j->n);
        sbx_error_free(&j->error);
        free(j->api_version);
        free(j);
        manager_idle(m, 0);
        if (m->reconcile_again > 0)
                manager_reconcile(m);
}

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
        if (!j || manager_busy(m, 0) < 0) {
                free(j);
                log_error("Out of memory: no reconciliation");
                return;
        }
        *j = (ReconcileJob) { .m = m, .seq = m->registry.seq };
        if (sbx_worker_pool_submit(m->pool, reconcile_run, reconcile_done, j) < 0) {
                free(j);
                manager_idle(m, 0);
                log_warning("No worker for the reconciliation now; again on Docker's next connection");
                return;
        }
        m->reconciling = true;
        if (m->reconcile_again > 0)
                m->reconcile_again--;
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

static void rearm_run(void *job, void *ctx) {
        ForgetJob *j = job;
        SbxLifecycle *l = ctx;
        SbxError e = SBX_ERROR_NULL;
        const char *shown;
        int r;

        if (!l)
                return;
        (void) sbx_name_unqualify(j->name, &shown);
        l->policy = manager_policy_ref(j->m);
        sbx_docker_set_deadline(l->docker, (unsigned) l->policy->docker_timeout);
        r = sbx_lifecycle_rearm_egress(l, j->name, j->container_id, &e);
        if (r != 0)
                audit_record(&(AuditRecord) { .uid = 0, .verb = "rearm-egress", .target = shown,
                                              .outcome = r > 0 ? "ok" : "failed",
                                              .reason = r > 0 ? "started outside the service: egress loaded again"
                                                              : e.message ?: strerror(-r) });
        sbx_error_free(&e);
        l->policy = sbx_policy_unref((SbxPolicy *) l->policy);
}

static void forget_run(void *job, void *ctx) {
        ForgetJob *j = job;
        SbxLifecycle *l = ctx;
        SbxError e = SBX_ERROR_NULL;

        if (l && sbx_lifecycle_forget(l, j->name, j->container_id, &e) < 0)
                log_warning("'%s': the row of removed container %s stays until the next start-up: %s", j->name,
                            j->container_id, e.message ?: "out of memory");
        sbx_error_free(&e);
}

static void forget_done(void *job) {
        ForgetJob *j = job;

        manager_idle(j->m, 0);
        free(j->name);
        free(j->container_id);
        free(j);
}

static void submit_named(Manager *m, const char *name, const char *container_id,
                         void (*run)(void *job, void *ctx)) {
        ForgetJob *j = calloc(1, sizeof(ForgetJob));

        if (!j || !(j->name = strdup(name)) || !(j->container_id = strdup(container_id)) || manager_busy(m, 0) < 0) {
                if (j) {
                        free(j->name);
                        free(j->container_id);
                }
                free(j);
                return;
        }
        j->m = m;
        if (sbx_worker_pool_submit(m->pool, run, forget_done, j) < 0)
                forget_done(j);
}

void manager_forget(Manager *m, const char *name, const char *container_id) {
        submit_named(m, name, container_id, forget_run);
}

void manager_rearm_egress(Manager *m, const char *name, const char *container_id) {
        submit_named(m, name, container_id, rearm_run);
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

static void describe_run(void *job, void *ctx) {
        DescribeJob *j = job;
        SbxLifecycle *l = ctx;
        SbxError e = SBX_ERROR_NULL;

        if (!l)
                return;
        l->policy = manager_policy_ref(j->m);
        sbx_docker_set_deadline(l->docker, (unsigned) l->policy->docker_timeout);
        j->ticket = sbx_observation_cache_ticket(l->observations);
        if (sbx_lifecycle_inspect(l, j->name, &j->sandbox, &e) < 0 && !sbx_error_is(&e, SBX_ERROR_NO_SUCH_SANDBOX))
                log_debug("'%s' changed behind the service's back; its properties stay until the next read: %s",
                          j->name, e.message ?: "out of memory");
        sbx_error_free(&e);
        l->policy = sbx_policy_unref((SbxPolicy *) l->policy);
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
        manager_idle(j->m, 0);
        sbx_sandbox_free(j->sandbox);
        free(j->name);
        free(j->container_id);
        free(j);
}

/* Returns whether the job is on its way. */
static bool redescribe(Manager *m, const char *name, const char *container_id) {
        DescribeJob *j = calloc(1, sizeof(DescribeJob));

        if (!j || !(j->name = strdup(name)) || !(j->container_id = strdup(container_id)) || manager_busy(m, 0) < 0) {
                if (j) {
                        free(j->name);
                        free(j->container_id);
                }
                free(j);
                return false;
        }
        j->m = m;
        if (sbx_worker_pool_submit(m->pool, describe_run, describe_done, j) < 0) {
                describe_done(j);
                return false;
        }
        return true;
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
