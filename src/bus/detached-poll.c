/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The poll of detached processes (docs/architecture.md, "Detached processes"): one
 * timer per sandbox that runs any, and on each tick one job on a read worker with one
 * channel request (STATES) for all of them, not one per process. Between ticks no
 * worker is held, so the read workers retire while processes run (the pool hands a
 * job to the worker idle the shortest time, src/shared/worker-pool.c). What a poll
 * found is applied by the object itself (its ops->polled, bus-detached.c). */

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "bus-exec-internal.h"
#include "log.h"
#include "work.h"

struct DetachedGroup {
        DetachedGroup *next;
        Manager *m;
        char *name;                     /* the sandbox's Docker-level name */
        uid_t owner;                    /* whose channel is read: the poll counts for them */
        sd_event_source *timer;
        unsigned n_objects;             /* its exec objects */
        bool polling;                   /* its job is in flight: it holds the group */
};

typedef struct GroupJob {
        DetachedGroup *g;
        ExecObject **objects;           /* each counted in its n_jobs */
        char **ids;
        SbxDetachState *states;
        size_t n;
        int r;
        SbxError error;
} GroupJob;

static DetachedGroup *group_free(DetachedGroup *g) {
        for (DetachedGroup **p = &g->m->execs.groups; *p; p = &(*p)->next)
                if (*p == g) {
                        *p = g->next;
                        break;
                }
        sd_event_source_disable_unref(g->timer);
        free(g->name);
        free(g);
        return NULL;
}

static void group_unref_maybe(DetachedGroup *g) {
        if (g->n_objects == 0 && !g->polling)
                group_free(g);
}

static void group_job_free(GroupJob *j) {
        for (size_t i = 0; j->ids && i < j->n; i++)
                free(j->ids[i]);
        free(j->ids);
        free(j->objects);
        free(j->states);
        sbx_error_free(&j->error);
        free(j);
}

static void group_job_run(void *job, SbxLifecycle *l) {
        GroupJob *j = job;

        j->r = sbx_lifecycle_detach_poll_all(l, j->g->name, j->ids, j->n, j->states, &j->error);
        for (size_t i = 0; j->r >= 0 && i < j->n; i++)
                if (j->states[i].old_layout)
                        (void) sbx_exec_kill(l->docker, j->objects[i]->process, SIGKILL, NULL);
}

/* Main thread: each object told, then let go (freed if it went meanwhile). */
static void group_job_finish(GroupJob *j, bool ran) {
        DetachedGroup *g = j->g;

        for (size_t i = 0; i < j->n; i++) {
                ExecObject *e = j->objects[i];

                e->polling = false;
                if (--e->n_jobs == 0 && e->doomed)
                        exec_free(e);
                else if (ran)
                        e->ops->polled(e, j->r, &j->states[i], &j->error);
        }
        g->polling = false;
        group_job_free(j);
        group_unref_maybe(g);
}

static void group_job_done(void *job) {
        group_job_finish(job, true);
}

static void group_job_refused(void *job, int r, const SbxError *e) {
        group_job_finish(job, false);   /* again at the next tick */
}

/* A detached process's poll reads its sandbox's channel, on the read workers, at most
 * SBX_READ_WORKERS_PER_USER of them for one user (work.h). */
static const WorkKind group_poll_kind = {
        .name = "detached-poll", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_READ, .share = WORK_SHARE_NONE,
        .run = group_job_run, .done = group_job_done, .refused = group_job_refused,
};

static bool wants_poll(const ExecObject *e) {
        return e->running && !e->polling && !e->doomed && !e->discarded;
}

static int group_submit(DetachedGroup *g) {
        GroupJob *j;
        size_t n = 0;

        FOREACH_EXEC(e, g->m)
                if (e->group == g && wants_poll(e))
                        n++;
        if (n == 0)
                return 0;
        j = calloc(1, sizeof(GroupJob));
        if (!j)
                return -ENOMEM;
        j->g = g;
        j->objects = calloc(n, sizeof(ExecObject *));
        j->ids = calloc(n, sizeof(char *));
        j->states = calloc(n, sizeof(SbxDetachState));
        if (!j->objects || !j->ids || !j->states) {
                group_job_free(j);
                return -ENOMEM;
        }
        FOREACH_EXEC(e, g->m) {
                if (e->group != g || !wants_poll(e) || j->n == n)
                        continue;
                if (!(j->ids[j->n] = strdup(e->id))) {
                        group_job_free(j);      /* nothing counted yet */
                        return -ENOMEM;
                }
                j->objects[j->n++] = e;
        }
        for (size_t i = 0; i < j->n; i++) {
                j->objects[i]->polling = true;
                j->objects[i]->n_jobs++;
        }
        g->polling = true;
        (void) work_submit(g->m, &group_poll_kind, g->owner, j);
        return 0;
}

static bool group_paused(const DetachedGroup *g) {
        const SandboxEntry *s = registry_get(&g->m->registry, g->name);

        return s && s->state == SBX_STATE_PAUSED;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        DetachedGroup *g = userdata;

        /* A paused sandbox's channel does not answer: its processes are only frozen. */
        if (!g->polling && !group_paused(g) && group_submit(g) < 0)
                log_warning("Sandbox '%s': its detached processes could not be polled (again at the next tick)",
                            g->name);
        (void) sd_event_source_set_time_relative(s, g->m->detached_poll_usec);
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int detached_poll_join(ExecObject *e) {
        DetachedGroup *g;
        int r;

        for (g = e->m->execs.groups; g; g = g->next)
                if (streq(g->name, e->name))
                        break;
        if (!g) {
                g = calloc(1, sizeof(DetachedGroup));
                if (!g)
                        return -ENOMEM;
                *g = (DetachedGroup) { .m = e->m, .owner = e->owner, .name = strdup(e->name),
                                       .next = e->m->execs.groups };
                if (!g->name) {
                        free(g);
                        return -ENOMEM;
                }
                e->m->execs.groups = g;
                r = sd_event_add_time_relative(e->m->event, &g->timer, CLOCK_MONOTONIC, e->m->detached_poll_usec, 0,
                                               on_tick, g);
                if (r < 0) {
                        group_free(g);
                        return r;
                }
        }
        g->n_objects++;
        e->group = g;
        return 0;
}

void detached_poll_leave(ExecObject *e) {
        DetachedGroup *g = e->group;

        if (!g)
                return;
        e->group = NULL;
        g->n_objects--;
        group_unref_maybe(g);
}

void detached_poll_soon(ExecObject *e) {
        if (e->group && e->group->timer)
                (void) sd_event_source_set_time_relative(e->group->timer, 0);
}
