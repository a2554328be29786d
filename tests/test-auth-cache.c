/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "auth-cache.h"
#include "sbx-test.h"

#define SEC 1000000ULL

START_TEST(test_remember_expire_forget) {
        AuthCache *c = auth_cache_new();

        ck_assert(!auth_cache_allowed(c, ":1.5", "a", 0));
        auth_cache_remember(c, ":1.5", "a", 10 * SEC);
        ck_assert(auth_cache_allowed(c, ":1.5", "a", 10 * SEC));
        ck_assert(auth_cache_allowed(c, ":1.5", "a", 10 * SEC + SBX_AUTH_CACHE_USEC - 1));
        /* another connection, another action: nothing */
        ck_assert(!auth_cache_allowed(c, ":1.6", "a", 11 * SEC));
        ck_assert(!auth_cache_allowed(c, ":1.5", "b", 11 * SEC));
        /* expired */
        ck_assert(!auth_cache_allowed(c, ":1.5", "a", 10 * SEC + SBX_AUTH_CACHE_USEC));
        ck_assert_uint_eq(auth_cache_size(c), 0);

        /* a disconnect forgets at once */
        auth_cache_remember(c, ":1.7", "a", 20 * SEC);
        auth_cache_remember(c, ":1.7", "b", 20 * SEC);
        auth_cache_remember(c, ":1.8", "a", 20 * SEC);
        auth_cache_forget(c, ":1.7");
        ck_assert(!auth_cache_allowed(c, ":1.7", "a", 20 * SEC));
        ck_assert(!auth_cache_allowed(c, ":1.7", "b", 20 * SEC));
        ck_assert(auth_cache_allowed(c, ":1.8", "a", 20 * SEC));
        auth_cache_free(c);
}
END_TEST

/* Bounded: past SBX_AUTH_CACHE_MAX live entries nothing more is remembered. */
START_TEST(test_bounded) {
        AuthCache *c = auth_cache_new();
        char name[32];

        for (unsigned i = 0; i < SBX_AUTH_CACHE_MAX + 10; i++) {
                snprintf(name, sizeof name, ":1.%u", i);
                auth_cache_remember(c, name, "a", SEC);
        }
        ck_assert_uint_eq(auth_cache_size(c), SBX_AUTH_CACHE_MAX);
        ck_assert(!auth_cache_allowed(c, ":1.1030", "a", SEC));
        /* once they expire there is room again */
        auth_cache_remember(c, ":2.1", "a", SEC + SBX_AUTH_CACHE_USEC);
        ck_assert_uint_eq(auth_cache_size(c), 1);
        auth_cache_free(c);
}
END_TEST

/* The widening's answers: a no is remembered as a no (not as a yes, not as nothing),
 * replaced by a later answer, expired and forgotten like a yes. */
START_TEST(test_answers) {
        AuthCache *c = auth_cache_new();

        ck_assert_int_eq(auth_cache_answer(c, ":1.5", "w", SEC), -ENOENT);
        auth_cache_remember_answer(c, ":1.5", "w", false, SEC);
        ck_assert_int_eq(auth_cache_answer(c, ":1.5", "w", SEC), 0);
        ck_assert(!auth_cache_allowed(c, ":1.5", "w", SEC));
        ck_assert_int_eq(auth_cache_answer(c, ":1.6", "w", SEC), -ENOENT);
        auth_cache_remember_answer(c, ":1.5", "w", true, 2 * SEC);
        ck_assert_int_eq(auth_cache_answer(c, ":1.5", "w", 2 * SEC), 1);
        ck_assert(auth_cache_allowed(c, ":1.5", "w", 2 * SEC));
        ck_assert_uint_eq(auth_cache_size(c), 1);
        auth_cache_remember_answer(c, ":1.5", "w", false, 3 * SEC);
        ck_assert_int_eq(auth_cache_answer(c, ":1.5", "w", 3 * SEC + SBX_AUTH_CACHE_USEC - 1), 0);
        ck_assert_int_eq(auth_cache_answer(c, ":1.5", "w", 3 * SEC + SBX_AUTH_CACHE_USEC), -ENOENT);

        auth_cache_remember_answer(c, ":1.7", "w", false, 10 * SEC);
        auth_cache_forget(c, ":1.7");
        ck_assert_int_eq(auth_cache_answer(c, ":1.7", "w", 10 * SEC), -ENOENT);
        auth_cache_remember_answer(c, ":1.8", "w", false, 10 * SEC);
        auth_cache_clear(c);
        ck_assert_int_eq(auth_cache_answer(c, ":1.8", "w", 10 * SEC), -ENOENT);
        auth_cache_free(c);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("auth-cache");
        TCase *tc = tcase_create("auth-cache");

        tcase_add_test(tc, test_remember_expire_forget);
        tcase_add_test(tc, test_bounded);
        tcase_add_test(tc, test_answers);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
