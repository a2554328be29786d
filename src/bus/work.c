/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "work.h"

typedef struct Work {
        Manager *m;
        const WorkKind *kind;
        uid_t uid;
        void *job;
        struct Work *next_read;         /* waiting for a read worker: the next one */
        bool on_read_worker;            /* holds one of the read workers */
        bool counted;                   /* holds a share (WORK_SHARE_USER, _SERVICE) */
        bool no_worker;                 /* the worker could not open its clients */
} Work;

/* The one text of each limit this layer applies. */
int work_error_pool_full(SbxError *e) {
        return sbx_error_set(e, SBX_ERROR_LIMITS_EXCEEDED, "Too many operations in progress; try again later");
}

int work_error_shutting_down(SbxError *e) {
        return sbx_error_set(e, SBX_ERROR_BACKEND_UNAVAILABLE,
                             "The service is shutting down; the operation was not started");
}

int work_share_take(Manager *m, uid_t uid, bool read, SbxError *error) {
        int r = manager_busy_as(m, uid, read);

        if (r == -EBUSY)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "Too many %s of uid %u in progress (%s); try again later",
                                     read ? "reads" : "operations", (unsigned) uid,
                                     read ? "max_reads_per_user" : "max_operations_per_user");
        return r;
}

static bool is_read(const Work *w) {
        return w->kind->pool == WORK_POOL_READ;
}

static void share_release(Work *w) {
        if (!w->counted)
                return;
        w->counted = false;
        manager_idle_as(w->m, w->kind->share == WORK_SHARE_SERVICE ? 0 : w->uid,
                        w->kind->share == WORK_SHARE_USER && is_read(w));
}

/* The job never ran: its refused, then the share back. */
static void refuse(Work *w, int r, const SbxError *e) {
        w->kind->refused(w->job, r, e);
        share_release(w);
        free(w);
}

static void refuse_with(Work *w, int r, int (*text)(SbxError *e)) {
        SbxError e = SBX_ERROR_NULL;

        if (text)
                r = text(&e);
        refuse(w, r, &e);
        sbx_error_free(&e);
}

static void work_run(void *job, void *ctx) {
        Work *w = job;
        SbxLifecycle *l = ctx;
        SbxPolicy *policy;

        if (!l) {
                w->no_worker = true;
                return;
        }
        /* The whole job under the policy in force when it began (SIGHUP may swap it). */
        policy = manager_policy_ref(w->m);
        l->policy = policy;
        sbx_docker_set_deadline(l->docker, w->kind->budget ? w->kind->budget(w->job, policy) : 0);
        w->kind->run(w->job, l);
        l->policy = NULL;
        sbx_policy_unref(policy);
}

static void reads_dispatch(Manager *m);

/* The caller's entry among the read workers' holders (add: make one). */
static unsigned *reads_running_of(Manager *m, uid_t uid, bool add) {
        unsigned *free_slot = NULL;

        for (size_t i = 0; i < ELEMENTSOF(m->reads_running_by); i++) {
                if (m->reads_running_by[i].n > 0 && m->reads_running_by[i].uid == uid)
                        return &m->reads_running_by[i].n;
                if (m->reads_running_by[i].n == 0 && !free_slot) {
                        free_slot = &m->reads_running_by[i].n;
                        if (add)
                                m->reads_running_by[i].uid = uid;
                }
        }
        return add ? free_slot : NULL;
}

static void work_done(void *job) {
        Work *w = job;
        Manager *m = w->m;
        bool read = w->on_read_worker;
        SbxError e = SBX_ERROR_NULL;

        if (read) {
                (*reads_running_of(m, w->uid, false))--;
                m->n_reads_running--;
        }
        if (w->no_worker) {
                refuse(w, sbx_error_set(&e, SBX_ERROR_IO, "The worker could not open the store or Docker client"),
                       &e);
                sbx_error_free(&e);
        } else {
                w->kind->done(w->job);
                share_release(w);
                free(w);
        }
        if (read)
                reads_dispatch(m);
}

/* The same, for the jobs SIGTERM takes off the queues (sbx_worker_pool_cancel_queued()
 * tells them apart by it). */
static void work_done_cancellable(void *job) {
        work_done(job);
}

static void work_cancel(void *job) {
        Work *w = job;

        if (w->on_read_worker) {        /* queued on the read pool: it holds no worker after all */
                (*reads_running_of(w->m, w->uid, false))--;
                w->m->n_reads_running--;
        }
        refuse_with(w, 0, work_error_shutting_down);
}

/* The one place work goes to a pool. */
static int pool_submit(Work *w) {
        SbxWorkerPool *pool = is_read(w) ? w->m->read_pool : w->m->pool;

        return sbx_worker_pool_submit(pool, work_run, w->kind->cancellable ? work_done_cancellable : work_done, w);
}

static void read_start(Work *w) {
        int r = pool_submit(w);

        if (r < 0) {
                refuse_with(w, r, r == -EBUSY ? work_error_pool_full : r == -ESHUTDOWN ? work_error_shutting_down : NULL);
                return;
        }
        (*reads_running_of(w->m, w->uid, true))++;
        w->m->n_reads_running++;
        w->on_read_worker = true;
}

/* Hands waiting reads to free read workers, in arrival order, passing over those of a
 * user who holds SBX_READ_WORKERS_PER_USER already: one user's slow reads (usage, a
 * stuck channel) leave workers free for everyone else's. */
static void reads_dispatch(Manager *m) {
        Work **p = &m->reads_waiting;

        while (*p && m->n_reads_running < SBX_READ_WORKERS) {
                Work *w = *p;
                const unsigned *n = reads_running_of(m, w->uid, false);

                if (n && *n >= SBX_READ_WORKERS_PER_USER) {
                        p = &w->next_read;
                        continue;
                }
                *p = w->next_read;
                if (m->reads_waiting_tail == &w->next_read)
                        m->reads_waiting_tail = p;
                w->next_read = NULL;
                m->n_reads_waiting--;
                read_start(w);
        }
}

static int read_enqueue(Work *w) {
        Manager *m = w->m;

        if (m->n_reads_waiting >= SBX_MAX_QUEUED) {
                refuse_with(w, 0, work_error_pool_full);
                return -EBUSY;
        }
        *m->reads_waiting_tail = w;
        m->reads_waiting_tail = &w->next_read;
        m->n_reads_waiting++;
        reads_dispatch(m);
        return 0;
}

static int take_share(Work *w) {
        SbxError e = SBX_ERROR_NULL;
        int r = 0;

        if (w->kind->share == WORK_SHARE_USER)
                r = work_share_take(w->m, w->uid, is_read(w), &e);
        else if (w->kind->share == WORK_SHARE_SERVICE)
                r = manager_busy(w->m, 0);
        if (r < 0) {
                refuse(w, r, &e);
                sbx_error_free(&e);
                return r;
        }
        w->counted = w->kind->share != WORK_SHARE_NONE;
        return 0;
}

int work_submit(Manager *m, const WorkKind *k, uid_t uid, void *job) {
        Work *w = calloc(1, sizeof(Work));
        int r;

        if (!w) {
                k->refused(job, -ENOMEM, NULL);
                return -ENOMEM;
        }
        *w = (Work) { .m = m, .kind = k, .uid = uid, .job = job };
        if (m->terminating && k->cancellable) {
                refuse_with(w, 0, work_error_shutting_down);
                return -ESHUTDOWN;
        }
        if ((r = take_share(w)) < 0)
                return r;
        if (is_read(w))
                return read_enqueue(w);
        r = pool_submit(w);
        if (r < 0)
                refuse_with(w, r, r == -EBUSY ? work_error_pool_full : r == -ESHUTDOWN ? work_error_shutting_down : NULL);
        return r;
}

void work_cancel_queued(Manager *m) {
        sbx_worker_pool_cancel_queued(m->pool, work_done_cancellable, work_cancel);
        sbx_worker_pool_cancel_queued(m->read_pool, work_done_cancellable, work_cancel);
        /* What waits for a read worker never reached a pool: all of it goes. */
        while (m->reads_waiting) {
                Work *w = m->reads_waiting;

                m->reads_waiting = w->next_read;
                m->n_reads_waiting--;
                work_cancel(w);
        }
        m->reads_waiting_tail = &m->reads_waiting;
}
