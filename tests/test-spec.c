/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <stdio.h>

#include "spec.h"

static SbxSpec *image_spec(const char *image) {
        SbxSpec *s = sbx_spec_new();
        ck_assert_ptr_nonnull(s);
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = image ? strdup(image) : NULL;
        return s;
}

static void assert_invalid(SbxSpec *s, const char *needle) {
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_spec_normalize(s, &e);

        if (r >= 0)
                r = sbx_spec_check_admissible(s, &e);
        ck_assert_int_lt(r, 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(e.message && strstr(e.message, needle), "message \"%s\" lacks \"%s\"", e.message, needle);
        sbx_error_free(&e);
}

/* TestFromPartsSentinelDefaults + V9: None/0/"" become the defaults. */
START_TEST(test_defaults) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = image_spec("img");

        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        ck_assert_str_eq(s->working_dir, "/home");
        ck_assert_int_eq(s->cpus, 1);
        ck_assert_int_eq(s->memory, 512);

        _cleanup_(sbx_spec_freep) SbxSpec *t = image_spec("img");
        t->working_dir = strdup("/home/");
        ck_assert_int_eq(sbx_spec_normalize(t, NULL), 0);
        ck_assert_str_eq(t->working_dir, "/home");
        ck_assert(sbx_spec_equal(s, t));

        _cleanup_(sbx_spec_freep) SbxSpec *u = image_spec("img");
        u->working_dir = strdup("");
        ck_assert_int_eq(sbx_spec_normalize(u, NULL), 0);
        ck_assert_str_eq(u->working_dir, "/home");

        /* a relative working_dir passes xagent's normalization unchanged … */
        _cleanup_(sbx_spec_freep) SbxSpec *v = image_spec("img");
        v->working_dir = strdup("foo");
        ck_assert_int_eq(sbx_spec_normalize(v, NULL), 0);
        ck_assert_str_eq(v->working_dir, "foo");
        /* … and is refused by the strict checks */
        SbxError e = SBX_ERROR_NULL;
        ck_assert_int_lt(sbx_spec_check_admissible(v, &e), 0);
        ck_assert_ptr_nonnull(strstr(e.message, "working_dir"));
        sbx_error_free(&e);
}
END_TEST

/* TestSpecRejectsUnrealizableValues */
START_TEST(test_bounds) {
        static const int64_t bad_memory[] = { 1, 64, 127, -1 };
        static const int64_t bad_cpus[] = { -1, -8 };

        for (size_t i = 0; i < ELEMENTSOF(bad_memory); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = image_spec("img");
                s->memory = bad_memory[i];
                assert_invalid(s, "memory must be >= 128");
        }
        for (size_t i = 0; i < ELEMENTSOF(bad_cpus); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = image_spec("img");
                s->cpus = bad_cpus[i];
                assert_invalid(s, "cpus must be >= 1");
        }
        _cleanup_(sbx_spec_freep) SbxSpec *ok = image_spec("img");
        ok->cpus = 1;
        ok->memory = 128;
        ck_assert_int_eq(sbx_spec_normalize(ok, NULL), 0);
        ck_assert_int_eq(sbx_spec_check_admissible(ok, NULL), 0);
}
END_TEST

/* TestSpecTemplateMutualExclusion */
START_TEST(test_template_exclusive) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = image_spec(NULL);
        assert_invalid(a, "template_type='image' requires 'image'");

        _cleanup_(sbx_spec_freep) SbxSpec *b = image_spec("img");
        b->snapshot_id = strdup("snap-1");
        assert_invalid(b, "forbids 'snapshot_id'");

        _cleanup_(sbx_spec_freep) SbxSpec *c = sbx_spec_new();
        c->template_type = SBX_TEMPLATE_SNAPSHOT;
        assert_invalid(c, "template_type='snapshot' requires 'snapshot_id'");

        _cleanup_(sbx_spec_freep) SbxSpec *d = sbx_spec_new();
        d->template_type = SBX_TEMPLATE_SNAPSHOT;
        d->snapshot_id = strdup("snap-1");
        d->image = strdup("img");
        assert_invalid(d, "forbids 'image'");

        _cleanup_(sbx_spec_freep) SbxSpec *e = sbx_spec_new();
        e->template_type = SBX_TEMPLATE_SNAPSHOT;
        e->snapshot_id = strdup("snap-1");
        ck_assert_int_eq(sbx_spec_normalize(e, NULL), 0);

        /* truthiness: "" counts as absent */
        _cleanup_(sbx_spec_freep) SbxSpec *f = image_spec("");
        assert_invalid(f, "requires 'image'");
        _cleanup_(sbx_spec_freep) SbxSpec *g = sbx_spec_new();
        g->template_type = SBX_TEMPLATE_SNAPSHOT;
        g->snapshot_id = strdup("snap-1");
        g->image = strdup("");
        ck_assert_int_eq(sbx_spec_normalize(g, NULL), 0);
}
END_TEST

/* TestSpecOrderInsensitivity */
START_TEST(test_order_insensitive) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = image_spec("img"), *b = image_spec("img");

        sbx_spec_add_env(a, "FOO", "bar");
        sbx_spec_add_env(a, "BAZ", "qux");
        sbx_spec_add_env(b, "BAZ", "qux");
        sbx_spec_add_env(b, "FOO", "bar");

        sbx_spec_add_volume(a, "/host/a", "/guest/a", "ro");
        sbx_spec_add_volume(a, "/host/b", "/guest/b", "rw");
        sbx_spec_add_volume(b, "/host/b", "/guest/b", "rw");
        sbx_spec_add_volume(b, "/host/x/../a", "/guest/./a", "ro");
        sbx_spec_add_volume(b, "/host/a", "/guest/a", "ro");

        sbx_spec_add_port(a, 8080, 80);
        sbx_spec_add_port(a, 9090, 90);
        sbx_spec_add_port(b, 9090, 90);
        sbx_spec_add_port(b, 8080, 80);
        sbx_spec_add_port(b, 9090, 90);

        ck_assert_int_eq(sbx_spec_normalize(a, NULL), 0);
        ck_assert_int_eq(sbx_spec_normalize(b, NULL), 0);
        ck_assert(sbx_spec_equal(a, b));
        ck_assert_int_eq(b->n_volumes, 2);
        ck_assert_int_eq(b->n_ports, 2);
        ck_assert_str_eq(b->env[0].key, "BAZ");
        ck_assert_str_eq(b->volumes[0].host, "/host/a");
        ck_assert_str_eq(b->volumes[0].guest, "/guest/a");
        ck_assert_int_eq(b->ports[0].host, 8080);
}
END_TEST

/* A later duplicate env key replaces an earlier one, as in a Python dict. */
START_TEST(test_env_last_wins) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = image_spec("img");

        sbx_spec_add_env(a, "K", "first");
        sbx_spec_add_env(a, "A", "x");
        sbx_spec_add_env(a, "K", "second");
        ck_assert_int_eq(sbx_spec_normalize(a, NULL), 0);
        ck_assert_int_eq(a->n_env, 2);
        ck_assert_str_eq(a->env[1].key, "K");
        ck_assert_str_eq(a->env[1].value, "second");
}
END_TEST

/* Volume mode is not normalized; sorting is by byte (code point) order. */
START_TEST(test_volume_mode_kept) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = image_spec("img");

        sbx_spec_add_volume(a, "/h", "/g", "RW");
        sbx_spec_add_volume(a, "/h", "/g", "rw");
        sbx_spec_add_volume(a, "/\xc3\xa9", "/g", "rw");
        ck_assert_int_eq(sbx_spec_normalize(a, NULL), 0);
        ck_assert_int_eq(a->n_volumes, 3);
        ck_assert_str_eq(a->volumes[0].mode, "RW");
        ck_assert_str_eq(a->volumes[2].host, "/\xc3\xa9");
        assert_invalid(a, "must be \"ro\" or \"rw\"");
}
END_TEST

/* One bad field per case: the mutation and what the message must name. */
static const char *strict_case(SbxSpec *s, int i) {
        char k[16];

        switch (i) {
        case 0: sbx_spec_add_env(s, "", "v"); return "env: a variable name is empty";
        case 1: sbx_spec_add_env(s, "A=B", "v"); return "contains '='";
        case 2: sbx_spec_add_env(s, "A\x01", "v"); return "control characters";
        case 3: sbx_spec_add_env(s, "A", "\xff"); return "not valid UTF-8";
        case 4: sbx_spec_add_volume(s, "rel", "/g", "ro"); return "host path 'rel' is not an absolute path";
        case 5: sbx_spec_add_volume(s, "/h", "g", "ro"); return "guest path 'g' is not an absolute path";
        case 6: sbx_spec_add_volume(s, "/h\n", "/g", "ro"); return "control characters";
        case 7: sbx_spec_add_port(s, -1, 80); return "host port -1";
        case 8: sbx_spec_add_port(s, 65536, 80); return "host port 65536";
        case 9: sbx_spec_add_port(s, 80, 0); return "guest port 0";
        case 10: sbx_spec_add_port(s, 80, 65536); return "guest port 65536";
        case 11: s->cpus = SBX_MAX_CPUS + 1; return "cpus:";
        case 12: s->memory = SBX_MAX_MEMORY_MIB + 1; return "memory:";
        case 13: free(s->image); s->image = strdup("a b"); return "image:";
        case 14: free(s->image); s->image = strdup("\xc3\xa9"); return "image:";
        case 15:
                for (int p = 0; p <= SBX_MAX_PORTS; p++)
                        sbx_spec_add_port(s, 0, p + 1);
                return "ports:";
        case 16:
                for (int n = 0; n <= SBX_MAX_ENV; n++) {
                        snprintf(k, sizeof k, "K%d", n);
                        sbx_spec_add_env(s, k, "v");
                }
                return "env:";
        case 17:
                for (int n = 0; n <= SBX_MAX_VOLUMES; n++) {
                        snprintf(k, sizeof k, "/g%d", n);
                        sbx_spec_add_volume(s, "/h", k, "ro");
                }
                return "volumes:";
        case 18:
                s->network_isolated = true;
                sbx_spec_add_port(s, 0, 80);
                return "ports: a network_isolated sandbox cannot publish ports";
        default:
                return NULL;
        }
}

START_TEST(test_strict) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = image_spec("img");
        const char *needle = strict_case(s, _i);

        ck_assert_ptr_nonnull(needle);
        assert_invalid(s, needle);
}
END_TEST

START_TEST(test_strict_ok) {
        _cleanup_(sbx_spec_freep) SbxSpec *ok = image_spec("img");
        sbx_spec_add_port(ok, 0, 80);
        sbx_spec_add_port(ok, 65535, 65535);
        sbx_spec_add_env(ok, "MULTI", "line\nvalue \xc3\xa9");
        ck_assert_int_eq(sbx_spec_normalize(ok, NULL), 0);
        ck_assert_int_eq(sbx_spec_check_admissible(ok, NULL), 0);
}
END_TEST

START_TEST(test_names) {
        SbxError e = SBX_ERROR_NULL;
        char big[SBX_MAX_NAME_LEN + 2];

        ck_assert_int_eq(sbx_name_validate("name", "user::7", NULL), 0);
        ck_assert_int_eq(sbx_name_validate("name", "caf\xc3\xa9 box", NULL), 0);
        ck_assert_int_lt(sbx_name_validate("name", "", &e), 0);
        ck_assert_ptr_nonnull(strstr(e.message, "name: the name is empty"));
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_name_validate("name", "a\tb", NULL), 0);
        ck_assert_int_lt(sbx_name_validate("name", "\xc3", NULL), 0);
        memset(big, 'a', sizeof big - 1);
        big[sizeof big - 1] = 0;
        ck_assert_int_lt(sbx_name_validate("name", big, NULL), 0);
        big[SBX_MAX_NAME_LEN] = 0;
        ck_assert_int_eq(sbx_name_validate("name", big, NULL), 0);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("spec");
        TCase *tc = tcase_create("spec");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_template_exclusive);
        tcase_add_test(tc, test_order_insensitive);
        tcase_add_test(tc, test_env_last_wins);
        tcase_add_test(tc, test_volume_mode_kept);
        tcase_add_loop_test(tc, test_strict, 0, 19);
        tcase_add_test(tc, test_strict_ok);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);

        return s;
}

SBX_TEST_MAIN(make_suite)
