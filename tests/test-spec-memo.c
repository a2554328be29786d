/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The stored specs a worker reads: parsed, normalized and fingerprinted once per
 * JSON text, exactly as reading them each time would make them. */

#include "sbx-test.h"

#include "spec-json.h"
#include "spec-memo.h"

/* What a read without the memo makes of json: 1 and the spec and fingerprints, or 0. */
static int read_back(const char *json, SbxSpec **ret, SbxFingerprints *ret_fps) {
        if (sbx_spec_from_json_string(json, ret, NULL) < 0)
                return 0;
        if (sbx_spec_normalize(*ret, NULL) < 0 || sbx_spec_fingerprints(*ret, ret_fps) < 0) {
                *ret = sbx_spec_free(*ret);
                return 0;
        }
        return 1;
}

/* A stored spec's text, as the store has it (sbx_spec_to_json_string). */
static char *spec_json(unsigned i) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();
        char image[32], value[32];
        char *json = NULL;

        ck_assert_ptr_nonnull(s);
        snprintf(image, sizeof image, "img-%u", i);
        snprintf(value, sizeof value, "\xc3\xa9%u", i);         /* é: a spec above ASCII */
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup(image);
        ck_assert_int_eq(sbx_spec_add_env(s, "K", value), 0);
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        ck_assert_int_eq(sbx_spec_to_json_string(s, &json), 0);
        return json;
}

static void assert_as_read(SbxSpecMemo *m, const char *json) {
        _cleanup_(sbx_spec_freep) SbxSpec *want = NULL;
        SbxFingerprints want_fps;
        const SbxSpec *spec = NULL;
        const SbxFingerprints *fps = NULL;
        int r = read_back(json, &want, &want_fps);

        ck_assert_int_eq(sbx_spec_memo_get(m, json, &spec, &fps), r);
        if (r == 0)
                return;
        ck_assert(sbx_spec_equal(spec, want));
        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++)
                ck_assert_str_eq(fps->hex[v], want_fps.hex[v]);
}

START_TEST(test_same_text_same_entry) {
        _cleanup_(sbx_spec_memo_freep) SbxSpecMemo *m = sbx_spec_memo_new();
        _cleanup_free_ char *json = spec_json(1), *copy = NULL;
        const SbxSpec *a = NULL, *b = NULL;
        const SbxFingerprints *fa = NULL, *fb = NULL;

        ck_assert_ptr_nonnull(m);
        assert_as_read(m, json);
        ck_assert_int_eq(sbx_spec_memo_get(m, json, &a, &fa), 1);
        copy = strdup(json);                    /* the text is the key, not the pointer */
        ck_assert_int_eq(sbx_spec_memo_get(m, copy, &b, &fb), 1);
        ck_assert_ptr_eq(a, b);
        ck_assert_ptr_eq(fa, fb);
}
END_TEST

START_TEST(test_unreadable) {
        _cleanup_(sbx_spec_memo_freep) SbxSpecMemo *m = sbx_spec_memo_new();
        const SbxSpec *spec = NULL;
        const SbxFingerprints *fps = NULL;

        ck_assert_int_eq(sbx_spec_memo_get(m, NULL, &spec, &fps), 0);
        for (int i = 0; i < 2; i++) {           /* the second time from the memo */
                ck_assert_int_eq(sbx_spec_memo_get(m, "{not json", &spec, &fps), 0);
                ck_assert_int_eq(sbx_spec_memo_get(m, "{\"cpus\": -1}", &spec, &fps), 0);
                ck_assert_ptr_null(spec);
        }
        assert_as_read(m, "{\"cpus\": -1}");
}
END_TEST

/* More texts than entries: each answer is still its own text's. */
START_TEST(test_replaced_in_turn) {
        _cleanup_(sbx_spec_memo_freep) SbxSpecMemo *m = sbx_spec_memo_new();

        for (unsigned round = 0; round < 3; round++)
                for (unsigned i = 0; i < SBX_SPEC_MEMO_SIZE + 3; i++) {
                        _cleanup_free_ char *json = spec_json(i);
                        const SbxSpec *spec = NULL;
                        const SbxFingerprints *fps = NULL;
                        char image[32];

                        assert_as_read(m, json);
                        ck_assert_int_eq(sbx_spec_memo_get(m, json, &spec, &fps), 1);
                        snprintf(image, sizeof image, "img-%u", i);
                        ck_assert_str_eq(spec->image, image);
                }
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("spec-memo");
        TCase *tc = tcase_create("spec-memo");

        tcase_add_test(tc, test_same_text_same_entry);
        tcase_add_test(tc, test_unreadable);
        tcase_add_test(tc, test_replaced_in_turn);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
