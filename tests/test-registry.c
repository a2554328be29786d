/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The registry of known sandboxes (src/bus/registry.c), without a bus:
 * keyed by Docker-level name, owners' names kept apart, paths from the key, the name
 * shown as its owner calls it, updates in place, removal. */

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

static Suite *make_suite(void) {
        Suite *s = suite_create("registry");
        TCase *tc = tcase_create("bus");

        tcase_add_test(tc, test_registry);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
