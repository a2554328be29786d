/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

#include "json-util.h"
#include "labels.h"

static const char *label(json_object *o, const char *key) {
        json_object *v;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        ck_assert(json_object_is_type(v, json_type_string));
        return json_object_get_string(v);
}

static SbxSpec *make_spec(SbxTemplateType type, const char *image, const char *snapshot_id) {
        SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        s->template_type = type;
        s->image = image ? strdup(image) : NULL;
        s->snapshot_id = snapshot_id ? strdup(snapshot_id) : NULL;
        return s;
}

START_TEST(test_image_labels) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec(SBX_TEMPLATE_IMAGE, "img:tag", NULL);
        json_object *l = NULL;
        const char *fp = "74bdfffa02ebff2f8698c27f615c9f69afda69ded16442baa97112e494e6bbe3";

        ck_assert_int_eq(sbx_labels_build("user::7", s, fp, 1000, &l), 0);
        ck_assert_int_eq(json_object_object_length(l), 6);
        ck_assert_str_eq(label(l, "xagent.managed"), "true");
        ck_assert_str_eq(label(l, "xagent.sandbox.name"), "user::7");
        ck_assert_str_eq(label(l, "xagent.sandbox.template.type"), "image");
        ck_assert_str_eq(label(l, "xagent.sandbox.spec.fingerprint"), fp);
        ck_assert_str_eq(label(l, "xagent.sandbox.spec.version"), "1");
        ck_assert_str_eq(label(l, "xagent.sandbox.owner"), "1000");
        ck_assert_ptr_null(label(l, "xagent.sandbox.snapshot_id"));
        json_object_put(l);
}
END_TEST

/* Nothing to attest: both attestation keys still written, blank. */
START_TEST(test_blank_attestation) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec(SBX_TEMPLATE_IMAGE, "img", NULL);
        json_object *l = NULL;

        ck_assert_int_eq(sbx_labels_build("n", s, NULL, 0, &l), 0);
        ck_assert_str_eq(label(l, SBX_LABEL_SPEC_FINGERPRINT), "");
        ck_assert_str_eq(label(l, SBX_LABEL_SPEC_VERSION), "");
        ck_assert_str_eq(label(l, SBX_LABEL_OWNER), "0");
        json_object_put(l);

        ck_assert_int_eq(sbx_labels_build("n", s, "", 4294967294u, &l), 0);
        ck_assert_str_eq(label(l, SBX_LABEL_SPEC_FINGERPRINT), "");
        ck_assert_str_eq(label(l, SBX_LABEL_SPEC_VERSION), "");
        ck_assert_str_eq(label(l, SBX_LABEL_OWNER), "4294967294");
        json_object_put(l);
}
END_TEST

START_TEST(test_snapshot_labels) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");
        _cleanup_(sbx_spec_freep) SbxSpec *t = make_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "");
        json_object *l = NULL;

        ck_assert_int_eq(sbx_labels_build("n", s, "abc", 7, &l), 0);
        ck_assert_str_eq(label(l, SBX_LABEL_TEMPLATE_TYPE), "snapshot");
        ck_assert_str_eq(label(l, SBX_LABEL_SNAPSHOT_ID), "snap-1");
        ck_assert_int_eq(json_object_object_length(l), 7);
        json_object_put(l);

        /* a snapshot template without an id writes no snapshot_id label */
        ck_assert_int_eq(sbx_labels_build("n", t, "abc", 7, &l), 0);
        ck_assert_ptr_null(label(l, SBX_LABEL_SNAPSHOT_ID));
        json_object_put(l);
}
END_TEST

static json_object *parse(const char *text) {
        json_object *j = json_tokener_parse(text);

        ck_assert_ptr_nonnull(j);
        return j;
}

static const char *plain_json(json_object *o, const char *key) {
        json_object *v = NULL;

        if (!json_object_object_get_ex(o, key, &v))
                return NULL;
        return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

/* Every label xagent or this service writes on a container is blanked, the token
 * written; the source image's entrypoint, command and user restored. */
START_TEST(test_commit_config) {
        static const char *const blanked[] = {
                "xagent.managed", "xagent.sandbox.name", "xagent.sandbox.template.type",
                "xagent.sandbox.snapshot_id", "xagent.sandbox.spec.fingerprint", "xagent.sandbox.spec.version",
                "xagent.sandbox.owner", "xagent.sandbox.service", "xagent.sandbox.pool",
        };
        _cleanup_(json_object_putp) json_object *src = parse("{\"Entrypoint\":[\"/bin/ep\",\"-x\"],"
                                                             "\"Cmd\":[\"run\"],\"User\":\"app:app\"}");
        json_object *c = NULL, *labels;

        ck_assert_int_eq(sbx_labels_build_commit_config(src, "tok", &c), 0);
        labels = json_object_object_get(c, "Labels");
        ck_assert_int_eq(json_object_object_length(labels), (int) ELEMENTSOF(blanked) + 1);
        for (size_t i = 0; i < ELEMENTSOF(blanked); i++)
                ck_assert_str_eq(label(labels, blanked[i]), "");
        ck_assert_str_eq(label(labels, SBX_LABEL_SNAPSHOT_INTENT), "tok");
        ck_assert_str_eq(plain_json(c, "Entrypoint"), "[\"/bin/ep\",\"-x\"]");
        ck_assert_str_eq(plain_json(c, "Cmd"), "[\"run\"]");
        ck_assert_str_eq(label(c, "User"), "app:app");
        json_object_put(c);
        ck_assert_int_eq(sbx_labels_build_commit_config(src, "", &c), -EINVAL);
}
END_TEST

/* Docker cannot blank a value: no entrypoint is [], the default user "0", no Cmd
 * leaves the container's. */
START_TEST(test_commit_config_defaults) {
        _cleanup_(json_object_putp) json_object *plain_image = parse("{\"Cmd\":[\"/bin/sh\"],\"User\":\"\","
                                                                     "\"Entrypoint\":null}");
        _cleanup_(json_object_putp) json_object *odd = parse("{\"Cmd\":[1],\"Entrypoint\":[],\"User\":7}");
        /* a snapshot made before: the service's first process and its uid */
        _cleanup_(json_object_putp) json_object *old = parse("{\"Entrypoint\":[\"/.xagent-sandbox/xagent-sandbox-init\"],"
                                                             "\"User\":\"65534:65534\",\"Cmd\":null}");
        json_object *c = NULL;

        ck_assert_int_eq(sbx_labels_build_commit_config(plain_image, "t", &c), 0);
        ck_assert_str_eq(plain_json(c, "Entrypoint"), "[]");
        ck_assert_str_eq(plain_json(c, "Cmd"), "[\"/bin/sh\"]");
        ck_assert_str_eq(label(c, "User"), "0");
        json_object_put(c);

        ck_assert_int_eq(sbx_labels_build_commit_config(odd, "t", &c), 0);
        ck_assert_str_eq(plain_json(c, "Entrypoint"), "[]");
        ck_assert_ptr_null(plain_json(c, "Cmd"));
        ck_assert_str_eq(label(c, "User"), "0");
        json_object_put(c);

        ck_assert_int_eq(sbx_labels_build_commit_config(old, "t", &c), 0);
        ck_assert_str_eq(plain_json(c, "Entrypoint"), "[]");
        ck_assert_ptr_null(plain_json(c, "Cmd"));
        ck_assert_str_eq(label(c, "User"), "0");
        json_object_put(c);

        ck_assert_int_eq(sbx_labels_build_commit_config(NULL, "t", &c), 0);
        ck_assert_str_eq(plain_json(c, "Entrypoint"), "[]");
        ck_assert_ptr_null(plain_json(c, "Cmd"));
        ck_assert_str_eq(label(c, "User"), "0");
        json_object_put(c);
}
END_TEST

/* A blank owner is root's, but not on a container with a service label: no sandbox. */
START_TEST(test_owner_of) {
        uid_t u = 99;

        ck_assert_int_eq(sbx_label_parse_owner_of(NULL, NULL, &u), 0);
        ck_assert_uint_eq(u, 0);
        ck_assert_int_eq(sbx_label_parse_owner_of("", "", &u), 0);
        ck_assert_int_eq(sbx_label_parse_owner_of("1000", "abc", &u), 0);
        ck_assert_uint_eq(u, 1000);
        ck_assert_int_eq(sbx_label_parse_owner_of("0", "abc", &u), 0);
        ck_assert_uint_eq(u, 0);
        u = 99;
        ck_assert_int_eq(sbx_label_parse_owner_of("", "abc", &u), -ENOENT);
        ck_assert_int_eq(sbx_label_parse_owner_of(NULL, "abc", &u), -ENOENT);
        ck_assert_int_eq(sbx_label_parse_owner_of("x", "abc", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner_of("x", NULL, &u), -EINVAL);
        ck_assert_uint_eq(u, 99);
}
END_TEST

START_TEST(test_attestation_read) {
        ck_assert_ptr_null(sbx_label_attestation(NULL));
        ck_assert_ptr_null(sbx_label_attestation(""));
        ck_assert_str_eq(sbx_label_attestation("abc123"), "abc123");
        ck_assert_str_eq(sbx_label_attestation(" "), " ");
}
END_TEST

START_TEST(test_owner_parse) {
        uid_t u = 99;

        ck_assert_int_eq(sbx_label_parse_owner(NULL, &u), 0);
        ck_assert_int_eq(u, 0);
        u = 99;
        ck_assert_int_eq(sbx_label_parse_owner("", &u), 0);
        ck_assert_int_eq(u, 0);
        ck_assert_int_eq(sbx_label_parse_owner("0", &u), 0);
        ck_assert_int_eq(u, 0);
        ck_assert_int_eq(sbx_label_parse_owner("1000", &u), 0);
        ck_assert_int_eq(u, 1000);
        ck_assert_int_eq(sbx_label_parse_owner("4294967294", &u), 0);
        ck_assert_uint_eq(u, 4294967294u);

        u = 1000;
        ck_assert_int_eq(sbx_label_parse_owner("4294967295", &u), -EINVAL);  /* (uid_t) -1 */
        ck_assert_int_eq(sbx_label_parse_owner("99999999999999999999", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("root", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("-1", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("+5", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner(" 5", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("5 ", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("05", &u), -EINVAL);
        ck_assert_int_eq(sbx_label_parse_owner("1e3", &u), -EINVAL);
        ck_assert_int_eq(u, 1000);      /* untouched on failure */
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("labels");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_image_labels);
        tcase_add_test(tc, test_blank_attestation);
        tcase_add_test(tc, test_snapshot_labels);
        tcase_add_test(tc, test_commit_config);
        tcase_add_test(tc, test_commit_config_defaults);
        tcase_add_test(tc, test_owner_of);
        tcase_add_test(tc, test_attestation_read);
        tcase_add_test(tc, test_owner_parse);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
