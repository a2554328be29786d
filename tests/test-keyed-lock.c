/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "keyed-lock.h"

/* An ordered record of what the threads did. */
typedef struct Log {
        pthread_mutex_t mutex;
        int items[64];
        int n;
} Log;

static void log_add(Log *l, int v) {
        pthread_mutex_lock(&l->mutex);
        ck_assert_int_lt(l->n, (int) ELEMENTSOF(l->items));
        l->items[l->n++] = v;
        pthread_mutex_unlock(&l->mutex);
}

static int log_count(Log *l) {
        int n;

        pthread_mutex_lock(&l->mutex);
        n = l->n;
        pthread_mutex_unlock(&l->mutex);
        return n;
}

/* A one-shot signal between threads. */
typedef struct Gate {
        pthread_mutex_t mutex;
        pthread_cond_t cond;
        bool open;
} Gate;

#define GATE_INIT { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false }

static void gate_open(Gate *g) {
        pthread_mutex_lock(&g->mutex);
        g->open = true;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->mutex);
}

static void gate_wait(Gate *g) {
        pthread_mutex_lock(&g->mutex);
        while (!g->open)
                pthread_cond_wait(&g->cond, &g->mutex);
        pthread_mutex_unlock(&g->mutex);
}

typedef struct Worker {
        pthread_t thread;
        SbxKeyedLockRegistry *reg;
        const char *key;
        int id;
        Log *log;
        Gate *acquired;         /* opened once the lock is held, if set */
        Gate *go;               /* waited on before releasing, if set */
} Worker;

static void *worker_run(void *arg) {
        Worker *w = arg;
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *h = NULL;

        ck_assert_int_eq(sbx_keyed_lock_acquire(w->reg, w->key, &h), 0);
        log_add(w->log, w->id);
        if (w->acquired)
                gate_open(w->acquired);
        if (w->go)
                gate_wait(w->go);
        return NULL;
}

static void worker_start(Worker *w) {
        ck_assert_int_eq(pthread_create(&w->thread, NULL, worker_run, w), 0);
}

static void worker_join(Worker *w) {
        ck_assert_int_eq(pthread_join(w->thread, NULL), 0);
}

/* The one unavoidable wait: a thread blocked inside acquire signals nothing, so
 * poll the waiter count until it has queued. */
static void wait_for_waiters(SbxKeyedLockRegistry *reg, const char *key, int n) {
        const struct timespec tick = { .tv_nsec = 1000 * 1000 };

        for (int i = 0; i < 30 * 1000; i++) {
                if (sbx_keyed_lock_waiters(reg, key) == n)
                        return;
                nanosleep(&tick, NULL);
        }
        ck_abort_msg("waiters(%s) never reached %d (is %d)", key, n, sbx_keyed_lock_waiters(reg, key));
}

#define LOG_INIT { .mutex = PTHREAD_MUTEX_INITIALIZER }

START_TEST(test_second_caller_waits) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *h = NULL;
        Log log = LOG_INIT;
        Worker w = { .reg = reg, .key = "a", .id = 1, .log = &log };

        ck_assert_ptr_nonnull(reg);
        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        log_add(&log, 0);
        worker_start(&w);
        wait_for_waiters(reg, "a", 2);
        ck_assert_int_eq(log_count(&log), 1);  /* queued, not inside */
        log_add(&log, 10);
        h = sbx_keyed_lock_handle_free(h);
        worker_join(&w);

        ck_assert_int_eq(log.n, 3);
        ck_assert_int_eq(log.items[0], 0);
        ck_assert_int_eq(log.items[1], 10);
        ck_assert_int_eq(log.items[2], 1);
}
END_TEST

START_TEST(test_different_keys_independent) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *h = NULL;
        Log log = LOG_INIT;
        Worker w = { .reg = reg, .key = "b", .id = 1, .log = &log };
        Gate acquired = GATE_INIT, go = GATE_INIT;

        w.acquired = &acquired;
        w.go = &go;
        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        worker_start(&w);
        gate_wait(&acquired);   /* "b" is held while "a" is held */
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 2);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "b"), 1);
        gate_open(&go);
        worker_join(&w);        /* and released while "a" is still held */
        ck_assert_int_eq(log.n, 1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "b"), -1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 1);
        ck_assert_int_eq(sbx_keyed_lock_release(h), 1);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
}
END_TEST

START_TEST(test_waiter_count) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *h = NULL;
        Log log = LOG_INIT;
        Worker w = { .reg = reg, .key = "a", .id = 1, .log = &log };

        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), -1);
        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 1);
        worker_start(&w);
        wait_for_waiters(reg, "a", 2);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 1);        /* one entry, two counted */
        h = sbx_keyed_lock_handle_free(h);
        worker_join(&w);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), -1);
}
END_TEST

#define N_FIFO 6

START_TEST(test_fifo_order) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *h = NULL;
        Log log = LOG_INIT;
        Worker w[N_FIFO];

        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        for (int i = 0; i < N_FIFO; i++) {
                w[i] = (Worker) { .reg = reg, .key = "a", .id = i, .log = &log };
                worker_start(&w[i]);
                wait_for_waiters(reg, "a", i + 2);     /* queued in this order */
        }
        h = sbx_keyed_lock_handle_free(h);
        for (int i = 0; i < N_FIFO; i++)
                worker_join(&w[i]);

        ck_assert_int_eq(log.n, N_FIFO);
        for (int i = 0; i < N_FIFO; i++)
                ck_assert_int_eq(log.items[i], i);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
}
END_TEST

#define N_HAMMER 16
#define HAMMER_ROUNDS 300

typedef struct Hammer {
        SbxKeyedLockRegistry *reg;
        pthread_barrier_t start;
        atomic_int inside;
        atomic_int max_inside;
        long counter;           /* deliberately unsynchronized: the lock must protect it */
} Hammer;

static void *hammer_run(void *arg) {
        Hammer *hm = arg;

        pthread_barrier_wait(&hm->start);
        for (int i = 0; i < HAMMER_ROUNDS; i++) {
                SbxKeyedLockHandle *h = NULL;
                int now, max;

                ck_assert_int_eq(sbx_keyed_lock_acquire(hm->reg, "hot", &h), 0);
                now = atomic_fetch_add(&hm->inside, 1) + 1;
                max = atomic_load(&hm->max_inside);
                while (now > max && !atomic_compare_exchange_weak(&hm->max_inside, &max, now))
                        ;
                long c = hm->counter;
                sched_yield();
                hm->counter = c + 1;
                atomic_fetch_sub(&hm->inside, 1);
                ck_assert_int_eq(sbx_keyed_lock_release(h), 1);
                sbx_keyed_lock_handle_free(h);
        }
        return NULL;
}

START_TEST(test_max_concurrency_one) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        Hammer hm = { .reg = reg };
        pthread_t t[N_HAMMER];

        ck_assert_int_eq(pthread_barrier_init(&hm.start, NULL, N_HAMMER), 0);
        for (int i = 0; i < N_HAMMER; i++)
                ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_run, &hm), 0);
        for (int i = 0; i < N_HAMMER; i++)
                ck_assert_int_eq(pthread_join(t[i], NULL), 0);
        pthread_barrier_destroy(&hm.start);

        ck_assert_int_eq(atomic_load(&hm.max_inside), 1);
        ck_assert_int_eq(hm.counter, (long) N_HAMMER * HAMMER_ROUNDS);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
}
END_TEST

START_TEST(test_evicted_after_use) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *h = NULL;

        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 1);
        ck_assert_int_eq(sbx_keyed_lock_release(h), 1);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), -1);
        sbx_keyed_lock_handle_free(h);

        /* the _cleanup_ helper releases at scope exit */
        {
                _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *g = NULL;

                ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "b", &g), 0);
                ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "b"), 1);
        }
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
}
END_TEST

/* The holder's release hands the SAME entry to the queued waiter: it stays. */
START_TEST(test_retained_while_waiter_queued) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *h = NULL;
        Log log = LOG_INIT;
        Gate acquired = GATE_INIT, go = GATE_INIT;
        Worker w = { .reg = reg, .key = "a", .id = 1, .log = &log, .acquired = &acquired, .go = &go };

        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &h), 0);
        worker_start(&w);
        wait_for_waiters(reg, "a", 2);
        ck_assert_int_eq(sbx_keyed_lock_release(h), 1);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 1);
        gate_wait(&acquired);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 1);
        gate_open(&go);
        worker_join(&w);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
        sbx_keyed_lock_handle_free(h);
}
END_TEST

/* A handle released before (its entry since evicted and replaced) touches nothing. */
START_TEST(test_stale_handle_keeps_fresh_entry) {
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *reg = sbx_keyed_lock_registry_new();
        SbxKeyedLockHandle *stale = NULL, *fresh = NULL;
        Log log = LOG_INIT;
        Worker w = { .reg = reg, .key = "a", .id = 1, .log = &log };

        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &stale), 0);
        ck_assert_int_eq(sbx_keyed_lock_release(stale), 1);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);

        ck_assert_int_eq(sbx_keyed_lock_acquire(reg, "a", &fresh), 0);
        worker_start(&w);
        wait_for_waiters(reg, "a", 2);

        ck_assert_int_eq(sbx_keyed_lock_release(stale), 0);
        stale = sbx_keyed_lock_handle_free(stale);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 1);
        ck_assert_int_eq(sbx_keyed_lock_waiters(reg, "a"), 2);
        ck_assert_int_eq(log_count(&log), 0);  /* the queued worker was not let in */

        ck_assert_int_eq(sbx_keyed_lock_release(fresh), 1);
        worker_join(&w);
        ck_assert_int_eq(log.n, 1);
        ck_assert_int_eq(sbx_keyed_lock_registry_size(reg), 0);
        sbx_keyed_lock_handle_free(fresh);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("keyed-lock");
        TCase *tc = tcase_create("keyed-lock");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_second_caller_waits);
        tcase_add_test(tc, test_different_keys_independent);
        tcase_add_test(tc, test_waiter_count);
        tcase_add_test(tc, test_fifo_order);
        tcase_add_test(tc, test_max_concurrency_one);
        tcase_add_test(tc, test_evicted_after_use);
        tcase_add_test(tc, test_retained_while_waiter_queued);
        tcase_add_test(tc, test_stale_handle_keeps_fresh_entry);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
