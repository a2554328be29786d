/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>

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

START_TEST(test_commit_blank) {
        json_object *l = NULL;
        const char *const *changes = sbx_labels_commit_changes();

        ck_assert_int_eq(sbx_labels_build_commit_blank(&l), 0);
        ck_assert_int_eq(json_object_object_length(l), 3);
        ck_assert_str_eq(label(l, "xagent.sandbox.spec.fingerprint"), "");
        ck_assert_str_eq(label(l, "xagent.sandbox.spec.version"), "");
        ck_assert_str_eq(label(l, "xagent.sandbox.owner"), "");
        json_object_put(l);

        ck_assert_str_eq(changes[0], "LABEL xagent.sandbox.spec.fingerprint=");
        ck_assert_str_eq(changes[1], "LABEL xagent.sandbox.spec.version=");
        ck_assert_str_eq(changes[2], "LABEL xagent.sandbox.owner=");
        ck_assert_ptr_null(changes[3]);
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
        tcase_add_test(tc, test_commit_blank);
        tcase_add_test(tc, test_attestation_read);
        tcase_add_test(tc, test_owner_parse);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
