/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"

#include <errno.h>

#include "macro.h"
#include "naming.h"

static void assert_safe(const char *name, const char *expected) {
        _cleanup_free_ char *s = NULL;

        ck_assert_int_eq(sbx_make_safe_name(name, &s), 0);
        ck_assert_str_eq(s, expected);
}

static void assert_container(const char *name, const char *expected) {
        _cleanup_free_ char *s = NULL;

        ck_assert_int_eq(sbx_container_name(name, &s), 0);
        ck_assert_str_eq(s, expected);
}

/* The derived examples of xagent's contract (xagent-contract.md) §3. */
START_TEST(test_contract_examples) {
        assert_container("user::7", "xagent_sandbox_user-7-90f03f41d2");
        assert_container("task::42", "xagent_sandbox_task-42-cac6ecd368");
        assert_container("user::7::worker::0", "xagent_sandbox_user-7-worker-0-87a4316583");
        assert_container("__warmup__", "xagent_sandbox___warmup__-f470ccd8d0");
        assert_container("::", "xagent_sandbox_sandbox-f62e0ea6ed");
        assert_container("My Box!", "xagent_sandbox_my-box-b9e366d088");
}
END_TEST

START_TEST(test_snapshot_names) {
        _cleanup_free_ char *ref = NULL, *tag = NULL;

        ck_assert_int_eq(sbx_snapshot_image_ref("snap-1", &ref), 0);
        ck_assert_str_eq(ref, "xagent-sandbox-snapshot:snap-1-e78e301ba6");
        ck_assert_int_eq(sbx_snapshot_image_tag("snap-1", &tag), 0);
        ck_assert_str_eq(tag, "snap-1-e78e301ba6");
        ck_assert_str_eq(SBX_SNAPSHOT_REPOSITORY, "xagent-sandbox-snapshot");
}
END_TEST

/* Expected values computed with /usr/bin/python3 (3.11.2) restating the rule:
 * re.sub(r"[^a-zA-Z0-9_.-]+", "-", n).strip("-.") or "sandbox", lower(),
 * "-" + sha1(n.encode("utf-8")).hexdigest()[:10]. */
START_TEST(test_non_ascii_and_edges) {
        assert_safe("café::Ünïcode", "caf-n-code-976214b997");      /* mixed runs become one "-" each */
        assert_safe("日本語", "sandbox-c12140a0ff");                   /* nothing safe left */
        assert_safe("a\u00e9b", "a-b-4b69702548");
        assert_safe("ÀB", "b-83037fc6c7");                            /* "-B" stripped, then lowered */
        assert_safe("x\U0001F600y", "x-y-83dcfabe3e");                /* a 4-byte sequence is one run */
        assert_safe("Straße", "stra-e-880c6886fd");
        assert_safe("..a..", "a-0a8a426f1c");                         /* "." stripped both ends */
        assert_safe("-.x.-", "x-ca238d4f5a");
        assert_safe(".-_-.", "_-d5c99a606a");                         /* "_" is not stripped */
        assert_safe("", "sandbox-da39a3ee5e");
}
END_TEST

/* The hash is of the original name, so names that sanitize alike stay distinct. */
START_TEST(test_hash_of_original) {
        _cleanup_free_ char *a = NULL, *b = NULL;

        ck_assert_int_eq(sbx_make_safe_name("user::7", &a), 0);
        ck_assert_int_eq(sbx_make_safe_name("USER 7", &b), 0);
        ck_assert_str_ne(a, b);
        ck_assert_int_eq(strncmp(a, "user-7-", 7), 0);
        ck_assert_int_eq(strncmp(b, "user-7-", 7), 0);
}
END_TEST

static void assert_from_labels(const char *label, uid_t owner, const char *expected) {
        _cleanup_free_ char *s = NULL;

        ck_assert_int_eq(sbx_name_from_labels(label, owner, &s), 0);
        ck_assert_str_eq(s, expected);
}

/* A name label read in the owner label's namespace; "~<uid>:…" only on uid's own
 * container: anywhere else it names nobody's sandbox (never root's "x", never a
 * second "~1002:x"). */
START_TEST(test_name_from_labels) {
        _cleanup_free_ char *s = NULL;

        assert_from_labels("x", 0, "x");
        assert_from_labels("x", 1002, "~1002:x");               /* from before names had owners */
        assert_from_labels("~1002:x", 1002, "~1002:x");
        assert_from_labels("~x", 0, "~x");                      /* not the reserved form */
        assert_from_labels("~1002x", 1002, "~1002:~1002x");
        ck_assert_int_eq(sbx_name_from_labels(NULL, 0, &s), 0);
        ck_assert_ptr_null(s);

        ck_assert_int_eq(sbx_name_from_labels("~1002:x", 0, &s), -EBADMSG);     /* no owner label */
        ck_assert_int_eq(sbx_name_from_labels("~1002:x", 1003, &s), -EBADMSG);  /* another owner's */
        ck_assert_int_eq(sbx_name_from_labels("~0:x", 0, &s), -EBADMSG);
        ck_assert_int_eq(sbx_name_from_labels("~01002:x", 1002, &s), -EBADMSG); /* not canonical */
        ck_assert_int_eq(sbx_name_from_labels("~1002:", 1003, &s), -EBADMSG);
        ck_assert_ptr_null(s);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("naming");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_contract_examples);
        tcase_add_test(tc, test_snapshot_names);
        tcase_add_test(tc, test_non_ascii_and_edges);
        tcase_add_test(tc, test_hash_of_original);
        tcase_add_test(tc, test_name_from_labels);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
