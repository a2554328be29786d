/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/eventfd.h>
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

struct SbxWorkerPool {
        SbxWorkerPoolConfig config;
        pthread_t *threads;
        unsigned n_threads;

        pthread_mutex_t lock;
        pthread_cond_t cond;
        JobList queued;         /* waiting for a worker */
        JobList finished;       /* waiting for the main thread */
        bool stopping;
        unsigned pending;       /* main thread only: submitted, not yet delivered */

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

static void *worker_main(void *userdata) {
        SbxWorkerPool *p = userdata;
        void *ctx = p->config.init ? p->config.init(p->config.init_userdata) : NULL;

        pthread_mutex_lock(&p->lock);
        for (;;) {
                Job *j;

                while (!p->queued.head && !p->stopping)
                        pthread_cond_wait(&p->cond, &p->lock);
                j = list_pop(&p->queued);
                if (!j)
                        break;  /* stopping, and nothing left to do */
                pthread_mutex_unlock(&p->lock);

                j->run(j->job, ctx);

                pthread_mutex_lock(&p->lock);
                list_push(&p->finished, j);
                /* Wake the main loop; the counter only needs to become non-zero. */
                (void) write(p->efd, &(uint64_t) { 1 }, sizeof(uint64_t));
        }
        pthread_mutex_unlock(&p->lock);

        if (p->config.fini)
                p->config.fini(ctx);
        return NULL;
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
        uint64_t v;

        (void) read(fd, &v, sizeof v);
        deliver_finished(userdata);
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
        p->efd = -1;
        pthread_mutex_init(&p->lock, NULL);
        pthread_cond_init(&p->cond, NULL);

        p->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (p->efd < 0)
                return -errno;
        r = sd_event_add_io(event, &p->source, p->efd, EPOLLIN, on_eventfd, p);
        if (r < 0)
                return r;

        p->threads = calloc(config->n_workers, sizeof(pthread_t));
        if (!p->threads)
                return -ENOMEM;
        for (; p->n_threads < config->n_workers; p->n_threads++) {
                r = pthread_create(&p->threads[p->n_threads], NULL, worker_main, p);
                if (r != 0)
                        return -r;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

SbxWorkerPool *sbx_worker_pool_free(SbxWorkerPool *p) {
        if (!p)
                return NULL;

        pthread_mutex_lock(&p->lock);
        p->stopping = true;
        pthread_cond_broadcast(&p->cond);
        pthread_mutex_unlock(&p->lock);
        for (unsigned i = 0; i < p->n_threads; i++)
                pthread_join(p->threads[i], NULL);
        free(p->threads);

        /* Every job ran; hand their completions to the main thread code now. */
        deliver_finished(p);

        sd_event_source_disable_unref(p->source);
        if (p->efd >= 0)
                close(p->efd);
        pthread_cond_destroy(&p->cond);
        pthread_mutex_destroy(&p->lock);
        free(p);
        return NULL;
}

int sbx_worker_pool_submit(SbxWorkerPool *p, SbxJobRun run, SbxJobDone done, void *job) {
        Job *j;

        pthread_mutex_lock(&p->lock);
        if (p->stopping || p->queued.n >= p->config.max_queued) {
                pthread_mutex_unlock(&p->lock);
                return -EBUSY;
        }
        j = malloc(sizeof(*j));
        if (!j) {
                pthread_mutex_unlock(&p->lock);
                return -ENOMEM;
        }
        *j = (Job) { .run = run, .done = done, .job = job };
        list_push(&p->queued, j);
        p->pending++;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        return 0;
}

unsigned sbx_worker_pool_pending(SbxWorkerPool *p) {
        return p->pending;
}

void sbx_worker_pool_cancel_queued(SbxWorkerPool *p, SbxJobDone done, SbxJobDone cancel) {
        JobList queued, kept = {}, cancelled = {};

        pthread_mutex_lock(&p->lock);
        queued = p->queued;
        for (Job *j; (j = list_pop(&queued));)
                list_push(j->done == done ? &cancelled : &kept, j);
        p->queued = kept;
        pthread_mutex_unlock(&p->lock);
        for (Job *j; (j = list_pop(&cancelled));) {
                p->pending--;
                cancel(j->job);
                free(j);
        }
}
