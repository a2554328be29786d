/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"

#include "container-body.h"
#include "json-util.h"
#include "policy.h"
#include "runtime.h"

static SbxPolicy *parse(const char *json, SbxErrorKind expected, const char *message_part) {
        SbxPolicy *p = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_policy_parse(json, &p, &e);

        if (message_part) {
                ck_assert_int_lt(r, 0);
                ck_assert_int_eq(e.kind, expected);
                ck_assert_msg(strstr(e.message, message_part), "'%s' lacks '%s'", e.message, message_part);
                sbx_error_free(&e);
                return NULL;
        }
        ck_assert_msg(r == 0, "%s: %s", json, e.message);
        return p;
}

START_TEST(test_parse) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p =
                parse("{\"runtimes\": {\"gvisor\": {\"engine_runtime\": \"runsc\"}}}", 0, NULL);

        ck_assert_uint_eq(p->runtimes.n, 1);
        ck_assert_str_eq(sbx_runtimes_engine(&p->runtimes, "gvisor"), "runsc");
        ck_assert_str_eq(sbx_runtimes_engine(&p->runtimes, "runc"), "runc");
        ck_assert_ptr_null(sbx_runtimes_engine(&p->runtimes, "runsc"));
        parse("{\"runtimes\": {\"runc\": {\"engine_runtime\": \"runsc\"}}}", SBX_ERROR_INVALID_ARGS,
              "runtimes.runc: 'runc' is the default runtime");
        parse("{\"runtimes\": {\"Bad\": {\"engine_runtime\": \"runsc\"}}}", SBX_ERROR_INVALID_ARGS,
              "runtimes: 'Bad' is not a runtime name");
        parse("{\"runtimes\": {\"g\": {}}}", SBX_ERROR_INVALID_ARGS, "runtimes.g.engine_runtime: missing");
        parse("{\"runtimes\": {\"g\": {\"engine_runtime\": \"a b\"}}}", SBX_ERROR_INVALID_ARGS,
              "runtimes.g.engine_runtime: 'a b' is not a runtime name");
        parse("{\"runtimes\": {\"g\": {\"engine_runtime\": \"runsc\", \"x\": 1}}}", SBX_ERROR_INVALID_ARGS,
              "runtimes.g: unknown key 'x'");
        parse("{\"runtimes\": []}", SBX_ERROR_INVALID_ARGS, "runtimes: must be an object");
}
END_TEST

START_TEST(test_check) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p =
                parse("{\"runtimes\": {\"gvisor\": {\"engine_runtime\": \"runsc\"}}}", 0, NULL);
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_runtimes_check(&p->runtimes, "runc", NULL), 0);
        ck_assert_int_eq(sbx_runtimes_check_sandbox(&p->runtimes, "gvisor", true, 0, NULL), 0);
        ck_assert_int_lt(sbx_runtimes_check(&p->runtimes, "BAD", &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_runtimes_check(&p->runtimes, "runsc", &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_POLICY_VIOLATION);
        ck_assert_str_eq(e.message, "runtime: 'runsc' is not offered by the host policy's runtimes (offered: runc, gvisor)");
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_runtimes_check_sandbox(&p->runtimes, "gvisor", false, 0, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_POLICY_VIOLATION);
        ck_assert_ptr_nonnull(strstr(e.message, "gvisor#10704"));
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_runtimes_check_sandbox(&p->runtimes, "gvisor", true, 1, &e), 0);
        ck_assert_ptr_nonnull(strstr(e.message, "takes no volumes"));
        sbx_error_free(&e);
}
END_TEST

START_TEST(test_engine) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p =
                parse("{\"runtimes\": {\"gvisor\": {\"engine_runtime\": \"runsc\"}}}", 0, NULL);
        _cleanup_(json_object_putp) json_object *with = json_tokener_parse(
                "{\"Runtimes\": {\"runc\": {\"path\": \"runc\"}, \"runsc\": {\"path\": \"/usr/bin/runsc\"}}}");
        _cleanup_(json_object_putp) json_object *without = json_tokener_parse(
                "{\"Runtimes\": {\"runc\": {\"path\": \"runc\"}}}");
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_runtimes_check_engine(&p->runtimes, with, NULL), 0);
        ck_assert_int_lt(sbx_runtimes_check_engine(&p->runtimes, without, &e), 0);
        ck_assert_str_eq(e.message, "runtimes.gvisor.engine_runtime: 'runsc' is not a runtime the engine has "
                         "registered (GET /info)");
        sbx_error_free(&e);
}
END_TEST

/* The body under gVisor: HostConfig.Runtime, the label, the pids headroom and the
 * guest's own bound. */
START_TEST(test_body) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();
        _cleanup_(json_object_putp) json_object *body = NULL, *plain = NULL;
        json_object *hc, *labels, *u;

        s->image = strdup("img");
        s->network_isolated = true;
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        SbxContainerParams params = { .name = "n", .spec = s, .image = "img", .fingerprint = "", .uid = 1000,
                                      .init_volume = "xagent-sandbox-init-x", .pids_limit = 64,
                                      .publish_address = "127.0.0.1", .runtime = "gvisor", .engine_runtime = "runsc" };
        ck_assert_int_eq(sbx_container_body(&params, &body), 0);
        hc = json_object_object_get(body, "HostConfig");
        labels = json_object_object_get(body, "Labels");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(hc, "Runtime")), "runsc");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, SBX_LABEL_RUNTIME)), "gvisor");
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(hc, "PidsLimit")),
                         64 * SBX_RUNSC_TASKS_PER_PROCESS + SBX_RUNSC_BASE_TASKS);
        u = json_object_array_get_idx(json_object_object_get(hc, "Ulimits"), 0);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(u, "Name")), "nproc");
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(u, "Hard")), 64);

        params.runtime = params.engine_runtime = NULL;
        ck_assert_int_eq(sbx_container_body(&params, &plain), 0);
        hc = json_object_object_get(plain, "HostConfig");
        ck_assert_ptr_null(json_object_object_get(hc, "Runtime"));
        ck_assert_ptr_null(json_object_object_get(hc, "Ulimits"));
        ck_assert_ptr_null(json_object_object_get(json_object_object_get(plain, "Labels"), SBX_LABEL_RUNTIME));
        ck_assert_int_eq(json_object_get_int64(json_object_object_get(hc, "PidsLimit")), 64);
}
END_TEST

static Suite *runtime_suite(void) {
        Suite *s = suite_create("runtime");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_check);
        tcase_add_test(tc, test_engine);
        tcase_add_test(tc, test_body);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(runtime_suite)
