/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <stdio.h>

#include "labels.h"
#include "observed.h"

/* The _attrs() fixture of xagent's test_docker_lifecycle_api.py (xagent-contract.md §13). */
#define ATTRS_FIXTURE                                                                   \
        "{"                                                                             \
        "  \"Id\": \"0123abcd\","                                                       \
        "  \"Name\": \"/xagent_sandbox_user-7-90f03f41d2\","                            \
        "  \"Image\": \"sha256:imagedigest\","                                          \
        "  \"Created\": \"2026-01-01T00:00:00Z\","                                      \
        "  \"Config\": {"                                                               \
        "    \"Image\": \"img:tag\","                                                   \
        "    \"Env\": [\"A=1\", \"B=2\", \"MALFORMED\"],"                               \
        "    \"WorkingDir\": \"/home\","                                                \
        "    \"NetworkDisabled\": false,"                                               \
        "    \"Labels\": {\"xagent.managed\": \"true\", \"other\": \"x\"}"              \
        "  },"                                                                          \
        "  \"HostConfig\": {"                                                           \
        "    \"NanoCpus\": 2000000000,"                                                 \
        "    \"Memory\": 268435456,"                                                    \
        "    \"PortBindings\": {\"80/tcp\": [{\"HostPort\": \"18080\"}]}"               \
        "  },"                                                                          \
        "  \"State\": {\"Status\": \"running\"},"                                       \
        "  \"Mounts\": ["                                                               \
        "    {\"Type\": \"bind\", \"Source\": \"/host/rw\", \"Destination\": \"/guest/rw\", \"RW\": true}," \
        "    {\"Type\": \"bind\", \"Source\": \"/host/ro\", \"Destination\": \"/guest/ro\", \"RW\": false}," \
        "    {\"Type\": \"volume\", \"Name\": \"v\", \"Source\": \"/var/lib/docker/volumes/v\", \"Destination\": \"/data\", \"RW\": true}" \
        "  ],"                                                                          \
        "  \"NetworkSettings\": {\"Networks\": {\"bridge\": {}, \"extra\": {}}}"        \
        "}"

static SbxObserved *parse_ok(const char *json) {
        SbxError e = SBX_ERROR_NULL;
        SbxObserved *o = NULL;
        int r = sbx_observed_from_string(json, &o, &e);

        ck_assert_msg(r == 0, "parse failed: %s", e.message);
        ck_assert_ptr_nonnull(o);
        return o;
}

static void parse_fails(const char *json, const char *needle) {
        SbxError e = SBX_ERROR_NULL;
        SbxObserved *o = NULL;
        int r = sbx_observed_from_string(json, &o, &e);

        ck_assert_int_lt(r, 0);
        ck_assert_ptr_null(o);
        ck_assert_int_eq(e.kind, SBX_ERROR_BACKEND_ERROR);
        ck_assert_msg(e.message && strstr(e.message, needle), "message \"%s\" lacks \"%s\"", e.message, needle);
        sbx_error_free(&e);
}

static void assert_volume(const SbxVolume *v, const char *host, const char *guest, const char *mode) {
        ck_assert_str_eq(v->host, host);
        ck_assert_str_eq(v->guest, guest);
        ck_assert_str_eq(v->mode, mode);
}

START_TEST(test_attrs_fixture) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok(ATTRS_FIXTURE);

        ck_assert_int_eq(o->state, SBX_STATE_RUNNING);
        ck_assert_str_eq(o->raw_status, "running");
        ck_assert_str_eq(o->id, "0123abcd");
        ck_assert_str_eq(o->name, "xagent_sandbox_user-7-90f03f41d2");
        ck_assert_str_eq(o->image_ref, "img:tag");
        ck_assert_str_eq(o->image_digest, "sha256:imagedigest");
        ck_assert(o->has_raw_nano_cpus);
        ck_assert_int_eq(o->raw_nano_cpus, 2000000000);
        ck_assert(o->has_raw_memory_bytes);
        ck_assert_int_eq(o->raw_memory_bytes, 256 * 1024 * 1024);

        ck_assert_int_eq(o->n_env, 2);
        ck_assert_str_eq(sbx_observed_get_env(o, "A"), "1");
        ck_assert_str_eq(sbx_observed_get_env(o, "B"), "2");
        ck_assert_ptr_null(sbx_observed_get_env(o, "MALFORMED"));

        ck_assert_int_eq(o->n_volumes, 2);
        assert_volume(&o->volumes[0], "/host/rw", "/guest/rw", "rw");
        assert_volume(&o->volumes[1], "/host/ro", "/guest/ro", "ro");

        ck_assert_int_eq(o->n_ports, 1);
        ck_assert_int_eq(o->ports[0].host, 18080);
        ck_assert_int_eq(o->ports[0].guest, 80);
        ck_assert_int_eq(o->n_bindings, 1);
        ck_assert_str_eq(o->bindings[0].host_ip, "");

        ck_assert(!o->network_isolated);
        ck_assert_int_eq(o->n_runtime_networks, 2);
        ck_assert_str_eq(o->runtime_networks[0], "bridge");
        ck_assert_str_eq(o->runtime_networks[1], "extra");
        ck_assert_ptr_null(o->runtime_networks[2]);

        ck_assert_int_eq(o->n_labels, 2);
        ck_assert_str_eq(sbx_observed_get_label(o, "xagent.managed"), "true");
        ck_assert_str_eq(sbx_observed_get_label(o, "other"), "x");
        ck_assert_str_eq(o->created_at, "2026-01-01T00:00:00Z");
        ck_assert_str_eq(o->working_dir, "/home");
        ck_assert_ptr_null(o->fingerprint_label);
        ck_assert_ptr_null(o->version_label);
        ck_assert(o->owner_valid);              /* no owner label: root's */
        ck_assert_int_eq(o->owner, 0);
}
END_TEST

START_TEST(test_empty_object) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok("{}");

        ck_assert_int_eq(o->state, SBX_STATE_STOPPED);
        ck_assert_str_eq(o->raw_status, "");
        ck_assert_int_eq(o->n_volumes, 0);
        ck_assert_int_eq(o->n_ports, 0);
        ck_assert_int_eq(o->n_env, 0);
        ck_assert_int_eq(o->n_labels, 0);
        ck_assert_int_eq(o->n_runtime_networks, 0);
        ck_assert_ptr_nonnull(o->runtime_networks);
        ck_assert_ptr_null(o->runtime_networks[0]);
        ck_assert_ptr_null(o->image_ref);
        ck_assert_ptr_null(o->image_digest);
        ck_assert_ptr_null(o->id);
        ck_assert_ptr_null(o->working_dir);
        ck_assert_ptr_null(o->created_at);
        ck_assert(!o->has_raw_nano_cpus);
        ck_assert(!o->has_raw_memory_bytes);
        ck_assert(!o->network_isolated);
        ck_assert(!o->privileged);
        ck_assert_int_eq(o->n_cap_drop, 0);
        ck_assert_ptr_null(o->cap_drop[0]);
        ck_assert(!o->has_pids_limit);
        ck_assert(!o->has_memory_swap);
}
END_TEST

/* Config / HostConfig / State null count as {}. */
START_TEST(test_null_sections) {
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                parse_ok("{\"Config\": null, \"HostConfig\": null, \"State\": null, \"Mounts\": null,"
                         " \"NetworkSettings\": null}");

        ck_assert_int_eq(o->state, SBX_STATE_STOPPED);
        ck_assert_str_eq(o->raw_status, "");
        ck_assert_int_eq(o->n_volumes, 0);

        _cleanup_(sbx_observed_freep) SbxObserved *p =
                parse_ok("{\"State\": {\"Status\": null}, \"NetworkSettings\": {\"Networks\": null},"
                         " \"HostConfig\": {\"NanoCpus\": null, \"PortBindings\": null}, \"Config\": {\"Env\": null}}");
        ck_assert_str_eq(p->raw_status, "");
        ck_assert(!p->has_raw_nano_cpus);
        ck_assert_int_eq(p->n_ports, 0);
}
END_TEST

START_TEST(test_state_table) {
        static const struct {
                const char *status;
                SbxState state;
        } table[] = {
                { "running",    SBX_STATE_RUNNING },
                { "Running",    SBX_STATE_RUNNING },
                { "RUNNING",    SBX_STATE_RUNNING },
                { "created",    SBX_STATE_STOPPED },
                { "exited",     SBX_STATE_STOPPED },
                { "dead",       SBX_STATE_STOPPED },
                { "restarting", SBX_STATE_STOPPED },
                { "paused",     SBX_STATE_PAUSED },
                { "Paused",     SBX_STATE_PAUSED },
                { "removing",   SBX_STATE_STOPPED },
                { "",           SBX_STATE_STOPPED },
                { "running ",   SBX_STATE_STOPPED },
        };

        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                _cleanup_free_ char *json = NULL;
                ck_assert_int_ge(asprintf(&json, "{\"State\": {\"Status\": \"%s\"}}", table[i].status), 0);
                _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok(json);

                ck_assert_msg(o->state == table[i].state, "status \"%s\"", table[i].status);
                ck_assert_str_eq(o->raw_status, table[i].status);  /* the detail is kept */
        }
        ck_assert_int_eq(sbx_state_from_status(NULL), SBX_STATE_STOPPED);
        ck_assert_str_eq(sbx_state_to_string(SBX_STATE_RUNNING), "running");
        ck_assert_str_eq(sbx_state_to_string(SBX_STATE_STOPPED), "stopped");
        ck_assert_ptr_null(sbx_state_to_string(_SBX_STATE_MAX));
}
END_TEST

START_TEST(test_network_disabled_and_working_dir) {
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                parse_ok("{\"Config\": {\"NetworkDisabled\": true, \"WorkingDir\": \"//home//sub/\"}}");

        ck_assert(o->network_isolated);
        ck_assert_str_eq(o->working_dir, "//home//sub/");      /* raw, never canonicalized */
}
END_TEST

START_TEST(test_labels) {
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                parse_ok("{\"Config\": {\"Labels\": {\"xagent.sandbox.spec.fingerprint\": \"abc123\","
                         " \"xagent.sandbox.spec.version\": \"1\", \"xagent.sandbox.owner\": \"1000\"}}}");
        ck_assert_str_eq(o->fingerprint_label, "abc123");
        ck_assert_str_eq(o->version_label, "1");
        ck_assert(o->owner_valid);
        ck_assert_int_eq(o->owner, 1000);

        /* blank = absent */
        _cleanup_(sbx_observed_freep) SbxObserved *b =
                parse_ok("{\"Config\": {\"Labels\": {\"xagent.sandbox.spec.fingerprint\": \"\","
                         " \"xagent.sandbox.spec.version\": \"\", \"xagent.sandbox.owner\": \"\"}}}");
        ck_assert_ptr_null(b->fingerprint_label);
        ck_assert_ptr_null(b->version_label);
        ck_assert_str_eq(sbx_observed_get_label(b, SBX_LABEL_SPEC_FINGERPRINT), "");
        ck_assert(b->owner_valid);
        ck_assert_int_eq(b->owner, 0);

        /* a non-numeric owner: nobody's */
        _cleanup_(sbx_observed_freep) SbxObserved *n =
                parse_ok("{\"Config\": {\"Labels\": {\"xagent.sandbox.owner\": \"alice\"}}}");
        ck_assert(!n->owner_valid);

        _cleanup_(sbx_observed_freep) SbxObserved *z = parse_ok("{\"Config\": {\"Labels\": {}}}");
        ck_assert_ptr_null(z->fingerprint_label);
        ck_assert_ptr_null(z->version_label);
        ck_assert_int_eq(z->n_labels, 0);
}
END_TEST

START_TEST(test_env_rules) {
        _cleanup_(sbx_observed_freep) SbxObserved *o =
                parse_ok("{\"Config\": {\"Env\": [\"K=a=b\", \"E=\", \"D=1\", \"NOEQ\", \"D=2\", \"=v\"]}}");

        ck_assert_int_eq(o->n_env, 4);
        ck_assert_str_eq(o->env[0].key, "K");
        ck_assert_str_eq(o->env[0].value, "a=b");              /* split at the first "=" */
        ck_assert_str_eq(o->env[1].key, "E");
        ck_assert_str_eq(o->env[1].value, "");
        ck_assert_str_eq(o->env[2].key, "D");
        ck_assert_str_eq(o->env[2].value, "2");                /* later duplicate wins, first position */
        ck_assert_str_eq(o->env[3].key, "");
        ck_assert_str_eq(o->env[3].value, "v");
}
END_TEST

START_TEST(test_mount_rules) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok(
                "{\"Mounts\": ["
                " {\"Type\": \"bind\", \"Source\": \"/b\", \"Destination\": \"/g/b\"},"
                " {\"Type\": \"bind\", \"Source\": \"\", \"Destination\": \"/g/x\", \"RW\": true},"
                " {\"Type\": \"bind\", \"Source\": \"/y\", \"Destination\": \"\", \"RW\": true},"
                " {\"Type\": \"bind\", \"Destination\": \"/g/z\", \"RW\": true},"
                " {\"Type\": \"tmpfs\", \"Destination\": \"/tmp\", \"RW\": true},"
                " {\"Source\": \"/nt\", \"Destination\": \"/nt\", \"RW\": true},"
                " {\"Type\": \"bind\", \"Source\": \"/host_mnt/a/\", \"Destination\": \"//g//a/\", \"RW\": null},"
                " {\"Type\": \"bind\", \"Source\": \"/a\", \"Destination\": \"/g/a\", \"RW\": true}"
                "]}");

        ck_assert_int_eq(o->n_volumes, 3);
        assert_volume(&o->volumes[0], "/b", "/g/b", "ro");                     /* RW missing ⇒ ro */
        assert_volume(&o->volumes[1], "/host_mnt/a/", "//g//a/", "ro");        /* raw paths */
        assert_volume(&o->volumes[2], "/a", "/g/a", "rw");
}
END_TEST

START_TEST(test_port_rules) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok(
                "{\"HostConfig\": {\"PortBindings\": {"
                " \"80/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"18080\"}, {\"HostPort\": \"\"}],"
                " \"81/udp\": [{\"HostIp\": \"0.0.0.0\", \"HostPort\": \"0\"}],"
                " \"82/tcp\": null,"
                " \"83/tcp\": [],"
                " \"84\": [{\"HostPort\": \"65535\"}, {\"HostIp\": \"::1\"}]"
                "}}}");

        ck_assert_int_eq(o->n_ports, 3);
        ck_assert_int_eq(o->ports[0].host, 18080);
        ck_assert_int_eq(o->ports[0].guest, 80);
        ck_assert_int_eq(o->ports[1].host, 0);                 /* "0" kept as 0 */
        ck_assert_int_eq(o->ports[1].guest, 81);               /* protocol ignored */
        ck_assert_int_eq(o->ports[2].host, 65535);
        ck_assert_int_eq(o->ports[2].guest, 84);

        /* every binding, including those xagent's ports skip, for the posture */
        ck_assert_int_eq(o->n_bindings, 5);
        ck_assert_str_eq(o->bindings[0].host_ip, "127.0.0.1");
        ck_assert_str_eq(o->bindings[0].host_port, "18080");
        ck_assert_str_eq(o->bindings[1].host_ip, "");
        ck_assert_str_eq(o->bindings[1].host_port, "");
        ck_assert_int_eq(o->bindings[1].guest, 80);
        ck_assert_str_eq(o->bindings[2].host_ip, "0.0.0.0");
        ck_assert_str_eq(o->bindings[4].host_ip, "::1");
        ck_assert_str_eq(o->bindings[4].host_port, "");
}
END_TEST

START_TEST(test_posture_facts) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = parse_ok(
                "{\"Config\": {\"User\": \"1000:1000\"},"
                " \"HostConfig\": {\"Privileged\": true, \"CapDrop\": [\"ALL\"], \"CapAdd\": [\"NET_ADMIN\", \"SYS_ADMIN\"],"
                "  \"SecurityOpt\": [\"no-new-privileges:true\"], \"PidsLimit\": 512, \"MemorySwap\": 536870912,"
                "  \"NetworkMode\": \"none\", \"IpcMode\": \"private\", \"PidMode\": \"\", \"UTSMode\": \"host\","
                "  \"Devices\": [{\"PathOnHost\": \"/dev/kvm\"}], \"DeviceCgroupRules\": [\"c *:* rwm\"],"
                "  \"DeviceRequests\": null, \"VolumesFrom\": [\"other:ro\"]}}");

        ck_assert_str_eq(o->user, "1000:1000");
        ck_assert(o->privileged);
        ck_assert_int_eq(o->n_cap_drop, 1);
        ck_assert_str_eq(o->cap_drop[0], "ALL");
        ck_assert_int_eq(o->n_cap_add, 2);
        ck_assert_str_eq(o->cap_add[1], "SYS_ADMIN");
        ck_assert_ptr_null(o->cap_add[2]);
        ck_assert_int_eq(o->n_security_opt, 1);
        ck_assert_str_eq(o->security_opt[0], "no-new-privileges:true");
        ck_assert(o->has_pids_limit);
        ck_assert_int_eq(o->pids_limit, 512);
        ck_assert(o->has_memory_swap);
        ck_assert_int_eq(o->memory_swap, 536870912);
        ck_assert_str_eq(o->network_mode, "none");
        ck_assert_str_eq(o->ipc_mode, "private");
        ck_assert_str_eq(o->pid_mode, "");
        ck_assert_str_eq(o->uts_mode, "host");
        ck_assert_int_eq(o->n_devices, 1);
        ck_assert_int_eq(o->n_device_cgroup_rules, 1);
        ck_assert_int_eq(o->n_device_requests, 0);
        ck_assert_int_eq(o->n_volumes_from, 1);
        ck_assert_str_eq(o->volumes_from[0], "other:ro");
}
END_TEST

START_TEST(test_from_json_object) {
        json_object *attrs = json_tokener_parse(ATTRS_FIXTURE);
        SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_ptr_nonnull(attrs);
        ck_assert_int_eq(sbx_observed_from_json(attrs, &o, NULL), 0);
        ck_assert_str_eq(o->image_ref, "img:tag");
        sbx_observed_free(o);
        json_object_put(attrs);

        attrs = json_object_new_array();
        o = NULL;
        ck_assert_int_lt(sbx_observed_from_json(attrs, &o, &e), 0);
        ck_assert_ptr_null(o);
        ck_assert_int_eq(e.kind, SBX_ERROR_BACKEND_ERROR);
        ck_assert_ptr_nonnull(strstr(e.message, "expected an object"));
        sbx_error_free(&e);
        json_object_put(attrs);
}
END_TEST

START_TEST(test_malformed) {
        SbxObserved *o = NULL;

        /* surrounding whitespace is fine */
        ck_assert_int_eq(sbx_observed_from_string(" {}\n", &o, NULL), 0);
        sbx_observed_free(o);

        parse_fails("", "malformed JSON");
        parse_fails("{", "malformed JSON");
        parse_fails("{\"a\": 1,}", "malformed JSON");
        parse_fails("{} {}", "malformed JSON");
        parse_fails("{} x", "malformed JSON");
        parse_fails("{\"a\": 1} /* c */", "malformed JSON");
        parse_fails("[]", "expected an object, got array");
        parse_fails("null", "expected an object, got null");
        parse_fails("\"x\"", "expected an object, got string");
}
END_TEST

START_TEST(test_wrong_types) {
        parse_fails("{\"Config\": []}", "Config: expected object, got array");
        parse_fails("{\"HostConfig\": \"x\"}", "HostConfig: expected object, got string");
        parse_fails("{\"State\": 1}", "State: expected object, got int");
        parse_fails("{\"State\": {\"Status\": 5}}", "State.Status: expected string, got int");
        parse_fails("{\"Config\": {\"Image\": true}}", "Config.Image: expected string");
        parse_fails("{\"Image\": 1}", "Image: expected string");
        parse_fails("{\"HostConfig\": {\"NanoCpus\": \"2e9\"}}", "HostConfig.NanoCpus: expected int");
        parse_fails("{\"HostConfig\": {\"Memory\": 1.5}}", "HostConfig.Memory: expected int, got double");
        parse_fails("{\"Config\": {\"Env\": \"A=1\"}}", "Config.Env: expected array");
        parse_fails("{\"Config\": {\"Env\": [\"A=1\", 2]}}", "Config.Env: item 1 is not a string");
        parse_fails("{\"Config\": {\"Env\": [\"A=\\u0000x\"]}}", "Config.Env: string contains a NUL");
        parse_fails("{\"Config\": {\"Labels\": []}}", "Config.Labels: expected object");
        parse_fails("{\"Config\": {\"Labels\": {\"k\": 1}}}", "Config.Labels.k: expected string, got int");
        parse_fails("{\"Config\": {\"NetworkDisabled\": \"yes\"}}", "Config.NetworkDisabled: expected boolean");
        parse_fails("{\"Config\": {\"WorkingDir\": {}}}", "Config.WorkingDir: expected string");
        parse_fails("{\"Mounts\": {}}", "Mounts: expected array");
        parse_fails("{\"Mounts\": [1]}", "Mounts[0]: expected object, got int");
        parse_fails("{\"Mounts\": [{\"Type\": \"bind\", \"Source\": 1}]}", "Mounts[0].Source: expected string");
        parse_fails("{\"Mounts\": [{\"Type\": \"bind\", \"RW\": \"true\"}]}", "Mounts[0].RW: expected boolean");
        parse_fails("{\"HostConfig\": {\"PortBindings\": []}}", "HostConfig.PortBindings: expected object");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"http/tcp\": []}}}",
                    "HostConfig.PortBindings.http/tcp: not a port key");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"99999/tcp\": []}}}", "99999/tcp: not a port key");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": {}}}}", "80/tcp: expected array, got object");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": [null]}}}", "HostConfig.PortBindings.80/tcp[0]: expected object, got null");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": [{\"HostPort\": 8080}]}}}",
                    "HostConfig.PortBindings.80/tcp[0].HostPort: expected string, got int");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": [{\"HostPort\": \"80a\"}]}}}",
                    "HostConfig.PortBindings.80/tcp[0].HostPort: \"80a\" is not a port number");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": [{\"HostPort\": \"65536\"}]}}}",
                    "HostPort: \"65536\" is not a port number");
        parse_fails("{\"HostConfig\": {\"PortBindings\": {\"80/tcp\": [{\"HostIp\": 1}]}}}",
                    "HostConfig.PortBindings.80/tcp[0].HostIp: expected string");
        parse_fails("{\"NetworkSettings\": []}", "NetworkSettings: expected object");
        parse_fails("{\"NetworkSettings\": {\"Networks\": []}}", "NetworkSettings.Networks: expected object");
        parse_fails("{\"Config\": {\"User\": 0}}", "Config.User: expected string");
        parse_fails("{\"HostConfig\": {\"Privileged\": 1}}", "HostConfig.Privileged: expected boolean");
        parse_fails("{\"HostConfig\": {\"CapDrop\": \"ALL\"}}", "HostConfig.CapDrop: expected array");
        parse_fails("{\"HostConfig\": {\"CapAdd\": [null]}}", "HostConfig.CapAdd: item 0 is not a string");
        parse_fails("{\"HostConfig\": {\"SecurityOpt\": {}}}", "HostConfig.SecurityOpt: expected array");
        parse_fails("{\"HostConfig\": {\"Devices\": {}}}", "HostConfig.Devices: expected array");
        parse_fails("{\"HostConfig\": {\"PidsLimit\": \"1\"}}", "HostConfig.PidsLimit: expected int");
        parse_fails("{\"HostConfig\": {\"MemorySwap\": false}}", "HostConfig.MemorySwap: expected int");
        parse_fails("{\"HostConfig\": {\"IpcMode\": 1}}", "HostConfig.IpcMode: expected string");
        parse_fails("{\"HostConfig\": {\"VolumesFrom\": [1]}}", "HostConfig.VolumesFrom: item 0");
}
END_TEST

/* NetworkSettings.Ports: what Docker bound (host port 0 resolved), TCP only. */
START_TEST(test_bound_ports) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;

        ck_assert_int_eq(sbx_observed_from_string(
                "{\"NetworkSettings\": {\"Ports\": {\"8080/tcp\": [{\"HostIp\": \"127.0.0.1\", \"HostPort\": \"49153\"}],"
                " \"53/udp\": [{\"HostIp\": \"\", \"HostPort\": \"5353\"}], \"9/tcp\": null}}}", &o, NULL), 0);
        ck_assert_uint_eq(o->n_bound_ports, 1);
        ck_assert_str_eq(o->bound_ports[0].host_ip, "127.0.0.1");
        ck_assert_int_eq(o->bound_ports[0].host, 49153);
        ck_assert_int_eq(o->bound_ports[0].guest, 8080);
        parse_fails("{\"NetworkSettings\": {\"Ports\": {\"80/tcp\": [{\"HostPort\": \"x\"}]}}}",
                    "NetworkSettings.Ports");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("observed");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_attrs_fixture);
        tcase_add_test(tc, test_bound_ports);
        tcase_add_test(tc, test_empty_object);
        tcase_add_test(tc, test_null_sections);
        tcase_add_test(tc, test_state_table);
        tcase_add_test(tc, test_network_disabled_and_working_dir);
        tcase_add_test(tc, test_labels);
        tcase_add_test(tc, test_env_rules);
        tcase_add_test(tc, test_mount_rules);
        tcase_add_test(tc, test_port_rules);
        tcase_add_test(tc, test_posture_facts);
        tcase_add_test(tc, test_from_json_object);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_wrong_types);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
