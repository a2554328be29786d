/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>
#include <stdio.h>

#include "fingerprint.h"
#include "pyrepr.h"

#define DEFAULT_IMAGE "xprobe/xagent-sandbox:latest"

static SbxSpec *new_spec(SbxTemplateType type, const char *image, const char *snapshot_id) {
        SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        s->template_type = type;
        s->image = image ? strdup(image) : NULL;
        s->snapshot_id = snapshot_id ? strdup(snapshot_id) : NULL;
        return s;
}

static void set_working_dir(SbxSpec *s, const char *wd) {
        free(s->working_dir);
        s->working_dir = strdup(wd);
        ck_assert_ptr_nonnull(s->working_dir);
}

static void normalize(SbxSpec *s) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_spec_normalize(s, &e) == 0, "normalize: %s", e.message);
}

/* The repr and fingerprint of a spec, compared with the expected pair. */
static void assert_fingerprint(SbxSpec *s, const char *canonical, const char *fp) {
        _cleanup_free_ char *c = NULL;
        char f[SBX_FINGERPRINT_HEX_LEN + 1];

        normalize(s);
        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), 0);
        ck_assert_str_eq(c, canonical);
        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, f), 0);
        ck_assert_str_eq(f, fp);
}

/* _make_spec(): the V2 baseline of test_runtime_spec.py. */
static SbxSpec *make_v2(void) {
        SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "python:3.12-slim", NULL);

        set_working_dir(s, "/home");
        s->cpus = 1;
        s->memory = 512;
        ck_assert_int_eq(sbx_spec_add_env(s, "FOO", "bar"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "BAZ", "qux"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/host/a", "/guest/a", "ro"), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 8080, 80), 0);
        return s;
}

#define V2_REPR "('image', 'python:3.12-slim', None, '/home', 1, 512, (('BAZ', 'qux'), ('FOO', 'bar')), " \
        "(('/host/a', '/guest/a', 'ro'),), False, ((8080, 80),))"
#define V2_FP "faa07e00685bf70d80690bfb465ad1958c65b19b41064f8bd0c22df011e1d62e"

static void fingerprint_of(SbxSpec *s, char fp[static SBX_FINGERPRINT_HEX_LEN + 1]) {
        normalize(s);
        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), 0);
}

START_TEST(test_v1_default_image) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, DEFAULT_IMAGE, NULL);
        _cleanup_free_ char *c = NULL;
        const char *hex = "2827696d616765272c20277870726f62652f786167656e742d73616e64626f783a6c6174657374272c204e6f"
                          "6e652c20272f686f6d65272c20312c203531322c2028292c2028292c2046616c73652c20282929";
        char bytes[3] = {};

        assert_fingerprint(s, "('image', 'xprobe/xagent-sandbox:latest', None, '/home', 1, 512, (), (), False, ())",
                           "74bdfffa02ebff2f8698c27f615c9f69afda69ded16442baa97112e494e6bbe3");

        /* the canonical bytes, exactly */
        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), 0);
        ck_assert_uint_eq(strlen(c) * 2, strlen(hex));
        for (size_t i = 0; c[i]; i++) {
                snprintf(bytes, sizeof(bytes), "%02x", (unsigned char) c[i]);
                ck_assert_int_eq(memcmp(bytes, hex + 2 * i, 2), 0);
        }
}
END_TEST

START_TEST(test_v2_baseline) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_v2();

        assert_fingerprint(s, V2_REPR, V2_FP);
}
END_TEST

START_TEST(test_v3_snapshot) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");

        assert_fingerprint(s, "('snapshot', None, 'snap-1', '/home', 1, 512, (), (), False, ())",
                           "c6a5a8fb70a563eb4f108f4c867be81064eef4cab1ad36a9709f7db7396f2440");
}
END_TEST

/* TestSpecOrderInsensitivity / TestCanonicalSandboxPath: V2 spelled non-canonically. */
START_TEST(test_v4_order_insensitive) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "python:3.12-slim", NULL);

        set_working_dir(s, "//home/");
        ck_assert_int_eq(sbx_spec_add_env(s, "BAZ", "qux"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "FOO", "bar"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "//host/x/../a/", "/guest/./a", "ro"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/host/a", "/guest/a", "ro"), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 8080, 80), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 8080, 80), 0);
        assert_fingerprint(s, V2_REPR, V2_FP);
}
END_TEST

START_TEST(test_v5_everything) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "img:tag", NULL);

        set_working_dir(s, "/work");
        s->cpus = 2;
        s->memory = 1024;
        ck_assert_int_eq(sbx_spec_add_env(s, "B", "2"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "A", "1"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/h2", "/g2", "rw"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/h1", "/g1", "ro"), 0);
        s->network_isolated = true;
        ck_assert_int_eq(sbx_spec_add_port(s, 18081, 81), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 0, 80), 0);
        assert_fingerprint(s,
                           "('image', 'img:tag', None, '/work', 2, 1024, (('A', '1'), ('B', '2')), "
                           "(('/h1', '/g1', 'ro'), ('/h2', '/g2', 'rw')), True, ((0, 80), (18081, 81)))",
                           "6c98f55b42f76d74d4de177847b62ce4f6778e9f35a73e9c5f5d9a4473d64b32");
}
END_TEST

START_TEST(test_v6_escapes) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "img:tag", NULL);

        ck_assert_int_eq(sbx_spec_add_env(s, "Q1", "it's"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "Q2", "say \"hi\""), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "Q3", "both ' and \""), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "NL", "a\nb"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "BS", "c:\\d"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "U", "caf\xc3\xa9"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "C", "\x01"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s, "Z", "\xe2\x80\x8b"), 0);
        assert_fingerprint(s,
                           "('image', 'img:tag', None, '/home', 1, 512, (('BS', 'c:\\\\d'), ('C', '\\x01'), "
                           "('NL', 'a\\nb'), ('Q1', \"it's\"), ('Q2', 'say \"hi\"'), ('Q3', 'both \\' and \"'), "
                           "('U', 'caf\xc3\xa9'), ('Z', '\\u200b')), (), False, ())",
                           "1506fb03f31440d977a5543f2706b59a44cb3bd886220f850ea8bc4da7a175e4");
}
END_TEST

START_TEST(test_v7_small_memory) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, DEFAULT_IMAGE, NULL);

        s->cpus = 1;
        s->memory = 256;
        assert_fingerprint(s, "('image', 'xprobe/xagent-sandbox:latest', None, '/home', 1, 256, (), (), False, ())",
                           "18461a8dce4cc23aa049b4cc938b6c38ebc19441a6d9d2054ade673335837231");
}
END_TEST

START_TEST(test_v8_snapshot_full) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");

        set_working_dir(s, "/workspace");
        s->cpus = 4;
        s->memory = 2048;
        ck_assert_int_eq(sbx_spec_add_env(s, "PATH", "/usr/bin"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s, "/data/uploads/user_7", "/data/uploads/user_7", "rw"), 0);
        ck_assert_int_eq(sbx_spec_add_port(s, 0, 8000), 0);
        assert_fingerprint(s,
                           "('snapshot', None, 'snap-1', '/workspace', 4, 2048, (('PATH', '/usr/bin'),), "
                           "(('/data/uploads/user_7', '/data/uploads/user_7', 'rw'),), False, ((0, 8000),))",
                           "fc1bd484ee2b082d5a8dc859b57dcdd5e5372e9fbc5a874d6640d105c4bde50e");
}
END_TEST

START_TEST(test_v9_defaults) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "img", NULL);

        set_working_dir(s, "");
        assert_fingerprint(s, "('image', 'img', None, '/home', 1, 512, (), (), False, ())",
                           "c6068b21e285d316b179636cc3dddcb8506cab51e118931cc468425b4c702afa");
}
END_TEST

/* None and '' are distinct: a snapshot spec may carry image="" (falsy, allowed). */
START_TEST(test_none_vs_empty) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_SNAPSHOT, "", "snap-1");
        _cleanup_(sbx_spec_freep) SbxSpec *t = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");
        _cleanup_free_ char *c = NULL;
        char a[SBX_FINGERPRINT_HEX_LEN + 1], b[SBX_FINGERPRINT_HEX_LEN + 1];

        normalize(s);
        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), 0);
        ck_assert_str_eq(c, "('snapshot', '', 'snap-1', '/home', 1, 512, (), (), False, ())");
        fingerprint_of(s, a);
        fingerprint_of(t, b);
        ck_assert_str_ne(a, b);
}
END_TEST

/* Python ints: negatives and the int64 extremes the lenient path lets through. */
START_TEST(test_int_repr) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "i", NULL);
        _cleanup_free_ char *c = NULL;

        s->cpus = INT64_MAX;
        ck_assert_int_eq(sbx_spec_add_port(s, -1, INT64_MIN), 0);
        normalize(s);
        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), 0);
        ck_assert_str_eq(c, "('image', 'i', None, '/home', 9223372036854775807, 512, (), (), False, "
                            "((-1, -9223372036854775808),))");
}
END_TEST

static void assert_str_repr(const char *s, const char *expected) {
        _cleanup_free_ char *r = NULL;

        ck_assert_int_eq(sbx_pyrepr_str_to_string(SBX_PYTHON_DEFAULT, s, &r), 0);
        ck_assert_str_eq(r, expected);
}

/* The escape vectors of xagent's contract (xagent-contract.md) §2 (NUL excepted: a C
 * string cannot hold it). */
START_TEST(test_str_escapes) {
        assert_str_repr("plain", "'plain'");
        assert_str_repr("it's", "\"it's\"");
        assert_str_repr("say \"hi\"", "'say \"hi\"'");
        assert_str_repr("both ' and \"", "'both \\' and \"'");
        assert_str_repr("\t", "'\\t'");
        assert_str_repr("\r", "'\\r'");
        assert_str_repr("\n", "'\\n'");
        assert_str_repr("bs\\x", "'bs\\\\x'");
        assert_str_repr("\x7f", "'\\x7f'");
        assert_str_repr("\xc2\x80", "'\\x80'");                 /* U+0080 */
        assert_str_repr("\xc2\xa0", "'\\xa0'");                 /* U+00A0 NO-BREAK SPACE */
        assert_str_repr("\xc2\xad", "'\\xad'");                 /* U+00AD SOFT HYPHEN */
        assert_str_repr("\xe2\x80\xa8", "'\\u2028'");           /* LINE SEPARATOR */
        assert_str_repr("\xe2\x80\x8b", "'\\u200b'");           /* ZERO WIDTH SPACE */
        assert_str_repr("\xee\x80\x80", "'\\ue000'");           /* private use */
        assert_str_repr("\xf4\x8f\xbf\xbf", "'\\U0010ffff'");
        assert_str_repr("\xf0\x9f\x98\x80", "'\xf0\x9f\x98\x80'");  /* U+1F600 literal */
        assert_str_repr("\xc3\xa9", "'\xc3\xa9'");              /* é literal */
        assert_str_repr("", "''");
        /* more: other controls, unassigned, a space is printable, ' and \ together */
        assert_str_repr("\x01\x1b\x1f", "'\\x01\\x1b\\x1f'");
        assert_str_repr("\xcd\xb8", "'\\u0378'");               /* unassigned (Cn) */
        assert_str_repr("\xf3\xa0\x80\x81", "'\\U000e0001'");   /* LANGUAGE TAG (Cf) */
        assert_str_repr("a b", "'a b'");
        assert_str_repr("\xe3\x80\x80", "'\\u3000'");           /* IDEOGRAPHIC SPACE (Zs) */
        assert_str_repr("'\\", "\"'\\\\\"");
        assert_str_repr("\"", "'\"'");
}
END_TEST

START_TEST(test_invalid_utf8) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "img", NULL);
        _cleanup_free_ char *c = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        char *r = NULL;

        ck_assert_int_eq(sbx_pyrepr_str_to_string(SBX_PYTHON_DEFAULT, "\xc2", &r), -EILSEQ);              /* truncated */
        ck_assert_int_eq(sbx_pyrepr_str_to_string(SBX_PYTHON_DEFAULT, "\xc0\xaf", &r), -EILSEQ);          /* overlong */
        ck_assert_int_eq(sbx_pyrepr_str_to_string(SBX_PYTHON_DEFAULT, "\xed\xa0\x80", &r), -EILSEQ);      /* surrogate */
        ck_assert_int_eq(sbx_pyrepr_str_to_string(SBX_PYTHON_DEFAULT, "\xf4\x90\x80\x80", &r), -EILSEQ);  /* > U+10FFFF */
        ck_assert_ptr_null(r);

        ck_assert_int_eq(sbx_spec_add_env(s, "K", "ok\xff"), 0);
        normalize(s);
        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), -EILSEQ);
        ck_assert_ptr_null(c);
        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), -EILSEQ);
}
END_TEST

START_TEST(test_not_normalized) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, "img", NULL);
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        char *c = NULL;

        ck_assert_int_eq(sbx_spec_repr(s, SBX_PYTHON_DEFAULT, &c), -EINVAL);        /* no working_dir yet */
        s->template_type = _SBX_TEMPLATE_TYPE_MAX;
        set_working_dir(s, "/home");
        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), -EINVAL);
        ck_assert_ptr_null(c);
}
END_TEST

static char *tuple_of(size_t n) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < n; i++) {
                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_int(f, (int64_t) i - 1);
        }
        sbx_pyrepr_tuple_end(f, n);
        sbx_pyrepr_tuple_item(f, 1);
        sbx_pyrepr_none(f);
        sbx_pyrepr_tuple_item(f, 1);
        sbx_pyrepr_bool(f, true);
        ck_assert_int_eq(fclose(f), 0);
        return buf;
}

START_TEST(test_tuples) {
        _cleanup_free_ char *t0 = tuple_of(0), *t1 = tuple_of(1), *t2 = tuple_of(2), *t3 = tuple_of(3);

        ck_assert_str_eq(t0, "(), None, True");
        ck_assert_str_eq(t1, "(-1,), None, True");
        ck_assert_str_eq(t2, "(-1, 0), None, True");
        ck_assert_str_eq(t3, "(-1, 0, 1), None, True");
}
END_TEST

/* TestSpecFieldSensitivity: each field change alters equality and fingerprint. */
enum {
        CHANGE_NONE,
        CHANGE_WORKING_DIR,
        CHANGE_CPUS,
        CHANGE_MEMORY,
        CHANGE_ENV,
        CHANGE_VOLUME_MODE,
        CHANGE_NETWORK,
        CHANGE_PORTS,
        CHANGE_IMAGE,
        _CHANGE_MAX,
};

static SbxSpec *changed_v2(int change) {
        SbxSpec *s = make_v2();

        switch (change) {
        case CHANGE_WORKING_DIR:
                set_working_dir(s, "/other");
                break;
        case CHANGE_CPUS:
                s->cpus = 2;
                break;
        case CHANGE_MEMORY:
                s->memory = 1024;
                break;
        case CHANGE_ENV:
                ck_assert_int_eq(sbx_spec_add_env(s, "FOO", "different"), 0);
                break;
        case CHANGE_VOLUME_MODE:
                free(s->volumes[0].mode);
                s->volumes[0].mode = strdup("rw");
                break;
        case CHANGE_NETWORK:
                s->network_isolated = true;
                break;
        case CHANGE_PORTS:
                s->ports[0] = (SbxPort) { 9090, 90 };
                break;
        case CHANGE_IMAGE:
                free(s->image);
                s->image = strdup("python:3.11-slim");
                break;
        }
        normalize(s);
        return s;
}

START_TEST(test_field_sensitivity) {
        _cleanup_(sbx_spec_freep) SbxSpec *base = changed_v2(CHANGE_NONE), *same = changed_v2(CHANGE_NONE);
        char fb[SBX_FINGERPRINT_HEX_LEN + 1], fs[SBX_FINGERPRINT_HEX_LEN + 1];

        ck_assert_int_eq(sbx_spec_fingerprint(base, SBX_PYTHON_DEFAULT, fb), 0);
        ck_assert_int_eq(sbx_spec_fingerprint(same, SBX_PYTHON_DEFAULT, fs), 0);
        ck_assert(sbx_spec_equal(base, same));
        ck_assert_str_eq(fb, fs);

        for (int c = CHANGE_NONE + 1; c < _CHANGE_MAX; c++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = changed_v2(c);
                char f[SBX_FINGERPRINT_HEX_LEN + 1];

                ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, f), 0);
                ck_assert_msg(!sbx_spec_equal(base, s), "change %d kept the specs equal", c);
                ck_assert_msg(!streq(fb, f), "change %d kept the fingerprint", c);
        }
}
END_TEST

START_TEST(test_template_sensitivity) {
        _cleanup_(sbx_spec_freep) SbxSpec *img = make_v2();
        _cleanup_(sbx_spec_freep) SbxSpec *s1 = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");
        _cleanup_(sbx_spec_freep) SbxSpec *s2 = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-2");
        _cleanup_(sbx_spec_freep) SbxSpec *s1img = new_spec(SBX_TEMPLATE_SNAPSHOT, NULL, "snap-1");
        char a[SBX_FINGERPRINT_HEX_LEN + 1], b[SBX_FINGERPRINT_HEX_LEN + 1], c[SBX_FINGERPRINT_HEX_LEN + 1];

        /* the same other fields as the image spec, only the template differs */
        set_working_dir(s1img, "/home");
        ck_assert_int_eq(sbx_spec_add_env(s1img, "FOO", "bar"), 0);
        ck_assert_int_eq(sbx_spec_add_env(s1img, "BAZ", "qux"), 0);
        ck_assert_int_eq(sbx_spec_add_volume(s1img, "/host/a", "/guest/a", "ro"), 0);
        ck_assert_int_eq(sbx_spec_add_port(s1img, 8080, 80), 0);

        fingerprint_of(img, a);
        fingerprint_of(s1img, b);
        ck_assert_str_ne(a, b);
        ck_assert(!sbx_spec_equal(img, s1img));

        fingerprint_of(s1, b);
        fingerprint_of(s2, c);
        ck_assert_str_ne(b, c);
        ck_assert(!sbx_spec_equal(s1, s2));
}
END_TEST

/* 64 lowercase hex digits, no prefix; the log-safe 12-digit prefixes of the
 * vectors are distinct. */
START_TEST(test_hex_form) {
        static const char *const images[] = { "a", "b", "c", DEFAULT_IMAGE, "python:3.12-slim" };
        char fps[ELEMENTSOF(images)][SBX_FINGERPRINT_HEX_LEN + 1];

        for (size_t i = 0; i < ELEMENTSOF(images); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = new_spec(SBX_TEMPLATE_IMAGE, images[i], NULL);

                fingerprint_of(s, fps[i]);
                ck_assert_uint_eq(strlen(fps[i]), SBX_FINGERPRINT_HEX_LEN);
                ck_assert_uint_eq(strspn(fps[i], "0123456789abcdef"), SBX_FINGERPRINT_HEX_LEN);
                for (size_t j = 0; j < i; j++)
                        ck_assert(strncmp(fps[i], fps[j], SBX_FINGERPRINT_SHORT_LEN) != 0);
        }
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("fingerprint");
        TCase *tc = tcase_create("vectors");

        tcase_add_test(tc, test_v1_default_image);
        tcase_add_test(tc, test_v2_baseline);
        tcase_add_test(tc, test_v3_snapshot);
        tcase_add_test(tc, test_v4_order_insensitive);
        tcase_add_test(tc, test_v5_everything);
        tcase_add_test(tc, test_v6_escapes);
        tcase_add_test(tc, test_v7_small_memory);
        tcase_add_test(tc, test_v8_snapshot_full);
        tcase_add_test(tc, test_v9_defaults);
        suite_add_tcase(s, tc);

        tc = tcase_create("repr");
        tcase_add_test(tc, test_none_vs_empty);
        tcase_add_test(tc, test_int_repr);
        tcase_add_test(tc, test_str_escapes);
        tcase_add_test(tc, test_invalid_utf8);
        tcase_add_test(tc, test_not_normalized);
        tcase_add_test(tc, test_tuples);
        suite_add_tcase(s, tc);

        tc = tcase_create("sensitivity");
        tcase_add_test(tc, test_field_sensitivity);
        tcase_add_test(tc, test_template_sensitivity);
        tcase_add_test(tc, test_hex_form);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
