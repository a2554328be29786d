/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Docker client against a real dockerd (tests/setup-docker.sh starts one and
 * imports xagent-sandbox-test:latest). Everything a test creates carries the
 * label sbx-test.run=<run id>; the test case's teardown, which runs in the
 * parent even when a test failed, removes all of it. */

#include "json-path.h"
#include "sbx-test.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-container.h"
#include "docker-image.h"
#include "docker-volume.h"
#include "docker.h"

#define TEST_IMAGE "xagent-sandbox-test:latest"

static char run_id[64];       /* sbx-test-<pid>: prefix of every name and the label value */

static void assert_error(const SbxError *e, SbxErrorKind kind, const char *needle) {
        ck_assert_msg(e->kind == kind, "kind %s, expected %s (%s)",
                      sbx_error_kind_name(e->kind), sbx_error_kind_name(kind), e->message);
        ck_assert_msg(e->message && strstr(e->message, needle), "message \"%s\" lacks \"%s\"", e->message, needle);
}

static SbxDocker *client(void) {
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_new(getenv("DOCKER_HOST"), &d, &e), 0);
        return d;
}

static json_object *parse(const char *fmt, ...) _printf_(1, 2);
static json_object *parse(const char *fmt, ...) {
        _cleanup_free_ char *s = NULL;
        json_object *j;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&s, fmt, ap), 0);
        va_end(ap);
        j = json_tokener_parse(s);
        ck_assert_msg(j, "bad test JSON: %s", s);
        return j;
}

static char *name(const char *what) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "%s-%s", run_id, what), 0);
        return s;
}

/* Creates a container of the test image running `tail -f /dev/null` with the
 * run label plus host_config (a JSON object text, may be "{}"). */
static char *create(SbxDocker *d, const char *n, const char *host_config) {
        _cleanup_(json_object_putp) json_object *body = parse(
                        "{\"Image\":\"" TEST_IMAGE "\",\"Cmd\":[\"tail\",\"-f\",\"/dev/null\"],"
                        "\"Labels\":{\"sbx-test.run\":\"%s\"},\"HostConfig\":%s}", run_id, host_config);
        SbxError e = SBX_ERROR_NULL;
        char *id = NULL;

        ck_assert_msg(sbx_docker_container_create(d, n, body, &id, &e) == 0, "create %s: %s", n, e.message);
        ck_assert_uint_eq(strlen(id), 64);
        return id;
}

static char *tmp_dir(const char *what) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "/tmp/%s-%s", run_id, what), 0);
        return p;
}

START_TEST(test_ping_version) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_(json_object_putp) json_object *v = NULL, *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        const char *api;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        api = sbx_docker_api_version(d);
        ck_assert_ptr_nonnull(api);
        ck_assert(strncmp(api, "1.", 2) == 0 && atoi(api + 2) >= SBX_DOCKER_API_MIN_MINOR);

        ck_assert_int_eq(sbx_docker_version(d, &v, &e), 0);
        ck_assert_str_eq(jstr(v, "ApiVersion"), api);
        ck_assert_int_eq(sbx_docker_info(d, &info, &e), 0);
        ck_assert_ptr_nonnull(jstr(info, "ServerVersion"));
        fprintf(stderr, "docker: server %s, API %s (min %s), cgroup %s v%s, storage %s\n",
                jstr(v, "Version"), api, jstr(v, "MinAPIVersion"),
                jstr(info, "CgroupDriver"), jstr(info, "CgroupVersion"), jstr(info, "Driver"));
}
END_TEST

static json_object *find_mount(json_object *mounts, const char *destination) {
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                json_object *m = json_object_array_get_idx(mounts, i);

                if (streq_ptr(jstr(m, "Destination"), destination))
                        return m;
        }
        return NULL;
}

/* The posture the lifecycle will generate, and what Docker reports back. */
START_TEST(test_lifecycle) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("life"), *src_ro = tmp_dir("ro"), *src_rw = tmp_dir("rw");
        _cleanup_free_ char *id = NULL, *image_id = NULL, *repo = name("snap"), *ref = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL, *info = NULL, *list = NULL,
                *commit_config = NULL, *image = NULL;
        const char *const by_other[] = { "sbx-test.case=nothing-has-this", NULL };
        _cleanup_free_ char *run_label = NULL;
        const char *by_label[3] = { "sbx-test.case=life", NULL, NULL };
        SbxError e = SBX_ERROR_NULL;
        json_object *hc, *m, *p;

        ck_assert_int_eq(mkdir(src_ro, 0755), 0);
        ck_assert_int_eq(mkdir(src_rw, 0755), 0);
        body = parse("{\"Image\":\"" TEST_IMAGE "\",\"Cmd\":[\"tail\",\"-f\",\"/dev/null\"],"
                     "\"User\":\"65534:65534\",\"WorkingDir\":\"/home\",\"Env\":[\"A=1\"],"
                     "\"Labels\":{\"sbx-test.run\":\"%s\",\"sbx-test.case\":\"life\","
                     "\"xagent.managed\":\"true\",\"xagent.sandbox.spec.fingerprint\":\"abc\"},"
                     "\"ExposedPorts\":{\"80/tcp\":{}},"
                     "\"HostConfig\":{\"Privileged\":false,\"CapDrop\":[\"ALL\"],"
                     "\"SecurityOpt\":[\"no-new-privileges:true\"],\"IpcMode\":\"private\","
                     "\"PidsLimit\":64,\"Memory\":268435456,\"MemorySwap\":268435456,\"NanoCpus\":1000000000,"
                     "\"PortBindings\":{\"80/tcp\":[{\"HostIp\":\"127.0.0.1\",\"HostPort\":\"0\"}]},"
                     "\"Mounts\":[{\"Type\":\"bind\",\"Source\":\"%s\",\"Target\":\"/ro\",\"ReadOnly\":true},"
                     "{\"Type\":\"bind\",\"Source\":\"%s\",\"Target\":\"/rw\"}]}}",
                     run_id, src_ro, src_rw);
        ck_assert_msg(sbx_docker_container_create(d, n, body, &id, &e) == 0, "%s", e.message);

        ck_assert_int_eq(sbx_docker_container_start(d, n, &e), 0);
        ck_assert_int_eq(sbx_docker_container_start(d, id, &e), 1);   /* already running: 304 */

        ck_assert_int_eq(sbx_docker_container_inspect(d, n, &info, &e), 0);
        ck_assert_str_eq(jstr(info, "Id"), id);
        ck_assert(jstr(info, "Name")[0] == '/' && streq(jstr(info, "Name") + 1, n));
        ck_assert(json_object_get_boolean(jget(info, "State", "Running")));
        ck_assert_str_eq(jstr(info, "State", "Status"), "running");
        ck_assert_str_eq(jstr(info, "Config", "User"), "65534:65534");
        ck_assert_str_eq(jstr(info, "Config", "Labels", "xagent.sandbox.spec.fingerprint"), "abc");
        hc = jget(info, "HostConfig");
        /* the requested host port "0" is echoed as given; the bound port is in NetworkSettings */
        p = json_object_array_get_idx(jget(hc, "PortBindings", "80/tcp"), 0);
        ck_assert_str_eq(jstr(p, "HostPort"), "0");
        ck_assert_str_eq(jstr(p, "HostIp"), "127.0.0.1");
        p = json_object_array_get_idx(jget(info, "NetworkSettings", "Ports", "80/tcp"), 0);
        ck_assert_str_eq(jstr(p, "HostIp"), "127.0.0.1");
        ck_assert_int_gt(atoi(jstr(p, "HostPort")), 0);
        ck_assert_str_eq(jstr(hc, "IpcMode"), "private");
        ck_assert_str_eq(jstr(hc, "PidMode"), "");
        ck_assert_str_eq(jstr(hc, "UTSMode"), "");
        ck_assert_int_eq(json_object_get_int64(jget(hc, "PidsLimit")), 64);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "Memory")), 268435456);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "MemorySwap")), 268435456);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "NanoCpus")), 1000000000);
        ck_assert_str_eq(json_object_to_json_string_ext(jget(hc, "SecurityOpt"), JSON_C_TO_STRING_PLAIN),
                         "[\"no-new-privileges:true\"]");
        ck_assert_str_eq(json_object_to_json_string_ext(jget(hc, "CapDrop"), JSON_C_TO_STRING_PLAIN), "[\"ALL\"]");
        ck_assert(json_object_is_type(jget(hc, "CapAdd"), json_type_null));
        ck_assert(!json_object_get_boolean(jget(hc, "Privileged")));
        ck_assert(json_object_is_type(jget(hc, "Binds"), json_type_null));
        /* HostConfig.Mounts binds show in Mounts as Type "bind", Mode "", RW per ReadOnly */
        m = find_mount(jget(info, "Mounts"), "/ro");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(jstr(m, "Type"), "bind");
        ck_assert_str_eq(jstr(m, "Source"), src_ro);
        ck_assert_str_eq(jstr(m, "Mode"), "");
        ck_assert(!json_object_get_boolean(jget(m, "RW")));
        m = find_mount(jget(info, "Mounts"), "/rw");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(jstr(m, "Type"), "bind");
        ck_assert(json_object_get_boolean(jget(m, "RW")));

        /* list: all=1 plus label filters */
        ck_assert_int_ge(asprintf(&run_label, "sbx-test.run=%s", run_id), 0);
        by_label[1] = run_label;
        ck_assert_int_eq(sbx_docker_container_list(d, by_label, &list, &e), 0);
        ck_assert_uint_eq(json_object_array_length(list), 1);
        ck_assert_str_eq(jstr(json_object_array_get_idx(list, 0), "Id"), id);
        json_object_put(TAKE_PTR(list));
        ck_assert_int_eq(sbx_docker_container_list(d, by_other, &list, &e), 0);
        ck_assert_uint_eq(json_object_array_length(list), 0);
        json_object_put(TAKE_PTR(list));

        ck_assert_int_eq(sbx_docker_container_stop(d, n, 1, &e), 0);
        ck_assert_int_eq(sbx_docker_container_stop(d, n, 1, &e), 1);  /* not running: 304 */
        json_object_put(TAKE_PTR(info));
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), 0);
        ck_assert(!json_object_get_boolean(jget(info, "State", "Running")));
        ck_assert_str_eq(jstr(info, "State", "Status"), "exited");

        /* stopped, it still lists with all=1 */
        ck_assert_int_eq(sbx_docker_container_list(d, by_label, &list, &e), 0);
        ck_assert_uint_eq(json_object_array_length(list), 1);

        /* commit: labels named in the body replace the container's, the rest stay */
        commit_config = parse("{\"Labels\":{\"xagent.sandbox.spec.fingerprint\":\"\",\"sbx-test.snap\":\"yes\"}}");
        ck_assert_int_eq(sbx_docker_commit(d, n, repo, "t1", commit_config, &image_id, &e), 0);
        ck_assert(strncmp(image_id, "sha256:", 7) == 0);
        ck_assert_int_ge(asprintf(&ref, "%s:t1", repo), 0);
        ck_assert_int_eq(sbx_docker_image_inspect(d, ref, &image, &e), 0);
        ck_assert_str_eq(jstr(image, "Id"), image_id);
        ck_assert_str_eq(jstr(image, "Config", "Labels", "xagent.sandbox.spec.fingerprint"), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", "sbx-test.snap"), "yes");
        ck_assert_str_eq(jstr(image, "Config", "Labels", "xagent.managed"), "true");
        ck_assert_str_eq(jstr(image, "Config", "Labels", "sbx-test.run"), run_id);
        ck_assert_str_eq(jstr(image, "Config", "User"), "65534:65534");
        json_object_put(TAKE_PTR(image));

        ck_assert_int_eq(sbx_docker_image_remove(d, ref, false, &e), 0);
        ck_assert_int_eq(sbx_docker_image_inspect(d, ref, &image, &e), -ENODATA);
        ck_assert_ptr_null(image);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such image");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
        json_object_put(TAKE_PTR(info));
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such container");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_remove(d, n, &e), -ENODATA);
        sbx_error_free(&e);
        rmdir(src_ro);
        rmdir(src_rw);
}
END_TEST

/* What this Docker fills in when the create body says nothing. */
START_TEST(test_defaults) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("defaults"), *id = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        json_object *hc;

        id = create(d, n, "{}");
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), 0);
        hc = jget(info, "HostConfig");
        fprintf(stderr, "docker defaults: IpcMode=\"%s\" PidMode=\"%s\" UTSMode=\"%s\" NetworkMode=\"%s\" "
                "PidsLimit=%s Memory=%s MemorySwap=%s SecurityOpt=%s CapDrop=%s CapAdd=%s Privileged=%s "
                "Config.User=\"%s\" Config.WorkingDir=\"%s\"\n",
                jstr(hc, "IpcMode"), jstr(hc, "PidMode"), jstr(hc, "UTSMode"), jstr(hc, "NetworkMode"),
                json_object_to_json_string(jget(hc, "PidsLimit")), json_object_to_json_string(jget(hc, "Memory")),
                json_object_to_json_string(jget(hc, "MemorySwap")),
                json_object_to_json_string(jget(hc, "SecurityOpt")), json_object_to_json_string(jget(hc, "CapDrop")),
                json_object_to_json_string(jget(hc, "CapAdd")), json_object_to_json_string(jget(hc, "Privileged")),
                jstr(info, "Config", "User"), jstr(info, "Config", "WorkingDir"));
        /* Docker's defaults, which a verifier of the posture must not take for it */
        ck_assert_str_eq(jstr(hc, "PidMode"), "");
        ck_assert_str_eq(jstr(hc, "UTSMode"), "");
        ck_assert_str_eq(jstr(hc, "NetworkMode"), "default");
        ck_assert(json_object_is_type(jget(hc, "CapDrop"), json_type_null));
        ck_assert(json_object_is_type(jget(hc, "SecurityOpt"), json_type_null));
        ck_assert_int_eq(json_object_get_int64(jget(hc, "MemorySwap")), 0);
        ck_assert_str_eq(jstr(info, "Config", "User"), "");
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
}
END_TEST

START_TEST(test_network_none) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("isolated"), *id = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL, *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        json_object *nets;

        body = parse("{\"Image\":\"" TEST_IMAGE "\",\"Cmd\":[\"tail\",\"-f\",\"/dev/null\"],\"NetworkDisabled\":true,"
                     "\"Labels\":{\"sbx-test.run\":\"%s\"},\"HostConfig\":{\"NetworkMode\":\"none\"}}", run_id);
        ck_assert_int_eq(sbx_docker_container_create(d, n, body, &id, &e), 0);
        ck_assert_int_eq(sbx_docker_container_start(d, id, &e), 0);
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), 0);
        ck_assert(json_object_get_boolean(jget(info, "Config", "NetworkDisabled")));
        ck_assert_str_eq(jstr(info, "HostConfig", "NetworkMode"), "none");
        /* with NetworkDisabled, not even the "none" network is listed */
        nets = jget(info, "NetworkSettings", "Networks");
        ck_assert(json_object_is_type(nets, json_type_object));
        ck_assert_int_eq(json_object_object_length(nets), 0);
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);   /* force: it is running */
}
END_TEST

START_TEST(test_not_found) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("missing"), *id = NULL, *image = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL;
        json_object *j = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_container_inspect(d, n, &j, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such container");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_start(d, n, &e), -ENODATA);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_stop(d, n, 1, &e), -ENODATA);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_remove(d, n, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such container");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_commit(d, n, n, "x", NULL, &image, &e), -ENODATA);
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_image_inspect(d, n, &j, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such image");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_image_remove(d, n, true, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such image");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_volume_inspect(d, n, &j, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "no such volume");
        sbx_error_free(&e);

        /* create from a missing image is a 404 as well: the caller tells it apart by the call */
        body = parse("{\"Image\":\"%s:latest\",\"Labels\":{\"sbx-test.run\":\"%s\"}}", n, run_id);
        ck_assert_int_eq(sbx_docker_container_create(d, n, body, &id, &e), -ENODATA);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "No such image");
        sbx_error_free(&e);
        ck_assert_ptr_null(j);
        ck_assert_ptr_null(id);
        ck_assert_ptr_null(image);
}
END_TEST

START_TEST(test_conflict) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("dup"), *n2 = name("user"), *repo = name("inuse"), *ref = NULL;
        _cleanup_free_ char *id = NULL, *id2 = NULL, *dup = NULL, *image_id = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL;
        SbxError e = SBX_ERROR_NULL;

        id = create(d, n, "{}");
        body = parse("{\"Image\":\"" TEST_IMAGE "\",\"Labels\":{\"sbx-test.run\":\"%s\"}}", run_id);
        ck_assert_int_eq(sbx_docker_container_create(d, n, body, &dup, &e), -EBUSY);
        assert_error(&e, SBX_ERROR_DOCKER_CONFLICT, "is already in use");
        sbx_error_free(&e);
        ck_assert_ptr_null(dup);

        /* an image a container uses: 409 unless forced */
        ck_assert_int_eq(sbx_docker_commit(d, id, repo, NULL, NULL, &image_id, &e), 0);
        ck_assert_int_ge(asprintf(&ref, "%s:latest", repo), 0);
        json_object_put(TAKE_PTR(body));
        body = parse("{\"Image\":\"%s\",\"Labels\":{\"sbx-test.run\":\"%s\"}}", ref, run_id);
        ck_assert_int_eq(sbx_docker_container_create(d, n2, body, &id2, &e), 0);
        ck_assert_int_eq(sbx_docker_image_remove(d, image_id, false, &e), -EBUSY);
        assert_error(&e, SBX_ERROR_DOCKER_CONFLICT, "conflict");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_container_remove(d, id2, &e), 0);
        ck_assert_int_eq(sbx_docker_image_remove(d, ref, false, &e), 0);
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
}
END_TEST

START_TEST(test_unreachable) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_free_ char *id = NULL;
        _cleanup_(json_object_putp) json_object *body = json_object_new_object();
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_new("unix:///tmp/nonexistent.sock", &d, &e), 0);
        ck_assert_int_eq(sbx_docker_ping(d, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "unix:///tmp/nonexistent.sock");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_create(d, "x", body, &id, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "cannot reach Docker");
        sbx_error_free(&e);
        ck_assert_ptr_null(id);
}
END_TEST

/* The OOM kills counted in a container's memory cgroup: 0, without error, when that
 * cannot be told — an inspect answer whose Pid is no live process of that container
 * (another's, garbage, out of range), or no engine that is local. */
START_TEST(test_oom_kills_not_told) {
        _cleanup_(sbx_docker_freep) SbxDocker *local = client();
        const char *id = "0123456789abcdef";    /* in no path of this test's cgroups */
        int pid = (int) getpid();
        json_object *answers[] = {
                parse("{\"Id\":\"%s\",\"State\":{\"Pid\":%d}}", id, pid),
                parse("{\"Id\":\"%s\",\"State\":{\"Pid\":\"%d\"}}", id, pid),
                parse("{\"Id\":\"%s\",\"State\":{\"Pid\":-%d}}", id, pid),
                parse("{\"Id\":\"%s\",\"State\":{\"Pid\":%d000000000000}}", id, pid),
                parse("{\"Id\":\"%s\",\"State\":{\"Pid\":0}}", id),
                parse("{\"Id\":\"%s\",\"State\":[%d]}", id, pid),
                parse("{\"Id\":\"\",\"State\":{\"Pid\":%d}}", pid),
        };

        for (size_t i = 0; i < ELEMENTSOF(answers); i++) {
                ck_assert_int_eq(sbx_docker_container_oom_kills(NULL, answers[i]), 0);
                ck_assert_int_eq(sbx_docker_container_oom_kills(local, answers[i]), 0);
                json_object_put(answers[i]);
        }
}
END_TEST

static void assert_create_refused(SbxDocker *d, const char *n, const char *body_text, int r, const char *needle) {
        _cleanup_(json_object_putp) json_object *body = json_tokener_parse(body_text);
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_ptr_nonnull(body);
        ck_assert_int_eq(sbx_docker_container_create(d, n, body, &id, &e), r);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, needle);
        sbx_error_free(&e);
        ck_assert_ptr_null(id);
}

START_TEST(test_bad_request) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("bad"), *amp = name("a&b"), *missing = tmp_dir("no-such-dir");
        _cleanup_free_ char *mounts = NULL, *invalid = NULL;

        assert_create_refused(d, n, "{\"Image\":5}", -EPROTO, "cannot unmarshal number");
        assert_create_refused(d, n, "{\"Image\":\"" TEST_IMAGE "\",\"HostConfig\":{\"Memory\":1}}",
                              -EPROTO, "Minimum memory limit");
        /* the escaped name reaches Docker whole: unescaped, Docker would see "…-a" */
        ck_assert_int_ge(asprintf(&invalid, "Invalid container name (%s)", amp), 0);
        assert_create_refused(d, amp, "{\"Image\":\"" TEST_IMAGE "\"}", -EPROTO, invalid);
        /* HostConfig.Mounts refuses a missing bind source */
        ck_assert_int_ge(asprintf(&mounts, "{\"Image\":\"" TEST_IMAGE "\",\"HostConfig\":{\"Mounts\":"
                                  "[{\"Type\":\"bind\",\"Source\":\"%s\",\"Target\":\"/x\"}]}}", missing), 0);
        assert_create_refused(d, n, mounts, -EPROTO, "bind source path does not exist");
        ck_assert_int_eq(access(missing, F_OK), -1);
}
END_TEST

/* HostConfig.Binds, unlike Mounts, creates a missing source directory (at start). */
START_TEST(test_binds_create_source) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *n = name("binds"), *missing = tmp_dir("binds-made"), *hc = NULL, *id = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        json_object *m;
        struct stat st;

        ck_assert_int_ge(asprintf(&hc, "{\"Binds\":[\"%s:/x:ro\"]}", missing), 0);
        id = create(d, n, hc);
        ck_assert_int_eq(sbx_docker_container_start(d, id, &e), 0);
        ck_assert_int_eq(stat(missing, &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), 0);
        m = find_mount(jget(info, "Mounts"), "/x");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(jstr(m, "Type"), "bind");
        ck_assert_str_eq(jstr(m, "Mode"), "ro");
        ck_assert(!json_object_get_boolean(jget(m, "RW")));
        ck_assert_ptr_null(jget(info, "HostConfig", "Mounts"));
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
        ck_assert_int_eq(rmdir(missing), 0);
}
END_TEST

/* Runs in the parent, before the tests: the daemon and the image must be there. */
static void require_docker(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(json_object_putp) json_object *image = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        d = client();
        ck_assert_msg(sbx_docker_ping(d, &e) == 0,
                      "%s — run tests/setup-docker.sh (as root) first", e.message);
        ck_assert_msg(sbx_docker_image_inspect(d, TEST_IMAGE, &image, &e) == 0,
                      "%s — run tests/setup-docker.sh (as root) to import " TEST_IMAGE, e.message);
}

static void remove_all(SbxDocker *d, const char *path, const char *kind) {
        _cleanup_(json_object_putp) json_object *list = NULL;

        if (sbx_docker_request(d, "GET", path, NULL, 0, &list, NULL) < 0 || !list)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                const char *id = jstr(json_object_array_get_idx(list, i), "Id");

                fprintf(stderr, "teardown: removing leftover %s %s\n", kind, id);
                if (streq(kind, "container"))
                        (void) sbx_docker_container_remove(d, id, NULL);
                else
                        (void) sbx_docker_image_remove(d, id, true, NULL);
        }
}

/* Runs in the parent after the tests, also when one failed: removes whatever
 * carries this run's label, and the run's scratch directories. */
static void sweep(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *filters = NULL, *esc = NULL, *path = NULL;
        static const char *const dirs[] = { "ro", "rw", "no-such-dir", "binds-made" };

        ck_assert_int_ge(asprintf(&filters, "{\"label\":[\"sbx-test.run=%s\"]}", run_id), 0);
        ck_assert_int_eq(sbx_docker_escape(d, filters, &esc), 0);
        ck_assert_int_ge(asprintf(&path, "/containers/json?all=1&filters=%s", esc), 0);
        remove_all(d, path, "container");
        free(path);
        ck_assert_int_ge(asprintf(&path, "/images/json?filters=%s", esc), 0);
        remove_all(d, path, "image");
        for (size_t i = 0; i < ELEMENTSOF(dirs); i++) {
                _cleanup_free_ char *p = tmp_dir(dirs[i]);

                (void) rmdir(p);
        }
        d = sbx_docker_free(d);
        curl_global_cleanup();
}

static Suite *make_suite(void) {
        Suite *s = suite_create("docker-client");
        TCase *tc = tcase_create("real-daemon");

        snprintf(run_id, sizeof(run_id), "sbx-test-%d", (int) getpid());
        tcase_add_unchecked_fixture(tc, require_docker, sweep);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_ping_version);
        tcase_add_test(tc, test_lifecycle);
        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_network_none);
        tcase_add_test(tc, test_not_found);
        tcase_add_test(tc, test_conflict);
        tcase_add_test(tc, test_unreachable);
        tcase_add_test(tc, test_oom_kills_not_told);
        tcase_add_test(tc, test_bad_request);
        tcase_add_test(tc, test_binds_create_source);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
