/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

#include "conflict.h"

typedef struct V {
        const char *host, *guest, *mode;
} V;

static int check_volumes(const V *v, size_t n, SbxError *e) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(sbx_spec_add_volume(s, v[i].host, v[i].guest, v[i].mode), 0);
        return sbx_check_volume_conflicts(s->volumes, s->n_volumes, e);
}

static void volumes_ok(const V *v, size_t n) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(check_volumes(v, n, &e) == 0, "unexpected: %s", e.message);
        ck_assert(!sbx_error_is_set(&e));
}

static void volumes_conflict(const V *v, size_t n, const char *message) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_lt(check_volumes(v, n, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_RUNTIME_CONFLICT);
        ck_assert_str_eq(e.message, message);
        sbx_error_free(&e);
}

static void ports_result(const SbxPort *p, size_t n, const char *message) {
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_check_port_conflicts(p, n, &e);

        if (!message) {
                ck_assert_msg(r == 0, "unexpected: %s", e.message);
                return;
        }
        ck_assert_int_lt(r, 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_RUNTIME_CONFLICT);
        ck_assert_str_eq(e.message, message);
        sbx_error_free(&e);
}

/* The volume cases of xagent's contract (xagent-contract.md) §13 (test_docker_lifecycle_api.py). */
START_TEST(test_volume_contract_cases) {
        volumes_conflict((V[]) { { "//data", "/guest/a", "rw" }, { "/data", "/guest/b", "rw" } }, 2,
                         "Conflicting desired volume mounts for host path '/data': ('/guest/a', 'rw') vs ('/guest/b', 'rw')");
        volumes_conflict((V[]) { { "/data/a", "/guest", "rw" }, { "/data/b", "/guest", "rw" } }, 2,
                         "Conflicting desired volume mounts for guest path '/guest': ('/data/a', 'rw') vs ('/data/b', 'rw')");
        volumes_conflict((V[]) { { "/data/a", "//guest", "rw" }, { "/data/b", "/guest", "rw" } }, 2,
                         "Conflicting desired volume mounts for guest path '/guest': ('/data/a', 'rw') vs ('/data/b', 'rw')");
        volumes_ok((V[]) { { "//data", "//guest/a", "rw" }, { "/data", "/guest/a", "rw" } }, 2);
}
END_TEST

START_TEST(test_volume_rules) {
        /* a mode difference alone conflicts, on the host side first */
        volumes_conflict((V[]) { { "/d", "/g", "ro" }, { "/d", "/g", "rw" } }, 2,
                         "Conflicting desired volume mounts for host path '/d': ('/g', 'ro') vs ('/g', 'rw')");
        /* mode compared exactly, case-sensitive */
        volumes_conflict((V[]) { { "/d", "/g", "rw" }, { "/d/", "/g/", "RW" } }, 2,
                         "Conflicting desired volume mounts for host path '/d': ('/g', 'rw') vs ('/g', 'RW')");
        /* identical after canonicalization, any number of times */
        volumes_ok((V[]) { { "/d/x/..", "/g/./", "ro" }, { "/d", "/g", "ro" }, { "///d", "/g", "ro" } }, 3);
        /* distinct paths, including prefixes, never conflict */
        volumes_ok((V[]) { { "/data", "/g", "rw" }, { "/data/sub", "/g/sub", "rw" }, { "/database", "/g2", "ro" } }, 3);
        volumes_ok(NULL, 0);
        /* the prior value is the first item's; the conflict is the first in input order */
        volumes_conflict((V[]) { { "/a", "/g1", "rw" }, { "/a", "/g1", "rw" }, { "/b", "/g2", "rw" },
                                 { "/c", "/g2", "rw" }, { "/a", "/g3", "rw" } }, 5,
                         "Conflicting desired volume mounts for guest path '/g2': ('/b', 'rw') vs ('/c', 'rw')");
        /* host side is checked before guest side for the same item */
        volumes_conflict((V[]) { { "/a", "/g", "rw" }, { "/b", "/h", "rw" }, { "/a", "/h", "rw" } }, 3,
                         "Conflicting desired volume mounts for host path '/a': ('/g', 'rw') vs ('/h', 'rw')");
}
END_TEST

/* Python repr quoting in the message. */
START_TEST(test_volume_message_repr) {
        volumes_conflict((V[]) { { "/it's", "/g", "rw" }, { "/it's", "/h", "rw" } }, 2,
                         "Conflicting desired volume mounts for host path \"/it's\": ('/g', 'rw') vs ('/h', 'rw')");
        volumes_conflict((V[]) { { "/q", "/both'\"", "rw" }, { "/q", "/t\tb\\", "rw" } }, 2,
                         "Conflicting desired volume mounts for host path '/q': ('/both\\'\"', 'rw') vs ('/t\\tb\\\\', 'rw')");
        volumes_conflict((V[]) { { "/x", "/g", "rw" }, { "/x", "/n\n\x01\x7f", "rw" } }, 2,
                         "Conflicting desired volume mounts for host path '/x': ('/g', 'rw') vs ('/n\\n\\x01\\x7f', 'rw')");
}
END_TEST

START_TEST(test_port_contract_cases) {
        ports_result((SbxPort[]) { { 18080, 80 }, { 18080, 81 } }, 2,
                     "Conflicting desired port mappings for host port 18080: guest 80 vs 81");
        ports_result((SbxPort[]) { { 0, 80 }, { 0, 81 }, { 0, 82 } }, 3, NULL);
        ports_result((SbxPort[]) { { 18080, 80 }, { 18081, 80 } }, 2,
                     "Conflicting desired port mappings for guest port 80: host 18080 vs 18081");
        ports_result((SbxPort[]) { { 18082, 80 }, { 18082, 80 } }, 2, NULL);
}
END_TEST

START_TEST(test_port_rules) {
        /* host 0 is still a host for the guest-side check */
        ports_result((SbxPort[]) { { 0, 80 }, { 18080, 80 } }, 2,
                     "Conflicting desired port mappings for guest port 80: host 0 vs 18080");
        ports_result((SbxPort[]) { { 0, 80 }, { 0, 80 } }, 2, NULL);
        ports_result(NULL, 0, NULL);
        /* guest side first for the same item */
        ports_result((SbxPort[]) { { 1, 10 }, { 2, 20 }, { 1, 20 } }, 3,
                     "Conflicting desired port mappings for guest port 20: host 2 vs 1");
        ports_result((SbxPort[]) { { 1, 10 }, { 2, 20 }, { 2, 30 } }, 3,
                     "Conflicting desired port mappings for host port 2: guest 20 vs 30");
}
END_TEST

START_TEST(test_spec_order) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_check_spec_conflicts(s, NULL), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 1, 10), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 1, 11), 0);
        ck_assert_int_eq(sbx_check_spec_conflicts(s, &e), -EADDRINUSE);
        ck_assert_ptr_nonnull(strstr(e.message, "host port 1"));
        sbx_error_free(&e);

        /* volumes are checked before ports */
        ck_assert_int_eq(sbx_spec_add_volume(s, "/a", "/g", "rw"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/a", "/h", "rw"), 0);
        ck_assert_int_lt(sbx_check_spec_conflicts(s, &e), 0);
        ck_assert_ptr_nonnull(strstr(e.message, "host path '/a'"));
        sbx_error_free(&e);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("conflict");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_volume_contract_cases);
        tcase_add_test(tc, test_volume_rules);
        tcase_add_test(tc, test_volume_message_repr);
        tcase_add_test(tc, test_port_contract_cases);
        tcase_add_test(tc, test_port_rules);
        tcase_add_test(tc, test_spec_order);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
