/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "fingerprint.h"
#include "publish.h"
#include "sbx-test.h"
#include "verdict.h"

/* xagent's contract (xagent-contract.md) §13 _make_spec(): V2. */
static SbxSpec *make_spec(void) {
        SbxSpec *s = sbx_spec_new();

        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup("python:3.12-slim");
        sbx_spec_add_env(s, "FOO", "bar");
        sbx_spec_add_env(s, "BAZ", "qux");
        sbx_spec_add_volume(s, "/host/a", "/guest/a", "ro");
        sbx_spec_add_port(s, 8080, 80);
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        return s;
}

/* An inspection with the given labels (NULL = absent) and limits (< 0 = absent). */
static SbxObserved *observed(const char *fp, const char *version, int64_t nano, int64_t mem) {
        _cleanup_free_ char *labels = NULL, *host = NULL, *json = NULL;
        SbxObserved *o = NULL;
        size_t n;
        FILE *f = open_memstream(&labels, &n);

        fputs("{", f);
        if (fp)
                fprintf(f, "\"xagent.sandbox.spec.fingerprint\": \"%s\"", fp);
        if (version)
                fprintf(f, "%s\"xagent.sandbox.spec.version\": \"%s\"", fp ? ", " : "", version);
        fputs("}", f);
        fclose(f);

        f = open_memstream(&host, &n);
        fputs("{", f);
        if (nano >= 0)
                fprintf(f, "\"NanoCpus\": %lld", (long long) nano);
        if (mem >= 0)
                fprintf(f, "%s\"Memory\": %lld", nano >= 0 ? ", " : "", (long long) mem);
        fputs("}", f);
        fclose(f);

        ck_assert_int_gt(asprintf(&json, "{\"State\": {\"Status\": \"running\"}, \"Config\": {\"Labels\": %s},"
                                         " \"HostConfig\": %s}", labels, host), 0);
        ck_assert_int_eq(sbx_observed_from_string(json, &o, NULL), 0);
        return o;
}

#define GIB (INT64_C(1) << 30)
#define MIB512 (INT64_C(512) << 20)

static SbxVerdict verdict_of(const char *fp_label, const char *version, int64_t nano, int64_t mem,
                             int64_t current) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec();
        SbxFingerprints fps;

        ck_assert_int_eq(sbx_spec_fingerprints(s, &fps), 0);
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                observed(fp_label ? (streq(fp_label, "OK") ? fps.hex[SBX_PYTHON_DEFAULT] : fp_label) : NULL,
                         version, nano, mem);
        return sbx_verdict(s, &fps, o, current);
}

/* sbx_spec_fingerprints() writes the repr once for an ASCII spec: each version's
 * entry is still that version's fingerprint, also when the only character above
 * ASCII is in the last string of the tuple (a volume's mode). */
START_TEST(test_fingerprints_per_version) {
        for (int i = 0; i < 3; i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec();
                SbxFingerprints fps;
                char one[SBX_FINGERPRINT_HEX_LEN + 1];

                if (i > 0) {
                        free(s->volumes[0].mode);
                        s->volumes[0].mode = strdup(i == 1 ? "r\xf0\x9f\x9b\x9c" : "r\xc3\xa9");
                }
                ck_assert_int_eq(sbx_spec_fingerprints(s, &fps), 0);
                for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++) {
                        ck_assert_int_eq(sbx_spec_fingerprint(s, v, one), 0);
                        ck_assert_str_eq(fps.hex[v], one);
                }
                if (i == 1)
                        ck_assert_str_ne(fps.hex[SBX_PYTHON_3_11], fps.hex[SBX_PYTHON_3_12]);
        }
}
END_TEST

/* U+1F6DC (WIRELESS, Unicode 15.0) is escaped by Python 3.11 and printed by 3.12
 * on: a label xagent wrote on either Python verifies as match. */
START_TEST(test_any_python_version) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec();
        SbxFingerprints fps;

        free(s->env[0].value);
        s->env[0].value = strdup("\xf0\x9f\x9b\x9c");
        ck_assert_int_eq(sbx_spec_fingerprints(s, &fps), 0);
        ck_assert_str_ne(fps.hex[SBX_PYTHON_3_11], fps.hex[SBX_PYTHON_3_12]);
        ck_assert_str_eq(fps.hex[SBX_PYTHON_3_12], fps.hex[SBX_PYTHON_3_14]);
        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++) {
                _cleanup_(sbx_observed_freep) SbxObserved *o = observed(fps.hex[v], "1", 1000000000, MIB512);
                ck_assert_int_eq(sbx_verdict(s, &fps, o, 1), SBX_VERDICT_MATCH);
        }
        _cleanup_(sbx_observed_freep) SbxObserved *other = observed("0123", "1", 1000000000, MIB512);
        ck_assert_int_eq(sbx_verdict(s, &fps, other, 1), SBX_VERDICT_MISMATCH);
}
END_TEST

/* TestSpecMatchesInspection, in order. "OK" stands for the spec's real fingerprint. */
START_TEST(test_table) {
        ck_assert_int_eq(verdict_of(NULL, "1", 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", NULL, 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", "0", 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", "1", 1000000000, MIB512, 1), SBX_VERDICT_MATCH);
        ck_assert_int_eq(verdict_of("OK", "1", 500000000, MIB512, 1), SBX_VERDICT_MISMATCH);
        ck_assert_int_eq(verdict_of("OK", "1", 1000000000, GIB, 1), SBX_VERDICT_MISMATCH);
        ck_assert_int_eq(verdict_of("not-the-real-fingerprint", "1", 1000000000, MIB512, 1), SBX_VERDICT_MISMATCH);
        ck_assert_int_eq(verdict_of("OK", "5", 1000000000, MIB512, 5), SBX_VERDICT_MATCH);
        ck_assert_int_eq(verdict_of("OK", "5", 1000000000, MIB512, 6), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", "2", 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
}
END_TEST

/* Blank labels read as absent: unverified, never mismatch. Missing limits are 0. */
START_TEST(test_blank_and_missing) {
        ck_assert_int_eq(verdict_of("", "1", 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", "", 1000000000, MIB512, 1), SBX_VERDICT_UNVERIFIED);
        ck_assert_int_eq(verdict_of("OK", "1", -1, MIB512, 1), SBX_VERDICT_MISMATCH);
        ck_assert_int_eq(verdict_of("OK", "1", 1000000000, -1, 1), SBX_VERDICT_MISMATCH);
        /* a fingerprint in upper case is a different string */
        _cleanup_(sbx_spec_freep) SbxSpec *s = make_spec();
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), 0);
        for (char *c = fp; *c; c++)
                if (*c >= 'a' && *c <= 'f')
                        *c -= 32;
        ck_assert_int_eq(verdict_of(fp, "1", 1000000000, MIB512, 1), SBX_VERDICT_MISMATCH);
}
END_TEST

/* The version label is read with Python's int(). */
START_TEST(test_version_int) {
        /* written into JSON, so "1\\n" reaches the parser as "1" and a newline */
        static const char *as_one[] = { " 1 ", "+1", "01", "0_1", "1\\n", "\xd9\xa1" };
        static const char *refused[] = { "1.0", "0x1", "one", "1_", "99999999999999999999999" };

        for (size_t i = 0; i < ELEMENTSOF(as_one); i++)
                ck_assert_msg(verdict_of("OK", as_one[i], 1000000000, MIB512, 1) == SBX_VERDICT_MATCH, "%s", as_one[i]);
        for (size_t i = 0; i < ELEMENTSOF(refused); i++)
                ck_assert_msg(verdict_of("OK", refused[i], 1000000000, MIB512, 1) == SBX_VERDICT_UNVERIFIED, "%s",
                              refused[i]);
}
END_TEST

START_TEST(test_names) {
        const char *names[SBX_SPEC_FIELD_COUNT + 1];

        ck_assert_str_eq(sbx_verdict_to_string(SBX_VERDICT_MATCH), "match");
        ck_assert_str_eq(sbx_verdict_to_string(SBX_VERDICT_MISMATCH), "mismatch");
        ck_assert_str_eq(sbx_verdict_to_string(SBX_VERDICT_UNVERIFIED), "unverified");
        ck_assert_ptr_null(sbx_verdict_to_string(_SBX_VERDICT_MAX));

        ck_assert_uint_eq(sbx_spec_fields_to_names(SBX_SPEC_FIELD_PORTS | SBX_SPEC_FIELD_IMAGE | SBX_SPEC_FIELD_ENV,
                                                   names), 3);
        ck_assert_str_eq(names[0], "image");
        ck_assert_str_eq(names[1], "ports");
        ck_assert_str_eq(names[2], "env");
        ck_assert_ptr_null(names[3]);
        ck_assert_uint_eq(sbx_spec_fields_to_names(0, names), 0);
}
END_TEST

/* mismatched_fields: xagent's publish-check order, then template_type,
 * snapshot_id, env (docs/api.md). */
START_TEST(test_names_order) {
        static const char *const want[] = {
                "image", "volumes", "ports", "working_dir", "network_isolated", "cpus", "memory",
                "template_type", "snapshot_id", "env",
        };
        const char *names[SBX_SPEC_FIELD_COUNT + 1];

        ck_assert_uint_eq(sbx_spec_fields_to_names((1u << SBX_SPEC_FIELD_COUNT) - 1, names), SBX_SPEC_FIELD_COUNT);
        for (size_t i = 0; i < SBX_SPEC_FIELD_COUNT; i++)
                ck_assert_str_eq(names[i], want[i]);
        for (unsigned i = 0; i < SBX_PUBLISH_FIELD_COUNT; i++)
                ck_assert_str_eq(sbx_spec_field_to_string(1u << i), sbx_publish_field_to_string(1u << i));
}
END_TEST

/* Each field changed alone is named alone; a spec equals itself. */
START_TEST(test_diff) {
        _cleanup_(sbx_spec_freep) SbxSpec *a = make_spec();
        ck_assert_uint_eq(sbx_spec_diff(a, a), 0);

        for (unsigned bit = 0; bit < SBX_SPEC_FIELD_COUNT; bit++) {
                _cleanup_(sbx_spec_freep) SbxSpec *b = make_spec();
                unsigned want = 1u << bit;

                switch (want) {
                case SBX_SPEC_FIELD_TEMPLATE_TYPE: b->template_type = SBX_TEMPLATE_SNAPSHOT; break;
                case SBX_SPEC_FIELD_IMAGE: free(b->image); b->image = strdup("python:3.11-slim"); break;
                case SBX_SPEC_FIELD_SNAPSHOT_ID: b->snapshot_id = strdup("snap-1"); break;
                case SBX_SPEC_FIELD_WORKING_DIR: free(b->working_dir); b->working_dir = strdup("/other"); break;
                case SBX_SPEC_FIELD_CPUS: b->cpus = 2; break;
                case SBX_SPEC_FIELD_MEMORY: b->memory = 1024; break;
                case SBX_SPEC_FIELD_ENV: free(b->env[1].value); b->env[1].value = strdup("different"); break;
                case SBX_SPEC_FIELD_VOLUMES: free(b->volumes[0].mode); b->volumes[0].mode = strdup("rw"); break;
                case SBX_SPEC_FIELD_NETWORK_ISOLATED: b->network_isolated = true; break;
                case SBX_SPEC_FIELD_PORTS: b->ports[0].host = 9090; break;
                }
                ck_assert_msg(sbx_spec_diff(a, b) == want, "bit %u: got %#x", bit, sbx_spec_diff(a, b));
        }
}
END_TEST

/* verify's field naming: from the stored row only when it is the attested one. */
START_TEST(test_mismatched_fields) {
        _cleanup_(sbx_spec_freep) SbxSpec *desired = make_spec(), *stored = make_spec();
        char stored_fp[SBX_FINGERPRINT_HEX_LEN + 1];

        free(stored->image);
        stored->image = strdup("python:3.11-slim");
        stored->cpus = 2;
        ck_assert_int_eq(sbx_spec_fingerprint(stored, SBX_PYTHON_DEFAULT, stored_fp), 0);

        /* the container carries the stored row's label and its limits */
        _cleanup_(sbx_observed_freep) SbxObserved *o = observed(stored_fp, "1", 2000000000, MIB512);
        ck_assert_uint_eq(sbx_verify_mismatched_fields(desired, stored, stored_fp, o),
                          SBX_SPEC_FIELD_IMAGE | SBX_SPEC_FIELD_CPUS);
        /* no row: only what Docker reports can be named */
        ck_assert_uint_eq(sbx_verify_mismatched_fields(desired, NULL, NULL, o), SBX_SPEC_FIELD_CPUS);
        /* a row that is not the attested spec names nothing from the row */
        ck_assert_uint_eq(sbx_verify_mismatched_fields(desired, stored, "0000", o), SBX_SPEC_FIELD_CPUS);
        /* the spec itself, with the limits tampered with after create */
        _cleanup_(sbx_observed_freep) SbxObserved *p = observed("x", "1", 500000000, GIB);
        ck_assert_uint_eq(sbx_verify_mismatched_fields(desired, NULL, NULL, p),
                          SBX_SPEC_FIELD_CPUS | SBX_SPEC_FIELD_MEMORY);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("verdict");
        TCase *tc = tcase_create("verdict");

        tcase_add_test(tc, test_table);
        tcase_add_test(tc, test_blank_and_missing);
        tcase_add_test(tc, test_version_int);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_names_order);
        tcase_add_test(tc, test_fingerprints_per_version);
        tcase_add_test(tc, test_any_python_version);
        tcase_add_test(tc, test_diff);
        tcase_add_test(tc, test_mismatched_fields);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
