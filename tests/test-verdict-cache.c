/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The judgements lists use instead of an inspect: keyed by container and row, good
 * only for the observation they were worked out from, forgotten on request, bounded. */

#include "sbx-test.h"

#include "verdict-cache.h"

static SbxSeen *seen(void) {
        SbxSeen *s = sbx_seen_new(calloc(1, sizeof(SbxObserved)));

        ck_assert_ptr_nonnull(s);
        return s;
}

START_TEST(test_get_put_forget) {
        _cleanup_(sbx_verdict_cache_freep) SbxVerdictCache *c = sbx_verdict_cache_new();
        _cleanup_(sbx_seen_unrefp) SbxSeen *s = seen(), *newer = seen();
        SbxJudgement j = {};

        ck_assert_ptr_nonnull(c);
        ck_assert(!sbx_verdict_cache_get(c, "c1", "", s, &j));
        sbx_verdict_cache_put(c, "c1", "fp", s, &(SbxJudgement) { .verdict = SBX_VERDICT_MATCH, .hardened = true,
                                                              .image = (char *) "img", .created_us = 7 });
        ck_assert(!sbx_verdict_cache_get(c, "c1", "fp", NULL, &j));       /* no observation stands */
        ck_assert(sbx_verdict_cache_get(c, "c1", "fp", s, &j));
        ck_assert_int_eq(j.verdict, SBX_VERDICT_MATCH);
        ck_assert(j.hardened);
        ck_assert_str_eq(j.image, "img");
        ck_assert_uint_eq(j.created_us, 7);
        free(j.image);
        /* another row (or none) about the same container: not this judgement */
        ck_assert(!sbx_verdict_cache_get(c, "c1", "", s, &j));
        ck_assert(!sbx_verdict_cache_get(c, "c1", "other", s, &j));
        /* another observation of it (a newer inspect, a refresh): not this judgement,
         * which goes */
        ck_assert(!sbx_verdict_cache_get(c, "c1", "fp", newer, &j));
        ck_assert_uint_eq(sbx_verdict_cache_size(c), 0);
        ck_assert(!sbx_verdict_cache_get(c, "c1", "fp", s, &j));
        /* replaced, then forgotten */
        sbx_verdict_cache_put(c, "c1", "fp", s, &(SbxJudgement) { .verdict = SBX_VERDICT_MATCH });
        sbx_verdict_cache_put(c, "c1", "", s, &(SbxJudgement) { .verdict = SBX_VERDICT_UNVERIFIED });
        ck_assert(!sbx_verdict_cache_get(c, "c1", "fp", s, &j));
        ck_assert(sbx_verdict_cache_get(c, "c1", "", s, &j));
        ck_assert_int_eq(j.verdict, SBX_VERDICT_UNVERIFIED);
        ck_assert_ptr_null(j.image);
        ck_assert_uint_eq(sbx_verdict_cache_size(c), 1);
        sbx_verdict_cache_forget(c, "c1");
        sbx_verdict_cache_forget(c, "c1");
        ck_assert(!sbx_verdict_cache_get(c, "c1", "", s, &j));
        ck_assert_uint_eq(sbx_verdict_cache_size(c), 0);
        /* none without an observation to judge by */
        sbx_verdict_cache_put(c, "c1", "", NULL, &(SbxJudgement) { .verdict = SBX_VERDICT_MATCH });
        ck_assert_uint_eq(sbx_verdict_cache_size(c), 0);
}
END_TEST

START_TEST(test_bounded_and_cleared) {
        _cleanup_(sbx_verdict_cache_freep) SbxVerdictCache *c = sbx_verdict_cache_new();
        _cleanup_(sbx_seen_unrefp) SbxSeen *s = seen();
        SbxJudgement j = {};
        char id[32];

        for (unsigned i = 0; i < SBX_VERDICT_CACHE_MAX + 10; i++) {
                snprintf(id, sizeof id, "c%u", i);
                sbx_verdict_cache_put(c, id, "", s, &(SbxJudgement) { .image = (char *) "i" });
                ck_assert_uint_le(sbx_verdict_cache_size(c), SBX_VERDICT_CACHE_MAX);
        }
        ck_assert(sbx_verdict_cache_get(c, id, "", s, &j));
        free(j.image);
        sbx_verdict_cache_clear(c);
        ck_assert_uint_eq(sbx_verdict_cache_size(c), 0);
        ck_assert(!sbx_verdict_cache_get(c, id, "", s, &j));
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("verdict-cache");
        TCase *tc = tcase_create("verdict-cache");

        tcase_add_test(tc, test_get_put_forget);
        tcase_add_test(tc, test_bounded_and_cleared);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
