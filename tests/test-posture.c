/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <stdio.h>

#include "docker-inspect-fixtures.h"
#include "posture.h"
#include "publish.h"

#define MIB (INT64_C(1024) * 1024)

static const SbxPostureExpect expect_bridge = {
        .pids_limit = 512, .publish_address = "127.0.0.1",
        .network_isolated = false, .memory_bytes = 512 * MIB,
};

#define INIT_MOUNT \
        "{\"Type\": \"volume\", \"Name\": \"xagent-sandbox-init-0123456789ab\", \"Destination\": \"/.xagent-sandbox\"," \
        " \"RW\": false}"

/* A container as this service creates it; "%s" slots let a test replace one
 * HostConfig member, Config.User, or a top-level member. */
static SbxObserved *make_top(const char *user, const char *extra_host_config, const char *extra_top) {
        _cleanup_free_ char *json = NULL;
        SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&json,
                "{\"Config\": {\"User\": \"%s\", \"Entrypoint\": [\"/.xagent-sandbox/xagent-sandbox-init\"]},"
                " \"Mounts\": [" INIT_MOUNT ", {\"Type\": \"bind\", \"Source\": \"/h\", \"Destination\": \"/g\"}],"
                " \"HostConfig\": {"
                "  \"LogConfig\": {\"Type\": \"json-file\", \"Config\": {\"max-file\": \"2\", \"max-size\": \"1m\"}},"
                "  \"Privileged\": false, \"CapDrop\": [\"ALL\"], \"CapAdd\": null,"
                "  \"SecurityOpt\": [\"no-new-privileges:true\"], \"PidsLimit\": 512,"
                "  \"Memory\": 536870912, \"MemorySwap\": 536870912, \"NetworkMode\": \"bridge\","
                "  \"IpcMode\": \"private\", \"PidMode\": \"\", \"UTSMode\": \"\", \"Devices\": [],"
                "  \"DeviceCgroupRules\": null, \"DeviceRequests\": null, \"VolumesFrom\": null,"
                "  \"PortBindings\": {\"80/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"18080\"}]}"
                "  %s}%s}",
                user, extra_host_config ? extra_host_config : "", extra_top ? extra_top : ""), 0);
        ck_assert_msg(sbx_observed_from_string(json, &o, &e) == 0, "%s: %s", json, e.message);
        return o;
}

static SbxObserved *make(const char *user, const char *extra_host_config) {
        return make_top(user, extra_host_config, NULL);
}

static void assert_items(unsigned mask, const char *expected) {
        const char *names[SBX_POSTURE_ITEM_COUNT + 1];
        char joined[512] = "";

        sbx_posture_items_to_names(mask, names);
        for (size_t i = 0; names[i]; i++) {
                if (i > 0)
                        strcat(joined, ",");
                strcat(joined, names[i]);
        }
        ck_assert_str_eq(joined, expected);
}

/* One HostConfig member overridden (json-c keeps the last duplicate key). */
static void assert_single(const char *override, const char *item) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = make("65534:65534", override);
        unsigned m = sbx_posture_check(o, &expect_bridge);

        ck_assert_msg(m != 0, "override %s not detected", override);
        assert_items(m, item);
}

START_TEST(test_hardened) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = make("65534:65534", NULL);

        ck_assert_uint_eq(sbx_posture_check(o, &expect_bridge), 0);
}
END_TEST

START_TEST(test_user) {
        /* never the owner's uid, never root */
        static const char *bad[] = { "root", "", "0:0", "1000:1001", "65534", "65534:0", "65534:65534:x" };

        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                _cleanup_(sbx_observed_freep) SbxObserved *o = make(bad[i], NULL);
                assert_items(sbx_posture_check(o, &expect_bridge), "user");
        }
}
END_TEST

START_TEST(test_single_items) {
        assert_single(", \"Privileged\": true", "privileged");
        assert_single(", \"CapDrop\": null", "cap_drop");
        assert_single(", \"CapDrop\": []", "cap_drop");
        assert_single(", \"CapDrop\": [\"NET_RAW\"]", "cap_drop");
        assert_single(", \"CapDrop\": [\"ALL\", \"NET_RAW\"]", "cap_drop");
        assert_single(", \"CapAdd\": [\"SYS_ADMIN\"]", "cap_add");
        assert_single(", \"SecurityOpt\": null", "security_opt");
        assert_single(", \"SecurityOpt\": [\"no-new-privileges:false\"]", "security_opt");
        assert_single(", \"SecurityOpt\": [\"no-new-privileges:true\", \"seccomp=unconfined\"]", "security_opt");
        assert_single(", \"SecurityOpt\": [\"no-new-privileges:true\", \"apparmor=unconfined\"]", "security_opt");
        assert_single(", \"SecurityOpt\": [\"no-new-privileges:true\", \"label=disable\"]", "security_opt");
        assert_single(", \"SecurityOpt\": [\"no-new-privileges:true\", \"systempaths=unconfined\"]", "security_opt");
        assert_single(", \"Devices\": [{\"PathOnHost\": \"/dev/kvm\"}]", "devices");
        assert_single(", \"DeviceCgroupRules\": [\"c *:* rwm\"]", "devices");
        assert_single(", \"DeviceRequests\": [{\"Driver\": \"nvidia\"}]", "devices");
        assert_single(", \"IpcMode\": \"host\"", "ipc_mode");
        assert_single(", \"IpcMode\": \"shareable\"", "ipc_mode");
        assert_single(", \"IpcMode\": \"container:abc\"", "ipc_mode");
        assert_single(", \"IpcMode\": \"\"", "ipc_mode");
        assert_single(", \"PidMode\": \"host\"", "pid_mode");
        assert_single(", \"PidMode\": \"container:abc\"", "pid_mode");
        assert_single(", \"UTSMode\": \"host\"", "uts_mode");
        assert_single(", \"VolumesFrom\": [\"other\"]", "volumes_from");
        assert_single(", \"PidsLimit\": null", "pids_limit");
        assert_single(", \"PidsLimit\": 0", "pids_limit");
        assert_single(", \"PidsLimit\": -1", "pids_limit");
        assert_single(", \"PidsLimit\": 513", "pids_limit");
        assert_single(", \"MemorySwap\": -1", "memory_swap");
        assert_single(", \"MemorySwap\": null", "memory_swap");
        assert_single(", \"MemorySwap\": 1073741824", "memory_swap");
        assert_single(", \"NetworkMode\": \"host\"", "network_mode");
        assert_single(", \"NetworkMode\": \"none\"", "network_mode");
        assert_single(", \"NetworkMode\": \"container:abc\"", "network_mode");
        assert_single(", \"NetworkMode\": \"mynet\"", "network_mode");
        assert_single(", \"LogConfig\": {\"Type\": \"json-file\", \"Config\": {}}", "log");
        assert_single(", \"LogConfig\": {\"Type\": \"json-file\", \"Config\": {\"max-size\": \"100m\", \"max-file\": \"2\"}}", "log");
        assert_single(", \"LogConfig\": {\"Type\": \"journald\", \"Config\": {\"max-size\": \"1m\", \"max-file\": \"2\"}}", "log");
        assert_single(", \"LogConfig\": null", "log");
        assert_single(", \"PortBindings\": {\"80/tcp\": [{\"HostIp\": \"0.0.0.0\", \"HostPort\": \"18080\"}]}",
                      "publish_address");
        assert_single(", \"PortBindings\": {\"80/tcp\": [{\"HostPort\": \"18080\"}]}", "publish_address");
        /* a binding xagent's ports skip (HostPort "") still publishes, on every address */
        assert_single(", \"PortBindings\": {\"80/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"18080\"},"
                      " {\"HostIp\": \"\", \"HostPort\": \"\"}]}", "publish_address");
}
END_TEST

/* The first process and its volume; any other mount. */
START_TEST(test_init_and_mounts) {
        static const struct {
                const char *top;
                const char *items;
        } cases[] = {
                { ", \"Config\": {\"User\": \"65534:65534\", \"Entrypoint\": null}", "init" },
                { ", \"Config\": {\"User\": \"65534:65534\", \"Entrypoint\": [\"tail\", \"-f\"]}", "init" },
                { ", \"Config\": {\"User\": \"65534:65534\", "
                  "\"Entrypoint\": [\"/.xagent-sandbox/xagent-sandbox-init\", \"x\"]}", "init" },
                { ", \"Mounts\": []", "init" },
                { ", \"Mounts\": [{\"Type\": \"volume\", \"Name\": \"xagent-sandbox-init-1\", "
                  "\"Destination\": \"/.xagent-sandbox\", \"RW\": true}]", "init" },
                { ", \"Mounts\": [{\"Type\": \"volume\", \"Name\": \"other\", "
                  "\"Destination\": \"/.xagent-sandbox\", \"RW\": false}]", "init" },
                { ", \"Mounts\": [{\"Type\": \"bind\", \"Source\": \"/x\", "
                  "\"Destination\": \"/.xagent-sandbox\", \"RW\": false}]", "init" },
                { ", \"Mounts\": [" INIT_MOUNT ", {\"Type\": \"tmpfs\", \"Destination\": \"/t\"}]", "mounts" },
                { ", \"Mounts\": [" INIT_MOUNT ", {\"Type\": \"volume\", \"Name\": \"v\", "
                  "\"Destination\": \"/v\"}]", "mounts" },
                { ", \"Mounts\": [" INIT_MOUNT ", " INIT_MOUNT "]", "mounts" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sbx_observed_freep) SbxObserved *o = make_top("65534:65534", NULL, cases[i].top);
                unsigned m = sbx_posture_check(o, &expect_bridge);

                ck_assert_msg(m != 0, "%s not detected", cases[i].top);
                assert_items(m, cases[i].items);
        }
}
END_TEST

/* Spellings that are equally hardened. */
START_TEST(test_accepted_variants) {
        static const char *ok[] = {
                ", \"CapDrop\": [\"all\"]",
                ", \"SecurityOpt\": [\"no-new-privileges\"]",
                ", \"SecurityOpt\": [\"no-new-privileges=true\", \"no-new-privileges:true\"]",
                ", \"IpcMode\": \"none\"",
                ", \"NetworkMode\": \"default\"",
                ", \"NetworkMode\": \"\"",
                ", \"NetworkMode\": null",
                ", \"PidMode\": null, \"UTSMode\": null",
                ", \"CapAdd\": [], \"VolumesFrom\": [], \"Devices\": null, \"DeviceRequests\": []",
                ", \"PortBindings\": null",
                ", \"PortBindings\": {\"80/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"0\"},"
                " {\"HostIp\": \"127.0.0.1\", \"HostPort\": \"\"}], \"81/tcp\": null}",
        };

        for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
                _cleanup_(sbx_observed_freep) SbxObserved *o = make("65534:65534", ok[i]);
                ck_assert_msg(sbx_posture_check(o, &expect_bridge) == 0, "%s", ok[i]);
        }
}
END_TEST

START_TEST(test_isolated) {
        SbxPostureExpect iso = expect_bridge;
        _cleanup_(sbx_observed_freep) SbxObserved *none = make("65534:65534", ", \"NetworkMode\": \"none\"");
        _cleanup_(sbx_observed_freep) SbxObserved *bridge = make("65534:65534", NULL);

        iso.network_isolated = true;
        ck_assert_uint_eq(sbx_posture_check(none, &iso), 0);
        assert_items(sbx_posture_check(bridge, &iso), "network_mode");
}
END_TEST

/* {} carries nothing of the posture. */
START_TEST(test_empty_container) {
        SbxObserved *o = NULL;

        ck_assert_int_eq(sbx_observed_from_string("{}", &o, NULL), 0);
        assert_items(sbx_posture_check(o, &expect_bridge),
                     "user,cap_drop,security_opt,ipc_mode,pids_limit,memory_swap,init,log");
        sbx_observed_free(o);
}
END_TEST

/* The runtime (docs/security.md, "Runtimes"): what the engine reports and what the
 * first process on the host is, against what was asked. */
START_TEST(test_runtime) {
        _cleanup_(sbx_observed_freep) SbxObserved *runc = make("65534:65534", ", \"Runtime\": \"runc\"");
        _cleanup_(sbx_observed_freep) SbxObserved *runsc = make("65534:65534", ", \"Runtime\": \"runsc\"");
        SbxPostureExpect gvisor = expect_bridge, plain = expect_bridge;

        gvisor.engine_runtime = "runsc";
        /* the default: anything but gVisor, by the engine's word and by the process */
        ck_assert_uint_eq(sbx_posture_check(runc, &plain), 0);
        plain.host_process = SBX_HOST_PROCESS_OTHER;
        ck_assert_uint_eq(sbx_posture_check(runc, &plain), 0);
        assert_items(sbx_posture_check(runsc, &plain), "runtime");
        plain.host_process = SBX_HOST_PROCESS_GVISOR;
        assert_items(sbx_posture_check(runc, &plain), "runtime");
        /* gVisor asked for: runsc reported, and its sandbox on the host where seen */
        assert_items(sbx_posture_check(runc, &gvisor), "runtime");
        ck_assert_uint_eq(sbx_posture_check(runsc, &gvisor), 0);
        gvisor.host_process = SBX_HOST_PROCESS_GVISOR;
        ck_assert_uint_eq(sbx_posture_check(runsc, &gvisor), 0);
        gvisor.host_process = SBX_HOST_PROCESS_OTHER;        /* "runsc" mapped to runc's binary */
        assert_items(sbx_posture_check(runsc, &gvisor), "runtime");
        gvisor.host_process = SBX_HOST_PROCESS_GONE;
        assert_items(sbx_posture_check(runsc, &gvisor), "runtime");
}
END_TEST

START_TEST(test_combined_and_names) {
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                make("root", ", \"Privileged\": true, \"PidMode\": \"host\", \"NetworkMode\": \"host\"");
        const char *names[SBX_POSTURE_ITEM_COUNT + 1];

        assert_items(sbx_posture_check(o, &expect_bridge), "user,privileged,pid_mode,network_mode");
        ck_assert_uint_eq(sbx_posture_items_to_names((1u << SBX_POSTURE_ITEM_COUNT) - 1, names),
                          SBX_POSTURE_ITEM_COUNT);
        ck_assert_str_eq(names[0], "user");
        ck_assert_str_eq(names[SBX_POSTURE_ITEM_COUNT - 1], "runtime");
        ck_assert_ptr_null(names[SBX_POSTURE_ITEM_COUNT]);
        ck_assert_uint_eq(sbx_posture_items_to_names(0, names), 0);
        ck_assert_ptr_null(names[0]);
        ck_assert_str_eq(sbx_posture_item_to_string(SBX_POSTURE_CAP_DROP), "cap_drop");
        ck_assert_str_eq(sbx_posture_item_to_string(SBX_POSTURE_PUBLISH_ADDRESS), "publish_address");
        ck_assert_ptr_null(sbx_posture_item_to_string(SBX_POSTURE_USER | SBX_POSTURE_PRIVILEGED));
        ck_assert_ptr_null(sbx_posture_item_to_string(0));
}
END_TEST

/* What Docker 20.10.24 really reports for a container created with the posture of
 * the first version of this service: NetworkMode "default" without a network,
 * IpcMode "private", PidMode and UTSMode "", HostPort "0" echoed as "0". Its first
 * process ran as the owner, from the image, with an unbounded log: that is no
 * longer hardened (docs/security.md), and nothing else about it changed. */
START_TEST(test_real_docker) {
        SbxPostureExpect e = {
                .pids_limit = 256, .publish_address = "127.0.0.1",
                .network_isolated = false, .memory_bytes = 512 * MIB,
        };
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *iso = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *d = sbx_spec_new();

        ck_assert_int_eq(sbx_observed_from_string(DOCKER_INSPECT_HARDENED, &o, NULL), 0);
        ck_assert_str_eq(o->network_mode, "default");
        ck_assert_str_eq(o->ipc_mode, "private");
        ck_assert_str_eq(o->pid_mode, "");
        ck_assert_str_eq(o->uts_mode, "");
        assert_items(sbx_posture_check(o, &e), "user,init,log");
        ck_assert_int_eq(o->state, SBX_STATE_STOPPED);
        ck_assert_str_eq(o->raw_status, "created");
        ck_assert_str_eq(o->name, "sbx-observed-probe");
        ck_assert_int_eq(o->n_ports, 1);                /* "0" kept, "" skipped */
        ck_assert_int_eq(o->ports[0].host, 0);
        ck_assert_int_eq(o->ports[0].guest, 80);
        ck_assert_int_eq(o->n_bindings, 2);

        d->template_type = SBX_TEMPLATE_IMAGE;
        d->image = strdup("sbx-observed-probe:1");
        ck_assert_int_eq(sbx_spec_add_port(d, 0, 80), 0);
        ck_assert_int_eq(sbx_spec_normalize(d, NULL), 0);
        /* created without a WorkingDir, so Docker reports "" */
        ck_assert_uint_eq(sbx_find_publish_mismatches(d, "sbx-observed-probe:1", o), SBX_PUBLISH_WORKING_DIR);

        e.publish_address = "0.0.0.0";
        assert_items(sbx_posture_check(o, &e), "user,publish_address,init,log");
        e.publish_address = "127.0.0.1";
        e.pids_limit = 512;
        assert_items(sbx_posture_check(o, &e), "user,pids_limit,init,log");

        /* The isolated one was created with a bare HostConfig: NetworkMode "none". */
        ck_assert_int_eq(sbx_observed_from_string(DOCKER_INSPECT_ISOLATED, &iso, NULL), 0);
        ck_assert(iso->network_isolated);
        ck_assert_str_eq(iso->network_mode, "none");
        ck_assert_int_eq(iso->n_runtime_networks, 0);
        e.network_isolated = true;
        ck_assert_uint_eq(sbx_posture_check(iso, &e) & SBX_POSTURE_NETWORK_MODE, 0);
        e.network_isolated = false;
        ck_assert_uint_ne(sbx_posture_check(iso, &e) & SBX_POSTURE_NETWORK_MODE, 0);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("posture");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_hardened);
        tcase_add_test(tc, test_user);
        tcase_add_test(tc, test_single_items);
        tcase_add_test(tc, test_init_and_mounts);
        tcase_add_test(tc, test_accepted_variants);
        tcase_add_test(tc, test_isolated);
        tcase_add_test(tc, test_empty_container);
        tcase_add_test(tc, test_combined_and_names);
        tcase_add_test(tc, test_runtime);
        tcase_add_test(tc, test_real_docker);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
