/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

#include "json-util.h"
#include "user-labels.h"

static void refused(json_object *l, const char *key, const char *value, const char *says) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_lt(sbx_user_labels_add(l, key, value, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(strstr(e.message, says), "'%s' lacks '%s'", e.message, says);
        sbx_error_free(&e);
}

START_TEST(test_keys) {
        _cleanup_(json_object_putp) json_object *l = json_object_new_object();

        ck_assert_int_eq(sbx_user_labels_add(l, "task/id-4.2_x", "ü 42", NULL), 0);
        refused(l, "", "v", "empty key");
        refused(l, "Task", "v", "outside [a-z0-9._/-]");
        refused(l, "a b", "v", "outside");
        refused(l, "xagent.sandbox.owner", "0", "never writable");
        refused(l, "xagent", "0", "never writable");
        refused(l, "org.xagent.sandbox.label.x", "0", "never writable");
        refused(l, "task/id-4.2_x", "again", "given twice");
        refused(l, "bad", "\xff", "not UTF-8");
        ck_assert_int_eq(sbx_user_labels_add(l, "xagentish", "ok", NULL), 0);
        ck_assert_int_eq(json_object_object_length(l), 2);
}
END_TEST

START_TEST(test_limits) {
        _cleanup_(json_object_putp) json_object *l = json_object_new_object(), *big = json_object_new_object();
        char key[8], value[4097];

        for (unsigned i = 0; i < SBX_USER_LABELS_MAX; i++) {
                snprintf(key, sizeof key, "k%u", i);
                ck_assert_int_eq(sbx_user_labels_add(l, key, "v", NULL), 0);
        }
        refused(l, "k32", "v", "more than 32 keys");
        memset(value, 'v', 4094);
        value[4094] = 0;
        ck_assert_int_eq(sbx_user_labels_add(big, "ab", value, NULL), 0);       /* 4096 bytes exactly */
        refused(big, "c", "", "more than 4096 bytes");
}
END_TEST

START_TEST(test_round_trip_and_match) {
        _cleanup_(json_object_putp) json_object *l = json_object_new_object(), *back = NULL, *want = NULL,
                                                *docker = json_object_new_object();
        _cleanup_free_ char *s = NULL, *empty = NULL;
        json_object *v;

        ck_assert_int_eq(sbx_user_labels_add(l, "task", "42", NULL), 0);
        ck_assert_int_eq(sbx_user_labels_add(l, "agent", "a\"b", NULL), 0);
        ck_assert_int_eq(sbx_user_labels_to_string(l, &s), 0);
        ck_assert_str_eq(s, "{\"agent\":\"a\\\"b\",\"task\":\"42\"}");           /* sorted */
        ck_assert_int_eq(sbx_user_labels_from_string(s, &back), 0);
        ck_assert(sbx_user_labels_equal(l, back));
        ck_assert_int_eq(sbx_user_labels_to_string(NULL, &empty), 0);
        ck_assert_str_eq(empty, "{}");

        ck_assert_int_eq(sbx_user_labels_from_string("{\"task\":\"42\"}", &want), 0);
        ck_assert(sbx_user_labels_match(l, want));
        ck_assert(!sbx_user_labels_equal(l, want));
        ck_assert(sbx_user_labels_match(l, NULL));
        ck_assert(!sbx_user_labels_match(NULL, want));
        json_object_object_add(want, "task", json_object_new_string("43"));
        ck_assert(!sbx_user_labels_match(l, want));

        ck_assert_int_eq(sbx_user_labels_from_string("[]", &(json_object *) { NULL }), -EBADMSG);
        ck_assert_int_eq(sbx_user_labels_from_string("{\"a\":1}", &(json_object *) { NULL }), -EBADMSG);

        ck_assert_int_eq(sbx_user_labels_to_docker(l, docker), 0);
        ck_assert(json_object_object_get_ex(docker, SBX_USER_LABEL_PREFIX "task", &v));
        ck_assert_str_eq(json_object_get_string(v), "42");
        ck_assert_int_eq(json_object_object_length(docker), 2);
}
END_TEST

START_TEST(test_blank_for_a_commit) {
        _cleanup_(json_object_putp) json_object *container = json_tokener_parse(
                "{\"xagent.managed\":\"true\",\"" SBX_USER_LABEL_PREFIX "task\":\"42\",\"other\":\"x\"}"),
                *commit = json_object_new_object();
        json_object *v;

        ck_assert_int_eq(sbx_user_labels_blank_docker(container, commit), 0);
        ck_assert_int_eq(json_object_object_length(commit), 1);
        ck_assert(json_object_object_get_ex(commit, SBX_USER_LABEL_PREFIX "task", &v));
        ck_assert_str_eq(json_object_get_string(v), "");
        ck_assert_int_eq(sbx_user_labels_blank_docker(NULL, commit), 0);
}
END_TEST

/* A container recorded again after its row was lost: its caller's labels read back
 * from it, less the image's, blank and rule-breaking ones. */
START_TEST(test_from_docker) {
        _cleanup_(json_object_putp) json_object *image = json_tokener_parse(
                "{\"org.xagent.sandbox.label.from-image\": \"v\", \"org.xagent.sandbox.label.same\": \"other\"}");
        _cleanup_(json_object_putp) json_object *got = NULL;
        _cleanup_free_ char *text = NULL;
        const SbxEnvVar labels[] = {
                { (char *) "xagent.managed", (char *) "true" },
                { (char *) SBX_USER_LABEL_PREFIX "task", (char *) "42" },
                { (char *) SBX_USER_LABEL_PREFIX "agent/role", (char *) "coder" },
                { (char *) SBX_USER_LABEL_PREFIX "blanked", (char *) "" },
                { (char *) SBX_USER_LABEL_PREFIX "from-image", (char *) "v" },
                { (char *) SBX_USER_LABEL_PREFIX "same", (char *) "mine" },
                { (char *) SBX_USER_LABEL_PREFIX "Upper", (char *) "x" },
        };

        ck_assert_int_eq(sbx_user_labels_from_docker(labels, ELEMENTSOF(labels), image, &got), 0);
        ck_assert_int_eq(sbx_user_labels_to_string(got, &text), 0);
        ck_assert_str_eq(text, "{\"agent\\/role\":\"coder\",\"same\":\"mine\",\"task\":\"42\"}");
        json_object_put(TAKE_PTR(got));
        ck_assert_int_eq(sbx_user_labels_from_docker(NULL, 0, NULL, &got), 0);
        ck_assert_int_eq(json_object_object_length(got), 0);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("user-labels");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_keys);
        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_round_trip_and_match);
        tcase_add_test(tc, test_blank_for_a_commit);
        tcase_add_test(tc, test_from_docker);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
