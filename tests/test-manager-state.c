/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Manager's bookkeeping (src/bus/manager-state.c) on a Manager without a bus:
 * the idle exit is held off while anything is busy and armed again by the last
 * idle, and an arming that fails is reported and leaves the timer off rather than
 * at a stale time. Each caller's share is its own. */

#include <errno.h>

#include "manager-state.h"
#include "sbx-test.h"

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        return 0;
}

static int enabled(Manager *m) {
        int state = -1;

        ck_assert_int_ge(sd_event_source_get_enabled(m->idle_source, &state), 0);
        return state;
}

static void manager_init(Manager *m) {
        *m = (Manager) { .idle_timeout_s = 30, .policy = sbx_policy_new_default() };
        ck_assert_ptr_nonnull(m->policy);
        ck_assert_int_ge(sd_event_new(&m->event), 0);
        ck_assert_int_ge(sd_event_add_time_relative(m->event, &m->idle_source, CLOCK_MONOTONIC, 30 * 1000000ULL, 0,
                                                    on_idle, m), 0);
}

static void manager_done(Manager *m) {
        sd_event_source_unref(m->idle_source);
        sd_event_unref(m->event);
        sbx_policy_unref(m->policy);
}

START_TEST(test_idle_rearmed_by_the_last_idle) {
        Manager m;

        manager_init(&m);
        ck_assert_int_eq(manager_busy(&m, 1001), 0);
        ck_assert_int_eq(manager_busy_as(&m, 1002, true), 0);
        ck_assert_int_eq(enabled(&m), SD_EVENT_OFF);
        manager_idle(&m, 1001);
        ck_assert_int_eq(enabled(&m), SD_EVENT_OFF);           /* 1002's read still runs */
        manager_idle_as(&m, 1002, true);
        ck_assert_int_eq(enabled(&m), SD_EVENT_ONESHOT);
        ck_assert_uint_eq(m.n_busy, 0);
        manager_done(&m);
}
END_TEST

START_TEST(test_shares_apart) {
        Manager m;
        int64_t max;

        manager_init(&m);
        max = m.policy->max_operations_per_user;
        for (int64_t i = 0; i < max; i++)
                ck_assert_int_eq(manager_busy(&m, 1001), 0);
        ck_assert_int_eq(manager_busy(&m, 1001), -EBUSY);
        ck_assert_int_eq(manager_busy_as(&m, 1001, true), 0);   /* reads are a share of their own */
        ck_assert_int_eq(manager_busy(&m, 1002), 0);            /* so is another caller's */
        ck_assert_int_eq(manager_busy(&m, 0), 0);               /* root has no cap */
        manager_idle_as(&m, 1001, true);
        manager_idle(&m, 1002);
        manager_idle(&m, 0);
        for (int64_t i = 0; i < max; i++)
                manager_idle(&m, 1001);
        ck_assert_uint_eq(m.n_busy, 0);
        ck_assert_ptr_null(m.busy_by_uid);
        manager_done(&m);
}
END_TEST

START_TEST(test_arming_failure_is_reported) {
        sd_event_source *timer;
        Manager m;

        manager_init(&m);
        ck_assert_int_eq(manager_arm_idle(&m), 0);
        ck_assert_int_eq(enabled(&m), SD_EVENT_ONESHOT);
        /* A source whose time cannot be set (here: not a timer, -EDOM) is not left
         * enabled with whatever time it had. */
        timer = m.idle_source;
        ck_assert_int_ge(sd_event_add_defer(m.event, &m.idle_source, NULL, NULL), 0);
        ck_assert_int_eq(enabled(&m), SD_EVENT_ONESHOT);
        ck_assert_int_eq(manager_arm_idle(&m), -EDOM);
        ck_assert_int_eq(enabled(&m), SD_EVENT_OFF);
        sd_event_source_unref(m.idle_source);
        m.idle_source = timer;
        /* A finished loop refuses to arm anything (-ESTALE): said. */
        ck_assert_int_ge(sd_event_source_set_enabled(timer, SD_EVENT_OFF), 0);
        ck_assert_int_ge(sd_event_exit(m.event, 0), 0);
        ck_assert_int_ge(sd_event_loop(m.event), 0);
        ck_assert_int_eq(manager_arm_idle(&m), -ESTALE);
        manager_done(&m);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("manager-state");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_idle_rearmed_by_the_last_idle);
        tcase_add_test(tc, test_shares_apart);
        tcase_add_test(tc, test_arming_failure_is_reported);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
