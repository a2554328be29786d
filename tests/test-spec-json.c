/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "fingerprint.h"
#include "json-util.h"
#include "sbx-test.h"
#include "spec-json.h"
#include "utf8.h"

static SbxSpec *parse_ok(const char *text) {
        SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_spec_from_json_string(text, &s, &e) == 0, "%s: %s", text, e.message);
        ck_assert_msg(sbx_spec_finalize(s, "default:img", &e) == 0, "%s: %s", text, e.message);
        return s;
}

static void parse_bad(const char *text, const char *needle) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_spec_from_json_string(text, &s, &e);

        if (r >= 0)
                r = sbx_spec_finalize(s, "default:img", &e);
        ck_assert_msg(r < 0, "%s parsed", text);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(strstr(e.message, needle), "%s: message \"%s\" lacks \"%s\"", text, e.message, needle);
        sbx_error_free(&e);
}

static char *canonical(const SbxSpec *s) {
        char *out = NULL;
        ck_assert_int_eq(sbx_spec_to_json_string(s, &out), 0);
        return out;
}

START_TEST(test_canonical_form) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = parse_ok(
                "{\"ports\": [[8080, 80], [0, 81], [8080, 80]], \"image\": \"python:3.12-slim\","
                " \"env\": {\"FOO\": \"bar\", \"BAZ\": \"qux\"},"
                " \"volumes\": [[\"//host/x/../a/\", \"/guest/./a\", \"ro\"], [\"/host/a\", \"/guest/a\", \"ro\"]],"
                " \"working_dir\": \"//work/\", \"cpus\": 2, \"memory\": 1024}");
        _cleanup_free_ char *out = canonical(s);

        ck_assert_str_eq(out,
                         "{\"image\":\"python:3.12-slim\",\"working_dir\":\"/work\",\"cpus\":2,\"memory\":1024,"
                         "\"env\":{\"BAZ\":\"qux\",\"FOO\":\"bar\"},\"volumes\":[[\"/host/a\",\"/guest/a\",\"ro\"]],"
                         "\"network_isolated\":false,\"ports\":[[0,81],[8080,80]]}");
}
END_TEST

START_TEST(test_defaults_and_snapshot) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = parse_ok("{}");
        _cleanup_free_ char *out = canonical(a);

        ck_assert_str_eq(out, "{\"image\":\"default:img\",\"working_dir\":\"/home\",\"cpus\":1,\"memory\":512,"
                              "\"env\":{},\"volumes\":[],\"network_isolated\":false,\"ports\":[]}");

        _cleanup_(sbx_spec_freep) SbxSpec *b = parse_ok("{\"snapshot\": \"snap-1\", \"network_isolated\": true}");
        _cleanup_free_ char *out2 = canonical(b);
        ck_assert_int_eq(b->template_type, SBX_TEMPLATE_SNAPSHOT);
        ck_assert_ptr_null(b->image);
        ck_assert_str_eq(out2, "{\"snapshot\":\"snap-1\",\"working_dir\":\"/home\",\"cpus\":1,\"memory\":512,"
                               "\"env\":{},\"volumes\":[],\"network_isolated\":true,\"ports\":[]}");
}
END_TEST

/* Canonical JSON parses back to an equal spec and re-serializes identically,
 * including escapes and non-ASCII. */
START_TEST(test_round_trip) {
        static const char *inputs[] = {
                "{}",
                "{\"snapshot\": \"s\\\"n\\\\ap\"}",
                "{\"image\": \"img:tag\", \"env\": {\"NL\": \"a\\nb\", \"U\": \"caf\\u00e9\", \"Q\": \"it's \\\"x\\\"\","
                " \"C\": \"\\u0001\", \"Z\": \"\\u200b\"}, \"volumes\": [[\"/h/\\u00e9\", \"/g\", \"rw\"]],"
                " \"ports\": [[65535, 65535]], \"network_isolated\": false, \"working_dir\": \"/a/b/../c\"}",
        };

        for (size_t i = 0; i < ELEMENTSOF(inputs); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *a = parse_ok(inputs[i]);
                _cleanup_free_ char *out = canonical(a);
                _cleanup_(sbx_spec_freep) SbxSpec *b = parse_ok(out);
                _cleanup_free_ char *again = canonical(b);

                ck_assert(sbx_spec_equal(a, b));
                ck_assert_str_eq(out, again);
        }
}
END_TEST

START_TEST(test_errors) {
        parse_bad("[]", "spec: expected a JSON object");
        parse_bad("{", "spec: not valid JSON");
        parse_bad("{\"imgae\": \"x\"}", "imgae: unknown key");
        parse_bad("{\"image\": 5}", "image: expected a string");
        parse_bad("{\"image\": \"a\", \"snapshot\": \"b\"}", "forbids 'image'");
        parse_bad("{\"image\": \"\", \"snapshot\": \"b\"}", "mutually exclusive");
        parse_bad("{\"snapshot\": \"\"}", "requires 'snapshot_id'");
        parse_bad("{\"cpus\": \"2\"}", "cpus: expected an integer");
        parse_bad("{\"cpus\": 1.5}", "cpus: expected an integer");
        parse_bad("{\"cpus\": -1}", "cpus must be >= 1");
        parse_bad("{\"memory\": 64}", "memory must be >= 128");
        parse_bad("{\"env\": []}", "env: expected an object");
        parse_bad("{\"env\": {\"A\": 1}}", "env: expected a string");
        parse_bad("{\"env\": {\"A\": \"x\\u0000y\"}}", "U+0000");
        parse_bad("{\"volumes\": {}}", "volumes: expected an array");
        parse_bad("{\"volumes\": [[\"/h\", \"/g\"]]}", "volumes: expected 3 elements");
        parse_bad("{\"volumes\": [[\"/h\", \"/g\", 1]]}", "volumes: expected a string");
        parse_bad("{\"volumes\": [[\"/h\", \"/g\", \"rx\"]]}", "must be \"ro\" or \"rw\"");
        parse_bad("{\"ports\": [[80]]}", "ports: expected 2 elements");
        parse_bad("{\"ports\": [[80, 70000]]}", "guest port 70000 is outside");
        parse_bad("{\"ports\": [[80, 0]]}", "guest port 0");
        parse_bad("{\"ports\": [\"80:80\"]}", "ports: expected an array");
        parse_bad("{\"network_isolated\": 1}", "network_isolated: expected a boolean");
        parse_bad("{\"working_dir\": \"rel\"}", "working_dir");
}
END_TEST

static char *many_ports(int n) {
        char *big = NULL;
        size_t size;
        FILE *f = open_memstream(&big, &size);

        fputs("{\"ports\": [", f);
        for (int i = 0; i < n; i++)
                fprintf(f, "%s[0, %d]", i ? "," : "", i + 1);
        fputs("]}", f);
        fclose(f);
        return big;
}

/* Counts are bounded while parsing (both levels), before anything large is built;
 * create's own limits come after. */
START_TEST(test_bounds) {
        _cleanup_free_ char *too_many = many_ports(SBX_MAX_INPUT_ENTRIES + 1), *many = many_ports(SBX_MAX_PORTS + 1);
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;

        parse_bad(too_many, "ports: more than 4096 entries");
        parse_bad(many, "ports: 65 ports, the limit is 64");
        ck_assert_int_eq(sbx_spec_from_json_string(many, &s, &e), 0);
        ck_assert_int_eq(sbx_spec_complete(s, "default:img", &e), 0);
}
END_TEST

/* Contract-valid (sbx_spec_complete) but not admissible (sbx_spec_finalize):
 * each is fingerprinted, and create refuses it naming the rule. */
START_TEST(test_contract_level) {
        static const struct {
                const char *json, *rule;
        } cases[] = {
                /* xagent's vector V5 */
                { "{\"image\": \"img:tag\", \"working_dir\": \"/work\", \"cpus\": 2, \"memory\": 1024,"
                  " \"env\": {\"B\": \"2\", \"A\": \"1\"}, \"volumes\": [[\"/h2\", \"/g2\", \"rw\"], [\"/h1\", \"/g1\", \"ro\"]],"
                  " \"network_isolated\": true, \"ports\": [[18081, 81], [0, 80]]}",
                  "network_isolated sandbox cannot publish ports" },
                { "{\"volumes\": [[\"/h\", \"/g\", \"rx\"]]}", "must be \"ro\" or \"rw\"" },
                { "{\"working_dir\": \"rel\"}", "not an absolute path" },
                { "{\"env\": {\"A\\u0001\": \"v\"}}", "control characters" },
                { "{\"env\": {\"\": \"v\", \"a=b\": \"\"}}", "name is empty" },
                { "{\"image\": \"caf\\u00e9 latest\"}", "printable ASCII" },
                { "{\"ports\": [[70000, 80]]}", "host port 70000" },
                { "{\"ports\": [[-1, 0]]}", "host port -1" },
                { "{\"cpus\": 9223372036854775807}", "cpus: 9223372036854775807 is more than" },
                { "{\"memory\": 4294967296}", "memory: 4294967296 MiB is more than" },
                { "{\"snapshot\": \"s\\n\"}", "control characters" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
                SbxError e = SBX_ERROR_NULL;
                char fp[SBX_FINGERPRINT_HEX_LEN + 1];

                ck_assert_int_eq(sbx_spec_from_json_string(cases[i].json, &s, &e), 0);
                ck_assert_msg(sbx_spec_complete(s, "default:img", &e) == 0, "%s: %s", cases[i].json, e.message);
                ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), 0);
                if (i == 0)
                        ck_assert_str_eq(fp, "6c98f55b42f76d74d4de177847b62ce4f6778e9f35a73e9c5f5d9a4473d64b32");
                parse_bad(cases[i].json, cases[i].rule);
        }
}
END_TEST

/* A NUL is refused wherever it is, saying so; never cut (json-c would turn the key
 * "A\u0000B" into "A"). A backslash before "u0000" is kept as it is. */
START_TEST(test_nul) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;

        parse_bad("{\"env\": {\"A\\u0000B\": \"v\"}}", "U+0000 (NUL)");
        parse_bad("{\"image\\u0000junk\": \"x\"}", "refused rather than truncated");
        parse_bad("{\"env\": {\"A\\\\\\u0000\": \"v\"}}", "U+0000");       /* "A\\\u0000": an escaped \\, then NUL */
        ck_assert_int_eq(sbx_spec_from_json_string("{\"env\": {\"A\\\\u0000\": \"\\\\u0000\"}}", &s, &e), 0);
        ck_assert_str_eq(s->env[0].key, "A\\u0000");
        ck_assert_str_eq(s->env[0].value, "\\u0000");
}
END_TEST

/* null is Python's None for from_parts(): the default. Integers beyond int64 are
 * refused, not clamped. */
START_TEST(test_null_and_int64) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = parse_ok("{\"working_dir\": null, \"cpus\": null, \"memory\": null,"
                                                        " \"env\": null, \"volumes\": null, \"ports\": null}");
        _cleanup_(sbx_spec_freep) SbxSpec *b = parse_ok("{}");

        ck_assert(sbx_spec_equal(a, b));
        parse_bad("{\"image\": null}", "image: expected a string");
        parse_bad("{\"cpus\": 9223372036854775808}", "outside the range");
        parse_bad("{\"ports\": [[-9223372036854775809, 1]]}", "outside the range");
        parse_bad("{\"ports\": [[-9223372036854775808, 1]]}", "outside the range");
}
END_TEST

static char *env_value(const char *json_value) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        _cleanup_free_ char *text = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&text, "{\"env\": {\"A\": \"%s\"}}", json_value), 0);
        ck_assert_msg(sbx_spec_from_json_string(text, &s, &e) == 0, "%s: %s", text, e.message);
        ck_assert_int_eq(s->n_env, 1);
        return strdup(s->env[0].value);
}

static void utf8_of(uint32_t cp, char out[5]) {
        memset(out, 0, 5);
        if (cp < 0x80)
                out[0] = (char) cp;
        else if (cp < 0x800) {
                out[0] = (char) (0xc0 | cp >> 6);
                out[1] = (char) (0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                out[0] = (char) (0xe0 | cp >> 12);
                out[1] = (char) (0x80 | (cp >> 6 & 0x3f));
                out[2] = (char) (0x80 | (cp & 0x3f));
        } else {
                out[0] = (char) (0xf0 | cp >> 18);
                out[1] = (char) (0x80 | (cp >> 12 & 0x3f));
                out[2] = (char) (0x80 | (cp >> 6 & 0x3f));
                out[3] = (char) (0x80 | (cp & 0x3f));
        }
}

/* Every \u escape decodes as Python's json.loads() has it. json-c 0.16 turned
 * U+2D800 (\ud876\udc00) — every code point whose low 16 bits are D800–DFFF —
 * into U+FFFD. Each high surrogate with lows that give both kinds of code point. */
START_TEST(test_surrogate_pairs) {
        static const uint32_t lows[] = { 0xdc00, 0xdc01, 0xddff, 0xde00, 0xdfff };
        _cleanup_free_ char *ext_f = env_value("\\ud876\\udc00"), *upper = env_value("\\uD83D\\uDE00x"),
                            *bmp = env_value("\\u0080\\u07ff\\u0800\\u00e9\\uffff\\ue000\\u0041\\u0022");

        ck_assert_str_eq(ext_f, "\xf0\xad\xa0\x80");
        ck_assert_str_eq(upper, "\xf0\x9f\x98\x80x");
        ck_assert_str_eq(bmp, "\xc2\x80\xdf\xbf\xe0\xa0\x80\xc3\xa9\xef\xbf\xbf\xee\x80\x80" "A\"");
        for (uint32_t hi = 0xd800; hi <= 0xdbff; hi++)
                for (size_t i = 0; i < ELEMENTSOF(lows); i++) {
                        uint32_t cp = 0x10000 + ((hi - 0xd800) << 10) + (lows[i] - 0xdc00);
                        char esc[16], want[5];
                        _cleanup_free_ char *got = NULL;

                        snprintf(esc, sizeof esc, "\\u%04x\\u%04x", hi, lows[i]);
                        utf8_of(cp, want);
                        got = env_value(esc);
                        ck_assert_msg(streq(got, want), "%s: U+%04X decoded wrongly", esc, cp);
                }
}
END_TEST

/* The fingerprint of a spec written with escapes (json.dumps()' default) is that
 * of the same spec in UTF-8. */
START_TEST(test_escaped_fingerprint) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = NULL, *b = NULL;
        char fa[SBX_FINGERPRINT_HEX_LEN + 1], fb[SBX_FINGERPRINT_HEX_LEN + 1];

        ck_assert_int_eq(sbx_spec_from_json_string("{\"env\": {\"\\ud876\\udc00\": \"\\ud87e\\udfff\\u4e2d\"}}", &a,
                                                   NULL), 0);
        ck_assert_int_eq(sbx_spec_from_json_string("{\"env\": {\"\xf0\xad\xa0\x80\": \"\xf0\xaf\xaf\xbf\xe4\xb8\xad\"}}",
                                                   &b, NULL), 0);
        ck_assert_int_eq(sbx_spec_complete(a, "default:img", NULL), 0);
        ck_assert_int_eq(sbx_spec_complete(b, "default:img", NULL), 0);
        ck_assert_int_eq(sbx_spec_fingerprint(a, SBX_PYTHON_DEFAULT, fa), 0);
        ck_assert_int_eq(sbx_spec_fingerprint(b, SBX_PYTHON_DEFAULT, fb), 0);
        ck_assert_str_eq(fa, fb);
}
END_TEST

/* A surrogate that is not half of a pair is refused saying so, never replaced
 * (json-c made every one of them U+FFFD: 2,048 specs, one fingerprint). */
START_TEST(test_lone_surrogates) {
        parse_bad("{\"env\": {\"A\": \"\\ud800\"}}", "a lone high surrogate \\ud800 at byte 15 (under the key \"A\")");
        parse_bad("{\"env\": {\"A\": \"x\\udbffy\"}}", "lone high surrogate \\udbff");
        parse_bad("{\"env\": {\"A\": \"\\ud800\\ud800\"}}", "lone high surrogate");
        parse_bad("{\"env\": {\"A\": \"\\ud800\\n\"}}", "lone high surrogate");
        parse_bad("{\"env\": {\"A\": \"\\ud800\\u0041\"}}", "lone high surrogate");
        parse_bad("{\"env\": {\"A\": \"\\ud800\\udc0\"}}", "lone high surrogate");
        parse_bad("{\"env\": {\"A\": \"\\udc00\"}}", "a lone low surrogate \\udc00");
        parse_bad("{\"env\": {\"A\": \"\\udfff\"}}", "lone low surrogate");
        parse_bad("{\"env\": {\"A\": \"\\udc00\\ud800\"}}", "lone low surrogate");     /* reversed */
        parse_bad("{\"env\": {\"\\ud800\": \"v\"}}", "lone high surrogate");
        parse_bad("{\"image\": \"\\ude00\"}", "(under the key \"image\")");
        parse_bad("{\"image\": \"\\ude00\"}", "refused rather than replaced");

        /* A long key in the message is cut between characters, not inside one. */
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        ck_assert_int_lt(sbx_spec_from_json_string("{\"env\": {\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                                                   "\xe4\xb8\xad\": \"\\ud800\"}}", &s, &e), 0);
        ck_assert_msg(sbx_utf8_is_valid(e.message), "%s", e.message);
        ck_assert_msg(strstr(e.message, "a\")"), "%s", e.message);
}
END_TEST

/* A spec file is strict JSON: what json-c lets through besides is refused. */
START_TEST(test_strict) {
        static const struct {
                const char *json, *why;
        } cases[] = {
                { "/* c */ {}", "an unexpected character at byte 0" },
                { "{} // c", "text after the value at byte 3" },
                { "{\"cpus\": 2 /* c */}", "a missing ',' or '}'" },
                { "{\"cpus\": 2,}", "a trailing comma" },
                { "{\"ports\": [[1, 2],]}", "a trailing comma" },
                { "{\"ports\": [[1, 2,]]}", "a trailing comma" },
                { "{,}", "an object key that is not a string" },
                { "{\"cpus\": 01}", "a leading zero" },
                { "{\"cpus\": -01}", "a leading zero" },
                { "{\"cpus\": 00}", "a leading zero" },
                { "{'image': 'x'}", "an object key that is not a string" },
                { "{\"image\": 'x'}", "an unexpected character" },
                { "{image: \"x\"}", "an object key that is not a string" },
                { "{\"cpus\": NaN}", "an unexpected character" },
                { "{\"cpus\": Infinity}", "an unexpected character" },
                { "{\"cpus\": -Infinity}", "an unexpected character" },
                { "{\"cpus\": +1}", "an unexpected character" },
                { "{\"cpus\": .5}", "an unexpected character" },
                { "{\"cpus\": 1.}", "without digits after its '.'" },
                { "{\"cpus\": 1e}", "without digits in its exponent" },
                { "{\"cpus\": 0x10}", "a missing ',' or '}'" },
                { "{\"network_isolated\": TRUE}", "an unexpected character" },
                { "{\"network_isolated\": tru}", "an unexpected character" },
                { "{\"image\": \"a\tb\"}", "a control character in a string" },
                { "{\"image\": \"a\nb\"}", "a control character in a string" },
                { "{\"image\": \"\\x41\"}", "an unknown escape" },
                { "{\"image\": \"\\'\"}", "an unknown escape" },
                { "{\"image\": \"\\u12G4\"}", "without four hex digits" },
                { "{\"image\": \"\xff\"}", "not UTF-8" },
                { "{\"image\": \"\xed\xa0\x80\"}", "not UTF-8" },           /* a surrogate in UTF-8 */
                { "{\"image\": \"\xc0\xaf\"}", "not UTF-8" },               /* overlong */
                { "\xef\xbb\xbf{}", "an unexpected character at byte 0" },    /* a BOM */
                { "{\"image\": \"x", "an unterminated string" },
                { "{\"image\" \"x\"}", "a missing ':'" },
                { "{} {}", "text after the value" },
                { "", "the text ends before a value" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                parse_bad(cases[i].json, "spec: not valid JSON: ");
                parse_bad(cases[i].json, cases[i].why);
        }
        /* What strict JSON allows still parses. */
        _cleanup_(sbx_spec_freep) SbxSpec *s = parse_ok(
                " \t\r\n{ \"cpus\" : 2 , \"memory\":-0, \"env\":{\"A\":\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"},"
                " \"ports\" : [ ] , \"volumes\":null } \n");
        ck_assert_int_eq(s->cpus, 2);
        ck_assert_str_eq(s->env[0].value, "/\b\f\n\r\t\"\\");
        parse_bad("{\"cpus\": 1e2}", "cpus: expected an integer");
        parse_bad("{\"cpus\": -0.0}", "cpus: expected an integer");
        parse_bad("null", "spec: expected a JSON object");
}
END_TEST

static char *nested(size_t depth) {
        char *t = malloc(2 * depth + 16);

        strcpy(t, "{\"env\": ");
        for (size_t i = 0; i < depth; i++)
                strcat(t, "[");
        for (size_t i = 0; i < depth; i++)
                strcat(t, "]");
        strcat(t, "}");
        return t;
}

START_TEST(test_depth) {
        _cleanup_free_ char *ok = nested(SBX_JSON_MAX_DEPTH - 1), *deep = nested(SBX_JSON_MAX_DEPTH);

        parse_bad(ok, "env: expected an object");
        parse_bad(deep, "nested more than 32 deep");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("spec-json");
        TCase *tc = tcase_create("spec-json");

        tcase_add_test(tc, test_canonical_form);
        tcase_add_test(tc, test_defaults_and_snapshot);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_errors);
        tcase_add_test(tc, test_bounds);
        tcase_add_test(tc, test_contract_level);
        tcase_add_test(tc, test_nul);
        tcase_add_test(tc, test_null_and_int64);
        tcase_add_test(tc, test_surrogate_pairs);
        tcase_add_test(tc, test_escaped_fingerprint);
        tcase_add_test(tc, test_lone_surrogates);
        tcase_add_test(tc, test_strict);
        tcase_add_test(tc, test_depth);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
