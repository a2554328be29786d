/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The registry of known sandboxes (src/bus/registry.c), without a bus:
 * keyed by Docker-level name, owners' names kept apart, paths from the key, the name
 * shown as its owner calls it, updates in place, removal; the descriptions kept for
 * reads, gone with their observation (an event, a refresh, max age, a lost stream)
 * or with any other change of the entry. */

#include <unistd.h>

#include "registry.h"
#include "sbx-test.h"

static SbxSandbox *sandbox(const char *name, uid_t owner, SbxState state, const char *status) {
        SbxSandbox *s = calloc(1, sizeof(SbxSandbox));

        ck_assert_ptr_nonnull(s);
        s->name = strdup(name);
        s->owner_valid = true;
        s->owner = owner;
        s->container_id = strdup("c0ffee");
        s->state = state;
        s->status = strdup(status);
        s->image = strdup("img");
        s->fingerprint = strdup("");
        s->verdict = SBX_VERDICT_MATCH;
        return s;
}

static void count(SandboxEntry *e, void *userdata) {
        (*(unsigned *) userdata)++;
}

START_TEST(test_registry) {
        Registry m = {};
        SbxSandbox *root = sandbox("work", 0, SBX_STATE_RUNNING, "running"),
                   *member = sandbox("~1001:work", 1001, SBX_STATE_RUNNING, "running");
        SandboxEntry *e;
        unsigned n = 0;

        ck_assert_int_eq(registry_put(&m, root), 0);
        ck_assert_int_eq(registry_put(&m, member), 0);

        e = registry_get(&m, "work");
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->display, "work");
        ck_assert_str_eq(e->path, "/org/xagent/Sandbox1/sandbox/work");
        ck_assert_uint_eq(e->owner, 0);

        e = registry_get(&m, "~1001:work");
        ck_assert_ptr_nonnull(e);
        ck_assert_str_eq(e->display, "work");          /* as its owner calls it */
        ck_assert_str_eq(e->path, "/org/xagent/Sandbox1/sandbox/_7e1001_3awork");
        ck_assert_uint_eq(e->owner, 1001);
        ck_assert_ptr_null(registry_get(&m, "~1002:work"));

        /* refreshed in place, not duplicated */
        free(member->status);
        member->status = strdup("exited");
        member->state = SBX_STATE_STOPPED;
        ck_assert_int_eq(registry_put(&m, member), 0);
        ck_assert_ptr_eq(registry_get(&m, "~1001:work"), e);
        ck_assert_int_eq(e->state, SBX_STATE_STOPPED);
        ck_assert_str_eq(e->status, "exited");
        registry_set_state(&m, "~1001:work", SBX_STATE_RUNNING, "running");
        ck_assert_int_eq(e->state, SBX_STATE_RUNNING);

        registry_foreach(&m, count, &n);
        ck_assert_uint_eq(n, 2);

        registry_drop(&m, "~1001:work");
        ck_assert_ptr_null(registry_get(&m, "~1001:work"));
        ck_assert_ptr_nonnull(registry_get(&m, "work"));
        registry_drop(&m, "nothing");             /* no-op */
        registry_drop(&m, "work");
        n = 0;
        registry_foreach(&m, count, &n);
        ck_assert_uint_eq(n, 0);

        sbx_sandbox_free(root);
        sbx_sandbox_free(member);
}
END_TEST

#define AGE 60000000ULL

/* A sandbox described from an observation of container "c0ffee", which the cache
 * keeps (the stream connected). */
static SbxSandbox *described(SbxObservationCache *c, const char *name, uint64_t max_age) {
        SbxSandbox *s = sandbox(name, 1001, SBX_STATE_RUNNING, "running");
        SbxObserved *o = calloc(1, sizeof(SbxObserved));
        SbxObservationTicket k = sbx_observation_cache_ticket(c);

        ck_assert_ptr_nonnull(o);
        o->id = strdup("c0ffee");
        o->raw_status = strdup("running");
        s->seen = sbx_seen_new(o);
        s->observed = o;
        ck_assert_ptr_nonnull(s->seen);
        sbx_observation_cache_put(c, "c0ffee", k, max_age, s->seen);
        return s;
}

/* Puts and keeps a fresh description; returns the entry. */
static SandboxEntry *keep(Registry *m, SbxObservationCache *c, uint64_t max_age) {
        SbxSandbox *s = described(c, "~1001:work", max_age);

        ck_assert_int_eq(registry_put(m, s), 0);
        registry_describe(m, s);
        return registry_get(m, "~1001:work");
}

START_TEST(test_described) {
        SbxObservationCache *c = sbx_observation_cache_new();
        Registry m = {};
        SandboxEntry *e;

        ck_assert_ptr_nonnull(c);
        sbx_observation_cache_connected(c);

        e = keep(&m, c, AGE);
        ck_assert_ptr_eq(registry_described(e, c, AGE), e->described);
        ck_assert_ptr_nonnull(e->described);
        /* an exec changes nothing an inspection shows */
        sbx_observation_cache_event(c, "c0ffee", "exec_start: sh");
        ck_assert_ptr_nonnull(registry_described(e, c, AGE));
        /* any other event (docker update behind the back): dropped at once */
        sbx_observation_cache_event(c, "c0ffee", "update");
        ck_assert_ptr_null(registry_described(e, c, AGE));
        ck_assert_ptr_null(e->described);
        /* a newer observation of the same container is not the one it was worked out from */
        e = keep(&m, c, AGE);
        sbx_observation_cache_event(c, "c0ffee", "rename");
        sbx_sandbox_free(described(c, "~1001:other", AGE));    /* read anew since */
        ck_assert(!sbx_observation_cache_holds(c, "c0ffee", e->described->seen, AGE));
        ck_assert_ptr_null(registry_described(e, c, AGE));
        /* RefreshSandbox drops the observation */
        e = keep(&m, c, AGE);
        sbx_observation_cache_drop(c, "c0ffee");
        ck_assert_ptr_null(registry_described(e, c, AGE));
        /* the stream lost */
        e = keep(&m, c, AGE);
        sbx_observation_cache_lost(c);
        ck_assert_ptr_null(registry_described(e, c, AGE));
        sbx_observation_cache_connected(c);
        /* past max age; and max age 0 (observations off) */
        e = keep(&m, c, 1000);
        usleep(5000);
        ck_assert_ptr_null(registry_described(e, c, 1000));
        e = keep(&m, c, AGE);
        ck_assert_ptr_null(registry_described(e, c, 0));
        /* another change of the entry: a state from a start, a list's refresh */
        e = keep(&m, c, AGE);
        registry_set_state(&m, "~1001:work", SBX_STATE_STOPPED, "exited");
        ck_assert_ptr_null(e->described);
        e = keep(&m, c, AGE);
        {
                SbxSandbox *s = sandbox("~1001:work", 1001, SBX_STATE_RUNNING, "running");

                s->verdict = SBX_VERDICT_MISMATCH;
                ck_assert_int_eq(registry_put(&m, s), 0);
                sbx_sandbox_free(s);
        }
        ck_assert_ptr_null(e->described);
        /* the sweep: what stands stays, what does not goes; a policy reload drops all */
        e = keep(&m, c, AGE);
        ck_assert_uint_eq(registry_sweep_described(&m, c, AGE), 1);
        ck_assert_ptr_nonnull(e->described);
        ck_assert_uint_eq(registry_sweep_described(&m, NULL, 0), 0);
        ck_assert_ptr_null(e->described);
        e = keep(&m, c, AGE);
        sbx_observation_cache_event(c, "c0ffee", "pause");
        ck_assert_uint_eq(registry_sweep_described(&m, c, AGE), 0);
        ck_assert_ptr_null(e->described);
        /* a sandbox with no observation, or no entry, is not kept */
        registry_describe(&m, sandbox("~1001:work", 1001, SBX_STATE_RUNNING, "running"));
        ck_assert_ptr_null(e->described);
        registry_describe(&m, described(c, "~1001:none", AGE));
        ck_assert_ptr_null(registry_get(&m, "~1001:none"));

        e = keep(&m, c, AGE);
        registry_drop(&m, "~1001:work");        /* frees the kept one too (valgrind) */
        registry_clear(&m);
        sbx_observation_cache_free(c);
}
END_TEST

static SbxSpec *spec_of(const char *image, int64_t cpus) {
        SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup(image);
        s->working_dir = strdup("/workspace");  /* normalized (spec.h) */
        s->cpus = cpus;
        return s;
}

/* A Verify's fingerprints: worked out once for the spec verified last, kept with
 * the description and gone with it. */
START_TEST(test_verified_fingerprints) {
        SbxObservationCache *c = sbx_observation_cache_new();
        SbxSpec *a = spec_of("img", 1), *a2 = spec_of("img", 1), *b = spec_of("img", 2);
        SbxFingerprints buf, want;
        const SbxFingerprints *fps;
        Registry m = {};
        SandboxEntry *e;

        sbx_observation_cache_connected(c);
        e = keep(&m, c, AGE);
        ck_assert_int_eq(registry_fingerprints_of(e, a, &buf, &fps), 0);
        ck_assert_ptr_eq(fps, &buf);                    /* worked out */
        ck_assert_int_eq(sbx_spec_fingerprints(a, &want), 0);
        ck_assert_str_eq(fps->hex[0], want.hex[0]);
        registry_keep_verified(e, a, fps);
        ck_assert_int_eq(registry_fingerprints_of(e, a2, &buf, &fps), 0);
        ck_assert_ptr_eq(fps, &e->verified_fps);        /* an equal spec: kept ones */
        ck_assert_str_eq(fps->hex[0], want.hex[0]);
        ck_assert_int_eq(registry_fingerprints_of(e, b, &buf, &fps), 0);
        ck_assert_ptr_eq(fps, &buf);                    /* another: worked out */
        ck_assert_str_ne(fps->hex[0], want.hex[0]);
        /* gone with the description */
        sbx_observation_cache_event(c, "c0ffee", "update");
        ck_assert_ptr_null(registry_described(e, c, AGE));
        ck_assert_ptr_null(e->verified);
        registry_keep_verified(e, b, &buf);             /* no description: not kept (freed) */
        ck_assert_ptr_null(e->verified);

        sbx_spec_free(a2);
        registry_clear(&m);
        sbx_observation_cache_free(c);
}
END_TEST

/* Whether a deadline is still to come is counted as entries change, not found by a
 * walk over every entry at the end of each call: an expiry, or an idle stop of a
 * running sandbox, through every change of state, lifetime and membership. */
START_TEST(test_deadlines_pending) {
        SbxSandbox *a = sandbox("~1001:a", 1001, SBX_STATE_STOPPED, "exited"),
                   *b = sandbox("~1001:b", 1001, SBX_STATE_RUNNING, "running");
        Registry m = {};

        ck_assert_int_eq(registry_put(&m, a), 0);
        ck_assert_int_eq(registry_put(&m, b), 0);
        ck_assert(!registry_deadlines_pending(&m));
        /* an idle timeout counts only while it runs */
        registry_set_lifetime(&m, &(SbxLifetimeRow) { .name = (char *) "~1001:a", .idle_timeout_s = 60 });
        ck_assert(!registry_deadlines_pending(&m));
        registry_started(&m, "~1001:a");
        ck_assert(registry_deadlines_pending(&m));
        registry_stopped(&m, "~1001:a");
        ck_assert(!registry_deadlines_pending(&m));
        a->state = SBX_STATE_RUNNING;                   /* a look that finds it running */
        ck_assert_int_eq(registry_put(&m, a), 0);
        ck_assert(registry_deadlines_pending(&m));
        registry_set_lifetime(&m, &(SbxLifetimeRow) { .name = (char *) "~1001:a" });
        ck_assert(!registry_deadlines_pending(&m));
        /* an expiry counts whatever the state; two of them, one dropped */
        registry_set_lifetime(&m, &(SbxLifetimeRow) { .name = (char *) "~1001:a", .expire_at_us = 1 });
        registry_set_lifetime(&m, &(SbxLifetimeRow) { .name = (char *) "~1001:b", .expire_at_us = 2 });
        registry_rebase(&m, -10);                       /* a step back keeps them due */
        registry_drop(&m, "~1001:a");
        ck_assert(registry_deadlines_pending(&m));
        registry_drop(&m, "~1001:b");
        ck_assert(!registry_deadlines_pending(&m));
        ck_assert_uint_eq(m.n_deadlines, 0);
        sbx_sandbox_free(a);
        sbx_sandbox_free(b);
        registry_clear(&m);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("registry");
        TCase *tc = tcase_create("bus");

        tcase_add_test(tc, test_registry);
        tcase_add_test(tc, test_described);
        tcase_add_test(tc, test_verified_fingerprints);
        tcase_add_test(tc, test_deadlines_pending);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
