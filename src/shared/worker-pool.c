/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "worker-pool.h"

typedef struct Job {
        SbxJobRun run;
        SbxJobDone done;
        void *job;
        struct Job *next;
} Job;

typedef struct JobList {
        Job *head, *tail;
        unsigned n;
} JobList;

/* A worker's stack is the pool's own, unmapped once the thread is joined: glibc keeps
 * the stacks of ended threads it made for reuse (up to 40 MiB of them), each with the
 * pages the thread touched still resident (its static TLS among them): about 84 KiB
 * of an idle daemon's anonymous memory for every worker that ever ran. The lowest
 * page is the guard. */
#define WORKER_STACK_SIZE (8U * 1024U * 1024U)

typedef struct Worker {
        SbxWorkerPool *pool;
        pthread_t thread;
        void *stack;
        pthread_cond_t cond;            /* CLOCK_MONOTONIC: a job for it, or stop */
        bool waiting;                   /* under the lock: in the pool's idle stack */
        struct Worker *idle_next;       /* under the lock */
        bool retired;                   /* under the lock: ended, to be joined */
        struct Worker *next;            /* main thread only */
} Worker;

struct SbxWorkerPool {
        SbxWorkerPoolConfig config;

        pthread_mutex_t lock;
        /* The workers waiting for a job, the one that waits the shortest time on top: a
         * job wakes it, so that a trickle of jobs (a detached process's poll every
         * second) keeps one worker busy and lets the others retire, rather than
         * going round all of them. */
        Worker *idle;
        JobList queued;                 /* waiting for a worker */
        JobList finished;               /* waiting for the main thread */
        unsigned n_live;                /* threads started and not retiring */
        unsigned n_idle;                /* … of which waiting for a job, or still starting */
        bool stopping;                  /* being freed: no submits; workers end once the queue is empty */

        /* main thread only */
        Worker *workers;                /* started and not yet joined */
        unsigned pending;               /* submitted, not yet delivered or cancelled */

        int efd;
        sd_event_source *source;
};

static void list_push(JobList *l, Job *j) {
        j->next = NULL;
        if (l->tail)
                l->tail->next = j;
        else
                l->head = j;
        l->tail = j;
        l->n++;
}

static Job *list_pop(JobList *l) {
        Job *j = l->head;

        if (!j)
                return NULL;
        l->head = j->next;
        if (!l->head)
                l->tail = NULL;
        l->n--;
        return j;
}

static void wake_main(SbxWorkerPool *p) {
        /* The counter only needs to become non-zero. */
        (void) write(p->efd, &(uint64_t) { 1 }, sizeof(uint64_t));
}

static struct timespec deadline_after(uint64_t usec) {
        struct timespec ts;
        uint64_t ns;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        ns = (uint64_t) ts.tv_nsec + (usec % 1000000U) * 1000U;
        ts.tv_sec += (time_t) (usec / 1000000U + ns / 1000000000U);
        ts.tv_nsec = (long) (ns % 1000000000U);
        return ts;
}

static void idle_remove(SbxWorkerPool *p, Worker *w) {
        for (Worker **i = &p->idle; *i; i = &(*i)->idle_next)
                if (*i == w) {
                        *i = w->idle_next;
                        break;
                }
        w->waiting = false;
}

/* Under the lock: the worker idle the shortest time is woken (it leaves the stack). */
static void wake_one(SbxWorkerPool *p) {
        Worker *w = p->idle;

        if (!w)
                return;         /* each is busy or starting: it looks at the queue before it waits */
        p->idle = w->idle_next;
        w->waiting = false;
        pthread_cond_signal(&w->cond);
}

/* Under the lock: waits for a job; false when the worker is to end (the pool stops,
 * or it was idle for idle_usec). */
static bool wait_for_job(SbxWorkerPool *p, Worker *w) {
        bool forever = p->config.idle_usec == SBX_WORKER_IDLE_NEVER;
        struct timespec deadline = {};

        if (!forever)
                deadline = deadline_after(p->config.idle_usec);
        while (!p->queued.head && !p->stopping) {
                if (!w->waiting) {      /* on top (again: woken for a job another took) */
                        w->idle_next = p->idle;
                        p->idle = w;
                        w->waiting = true;
                }
                if (forever)
                        pthread_cond_wait(&w->cond, &p->lock);
                else if (pthread_cond_timedwait(&w->cond, &p->lock, &deadline) == ETIMEDOUT)
                        break;
        }
        if (w->waiting)
                idle_remove(p, w);
        return p->queued.head;  /* what is queued is run, also when stopping */
}

static void *worker_main(void *userdata) {
        Worker *w = userdata;
        SbxWorkerPool *p = w->pool;
        void *ctx = p->config.init ? p->config.init(p->config.init_userdata) : NULL;
        /* Its context could not be made (init gave NULL): the thread runs the job it was
         * started for (which reports the failure) and ends, so that the next job tries
         * again with a new one rather than fail for as long as this thread would live. */
        bool failed = p->config.init && !ctx;

        pthread_mutex_lock(&p->lock);
        while (failed ? p->queued.head != NULL : wait_for_job(p, w)) {
                Job *j = list_pop(&p->queued);

                p->n_idle--;
                pthread_mutex_unlock(&p->lock);

                j->run(j->job, ctx);

                pthread_mutex_lock(&p->lock);
                list_push(&p->finished, j);
                p->n_idle++;
                wake_main(p);
                if (failed)
                        break;
        }
        /* From here on a submit no longer counts on this thread. */
        p->n_idle--;
        p->n_live--;
        pthread_mutex_unlock(&p->lock);

        if (p->config.fini)
                p->config.fini(ctx);

        pthread_mutex_lock(&p->lock);
        w->retired = true;
        wake_main(p);           /* to be joined */
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

static int spawn(SbxWorkerPool *p);

/* Main thread, under the lock: threads for the queued jobs no thread will take (a
 * thread whose init failed ended with jobs still queued). */
static void top_up(SbxWorkerPool *p) {
        while (!p->stopping && p->queued.n > p->n_idle && p->n_live < p->config.n_workers)
                if (spawn(p) < 0)
                        break;
}

/* Main thread: joins the workers that have ended, and replaces them if jobs are left. */
/* After the join (or a failed start): nothing runs on its stack any more. */
static void worker_free(Worker *w) {
        if (w->stack)
                (void) munmap(w->stack, WORKER_STACK_SIZE);
        pthread_cond_destroy(&w->cond);
        free(w);
}

static int worker_start(Worker *w) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        pthread_attr_t attr;
        int r;

        w->stack = mmap(NULL, WORKER_STACK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
        if (w->stack == MAP_FAILED) {
                w->stack = NULL;
                return -errno;
        }
        if (mprotect(w->stack, page, PROT_NONE) < 0)
                return -errno;
        if ((r = pthread_attr_init(&attr)) != 0)
                return -r;
        r = pthread_attr_setstack(&attr, w->stack, WORKER_STACK_SIZE);
        if (r == 0)
                r = pthread_create(&w->thread, &attr, worker_main, w);
        pthread_attr_destroy(&attr);
        return -r;
}

static void reap(SbxWorkerPool *p) {
        Worker *gone = NULL;

        pthread_mutex_lock(&p->lock);
        for (Worker **w = &p->workers; *w;)
                if ((*w)->retired) {
                        Worker *x = *w;
                        *w = x->next;
                        x->next = gone;
                        gone = x;
                } else
                        w = &(*w)->next;
        top_up(p);
        pthread_mutex_unlock(&p->lock);

        while (gone) {
                Worker *x = gone;
                gone = x->next;
                pthread_join(x->thread, NULL);
                worker_free(x);
        }
}

/* Main thread, under the lock: one more worker. */
static int spawn(SbxWorkerPool *p) {
        Worker *w = calloc(1, sizeof(Worker));
        int r;

        pthread_condattr_t attr;

        if (!w)
                return -ENOMEM;
        w->pool = p;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&w->cond, &attr);
        pthread_condattr_destroy(&attr);
        r = worker_start(w);
        if (r < 0) {
                worker_free(w);
                return r;
        }
        w->next = p->workers;
        p->workers = w;
        p->n_live++;
        p->n_idle++;            /* starting: it takes a job before it ever waits */
        return 0;
}

static void deliver_finished(SbxWorkerPool *p) {
        JobList done;

        pthread_mutex_lock(&p->lock);
        done = p->finished;
        p->finished = (JobList) {};
        pthread_mutex_unlock(&p->lock);

        for (Job *j; (j = list_pop(&done));) {
                p->pending--;
                j->done(j->job);
                free(j);
        }
}

static int on_eventfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        SbxWorkerPool *p = userdata;
        uint64_t v;

        (void) read(fd, &v, sizeof v);
        deliver_finished(p);
        reap(p);
        return 0;
}

int sbx_worker_pool_new(sd_event *event, const SbxWorkerPoolConfig *config, SbxWorkerPool **ret) {
        _cleanup_(sbx_worker_pool_freep) SbxWorkerPool *p = NULL;
        int r;

        if (config->n_workers == 0)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->config = *config;
        if (p->config.idle_usec == 0)
                p->config.idle_usec = SBX_WORKER_IDLE_USEC_DEFAULT;
        p->efd = -1;
        pthread_mutex_init(&p->lock, NULL);

        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0)
                return -errno;
        r = sd_event_add_io(event, &p->source, p->efd, EPOLLIN, on_eventfd, p);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(p);
        return 0;
}

SbxWorkerPool *sbx_worker_pool_free(SbxWorkerPool *p) {
        if (!p)
                return NULL;

        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        while (p->idle)
                wake_one(p);
        pthread_mutex_unlock(&p->lock);
        /* Only this thread changes the list; the live workers end once the queue is empty. */
        while (p->workers) {
                Worker *w = p->workers;
                p->workers = w->next;
                pthread_join(w->thread, NULL);
                worker_free(w);
        }

        /* Every job ran; hand their completions to the main thread code now. */
        deliver_finished(p);

        sd_event_source_disable_unref(p->source);
        if (p->efd >= 0)
                close(p->efd);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
}

int sbx_worker_pool_submit(SbxWorkerPool *p, SbxJobRun run, SbxJobDone done, void *job) {
        Job *j;
        int r = 0;

        pthread_mutex_lock(&p->lock);
        if (p->stopping)
                r = -ESHUTDOWN;
        /* Room for it: with an idle (or starting) thread, in a thread yet to be
         * started, or among the max_queued that wait for one. Counting the threads not
         * started yet makes a burst on an idle pool take as many jobs as one with
         * every thread waiting would (n_workers + max_queued). */
        else if (p->queued.n >= p->n_idle + (p->config.n_workers - p->n_live) + p->config.max_queued)
                r = -EBUSY;
        else if (!(j = malloc(sizeof(*j))))
                r = -ENOMEM;
        if (r < 0) {
                pthread_mutex_unlock(&p->lock);
                return r;
        }
        *j = (Job) { .run = run, .done = done, .job = job };
        list_push(&p->queued, j);
        if (p->queued.n > p->n_idle && p->n_live < p->config.n_workers) {
                r = spawn(p);
                /* No thread at all to run it: refuse the job. With one, it waits its turn. */
                if (r < 0 && p->n_live == 0) {
                        /* Without a thread nothing stays queued: j is the only job. */
                        p->queued = (JobList) {};
                        pthread_mutex_unlock(&p->lock);
                        free(j);
                        return r;
                }
        }
        p->pending++;
        wake_one(p);
        pthread_mutex_unlock(&p->lock);
        return 0;
}

unsigned sbx_worker_pool_cancel_queued(SbxWorkerPool *p, SbxJobDone done, SbxJobDone cancel) {
        JobList queued, kept = {}, cancelled = {};
        unsigned n = 0;

        if (!p)                         /* a pool never made (a start that failed before it) */
                return 0;
        pthread_mutex_lock(&p->lock);
        queued = p->queued;
        for (Job *j; (j = list_pop(&queued));)
                list_push(j->done == done ? &cancelled : &kept, j);
        p->queued = kept;
        pthread_mutex_unlock(&p->lock);

        for (Job *j; (j = list_pop(&cancelled)); n++) {
                p->pending--;
                cancel(j->job);
                free(j);
        }
        return n;
}

unsigned sbx_worker_pool_pending(SbxWorkerPool *p) {
        return p->pending;
}

unsigned sbx_worker_pool_threads(SbxWorkerPool *p) {
        unsigned n;

        pthread_mutex_lock(&p->lock);
        n = p->n_live;
        pthread_mutex_unlock(&p->lock);
        return n;
}
