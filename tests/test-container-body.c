/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "container-body.h"
#include "json-util.h"
#include "sbx-test.h"

static SbxSpec *spec(bool isolated) {
        SbxSpec *s = sbx_spec_new();

        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup("img:tag");
        s->cpus = 2;
        s->memory = 256;
        s->network_isolated = isolated;
        sbx_spec_add_env(s, "B", "2=two");
        sbx_spec_add_env(s, "A", "1");
        sbx_spec_add_volume(s, "/h/rw", "/g/rw", "rw");
        sbx_spec_add_volume(s, "/h/ro", "/g/ro", "ro");
        if (!isolated) {
                sbx_spec_add_port(s, 0, 80);
                sbx_spec_add_port(s, 18080, 81);
                sbx_spec_add_port(s, 18081, 81);
        }
        ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
        return s;
}

static const char *str_at(json_object *o, const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        char *save = NULL;

        for (char *k = strtok_r(copy, ".", &save); k; k = strtok_r(NULL, ".", &save))
                ck_assert_msg(json_object_object_get_ex(o, k, &o), "%s: no %s", path, k);
        return json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

START_TEST(test_body) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec(false);
        _cleanup_(json_object_putp) json_object *b = NULL;

        ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                .name = "user::7", .spec = s, .image = "img:tag", .fingerprint = "abc",
                .uid = 1001, .init_volume = "xagent-sandbox-init-0123456789ab", .pids_limit = 512,
                .publish_address = "127.0.0.1", .service = "0011223344556677",
        }, &b), 0);

        ck_assert_str_eq(str_at(b, "Image"), "\"img:tag\"");
        /* the first process is the service's init, as another uid than the owner's;
         * the image's entrypoint and command are not used */
        ck_assert_str_eq(str_at(b, "Entrypoint"), "[\"/.xagent-sandbox/xagent-sandbox-init\"]");
        ck_assert(!json_object_object_get_ex(b, "Cmd", NULL));
        ck_assert_str_eq(str_at(b, "User"), "\"65534:65534\"");
        ck_assert_str_eq(str_at(b, "WorkingDir"), "\"/home\"");
        ck_assert_str_eq(str_at(b, "Env"), "[\"A=1\",\"B=2=two\"]");
        ck_assert_str_eq(str_at(b, "NetworkDisabled"), "false");
        json_object *labels = json_object_object_get(b, "Labels");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.managed")), "true");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.sandbox.name")), "user::7");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.sandbox.spec.fingerprint")),
                         "abc");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.sandbox.spec.version")), "1");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.sandbox.owner")), "1001");
        ck_assert_str_eq(json_object_get_string(json_object_object_get(labels, "xagent.sandbox.service")),
                         "0011223344556677");
        ck_assert_str_eq(str_at(b, "HostConfig.NanoCpus"), "2000000000");
        ck_assert_str_eq(str_at(b, "HostConfig.Memory"), "268435456");
        ck_assert_str_eq(str_at(b, "HostConfig.MemorySwap"), "268435456");
        ck_assert_str_eq(str_at(b, "HostConfig.PidsLimit"), "512");
        ck_assert_str_eq(str_at(b, "HostConfig.Privileged"), "false");
        ck_assert_str_eq(str_at(b, "HostConfig.CapDrop"), "[\"ALL\"]");
        ck_assert_str_eq(str_at(b, "HostConfig.SecurityOpt"), "[\"no-new-privileges:true\"]");
        ck_assert_str_eq(str_at(b, "HostConfig.IpcMode"), "\"private\"");
        ck_assert_str_eq(str_at(b, "HostConfig.NetworkMode"), "\"bridge\"");
        ck_assert_str_eq(str_at(b, "HostConfig.Mounts"),
                         "[{\"Type\":\"volume\",\"Source\":\"xagent-sandbox-init-0123456789ab\","
                         "\"Target\":\"/.xagent-sandbox\",\"ReadOnly\":true,\"VolumeOptions\":{\"NoCopy\":true}},"
                         "{\"Type\":\"bind\",\"Source\":\"/h/ro\",\"Target\":\"/g/ro\",\"ReadOnly\":true},"
                         "{\"Type\":\"bind\",\"Source\":\"/h/rw\",\"Target\":\"/g/rw\",\"ReadOnly\":false}]");
        ck_assert_str_eq(str_at(b, "HostConfig.PortBindings"),
                         "{\"80/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"0\"}],"
                         "\"81/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"18080\"},"
                         "{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"18081\"}]}");
        ck_assert_str_eq(str_at(b, "ExposedPorts"), "{\"80/tcp\":{},\"81/tcp\":{}}");
        ck_assert_str_eq(str_at(b, "HostConfig.LogConfig"),
                         "{\"Type\":\"json-file\",\"Config\":{\"max-size\":\"1m\",\"max-file\":\"2\"}}");
        /* nothing the posture forbids is ever asked for */
        ck_assert(!json_object_object_get_ex(json_object_object_get(b, "HostConfig"), "CapAdd", NULL));
        ck_assert(!json_object_object_get_ex(json_object_object_get(b, "HostConfig"), "Binds", NULL));
        ck_assert(!json_object_object_get_ex(json_object_object_get(b, "HostConfig"), "Devices", NULL));
        ck_assert(!json_object_object_get_ex(json_object_object_get(b, "HostConfig"), "VolumesFrom", NULL));
}
END_TEST

START_TEST(test_isolated) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec(true);
        _cleanup_(json_object_putp) json_object *b = NULL;

        ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                .name = "n", .spec = s, .image = "img:tag", .fingerprint = "",
                .uid = 0, .init_volume = "xagent-sandbox-init-x", .pids_limit = 64, .publish_address = "::1",
        }, &b), 0);
        ck_assert_str_eq(str_at(b, "NetworkDisabled"), "true");
        ck_assert_str_eq(str_at(b, "HostConfig.NetworkMode"), "\"none\"");
        ck_assert_str_eq(str_at(b, "HostConfig.PortBindings"), "{}");
        ck_assert_str_eq(str_at(b, "User"), "\"65534:65534\"");
        /* no service id, no service label */
        ck_assert(!json_object_object_get_ex(json_object_object_get(b, "Labels"), "xagent.sandbox.service", NULL));
        /* a body without the init's volume is never made */
        json_object_put(TAKE_PTR(b));
        ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                .name = "n", .spec = s, .image = "img:tag", .fingerprint = "", .pids_limit = 64,
                .publish_address = "::1",
        }, &b), -EINVAL);
}
END_TEST

/* A working directory inside a volume is never Docker's (runc would create it as root
 * wherever the volume leads at start): "/" and the label; on the volume's mount point
 * or outside every volume it is Docker's as before. */
START_TEST(test_working_dir_in_volume) {
        static const struct { const char *wd, *config; bool label; } cases[] = {
                { "/g/rw/sub/deeper", "/", true },
                { "/g/ro/x", "/", true },
                { "/g/rw", "/g/rw", false },
                { "/g/rwx", "/g/rwx", false },
                { "/home", "/home", false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = spec(true);
                _cleanup_(json_object_putp) json_object *b = NULL;
                json_object *label = NULL, *labels;
                char expect[64];

                free(s->working_dir);
                s->working_dir = strdup(cases[i].wd);
                ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                        .name = "n", .spec = s, .image = "img:tag", .fingerprint = "", .init_volume = "v",
                        .pids_limit = 64, .publish_address = "::1" }, &b), 0);
                snprintf(expect, sizeof expect, "\"%s\"", cases[i].config);
                ck_assert_str_eq(str_at(b, "WorkingDir"), expect);
                labels = json_object_object_get(b, "Labels");
                /* Always there (an image cannot supply it), blank unless it is needed. */
                ck_assert(json_object_object_get_ex(labels, "xagent.sandbox.working_dir", &label));
                ck_assert_str_eq(json_object_get_string(label), cases[i].label ? cases[i].wd : "");
                /* and read back from what Docker reports */
                ck_assert_str_eq(sbx_container_spec_working_dir(cases[i].config, json_object_get_string(label),
                                                                s->volumes, s->n_volumes), cases[i].wd);
        }
        /* the label counts only with "/" and only inside a volume */
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec(true);
        ck_assert_str_eq(sbx_container_spec_working_dir("/home", "/g/rw/x", s->volumes, s->n_volumes), "/home");
        ck_assert_str_eq(sbx_container_spec_working_dir("/", "/elsewhere", s->volumes, s->n_volumes), "/");
        ck_assert_str_eq(sbx_container_spec_working_dir("/", "/g/rw", s->volumes, s->n_volumes), "/");
        ck_assert_str_eq(sbx_container_spec_working_dir("/", "", s->volumes, s->n_volumes), "/");
        ck_assert_ptr_null(sbx_container_spec_working_dir(NULL, "/g/rw/x", s->volumes, s->n_volumes));
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("container-body");
        TCase *tc = tcase_create("container-body");

        tcase_add_test(tc, test_body);
        tcase_add_test(tc, test_isolated);
        tcase_add_test(tc, test_working_dir_in_volume);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
