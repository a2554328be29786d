/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The observations shared by the event thread and the workers
 * (src/lifecycle/observation-cache.c): a change made by the service rejects an
 * answer from before it, a read keeps the observation it got while an event drops
 * it, a lost stream invalidates everything, and an event thread racing readers
 * leaves every observation freed exactly once. */

#include <pthread.h>

#include "sbx-test.h"

#include "observation-cache.h"

#define AGE 60000000ULL

static SbxSeen *seen_of(const char *id) {
        SbxObserved *o = calloc(1, sizeof(SbxObserved));
        SbxSeen *s;

        ck_assert_ptr_nonnull(o);
        o->id = strdup(id);
        o->raw_status = strdup("running");
        s = sbx_seen_new(o);
        ck_assert_ptr_nonnull(s);
        return s;
}

static void put(SbxObservationCache *c, const char *id, SbxObservationTicket k) {
        SbxSeen *s = seen_of(id);

        sbx_observation_cache_put(c, id, k, AGE, s);
        sbx_seen_unref(s);
}

START_TEST(test_used_and_dropped) {
        SbxObservationCache *c = sbx_observation_cache_new();
        SbxSeen *got;

        ck_assert_ptr_nonnull(c);
        /* not connected yet: nothing is kept */
        put(c, "a", sbx_observation_cache_ticket(c));
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", AGE));
        sbx_observation_cache_connected(c);
        put(c, "a", sbx_observation_cache_ticket(c));
        got = sbx_observation_cache_get(c, "a", AGE);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got->observed->id, "a");
        /* an event drops it from the table; the reader's reference still holds */
        sbx_observation_cache_event(c, "a", "update");
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", AGE));
        ck_assert_str_eq(got->observed->id, "a");
        sbx_seen_unref(got);
        /* exec_* changes nothing */
        put(c, "a", sbx_observation_cache_ticket(c));
        sbx_observation_cache_event(c, "a", "exec_start: sh");
        sbx_seen_unref(sbx_observation_cache_get(c, "a", AGE) ?: (ck_abort(), NULL));
        /* max age 0 (the policy's): off */
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", 0));
        put(c, "a", sbx_observation_cache_ticket(c));
        sbx_observation_cache_drop(c, "a");
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", AGE));
        sbx_observation_cache_free(c);
}
END_TEST

START_TEST(test_changed_rejects_what_was_in_flight) {
        SbxObservationCache *c = sbx_observation_cache_new();
        SbxObservationTicket before;

        sbx_observation_cache_connected(c);
        before = sbx_observation_cache_ticket(c);
        sbx_observation_cache_changed(c, "a");          /* a stop, while a read was asking */
        put(c, "a", before);
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", AGE));
        put(c, "a", sbx_observation_cache_ticket(c));   /* asked after the stop: kept */
        sbx_seen_unref(sbx_observation_cache_get(c, "a", AGE) ?: (ck_abort(), NULL));
        sbx_observation_cache_changed(c, NULL);         /* nothing to say: nothing done */
        sbx_observation_cache_changed(NULL, "a");
        sbx_observation_cache_sweep(NULL);
        sbx_observation_cache_sweep(c);
        sbx_observation_cache_free(c);
}
END_TEST

START_TEST(test_lost_stream) {
        SbxObservationCache *c = sbx_observation_cache_new();
        SbxObservationTicket before;

        sbx_observation_cache_connected(c);
        put(c, "a", sbx_observation_cache_ticket(c));
        before = sbx_observation_cache_ticket(c);
        sbx_observation_cache_lost(c);
        ck_assert_ptr_null(sbx_observation_cache_get(c, "a", AGE));
        put(c, "b", before);
        put(c, "b", sbx_observation_cache_ticket(c));
        ck_assert_ptr_null(sbx_observation_cache_get(c, "b", AGE));
        sbx_observation_cache_connected(c);
        put(c, "b", before);                            /* from before the gap */
        ck_assert_ptr_null(sbx_observation_cache_get(c, "b", AGE));
        ck_assert_uint_eq(sbx_observation_cache_size(c), 0);
        sbx_observation_cache_free(c);
}
END_TEST

static void *events(void *userdata) {
        SbxObservationCache *c = userdata;

        for (unsigned i = 0; i < 20000; i++) {
                sbx_observation_cache_event(c, i % 2 ? "a" : "b", "update");
                if (i % 1000 == 0) {
                        sbx_observation_cache_lost(c);
                        sbx_observation_cache_connected(c);
                }
        }
        return NULL;
}

START_TEST(test_event_thread_races_readers) {
        SbxObservationCache *c = sbx_observation_cache_new();
        pthread_t t;

        sbx_observation_cache_connected(c);
        ck_assert_int_eq(pthread_create(&t, NULL, events, c), 0);
        for (unsigned i = 0; i < 20000; i++) {
                const char *id = i % 3 ? "a" : "b";
                SbxSeen *s = sbx_observation_cache_get(c, id, AGE);

                if (s)
                        ck_assert_str_eq(s->observed->id, id);
                else
                        put(c, id, sbx_observation_cache_ticket(c));
                sbx_seen_unref(s);
        }
        pthread_join(t, NULL);
        sbx_observation_cache_free(c);          /* ASan: nothing leaked, nothing freed twice */
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("observation-cache");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_used_and_dropped);
        tcase_add_test(tc, test_changed_rejects_what_was_in_flight);
        tcase_add_test(tc, test_lost_stream);
        tcase_add_test(tc, test_event_thread_races_readers);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(suite)
