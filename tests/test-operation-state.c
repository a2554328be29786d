/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "macro.h"
#include "operation-state.h"
#include "sbx-test.h"

#define BAD _OPERATION_STATE_MAX

/* Every (state, event) pair: the one transition it makes, or none. */
START_TEST(test_transitions) {
        static const struct {
                OperationState from;
                OperationEvent event;
                bool lists, widened;
                OperationState to;
        } table[] = {
                /* polkit first, always: nothing is looked up before it says yes */
                { OPERATION_AUTHORIZING, OPERATION_ALLOWED,   false, false, OPERATION_QUEUED },
                { OPERATION_AUTHORIZING, OPERATION_ALLOWED,   true,  false, OPERATION_WIDENING },
                { OPERATION_AUTHORIZING, OPERATION_ALLOWED,   true,  true,  OPERATION_QUEUED },   /* root */
                { OPERATION_AUTHORIZING, OPERATION_DENIED,    false, false, OPERATION_FAILED },
                { OPERATION_AUTHORIZING, OPERATION_DENIED,    true,  false, OPERATION_FAILED },
                { OPERATION_AUTHORIZING, OPERATION_SUBMITTED, false, false, BAD },
                { OPERATION_AUTHORIZING, OPERATION_SUCCEEDED, false, false, BAD },
                { OPERATION_AUTHORIZING, OPERATION_ERRED,     false, false, BAD },
                /* lists: a no from manage-others only narrows what is listed */
                { OPERATION_WIDENING,    OPERATION_ALLOWED,   true,  true,  OPERATION_QUEUED },
                { OPERATION_WIDENING,    OPERATION_DENIED,    true,  true,  OPERATION_QUEUED },
                { OPERATION_WIDENING,    OPERATION_SUCCEEDED, true,  true,  BAD },
                /* on a worker pool */
                { OPERATION_QUEUED,      OPERATION_SUBMITTED, false, false, OPERATION_QUEUED },
                { OPERATION_QUEUED,      OPERATION_REFUSED,   false, false, OPERATION_FAILED },
                { OPERATION_QUEUED,      OPERATION_SUCCEEDED, false, false, OPERATION_DONE },
                { OPERATION_QUEUED,      OPERATION_ERRED,     false, false, OPERATION_FAILED },
                { OPERATION_QUEUED,      OPERATION_ALLOWED,   false, false, BAD },
                { OPERATION_QUEUED,      OPERATION_DENIED,    false, false, BAD },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++)
                ck_assert_msg(operation_next_state(table[i].from, table[i].event, table[i].lists,
                                                   table[i].widened) == table[i].to, "row %zu", i);
        /* the ends are final */
        for (OperationEvent e = 0; e < _OPERATION_EVENT_MAX; e++) {
                ck_assert_int_eq(operation_next_state(OPERATION_DONE, e, false, false), BAD);
                ck_assert_int_eq(operation_next_state(OPERATION_FAILED, e, true, false), BAD);
        }
        for (OperationState s = 0; s < _OPERATION_STATE_MAX; s++)
                ck_assert_ptr_nonnull(operation_state_to_string(s));
        ck_assert_ptr_null(operation_state_to_string(BAD));
}
END_TEST

/* A whole run of each kind of verb ends in DONE or FAILED. */
START_TEST(test_paths) {
        OperationState s = OPERATION_AUTHORIZING;

        s = operation_next_state(s, OPERATION_ALLOWED, true, false);
        s = operation_next_state(s, OPERATION_DENIED, true, true);
        s = operation_next_state(s, OPERATION_SUBMITTED, true, true);
        ck_assert_int_eq(operation_next_state(s, OPERATION_SUCCEEDED, true, true), OPERATION_DONE);

        s = operation_next_state(OPERATION_AUTHORIZING, OPERATION_ALLOWED, false, false);
        ck_assert_int_eq(operation_next_state(s, OPERATION_REFUSED, false, false), OPERATION_FAILED);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("operation-state");
        TCase *tc = tcase_create("bus");

        tcase_add_test(tc, test_transitions);
        tcase_add_test(tc, test_paths);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
