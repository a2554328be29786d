/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <unistd.h>

#include "sbx-test.h"
#include "worker-pool.h"

typedef struct TestJob {
        bool ran;
        pthread_t ran_on;
        pthread_t done_on;
        void *ctx;
        pthread_barrier_t *hold;        /* if set, run() counts itself in started and waits here */
        atomic_uint *started;
        unsigned *n_done;
        uintptr_t stack;                /* an address on the stack of the thread that ran it */
} TestJob;

static atomic_uint inits, finis;
static atomic_int tids[16];             /* the kernel's ids of the threads that ran init, in order */

static void *ctx_init(void *userdata) {
        unsigned i = atomic_fetch_add(&inits, 1);

        if (i < ELEMENTSOF(tids))
                atomic_store(&tids[i], (int) gettid());
        return userdata;
}

static void ctx_fini(void *ctx) {
        atomic_fetch_add(&finis, 1);
}

/* The lowest address of the calling thread's stack (a sanitizer's fake frames would
 * not say where the thread's own stack is). */
static uintptr_t thread_stack(void) {
        pthread_attr_t a;
        void *addr = NULL;
        size_t size = 0;

        if (pthread_getattr_np(pthread_self(), &a) != 0)
                return 0;
        (void) pthread_attr_getstack(&a, &addr, &size);
        pthread_attr_destroy(&a);
        return (uintptr_t) addr;
}

static void job_run(void *j, void *ctx) {
        TestJob *t = j;
        t->ran = true;
        t->ran_on = pthread_self();
        t->ctx = ctx;
        t->stack = thread_stack();
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

/* Whether the thread that ran the i-th init still exists. */
static bool worker_alive(unsigned i) {
        char path[64];

        snprintf(path, sizeof path, "/proc/self/task/%i", atomic_load(&tids[i]));
        return access(path, F_OK) == 0;
}

/* Runs the loop (which joins retired workers) until the pool counts no thread and
 * the threads that ran init (all n of them) are gone from the kernel's list; fails
 * after 10 s. */
static void run_until_no_workers(sd_event *e, SbxWorkerPool *p, unsigned n) {
        for (int i = 0;; i++) {
                bool alive = sbx_worker_pool_threads(p) > 0;

                for (unsigned k = 0; k < n; k++)
                        alive = alive || worker_alive(k);
                if (!alive)
                        return;
                ck_assert_int_lt(i, 1000);
                ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
        }
}

static void wait_started(atomic_uint *started, unsigned want) {
        for (int spins = 0; atomic_load(started) < want; spins++) {
                ck_assert_int_lt(spins, 5000);
                usleep(1000);
        }
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
        /* As many threads as there was work for, and never more than n_workers. */
        ck_assert_uint_ge(atomic_load(&inits), 1);
        ck_assert_uint_le(atomic_load(&inits), 4);
        ck_assert_uint_le(sbx_worker_pool_threads(p), 4);

        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                ck_assert(!pthread_equal(jobs[i].ran_on, pthread_self()));
                ck_assert(pthread_equal(jobs[i].done_on, pthread_self()));
                ck_assert_ptr_eq(jobs[i].ctx, &marker);
        }
        sbx_worker_pool_free(p);
        ck_assert_uint_eq(atomic_load(&finis), atomic_load(&inits));
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
        wait_started(&started, 2);
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

/* A burst on a pool without threads takes n_workers + max_queued jobs, however fast
 * the threads start: those they will take do not count as waiting. */
START_TEST(test_burst_on_an_idle_pool) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob jobs[7] = {}, extra = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        pthread_barrier_init(&hold, NULL, 5);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) { .n_workers = 4, .max_queued = 3 }, &p), 0);
        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                jobs[i] = (TestJob) { .hold = i < 4 ? &hold : NULL, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &jobs[i]), 0);
        }
        extra.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &extra), -EBUSY);
        /* Once the four run, still three waiting, still no room. */
        wait_started(&started, 4);
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 4);
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &extra), -EBUSY);

        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 7);
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &extra), 0);
        run_until(e, &n_done, 8);
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

/* No thread before there is work; one more per job that finds no idle thread, up to
 * n_workers; idle threads are reused rather than new ones started. */
START_TEST(test_threads_on_demand) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy[3] = {}, queued = {}, later[4] = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        atomic_store(&inits, 0);
        atomic_store(&finis, 0);
        pthread_barrier_init(&hold, NULL, 4);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 3, .max_queued = 8, .idle_usec = SBX_WORKER_IDLE_NEVER,
                .init = ctx_init, .fini = ctx_fini, .init_userdata = &inits,
        }, &p), 0);
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 0);
        ck_assert_uint_eq(atomic_load(&inits), 0);

        for (unsigned i = 0; i < 3; i++) {
                busy[i] = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy[i]), 0);
                wait_started(&started, i + 1);  /* each one on a thread of its own */
                ck_assert_uint_eq(sbx_worker_pool_threads(p), i + 1);
                ck_assert_uint_eq(atomic_load(&inits), i + 1);
                ck_assert(worker_alive(i));
                for (unsigned k = 0; k < i; k++)
                        ck_assert_int_ne(atomic_load(&tids[k]), atomic_load(&tids[i]));
        }
        /* Every thread busy and n_workers reached: this one waits in the queue. */
        queued.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &queued), 0);
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 3);
        ck_assert_uint_eq(atomic_load(&inits), 3);

        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 4);
        /* One job at a time on idle threads: no thread more. */
        for (size_t i = 0; i < ELEMENTSOF(later); i++) {
                later[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &later[i]), 0);
                run_until(e, &n_done, 5 + i);
        }
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 3);
        ck_assert_uint_eq(atomic_load(&inits), 3);
        ck_assert_uint_eq(atomic_load(&finis), 0);

        sbx_worker_pool_free(p);
        ck_assert_uint_eq(atomic_load(&finis), 3);
        for (unsigned k = 0; k < 3; k++)
                ck_assert(!worker_alive(k));
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

/* A thread idle for idle_usec runs fini and ends; the next job starts a new one. */
START_TEST(test_idle_threads_retire) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy[2] = {}, again = {};
        unsigned n_done = 0;
        atomic_uint started = 0;
        int marker;

        atomic_store(&inits, 0);
        atomic_store(&finis, 0);
        pthread_barrier_init(&hold, NULL, 3);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 4, .max_queued = 8, .idle_usec = 50 * 1000,
                .init = ctx_init, .fini = ctx_fini, .init_userdata = &marker,
        }, &p), 0);

        for (size_t i = 0; i < 2; i++) {
                busy[i] = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy[i]), 0);
        }
        wait_started(&started, 2);
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 2);
        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 2);

        run_until_no_workers(e, p, 2);
        ck_assert_uint_eq(atomic_load(&inits), 2);
        ck_assert_uint_eq(atomic_load(&finis), 2);

        again.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &again), 0);
        run_until(e, &n_done, 3);
        ck_assert_ptr_eq(again.ctx, &marker);
        ck_assert_uint_eq(atomic_load(&inits), 3);
        run_until_no_workers(e, p, 3);
        ck_assert_uint_eq(atomic_load(&finis), 3);

        sbx_worker_pool_free(p);
        ck_assert_uint_eq(atomic_load(&finis), 3);
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

/* A trickle of jobs (one every idle_usec / 4, as a detached process's poll) is run
 * by the worker idle the shortest time: the others a burst started retire meanwhile
 * rather than take turns and all stay. */
START_TEST(test_trickle_lets_workers_retire) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy[4] = {}, trickle[40] = {};
        unsigned n_done = 0, fewest = 4;
        atomic_uint started = 0;

        pthread_barrier_init(&hold, NULL, 5);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 4, .max_queued = 8, .idle_usec = 200 * 1000,
        }, &p), 0);
        for (size_t i = 0; i < 4; i++) {
                busy[i] = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy[i]), 0);
        }
        wait_started(&started, 4);
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 4);
        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 4);

        for (size_t i = 0; i < ELEMENTSOF(trickle); i++) {
                trickle[i] = (TestJob) { .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &trickle[i]), 0);
                run_until(e, &n_done, 5 + (unsigned) i);
                usleep(50 * 1000);
                ck_assert_int_ge(sd_event_run(e, 0), 0);        /* the retired joined */
                fewest = MIN(fewest, sbx_worker_pool_threads(p));
        }
        ck_assert_uint_le(fewest, 1);

        sbx_worker_pool_free(p);
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

/* Whether addr lies in a mapping of this process. */
static bool mapped(uintptr_t addr) {
        FILE *f = fopen("/proc/self/maps", "re");
        unsigned long lo, hi;
        char line[512];
        bool found = false;

        ck_assert_ptr_nonnull(f);
        while (!found && fgets(line, sizeof line, f))
                found = sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi;
        fclose(f);
        return found;
}

static unsigned stacks_mapped(const TestJob *jobs, size_t n) {
        unsigned k = 0;

        for (size_t i = 0; i < n; i++)
                k += mapped(jobs[i].stack);
        return k;
}

/* A retired worker's stack is unmapped once it is joined (glibc would keep it, and
 * the pages the thread touched, for a thread to come). */
START_TEST(test_retired_stacks_unmapped) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob busy[3] = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        pthread_barrier_init(&hold, NULL, 4);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 4, .max_queued = 8, .idle_usec = 20 * 1000,
        }, &p), 0);
        for (size_t i = 0; i < ELEMENTSOF(busy); i++) {
                busy[i] = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &busy[i]), 0);
        }
        wait_started(&started, 3);
        ck_assert_uint_eq(stacks_mapped(busy, ELEMENTSOF(busy)), 3);
        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 3);
        /* By address, not by counting 8 MiB mappings: the sanitizers map their own. */
        for (int i = 0; stacks_mapped(busy, ELEMENTSOF(busy)) > 0; i++) {
                ck_assert_int_lt(i, 1000);
                ck_assert_int_ge(sd_event_run(e, 10 * 1000), 0);
        }
        ck_assert_uint_eq(sbx_worker_pool_threads(p), 0);
        sbx_worker_pool_free(p);
        sd_event_unref(e);
        pthread_barrier_destroy(&hold);
}
END_TEST

static atomic_uint init_calls;

/* Fails the first time, then gives userdata. */
static void *flaky_init(void *userdata) {
        return atomic_fetch_add(&init_calls, 1) == 0 ? NULL : userdata;
}

/* A thread whose init failed runs the job it was started for with a NULL context and
 * ends; the jobs queued behind it get a new thread, whose init is tried again. */
START_TEST(test_failed_init_is_tried_again) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        TestJob jobs[3] = {}, later = {};
        unsigned n_done = 0;
        int marker;

        atomic_store(&init_calls, 0);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) {
                .n_workers = 1, .max_queued = 8, .init = flaky_init, .init_userdata = &marker,
        }, &p), 0);
        for (size_t i = 0; i < ELEMENTSOF(jobs); i++) {
                jobs[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &jobs[i]), 0);
        }
        run_until(e, &n_done, 3);
        ck_assert_ptr_null(jobs[0].ctx);
        ck_assert_ptr_eq(jobs[1].ctx, &marker);
        ck_assert_ptr_eq(jobs[2].ctx, &marker);
        ck_assert_uint_eq(atomic_load(&init_calls), 2);
        /* The good thread stays. */
        later.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &later), 0);
        run_until(e, &n_done, 4);
        ck_assert_ptr_eq(later.ctx, &marker);
        ck_assert_uint_eq(atomic_load(&init_calls), 2);
        sbx_worker_pool_free(p);
        sd_event_unref(e);
}
END_TEST

typedef struct Cancelled {
        unsigned n;
        bool on_main;
        pthread_t main;
        TestJob *last;
} Cancelled;

static Cancelled cancelled;

static void job_cancel(void *j) {
        cancelled.n++;
        cancelled.on_main = cancelled.on_main && pthread_equal(pthread_self(), cancelled.main);
        cancelled.last = j;
}

static void other_done(void *j) {
        job_done(j);
}

/* Shutdown: the queued jobs of one kind (their done callback) are taken off the
 * queue and handed to cancel on the calling thread, in order, never run and never
 * done; the running job and queued jobs of another kind complete as usual, and a
 * later submit is still taken. */
START_TEST(test_cancel_queued) {
        sd_event *e = NULL;
        SbxWorkerPool *p = NULL;
        pthread_barrier_t hold;
        TestJob running = {}, queued[4] = {}, other = {}, later = {};
        unsigned n_done = 0;
        atomic_uint started = 0;

        cancelled = (Cancelled) { .on_main = true, .main = pthread_self() };
        pthread_barrier_init(&hold, NULL, 2);
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(sbx_worker_pool_new(e, &(SbxWorkerPoolConfig) { .n_workers = 1, .max_queued = 8 }, &p), 0);

        running = (TestJob) { .hold = &hold, .started = &started, .n_done = &n_done };
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &running), 0);
        wait_started(&started, 1);
        for (size_t i = 0; i < ELEMENTSOF(queued); i++) {
                queued[i].n_done = &n_done;
                ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &queued[i]), 0);
                if (i == 1) {
                        other.n_done = &n_done;
                        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, other_done, &other), 0);
                }
        }
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 6);

        ck_assert_uint_eq(sbx_worker_pool_cancel_queued(p, job_done, job_cancel), ELEMENTSOF(queued));
        ck_assert_uint_eq(cancelled.n, ELEMENTSOF(queued));
        ck_assert(cancelled.on_main);
        ck_assert_ptr_eq(cancelled.last, &queued[ELEMENTSOF(queued) - 1]);     /* in queue order */
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 2);
        later.n_done = &n_done;
        ck_assert_int_eq(sbx_worker_pool_submit(p, job_run, job_done, &later), 0);

        pthread_barrier_wait(&hold);
        run_until(e, &n_done, 3);
        ck_assert(pthread_equal(running.done_on, pthread_self()));
        ck_assert(other.ran && later.ran);
        ck_assert_uint_eq(sbx_worker_pool_pending(p), 0);
        ck_assert_uint_eq(sbx_worker_pool_cancel_queued(p, job_done, job_cancel), 0);

        sbx_worker_pool_free(p);
        ck_assert_uint_eq(n_done, 3);
        for (size_t i = 0; i < ELEMENTSOF(queued); i++)
                ck_assert(!queued[i].ran);
        ck_assert_uint_eq(cancelled.n, ELEMENTSOF(queued));
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
        tcase_add_test(tc, test_burst_on_an_idle_pool);
        tcase_add_test(tc, test_threads_on_demand);
        tcase_add_test(tc, test_idle_threads_retire);
        tcase_add_test(tc, test_trickle_lets_workers_retire);
        tcase_add_test(tc, test_retired_stacks_unmapped);
        tcase_add_test(tc, test_cancel_queued);
        tcase_add_test(tc, test_failed_init_is_tried_again);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
