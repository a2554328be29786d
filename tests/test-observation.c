/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The observation rule (src/core/observation.c, docs/api.md#reads-from-observations): every way an
 * observation stops being usable, the races between a request in flight and an
 * event, and that every payload is freed exactly once. */

#include "sbx-test.h"

#include "macro.h"
#include "observation.h"

#define SEC 1000000ULL
static int n_alive;

static void *payload(void) {
        n_alive++;
        return malloc(1);
}

static void free_payload(void *p) {
        n_alive--;
        free(p);
}

static SbxObservations *table(uint64_t max_age, size_t max_entries) {
        SbxObservations *t = sbx_observations_new(max_age, max_entries, free_payload);

        ck_assert_ptr_nonnull(t);
        sbx_observations_stream_connected(t);
        return t;
}

static bool put(SbxObservations *t, const char *id, uint64_t now) {
        return sbx_observations_put(t, id, sbx_observations_ticket(t), now, payload());
}

static void done(SbxObservations *t) {
        sbx_observations_free(t);
        ck_assert_int_eq(n_alive, 0);
}

START_TEST(test_used_within_max_age) {
        SbxObservations *t = table(2 * SEC, 0);

        ck_assert(put(t, "a", 10 * SEC));
        ck_assert_ptr_nonnull(sbx_observations_get(t, "a", 10 * SEC));
        ck_assert_ptr_nonnull(sbx_observations_get(t, "a", 12 * SEC));
        ck_assert_ptr_null(sbx_observations_get(t, "a", 12 * SEC + 1));
        ck_assert_int_eq(n_alive, 0);                   /* the stale one is freed at once */
        ck_assert_ptr_null(sbx_observations_get(t, "b", 10 * SEC));
        /* A clock that went back is no reason to trust it. */
        ck_assert(put(t, "a", 10 * SEC));
        ck_assert_ptr_null(sbx_observations_get(t, "a", 9 * SEC));
        done(t);
}
END_TEST

START_TEST(test_expired_freed_by_the_next_put) {
        SbxObservations *t = table(2 * SEC, 0);

        ck_assert(put(t, "a", 10 * SEC));
        ck_assert(put(t, "b", 11 * SEC));
        ck_assert(sbx_observations_event(t, "c", "start"));     /* a record without one */
        ck_assert(put(t, "d", 12 * SEC + 500000));              /* a is past its age: freed */
        ck_assert_int_eq(n_alive, 2);
        ck_assert_uint_eq(sbx_observations_size(t), 2);
        ck_assert_ptr_nonnull(sbx_observations_get(t, "b", 12 * SEC + 500000));
        ck_assert(put(t, "e", 20 * SEC));                       /* b and d too */
        ck_assert_int_eq(n_alive, 1);
        ck_assert_ptr_nonnull(sbx_observations_get(t, "e", 20 * SEC));
        ck_assert(put(t, "f", 21 * SEC));
        sbx_observations_sweep(t, 22 * SEC + 500000);           /* e is past its age, f not */
        ck_assert_int_eq(n_alive, 1);
        ck_assert_ptr_nonnull(sbx_observations_get(t, "f", 22 * SEC + 500000));
        sbx_observations_sweep(t, 30 * SEC);
        ck_assert_int_eq(n_alive, 0);
        done(t);
}
END_TEST

START_TEST(test_off_and_disconnected) {
        SbxObservations *t = table(0, 0);
        SbxObservations *u = sbx_observations_new(2 * SEC, 0, free_payload);

        ck_assert(!put(t, "a", 1));                     /* max age 0: the cache is off */
        ck_assert_ptr_null(sbx_observations_get(t, "a", 1));
        ck_assert(!put(u, "a", 1));                     /* no stream yet */
        ck_assert_int_eq(n_alive, 0);
        sbx_observations_free(u);
        done(t);
}
END_TEST

START_TEST(test_every_event_but_exec_invalidates) {
        static const char *const actions[] = { "start", "die", "kill", "stop", "pause", "unpause", "update",
                                               "rename", "restart", "oom", "health_status: healthy", "create",
                                               "attach", "detach", "commit", "copy", "export", "top",
                                               "resize", "mount", "unmount" };
        SbxObservations *t = table(2 * SEC, 0);

        for (size_t i = 0; i < ELEMENTSOF(actions); i++) {
                ck_assert(put(t, "a", 1));
                ck_assert(put(t, "b", 1));
                ck_assert(sbx_observations_event(t, "a", actions[i]));
                ck_assert_msg(!sbx_observations_get(t, "a", 1), "%s did not invalidate", actions[i]);
                ck_assert_ptr_nonnull(sbx_observations_get(t, "b", 1));  /* another container's */
        }
        ck_assert(put(t, "a", 1));
        ck_assert(!sbx_observations_event(t, "a", "exec_create: sh"));
        ck_assert(!sbx_observations_event(t, "a", "exec_start: sh"));
        ck_assert(!sbx_observations_event(t, "a", "exec_die"));
        ck_assert_ptr_nonnull(sbx_observations_get(t, "a", 1));
        done(t);
}
END_TEST

/* The request was sent, then an event came, then the answer: the answer may show
 * the state before the event, so it is not kept. */
START_TEST(test_event_while_the_request_was_in_flight) {
        SbxObservations *t = table(2 * SEC, 0);
        SbxObservationTicket k = sbx_observations_ticket(t);

        sbx_observations_event(t, "a", "die");
        ck_assert(!sbx_observations_put(t, "a", k, 1, payload()));
        ck_assert_int_eq(n_alive, 0);
        /* Another container's event does not matter. */
        k = sbx_observations_ticket(t);
        sbx_observations_event(t, "b", "die");
        ck_assert(sbx_observations_put(t, "a", k, 1, payload()));
        /* A ticket taken after the event is fine. */
        sbx_observations_event(t, "a", "start");
        ck_assert(put(t, "a", 1));
        ck_assert_ptr_nonnull(sbx_observations_get(t, "a", 1));
        done(t);
}
END_TEST

/* A gap in the stream could have hidden any event. */
START_TEST(test_a_gap_in_the_stream) {
        SbxObservations *t = table(2 * SEC, 0);
        SbxObservationTicket k;

        ck_assert(put(t, "a", 1));
        sbx_observations_stream_lost(t);
        ck_assert_ptr_null(sbx_observations_get(t, "a", 1));
        ck_assert_int_eq(n_alive, 0);
        ck_assert(!put(t, "a", 1));                     /* not while it is down */
        k = sbx_observations_ticket(t);
        sbx_observations_stream_connected(t);
        ck_assert(!sbx_observations_put(t, "a", k, 1, payload()));     /* taken during the gap */

        k = sbx_observations_ticket(t);
        sbx_observations_stream_lost(t);
        sbx_observations_stream_connected(t);
        ck_assert(!sbx_observations_put(t, "a", k, 1, payload()));     /* a gap while in flight */
        ck_assert(put(t, "a", 1));
        ck_assert_ptr_nonnull(sbx_observations_get(t, "a", 1));
        done(t);
}
END_TEST

START_TEST(test_destroy_and_drop) {
        SbxObservations *t = table(2 * SEC, 0);
        SbxObservationTicket k;

        ck_assert(put(t, "a", 1));
        k = sbx_observations_ticket(t);
        sbx_observations_event(t, "a", "destroy");
        ck_assert_ptr_null(sbx_observations_get(t, "a", 1));
        ck_assert(!sbx_observations_put(t, "a", k, 1, payload()));     /* from before the removal */
        ck_assert(put(t, "b", 1));
        sbx_observations_drop(t, "b");                  /* RefreshSandbox */
        ck_assert_ptr_null(sbx_observations_get(t, "b", 1));
        ck_assert(put(t, "b", 1));
        sbx_observations_set_max_age(t, 0);             /* turned off on reload */
        ck_assert_int_eq(n_alive, 0);
        ck_assert_ptr_null(sbx_observations_get(t, "b", 1));
        done(t);
}
END_TEST

/* Bounded: the oldest goes; a request in flight for an evicted container whose
 * event was forgotten with it is not trusted. */
START_TEST(test_bounded) {
        SbxObservations *t = table(2 * SEC, 2);
        SbxObservationTicket k;

        ck_assert(put(t, "a", 1));
        ck_assert(put(t, "b", 1));
        ck_assert(put(t, "c", 1));
        ck_assert_uint_eq(sbx_observations_size(t), 2);
        ck_assert_ptr_null(sbx_observations_get(t, "a", 1));
        ck_assert_int_eq(n_alive, 2);

        k = sbx_observations_ticket(t);
        sbx_observations_event(t, "x", "die");          /* x's record evicts b */
        sbx_observations_event(t, "y", "die");          /* y's evicts c; then x is the oldest */
        sbx_observations_event(t, "z", "die");          /* z's evicts x and its event */
        ck_assert(!sbx_observations_put(t, "x", k, 1, payload()));
        ck_assert_int_le(n_alive, 2);
        for (int i = 0; i < 1000; i++) {
                char id[16];

                snprintf(id, sizeof id, "c%d", i);
                (void) put(t, id, 1);
                ck_assert_uint_le(sbx_observations_size(t), 2);
        }
        done(t);
}
END_TEST

/* Whether anything happened to a container since a ticket: for an answer that is
 * not an observation (the object's refresh after an event), observations on or off. */
START_TEST(test_quiet_since) {
        for (uint64_t age = 0; age <= 2 * SEC; age += 2 * SEC) {
                SbxObservations *t = table(age, 0);
                SbxObservationTicket k = sbx_observations_ticket(t);

                ck_assert(sbx_observations_quiet_since(t, "a", k));
                sbx_observations_event(t, "b", "update");               /* another container */
                sbx_observations_event(t, "a", "exec_start: sh");       /* changes nothing */
                ck_assert(sbx_observations_quiet_since(t, "a", k));
                sbx_observations_event(t, "a", "die");
                ck_assert(!sbx_observations_quiet_since(t, "a", k));
                k = sbx_observations_ticket(t);                         /* after it: quiet */
                ck_assert(sbx_observations_quiet_since(t, "a", k));
                sbx_observations_event(t, "a", "destroy");              /* forgets it, raises the floor */
                ck_assert(!sbx_observations_quiet_since(t, "a", k));
                k = sbx_observations_ticket(t);
                sbx_observations_stream_lost(t);                        /* a gap hides anything */
                ck_assert(!sbx_observations_quiet_since(t, "a", k));
                sbx_observations_stream_connected(t);
                ck_assert(!sbx_observations_quiet_since(t, "a", k));
                ck_assert(sbx_observations_quiet_since(t, "a", sbx_observations_ticket(t)));
                done(t);
        }
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("observation");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_used_within_max_age);
        tcase_add_test(tc, test_expired_freed_by_the_next_put);
        tcase_add_test(tc, test_off_and_disconnected);
        tcase_add_test(tc, test_every_event_but_exec_invalidates);
        tcase_add_test(tc, test_event_while_the_request_was_in_flight);
        tcase_add_test(tc, test_a_gap_in_the_stream);
        tcase_add_test(tc, test_destroy_and_drop);
        tcase_add_test(tc, test_bounded);
        tcase_add_test(tc, test_quiet_since);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
