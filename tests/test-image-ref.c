/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Image references taken apart for a pull, and the host policy's registries and the
 * decision on a pull (image-ref.h, policy.h). */

#include "sbx-test.h"

#include "image-ref.h"
#include "policy.h"

#define DIGEST "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct {
        const char *ref, *registry, *repository, *tag, *digest;
} good_refs[] = {
        { "busybox", "docker.io", "library/busybox", "latest", NULL },
        { "python:3.12", "docker.io", "library/python", "3.12", NULL },
        { "me/tool:v1", "docker.io", "me/tool", "v1", NULL },
        { "registry.example:5000/team/img:1", "registry.example:5000", "team/img", "1", NULL },
        { "127.0.0.1:5000/a/b/c", "127.0.0.1:5000", "a/b/c", "latest", NULL },
        { "localhost/img:x_y.z-1", "localhost", "img", "x_y.z-1", NULL },
        { "reg.example/img@" DIGEST, "reg.example", "img", NULL, DIGEST },
        { "reg.example/img:1@" DIGEST, "reg.example", "img", "1", DIGEST },
        { "reg.example/a.b__c-d/e", "reg.example", "a.b__c-d/e", "latest", NULL },
};

START_TEST(test_parse_good) {
        SbxError e = SBX_ERROR_NULL;
        SbxImageRef r = {};

        ck_assert_msg(sbx_image_ref_parse(good_refs[_i].ref, &r, &e) == 0, "%s: %s", good_refs[_i].ref, e.message);
        ck_assert_str_eq(r.registry, good_refs[_i].registry);
        ck_assert_str_eq(r.repository, good_refs[_i].repository);
        ck_assert_pstr_eq(r.tag, good_refs[_i].tag);
        ck_assert_pstr_eq(r.digest, good_refs[_i].digest);
        sbx_image_ref_done(&r);
}
END_TEST

static const char *const bad_refs[] = {
        "", "UPPER/img", "reg.example/img:", "reg.example/img:-x", "reg.example/img@sha256:abc",
        "reg.example/img@md5:0123", "reg.example//img", "reg.example/img/", "reg.example:port/img",
        "reg.example/.img", "img:a/b", "reg.example/img:" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
        "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "bad host/img", "reg.example/img@" DIGEST "0",
};

START_TEST(test_parse_bad) {
        SbxError e = SBX_ERROR_NULL;
        SbxImageRef r = {};
        int k = sbx_image_ref_parse(bad_refs[_i], &r, &e);

        ck_assert_msg(k == -EINVAL && e.kind == SBX_ERROR_INVALID_ARGS, "'%s' was taken", bad_refs[_i]);
        ck_assert_ptr_nonnull(strstr(e.message, "reference"));
        sbx_error_free(&e);
}
END_TEST

static SbxPolicy *parse(const char *json, SbxError *e) {
        SbxPolicy *p = NULL;

        return sbx_policy_parse(json, &p, e) < 0 ? NULL : p;
}

START_TEST(test_registries_parse) {
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *d = parse("{}", &e);
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse(
                "{ \"registries\": [ { \"host\": \"registry.example:5000\", \"ca\": \"/etc/xagent/ca.pem\" },"
                "                  { \"host\": \"localhost\", \"ca\": \"/x.pem\" } ], \"max_image_mib\": 7 }", &e);
        static const char *const bad[][2] = {
                { "{ \"registries\": {} }", "registries: must be an array" },
                { "{ \"registries\": [ { \"host\": \"r.example\" } ] }", "registries[0].ca: missing" },
                { "{ \"registries\": [ { \"ca\": \"/x\" } ] }", "registries[0].host: missing" },
                { "{ \"registries\": [ { \"host\": \"r.example\", \"ca\": \"x.pem\" } ] }", "not an absolute path" },
                { "{ \"registries\": [ { \"host\": \"noregistry\", \"ca\": \"/x\" } ] }", "is not a registry" },
                { "{ \"registries\": [ { \"host\": \"r.example/x\", \"ca\": \"/x\" } ] }", "is not a registry" },
                { "{ \"registries\": [ { \"host\": \"r.example\", \"ca\": \"/x\", \"user\": \"u\" } ] }", "unknown key 'user'" },
                { "{ \"registries\": [ { \"host\": \"r.example\", \"ca\": \"/x\" }, { \"host\": \"R.example\", \"ca\": \"/y\" } ] }",
                  "listed twice" },
                { "{ \"max_image_mib\": 0 }", "max_image_mib" },
        };

        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(d->n_registries, 0);
        ck_assert_int_eq(d->max_image_mib, SBX_POLICY_DEFAULT_MAX_IMAGE_MIB);
        ck_assert_msg(p, "%s", e.message);
        ck_assert_uint_eq(p->n_registries, 2);
        ck_assert_str_eq(p->registries[0].host, "registry.example:5000");
        ck_assert_str_eq(p->registries[0].ca, "/etc/xagent/ca.pem");
        ck_assert_str_eq(p->registries[1].host, "localhost");
        ck_assert_int_eq(p->max_image_mib, 7);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                SbxPolicy *q = parse(bad[i][0], &e);

                ck_assert_msg(!q && e.kind == SBX_ERROR_INVALID_ARGS && strstr(e.message, bad[i][1]),
                              "%s: %s", bad[i][0], e.message);
                sbx_error_free(&e);
        }
}
END_TEST

START_TEST(test_check_pull) {
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *off = parse("{}", &e);
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse(
                "{ \"registries\": [ { \"host\": \"registry.example:5000\", \"ca\": \"/ca.pem\" } ],"
                "  \"allowed_images\": [ \"registry.example:5000/team/*\", \"elsewhere.example/team/*\","
                "                      \"xprobe/xagent-sandbox:latest\" ] }", &e);
        const SbxPolicyRegistry *reg = NULL;
        SbxImageRef ref = {};

        ck_assert_ptr_nonnull(off);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(sbx_policy_check_pull(off, "registry.example:5000/team/a:1", &ref, &reg, &e), -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "Pulling is off"));
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_policy_check_pull(p, "registry.example:5000/team/a:1", &ref, &reg, &e), 0);
        ck_assert_str_eq(reg->ca, "/ca.pem");
        ck_assert_str_eq(ref.repository, "team/a");
        sbx_image_ref_done(&ref);

        ck_assert_int_eq(sbx_policy_check_pull(p, "registry.example:5000/other/a:1", &ref, &reg, &e), -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "allowed_images"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_policy_check_pull(p, "elsewhere.example/team/a:1", &ref, &reg, &e), -EPERM);
        ck_assert_ptr_nonnull(strstr(e.message, "'elsewhere.example' (of 'elsewhere.example/team/a:1') is not in "
                                                "the host policy's registries"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_policy_check_pull(p, "Bad/ref", &ref, &reg, &e), -EINVAL);
        sbx_error_free(&e);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("image-ref");
        TCase *tc = tcase_create("image-ref");

        tcase_add_loop_test(tc, test_parse_good, 0, ELEMENTSOF(good_refs));
        tcase_add_loop_test(tc, test_parse_bad, 0, ELEMENTSOF(bad_refs));
        tcase_add_test(tc, test_registries_parse);
        tcase_add_test(tc, test_check_pull);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
