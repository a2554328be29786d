/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <stdio.h>

#include "publish.h"

#define DEFAULT_IMAGE "xprobe/xagent-sandbox:latest"

/* The desired spec of xagent's publish tests: default image, /home, 1 CPU, 512 MiB. */
static SbxSpec *desired(void) {
        SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup(DEFAULT_IMAGE);
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        return s;
}

/* Observed facts agreeing with desired(), each field replaceable. */
typedef struct Facts {
        const char *image;              /* "\"" DEFAULT_IMAGE "\"" by default; raw JSON */
        const char *mounts;
        const char *port_bindings;
        const char *working_dir;
        const char *network_disabled;
        const char *nano_cpus;
        const char *memory;
} Facts;

static SbxObserved *observe(Facts f) {
        _cleanup_free_ char *json = NULL;
        SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&json,
                "{\"Config\": {\"Image\": %s, \"WorkingDir\": %s, \"NetworkDisabled\": %s},"
                " \"HostConfig\": {\"NanoCpus\": %s, \"Memory\": %s, \"PortBindings\": %s},"
                " \"Mounts\": %s, \"State\": {\"Status\": \"running\"}}",
                f.image ?: "\"" DEFAULT_IMAGE "\"",
                f.working_dir ?: "\"/home\"",
                f.network_disabled ?: "false",
                f.nano_cpus ?: "1000000000",
                f.memory ?: "536870912",
                f.port_bindings ?: "{}",
                f.mounts ?: "[]"), 0);
        ck_assert_msg(sbx_observed_from_string(json, &o, &e) == 0, "%s", e.message);
        return o;
}

static void assert_fields(const SbxSpec *d, const char *image, Facts f, const char *expected) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = observe(f);
        const char *names[SBX_PUBLISH_FIELD_COUNT + 1];
        char joined[256] = "";

        sbx_publish_fields_to_names(sbx_find_publish_mismatches(d, image, o), names);
        for (size_t i = 0; names[i]; i++) {
                if (i > 0)
                        strcat(joined, ",");
                strcat(joined, names[i]);
        }
        ck_assert_str_eq(joined, expected);
}

START_TEST(test_agreeing) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = desired();

        assert_fields(d, DEFAULT_IMAGE, (Facts) {}, "");
}
END_TEST

/* Each single-field perturbation reports exactly that field (xagent-contract.md §13). */
START_TEST(test_single_fields) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = desired();

        assert_fields(d, DEFAULT_IMAGE, (Facts) { .image = "\"someone/else:latest\"" }, "image");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .image = "null" }, "image");
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = "[{\"Type\": \"bind\", \"Source\": \"/host\", \"Destination\": \"/guest\", \"RW\": true}]" },
                      "volumes");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .port_bindings = "{\"80/tcp\": [{\"HostPort\": \"18080\"}]}" },
                      "ports");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .working_dir = "\"/somewhere/else\"" }, "working_dir");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .working_dir = "\"/home/\"" }, "working_dir");  /* exact */
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .working_dir = "null" }, "working_dir");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .network_disabled = "true" }, "network_isolated");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .nano_cpus = "2000000000" }, "cpus");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .nano_cpus = "500000000" }, "cpus");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .memory = "1073741824" }, "memory");
}
END_TEST

START_TEST(test_combined) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = desired();

        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .image = "\"someone/else:latest\"", .working_dir = "\"/somewhere/else\"",
                                .network_disabled = "true", .memory = "1073741824" },
                      "image,working_dir,network_isolated,memory");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .nano_cpus = "null", .memory = "null" }, "cpus,memory");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .nano_cpus = "0", .memory = "0" }, "cpus,memory");
}
END_TEST

/* A missing NanoCpus / Memory counts as 0 (xagent's `or 0`): equal only to a 0
 * product, which a normalized spec never has, so a raw spec shows it. */
START_TEST(test_missing_counts_as_zero) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = desired();

        d->cpus = 0;
        d->memory = 0;
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .nano_cpus = "null", .memory = "null" }, "");
        assert_fields(d, DEFAULT_IMAGE, (Facts) {}, "cpus,memory");
        /* a product that overflows int64 matches nothing */
        d->cpus = INT64_MAX / 2;
        d->memory = 512;
        assert_fields(d, DEFAULT_IMAGE, (Facts) {}, "cpus");
}
END_TEST

START_TEST(test_sets) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = desired();

        ck_assert_int_eq(sbx_spec_add_volume(d, "/h/b", "/g/b", "ro"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(d, "/h/a", "/g/a", "rw"), 0);
        ck_assert_int_eq(sbx_spec_add_port(d, 18081, 81), 0);
        ck_assert_int_eq(sbx_spec_add_port(d, 0, 80), 0);
        ck_assert_int_eq(sbx_spec_normalize(d, NULL), 0);

        const char *mounts_reordered =
                "[{\"Type\": \"bind\", \"Source\": \"/h/b\", \"Destination\": \"/g/b\", \"RW\": false},"
                " {\"Type\": \"bind\", \"Source\": \"/h/a\", \"Destination\": \"/g/a\", \"RW\": true},"
                " {\"Type\": \"bind\", \"Source\": \"/h/a\", \"Destination\": \"/g/a\", \"RW\": true}]";
        const char *ports_reordered =
                "{\"81/tcp\": [{\"HostPort\": \"18081\"}], \"80/tcp\": [{\"HostPort\": \"0\"}, {\"HostPort\": \"0\"}]}";

        /* order and duplicates are irrelevant */
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .mounts = mounts_reordered, .port_bindings = ports_reordered }, "");

        /* each element counts: missing, extra, mode, raw spelling */
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = "[{\"Type\": \"bind\", \"Source\": \"/h/a\", \"Destination\": \"/g/a\", \"RW\": true}]",
                                .port_bindings = ports_reordered },
                      "volumes");
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = "[{\"Type\": \"bind\", \"Source\": \"/h/b\", \"Destination\": \"/g/b\", \"RW\": true},"
                                          " {\"Type\": \"bind\", \"Source\": \"/h/a\", \"Destination\": \"/g/a\", \"RW\": true}]",
                                .port_bindings = ports_reordered },
                      "volumes");
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = "[{\"Type\": \"bind\", \"Source\": \"/h/b/\", \"Destination\": \"/g/b\", \"RW\": false},"
                                          " {\"Type\": \"bind\", \"Source\": \"/h/a\", \"Destination\": \"/g/a\", \"RW\": true}]",
                                .port_bindings = ports_reordered },
                      "volumes");
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = mounts_reordered,
                                .port_bindings = "{\"81/tcp\": [{\"HostPort\": \"18081\"}], \"80/tcp\": [{\"HostPort\": \"0\"}],"
                                                 " \"82/tcp\": [{\"HostPort\": \"18082\"}]}" },
                      "ports");
        assert_fields(d, DEFAULT_IMAGE,
                      (Facts) { .mounts = mounts_reordered, .port_bindings = "{\"81/tcp\": [{\"HostPort\": \"18081\"}]}" },
                      "ports");
        assert_fields(d, DEFAULT_IMAGE, (Facts) { .port_bindings = ports_reordered }, "volumes");
}
END_TEST

/* For a snapshot create the resolved image is the snapshot's tag. */
START_TEST(test_snapshot_image) {
        _cleanup_(sbx_spec_freep) SbxSpec *d = sbx_spec_new();
        const char *tag = "xagent-sandbox-snapshot:snap-1-e78e301ba6";

        d->template_type = SBX_TEMPLATE_SNAPSHOT;
        d->snapshot_id = strdup("snap-1");
        ck_assert_int_eq(sbx_spec_normalize(d, NULL), 0);
        assert_fields(d, tag, (Facts) { .image = "\"xagent-sandbox-snapshot:snap-1-e78e301ba6\"" }, "");
        assert_fields(d, tag, (Facts) {}, "image");
}
END_TEST

START_TEST(test_names) {
        const char *names[SBX_PUBLISH_FIELD_COUNT + 1];

        ck_assert_uint_eq(sbx_publish_fields_to_names((1u << SBX_PUBLISH_FIELD_COUNT) - 1, names), 7);
        ck_assert_str_eq(names[0], "image");
        ck_assert_str_eq(names[1], "volumes");
        ck_assert_str_eq(names[2], "ports");
        ck_assert_str_eq(names[3], "working_dir");
        ck_assert_str_eq(names[4], "network_isolated");
        ck_assert_str_eq(names[5], "cpus");
        ck_assert_str_eq(names[6], "memory");
        ck_assert_ptr_null(names[7]);
        ck_assert_str_eq(sbx_publish_field_to_string(SBX_PUBLISH_MEMORY), "memory");
        ck_assert_ptr_null(sbx_publish_field_to_string(SBX_PUBLISH_CPUS | SBX_PUBLISH_MEMORY));
        ck_assert_ptr_null(sbx_publish_field_to_string((SbxPublishField) SBX_SPEC_FIELD_TEMPLATE_TYPE));
        /* a publish mismatch is the spec field of the same bit (VerifySandbox, the audit) */
        ck_assert_uint_eq(SBX_PUBLISH_IMAGE, SBX_SPEC_FIELD_IMAGE);
        ck_assert_uint_eq(SBX_PUBLISH_VOLUMES, SBX_SPEC_FIELD_VOLUMES);
        ck_assert_uint_eq(SBX_PUBLISH_PORTS, SBX_SPEC_FIELD_PORTS);
        ck_assert_uint_eq(SBX_PUBLISH_WORKING_DIR, SBX_SPEC_FIELD_WORKING_DIR);
        ck_assert_uint_eq(SBX_PUBLISH_NETWORK_ISOLATED, SBX_SPEC_FIELD_NETWORK_ISOLATED);
        ck_assert_uint_eq(SBX_PUBLISH_CPUS, SBX_SPEC_FIELD_CPUS);
        ck_assert_uint_eq(SBX_PUBLISH_MEMORY, SBX_SPEC_FIELD_MEMORY);
        ck_assert_uint_eq(sbx_publish_fields_to_names(SBX_SPEC_FIELD_ENV | SBX_PUBLISH_PORTS, names), 1);
        ck_assert_str_eq(names[0], "ports");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("publish");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_agreeing);
        tcase_add_test(tc, test_single_fields);
        tcase_add_test(tc, test_combined);
        tcase_add_test(tc, test_missing_counts_as_zero);
        tcase_add_test(tc, test_sets);
        tcase_add_test(tc, test_snapshot_image);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
