/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <stdatomic.h>
#include <errno.h>

#include "sbx-test.h"
#include "worker-pool.h"

typedef struct TestJob {
        pthread_t ran_on;
        pthread_t done_on;
        void *ctx;
        pthread_barrier_t *hold;        /* if set, run() counts itself in started and waits here */
        atomic_uint *started;
        unsigned *n_done;
} TestJob;

static atomic_uint inits, finis;

static void *ctx_init(void *userdata) {
        atomic_fetch_add(&inits, 1);
        return userdata;
}

static void ctx_fini(void *ctx) {
        atomic_fetch_add(&finis, 1);
}

static void job_run(void *j, void *ctx) {
        TestJob *t = j;
        t->ran_on = pthread_self();
        t->ctx = ctx;
        if (t->hold) {
                atomic_fetch_add(t->started, 1);
                pthread_barrier_wait(t->hold);
        }
}

static void job_done(void *j) {
        TestJob *t = j;
        t->done_on = pthread_self();
        (*t->n_done)++;
}

static void run_until(sd_event *e, unsigned *n, unsigned want) {
        while (*n < want)
                ck_assert_int_ge(sd_event_run(e, 5 * 1000 * 1000), 0);
}

START_TEST(test_runs_on_workers_done_on_main) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        TestJob jobs[32] = {};
        unsigned n_done = 0;
        int marker;

        atomic_store(&inits, 0);
        atomic_store(&finis, 0);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 4, .max_queued = 64, .init = ctx_init, .fini = ctx_fini, .init_userdata = &marker,
        }, &p), 0);

        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                jobs[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &jobs[i]), 0);
        }
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 32);
        run_until(e, &n_done, 32);
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 0);

        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                ck_assert(!pthread_equal(jobs[i].ran_on, pthread_self()));
                ck_assert(pthread_equal(jobs[i].done_on, pthread_self()));
                ck_assert_ptr_eq(jobs[i].ctx, &marker);
        }
        sbx_worker_pool_free(p);
        ck_assert_uint_eq(atomic_load(&inits), 4);
        ck_assert_uint_eq(atomic_load(&finis), 4);
        sd_event_unref(e);
}
END_TEST

/* With every worker busy and the queue full, a submit is refused; once the
 * workers are released everything completes. */
START_TEST(test_queue_bound) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy[2] = {}, queued[3] = {}, extra = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        pthread_barrier_init(&hold, NULL, 3);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) { .n_workers = 2, .max_queued = 3 }, &p), 0);

        for (size_t i = 0; i < 2; i++) {
                busy[i] = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy[i]), 0);
        }
        /* Wait until both workers took their job, so the queue is really empty. */
        for (int spins = 0; atomic_load(&started) < 2; spins++) {
                ck_assert_int_lt(spins, 5000);
                usleep(1000);
        }
        for (size_t i = 0; i < 3; i++) {
                queued[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &queued[i]), 0);
        }
        extra.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &extra), -EBUSY);
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 5);

        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 5);
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &extra), 0);
        run_until(e, &n_done, 6);

        sbx_worker_pool_free(p);
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

/* Freeing the pool lets queued jobs finish and delivers their completions. */
START_TEST(test_free_drains) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        TestJob jobs[8] = {};
        unsigned n_done = 0;

        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) { .n_workers = 1, .max_queued = 8 }, &p), 0);
        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                jobs[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &jobs[i]), 0);
        }
        sbx_worker_pool_free(p);
        ck_assert_uint_eq(n_done, 8);
        sd_event_unref(e);
}
END_TEST

static unsigned n_cancelled;

static void job_cancel(void *j) {
        TestJob *t = j;

        t->done_on = pthread_self();
        n_cancelled++;
}

static void other_done(void *j) {
        job_done(j);
}

/* Shutdown: the jobs of one kind that wait in the queue are cancelled and never run;
 * what runs finishes, and queued jobs of another kind still run. */
START_TEST(test_cancel_queued) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy = {}, queued[4] = {}, other = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        n_cancelled = 0;
        pthread_barrier_init(&hold, NULL, 2);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) { .n_workers = 1, .max_queued = 8 }, &p), 0);
        busy = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy), 0);
        for (int spins = 0; atomic_load(&started) < 1; spins++) {
                ck_assert_int_lt(spins, 5000);
                usleep(1000);
        }
        for (size_t i = 0; i < ELEMENTSOF(queued); i++) {
                queued[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &queued[i]), 0);
                if (i == 1) {
                        other.n_done = &n_done;
                        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, other_done, &other), 0);
                }
        }
        sbx_worker_pool_cancel_queued(p, job_done, job_cancel);
        ck_assert_uint_eq(n_cancelled, ELEMENTSOF(queued));
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 2);
        for (size_t i = 0; i < ELEMENTSOF(queued); i++) {
                ck_assert(pthread_equal(queued[i].done_on, pthread_self()));
                ck_assert(queued[i].ran_on == (pthread_t) 0);   /* never ran */
        }

        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 2);
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 0);
        ck_assert(other.ran_on != (pthread_t) 0);
        sbx_worker_pool_free(p);
        ck_assert_uint_eq(n_done, 2);
        ck_assert_uint_eq(n_cancelled, ELEMENTSOF(queued));
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("worker-pool");
        TCase *tc = tcase_create("worker-pool");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_runs_on_workers_done_on_main);
        tcase_add_test(tc, test_queue_bound);
        tcase_add_test(tc, test_free_drains);
        tcase_add_test(tc, test_cancel_queued);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
