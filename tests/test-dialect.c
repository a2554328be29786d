/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Podman dialect (src/core/dialect.c) on Podman 4.3.1's own answers, recorded
 * from a private rootful service for containers this service created
 * (tests/data/podman-4.3.1/), and on each of them made weaker: every rewrite
 * holds where the fact is the same and never where it is not. */

#include "sbx-test.h"
#include <stdio.h>

#include "attested.h"
#include "dialect.h"
#include "json-util.h"
#include "observed.h"
#include "posture.h"
#include "publish.h"

#define MIB (INT64_C(1024) * 1024)

static const SbxPostureExpect expect_bridge = {
        .pids_limit = 512, .publish_address = "127.0.0.1", .network_isolated = false, .memory_bytes = 512 * MIB,
};
static const SbxPostureExpect expect_isolated = {
        .pids_limit = 512, .publish_address = "127.0.0.1", .network_isolated = true, .memory_bytes = 512 * MIB,
};

static json_object *fixture(const char *name) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        json_object *j;

        ck_assert_msg(root, "SBX_SOURCE_ROOT is not set");
        ck_assert_int_gt(asprintf(&path, "%s/tests/data/podman-4.3.1/%s.json", root, name), 0);
        j = json_object_from_file(path);
        ck_assert_msg(j, "cannot read %s", path);
        return j;
}

static void podman_dialect(SbxDialect *d) {
        _cleanup_(json_object_putp) json_object *info = fixture("libpod-info");
        SbxError e = SBX_ERROR_NULL;

        *d = (SbxDialect) { .kind = SBX_ENGINE_PODMAN };
        ck_assert_int_eq(sbx_dialect_set_default_caps(d, info, &e), 0);
}

/* The desired spec of the recorded containers: the test image, /home, 1 CPU,
 * 512 MiB; the bridge one publishes guest 8080 on host 18181. */
static SbxSpec *desired(bool isolated) {
        SbxSpec *s = sbx_spec_new();

        ck_assert_ptr_nonnull(s);
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup("xagent-sandbox-test:latest");
        s->network_isolated = isolated;
        if (!isolated)
                ck_assert_int_eq(sbx_spec_add_port(s, 18181, 8080), 0);
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        return s;
}

typedef struct Verdict {
        unsigned posture, publish;
} Verdict;

static Verdict judge(const SbxDialect *d, json_object *inspect, json_object *libpod, bool isolated) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = desired(isolated);
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_dialect_normalize_inspect(d, inspect, libpod), 0);
        ck_assert_int_eq(sbx_observed_from_json(inspect, &o, &e), 0);
        return (Verdict) {
                .posture = sbx_posture_check(o, isolated ? &expect_isolated : &expect_bridge),
                .publish = sbx_find_publish_mismatches(s, "xagent-sandbox-test:latest", o),
        };
}

static json_object *host_config(json_object *inspect) {
        return json_object_object_get(inspect, "HostConfig");
}

static void set(json_object *o, const char *key, json_object *v) {
        ck_assert_int_eq(json_object_object_add(o, key, v), 0);
}

START_TEST(test_engine_from_version) {
        _cleanup_(json_object_putp) json_object *podman = fixture("version"),
                *docker = json_tokener_parse("{\"Components\": [{\"Name\": \"Engine\", \"Version\": \"20.10.24\"},"
                                             " {\"Name\": \"containerd\"}], \"Version\": \"20.10.24\"}"),
                *odd = json_tokener_parse("{\"Components\": {\"Name\": \"Podman Engine\"}}");

        ck_assert_int_eq(sbx_engine_from_version(podman), SBX_ENGINE_PODMAN);
        ck_assert_int_eq(sbx_engine_from_version(docker), SBX_ENGINE_DOCKER);
        ck_assert_int_eq(sbx_engine_from_version(odd), SBX_ENGINE_DOCKER);
        ck_assert_int_eq(sbx_engine_from_version(NULL), SBX_ENGINE_DOCKER);
}
END_TEST

START_TEST(test_rootless) {
        _cleanup_(json_object_putp) json_object *rootful = fixture("libpod-info"), *compat = fixture("info"),
                *rootless_libpod = fixture("libpod-info"),
                *rootless_compat = json_tokener_parse("{\"SecurityOptions\": [\"name=seccomp,profile=default\","
                                                      " \"name=rootless\"]}");

        ck_assert(!sbx_engine_rootless(rootful));
        ck_assert(!sbx_engine_rootless(compat));
        set(json_object_object_get(json_object_object_get(rootless_libpod, "host"), "security"), "rootless",
            json_object_new_boolean(true));
        ck_assert(sbx_engine_rootless(rootless_libpod));
        ck_assert(sbx_engine_rootless(rootless_compat));
}
END_TEST

START_TEST(test_default_caps) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        _cleanup_(json_object_putp) json_object *none = json_tokener_parse("{\"host\": {\"security\": {}}}");
        SbxError e = SBX_ERROR_NULL;

        podman_dialect(&d);
        ck_assert_uint_eq(d.n_default_caps, 14);
        ck_assert_str_eq(d.default_caps[0], "AUDIT_WRITE");
        ck_assert_str_eq(d.default_caps[13], "SYS_CHROOT");
        sbx_dialect_done(&d);
        ck_assert_int_lt(sbx_dialect_set_default_caps(&d, none, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_BACKEND_ERROR);
        sbx_error_free(&e);
}
END_TEST

/* Podman's own answers: raw, the five posture items and the publish fields of the
 * measurement (shared/reference/podman-4.3.1.md §3) fail; in its dialect, none. */
START_TEST(test_recorded_answers) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        const SbxDialect docker = { .kind = SBX_ENGINE_DOCKER };
        unsigned five = SBX_POSTURE_CAP_DROP | SBX_POSTURE_IPC_MODE | SBX_POSTURE_PID_MODE | SBX_POSTURE_UTS_MODE |
                        SBX_POSTURE_LOG;

        podman_dialect(&d);
        for (int isolated = 0; isolated <= 1; isolated++) {
                _cleanup_(json_object_putp) json_object *raw = fixture(isolated ? "isolated" : "bridge"),
                        *inspect = fixture(isolated ? "isolated" : "bridge"),
                        *libpod = fixture(isolated ? "isolated-libpod" : "bridge-libpod");
                Verdict v = judge(&docker, raw, libpod, isolated);

                ck_assert_uint_eq(v.posture, five);
                ck_assert_uint_eq(v.publish, SBX_PUBLISH_IMAGE | (isolated ? SBX_PUBLISH_NETWORK_ISOLATED : 0));
                v = judge(&d, inspect, libpod, isolated);
                ck_assert_uint_eq(v.posture, 0);
                ck_assert_uint_eq(v.publish, 0);
        }
}
END_TEST

/* CapDrop is "ALL" only when it covers the whole default set and nothing is given back. */
START_TEST(test_cap_drop) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        const SbxDialect unknown_set = { .kind = SBX_ENGINE_PODMAN };

        podman_dialect(&d);
        for (int c = 0; c < 6; c++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");
                json_object *host = host_config(inspect), *drop = json_object_object_get(host, "CapDrop");
                Verdict v;

                switch (c) {
                case 0: /* one default capability kept (the last) */
                        ck_assert_int_eq(json_object_array_del_idx(drop, json_object_array_length(drop) - 1, 1), 0);
                        break;
                case 1: /* one added back */
                        set(host, "CapAdd", json_tokener_parse("[\"NET_ADMIN\"]"));
                        break;
                case 2:
                        set(host, "Privileged", json_object_new_boolean(true));
                        break;
                case 3: /* the libpod spelling, in any case: still all */
                        set(host, "CapDrop", json_tokener_parse(
                                "[\"CAP_AUDIT_WRITE\", \"cap_chown\", \"CAP_DAC_OVERRIDE\", \"CAP_FOWNER\","
                                " \"CAP_FSETID\", \"CAP_KILL\", \"CAP_MKNOD\", \"CAP_NET_BIND_SERVICE\", \"CAP_NET_RAW\","
                                " \"CAP_SETFCAP\", \"CAP_SETGID\", \"CAP_SETPCAP\", \"CAP_SETUID\", \"CAP_SYS_CHROOT\"]"));
                        break;
                case 4: /* no default set known: nothing proves it */
                        break;
                case 5: /* a Docker answer is never rewritten */
                        break;
                }
                v = judge(c == 4 ? &unknown_set : c == 5 ? &(const SbxDialect) { .kind = SBX_ENGINE_DOCKER } : &d,
                          inspect, libpod, false);
                ck_assert_uint_eq(v.posture & SBX_POSTURE_CAP_DROP, c == 3 ? 0 : SBX_POSTURE_CAP_DROP);
        }
}
END_TEST

/* Namespaces: Podman's words for the container's own are Docker's; sharing stays sharing. */
START_TEST(test_namespaces) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        static const struct {
                const char *key, *value;
                unsigned item;
        } weaker[] = {
                { "IpcMode", "host", SBX_POSTURE_IPC_MODE },
                { "IpcMode", "container:0123", SBX_POSTURE_IPC_MODE },
                { "PidMode", "host", SBX_POSTURE_PID_MODE },
                { "PidMode", "container:0123", SBX_POSTURE_PID_MODE },
                { "UTSMode", "host", SBX_POSTURE_UTS_MODE },
                { "IpcMode", "none", 0 },
                { "PidMode", "", 0 },
        };

        podman_dialect(&d);
        for (size_t i = 0; i < ELEMENTSOF(weaker); i++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");

                set(host_config(inspect), weaker[i].key, json_object_new_string(weaker[i].value));
                ck_assert_uint_eq(judge(&d, inspect, libpod, false).posture, weaker[i].item);
        }
}
END_TEST

/* The log bound is read from the libpod answer; another size, type or none is no bound. */
START_TEST(test_log) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};

        podman_dialect(&d);
        for (int c = 0; c < 5; c++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");
                json_object *lp = json_object_object_get(host_config(libpod), "LogConfig");

                if (c == 1)
                        set(lp, "Size", json_object_new_string("-1B"));
                else if (c == 2)
                        set(lp, "Size", json_object_new_string("10MB"));
                else if (c == 3)
                        set(lp, "Type", json_object_new_string("journald"));
                ck_assert_uint_eq(judge(&d, inspect, c == 4 ? NULL : libpod, false).posture,
                                  c == 0 ? 0 : SBX_POSTURE_LOG);
        }
}
END_TEST

/* localhost/NAME is NAME; another registry's is not. NetworkDisabled: only with no network at all. */
START_TEST(test_image_and_network) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};

        podman_dialect(&d);
        for (int c = 0; c < 4; c++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("isolated"),
                        *libpod = fixture("isolated-libpod");
                json_object *config = json_object_object_get(inspect, "Config");
                Verdict v;

                if (c == 1)
                        set(config, "Image", json_object_new_string("docker.io/library/xagent-sandbox-test:latest"));
                else if (c == 2)
                        set(json_object_object_get(inspect, "NetworkSettings"), "Networks",
                            json_tokener_parse("{\"podman\": {\"NetworkID\": \"podman\"}}"));
                else if (c == 3)
                        set(host_config(inspect), "NetworkMode", json_object_new_string("bridge"));
                v = judge(&d, inspect, libpod, true);
                ck_assert_uint_eq(v.publish, c == 0 ? 0 : c == 1 ? SBX_PUBLISH_IMAGE : SBX_PUBLISH_NETWORK_ISOLATED);
        }
}
END_TEST

/* Limits Podman dropped (no cgroups in sight: 0/0/0/0) are a mismatch, never a match. */
START_TEST(test_limits_dropped) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");
        json_object *host = host_config(inspect);
        Verdict v;

        podman_dialect(&d);
        set(host, "NanoCpus", json_object_new_int(0));
        set(host, "Memory", json_object_new_int(0));
        set(host, "MemorySwap", json_object_new_int(0));
        set(host, "PidsLimit", json_object_new_int(0));
        v = judge(&d, inspect, libpod, false);
        ck_assert_uint_eq(v.posture, SBX_POSTURE_PIDS_LIMIT | SBX_POSTURE_MEMORY_SWAP);
        ck_assert_uint_eq(v.publish, SBX_PUBLISH_CPUS | SBX_PUBLISH_MEMORY);
}
END_TEST

START_TEST(test_sent_differently) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        const SbxDialect docker = { .kind = SBX_ENGINE_DOCKER };

        podman_dialect(&d);
        ck_assert(sbx_dialect_echoes_host_port_0(&docker));
        ck_assert(!sbx_dialect_echoes_host_port_0(&d));
        ck_assert_str_eq(sbx_dialect_init_volume_o(&docker), "bind,ro");
        ck_assert_str_eq(sbx_dialect_init_volume_o(&d), "bind,ro,uid=0,gid=0");
        ck_assert_uint_eq(sbx_dialect_report_since(&docker, UINT64_C(1764600000123456)), UINT64_C(1764600000123456));
        ck_assert_uint_eq(sbx_dialect_report_since(&d, UINT64_C(1764600000123456)), UINT64_C(1764600000000000));
        ck_assert_uint_eq(sbx_dialect_report_since(&d, UINT64_C(1764600000000000)), UINT64_C(1764600000000000));
}
END_TEST

/* What the kernel enforces replaces what Podman reports (`podman update` leaves the
 * inspect answer as created): a lowered limit is a mismatch, the same one a match. */
START_TEST(test_kernel_limits) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        SbxError e = SBX_ERROR_NULL;

        podman_dialect(&d);
        for (int c = 0; c < 4; c++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");
                SbxKernelLimits k = {
                        .has_memory = true, .memory = 512 * MIB, .has_memory_swap = true, .memory_swap = 512 * MIB,
                        .has_pids = true, .pids = 512, .has_nano_cpus = true, .nano_cpus = INT64_C(1000000000),
                        .has_caps = true, .holds_caps = false,
                };
                Verdict v;

                if (c == 1) {
                        k.memory = k.memory_swap = 300 * MIB;
                        k.pids = 0;
                } else if (c == 2)
                        k = (SbxKernelLimits) {};       /* nothing read: the answer stands */
                else if (c == 3)
                        k.holds_caps = true;            /* its first process holds a capability */
                ck_assert_int_eq(sbx_dialect_apply_kernel_limits(inspect, &k), 0);
                v = judge(&d, inspect, libpod, false);
                ck_assert_uint_eq(v.posture, c == 1 ? SBX_POSTURE_PIDS_LIMIT | SBX_POSTURE_MEMORY_SWAP :
                                             c == 3 ? SBX_POSTURE_CAP_DROP : 0);
                ck_assert_uint_eq(v.publish, c == 1 ? SBX_PUBLISH_MEMORY : 0);
        }
        ck_assert_int_eq(sbx_dialect_check_commit(&(const SbxDialect) { .kind = SBX_ENGINE_DOCKER }, &e), 0);
        ck_assert_int_lt(sbx_dialect_check_commit(&d, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_POLICY_VIOLATION);
        sbx_error_free(&e);
}
END_TEST

/* The spec a container attests (a lost row adopted again): Podman's additions to
 * Config.Env are maybe the spec's, so its fingerprint label is proven; read raw, they
 * would be the spec's for certain and nothing is. */
START_TEST(test_attested) {
        _cleanup_(sbx_dialect_done) SbxDialect d = {};
        const SbxDialect docker = { .kind = SBX_ENGINE_DOCKER };

        podman_dialect(&d);
        for (int podman = 0; podman <= 1; podman++) {
                _cleanup_(json_object_putp) json_object *inspect = fixture("bridge"), *libpod = fixture("bridge-libpod");
                _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
                _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
                SbxError e = SBX_ERROR_NULL;

                ck_assert_int_eq(sbx_dialect_normalize_inspect(podman ? &d : &docker, inspect, libpod), 0);
                ck_assert_int_eq(sbx_observed_from_json(inspect, &o, &e), 0);
                ck_assert_uint_eq(o->n_engine_env, podman ? 5 : 0);
                ck_assert_int_eq(sbx_spec_from_container(o, NULL, &s), podman);
                if (podman) {
                        ck_assert_uint_eq(s->n_env, 1);
                        ck_assert_str_eq(s->env[0].key, "FOO");
                        ck_assert_int_eq(s->n_ports, 1);
                }
        }
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("dialect");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_engine_from_version);
        tcase_add_test(tc, test_rootless);
        tcase_add_test(tc, test_default_caps);
        tcase_add_test(tc, test_recorded_answers);
        tcase_add_test(tc, test_cap_drop);
        tcase_add_test(tc, test_namespaces);
        tcase_add_test(tc, test_log);
        tcase_add_test(tc, test_image_and_network);
        tcase_add_test(tc, test_limits_dropped);
        tcase_add_test(tc, test_sent_differently);
        tcase_add_test(tc, test_kernel_limits);
        tcase_add_test(tc, test_attested);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
