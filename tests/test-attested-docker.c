/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sbx_spec_from_container() against the real dockerd (tests/setup-docker.sh): specs
 * sent through sbx_container_body() and Docker's create (never started) come back
 * from the inspect answer and the image's Config.Env. Everything made here carries
 * the label sbx-test.run=<run id> or its name; the teardown, which runs in the
 * parent also when a test failed, removes it all: containers, the committed image,
 * the first process's (empty) volume and the scratch directories. */

#include "json-path.h"
#include "sbx-test.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attested.h"
#include "container-body.h"
#include "docker-container.h"
#include "docker-image.h"
#include "docker.h"
#include "fingerprint.h"
#include "json-util.h"
#include "labels.h"
#include "spec-json.h"

#define TEST_IMAGE "xagent-sandbox-test:latest"
#define RUN_LABEL "sbx-test.run"

static char run_id[64];         /* sbx-attested-<pid>: prefix of every name and the label value */

static SbxDocker *client(void) {
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_new(getenv("DOCKER_HOST"), &d, &e), 0);
        return d;
}

static char *run_name(const char *what) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "%s-%s", run_id, what), 0);
        return s;
}

static char *scratch_dir(const char *what) {
        char *p;

        ck_assert_int_ge(asprintf(&p, "/tmp/%s-%s", run_id, what), 0);
        return p;
}

static SbxSpec *spec_of(const char *fmt, ...) _printf_(1, 2);
static SbxSpec *spec_of(const char *fmt, ...) {
        _cleanup_free_ char *json = NULL;
        SbxError e = SBX_ERROR_NULL;
        SbxSpec *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&json, fmt, ap), 0);
        va_end(ap);
        ck_assert_msg(sbx_spec_from_json_string(json, &s, &e) == 0, "%s: %s", json, e.message);
        ck_assert_msg(sbx_spec_finalize(s, TEST_IMAGE, &e) == 0, "%s: %s", json, e.message);
        return s;
}

/* Creates the container of spec s as the lifecycle does (image: the resolved one),
 * with the run's label added. Returns its id. */
static char *create(SbxDocker *d, const char *what, const SbxSpec *s, const char *image) {
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *n = run_name(what), *volume = run_name("init"), *id = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), 0);
        ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                .name = n, .spec = s, .image = image, .fingerprint = fp, .uid = 1000,
                .init_volume = volume, .pids_limit = 64, .publish_address = "127.0.0.1",
        }, &body), 0);
        ck_assert_int_eq(sbx_json_put(json_object_object_get(body, "Labels"), RUN_LABEL,
                                      json_object_new_string(run_id)), 0);
        ck_assert_msg(sbx_docker_container_create(d, n, body, &id, &e) == 0, "create %s: %s", n, e.message);
        return TAKE_PTR(id);
}

/* The image's Config.Env, NULL-terminated (NULL = none). */
static char **image_env(SbxDocker *d, const char *image) {
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        json_object *env;
        char **l;
        size_t n;

        ck_assert_msg(sbx_docker_image_inspect(d, image, &info, &e) == 0, "%s: %s", image, e.message);
        env = jget(info, "Config", "Env");
        if (!env || !json_object_is_type(env, json_type_array))
                return NULL;
        n = json_object_array_length(env);
        l = calloc(n + 1, sizeof(char *));
        ck_assert_ptr_nonnull(l);
        for (size_t i = 0; i < n; i++)
                ck_assert_ptr_nonnull(l[i] = strdup(json_object_get_string(json_object_array_get_idx(env, i))));
        return l;
}

/* sbx_spec_from_container() on the container as Docker reports it now. */
static int recover(SbxDocker *d, const char *id, SbxObserved **ret_observed, SbxSpec **ret) {
        _cleanup_(json_object_putp) json_object *info = NULL;
        _cleanup_strv_free_ char **env = NULL;
        SbxError e = SBX_ERROR_NULL;
        SbxObserved *o = NULL;
        int r;

        ck_assert_msg(sbx_docker_container_inspect(d, id, &info, &e) == 0, "%s", e.message);
        ck_assert_msg(sbx_observed_from_json(info, &o, &e) == 0, "%s", e.message);
        ck_assert_ptr_nonnull(o->image_digest);
        env = image_env(d, o->image_digest);
        *ret = NULL;
        r = sbx_spec_from_container(o, env, ret);
        *ret_observed = o;
        return r;
}

static void assert_round_trip(SbxDocker *d, const char *what, const SbxSpec *s, const char *image) {
        _cleanup_free_ char *id = create(d, what, s, image);
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *got = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(recover(d, id, &o, &got) == 1, "%s: not recovered", what);
        ck_assert_msg(sbx_spec_equal(got, s), "%s: recovered another spec", what);
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
}

START_TEST(test_image_templates) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *ro = scratch_dir("ro"), *rw = scratch_dir("rw");
        _cleanup_(sbx_spec_freep) SbxSpec *plain = spec_of("{}"), *full = NULL, *isolated = NULL;

        ck_assert_int_eq(mkdir(ro, 0755), 0);
        ck_assert_int_eq(mkdir(rw, 0755), 0);
        full = spec_of("{\"image\": \"%s\", \"working_dir\": \"/work/./dir/\", \"cpus\": 1, \"memory\": 256,"
                       " \"env\": {\"A\": \"1\", \"Q\": \"it's \\\"q\\\" caf\\u00e9\", \"EQ\": \"a=b\", \"E\": \"\"},"
                       " \"volumes\": [[\"%s\", \"/data/ro\", \"ro\"], [\"%s/\", \"/data/rw\", \"rw\"]],"
                       " \"ports\": [[0, 80], [0, 81], [39999, 82], [39998, 82]]}", TEST_IMAGE, ro, rw);
        isolated = spec_of("{\"image\": \"%s\", \"network_isolated\": true, \"memory\": 128,"
                           " \"volumes\": [[\"%s\", \"/ro\", \"ro\"]]}", TEST_IMAGE, ro);

        assert_round_trip(d, "plain", plain, plain->image);
        assert_round_trip(d, "full", full, full->image);
        assert_round_trip(d, "isolated", isolated, isolated->image);
}
END_TEST

/* An image with an environment of its own (made by commit, as a snapshot is): the
 * spec's variables shadowing it with the same and other values, as an image
 * template and as a snapshot template running the image by its id. */
START_TEST(test_image_env) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_(json_object_putp) json_object *base = NULL, *config = NULL, *info = NULL;
        _cleanup_free_ char *base_name = run_name("base"), *repo = run_name("img"), *ref = NULL, *base_id = NULL,
                            *image_id = NULL, *id = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *none = NULL, *same = NULL, *snap = NULL, *got = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_strv_free_ char **env = NULL;
        SbxError e = SBX_ERROR_NULL;
        size_t n;

        base = json_tokener_parse("{\"Image\": \"" TEST_IMAGE "\", \"Labels\": {}}");
        ck_assert_int_eq(sbx_json_put(json_object_object_get(base, "Labels"), RUN_LABEL,
                                      json_object_new_string(run_id)), 0);
        ck_assert_msg(sbx_docker_container_create(d, base_name, base, &base_id, &e) == 0, "%s", e.message);
        config = json_tokener_parse("{\"Env\": [\"PATH=/usr/bin:/bin\", \"LANG=C.UTF-8\", \"HOME=/root\"]}");
        ck_assert_msg(sbx_docker_commit(d, base_id, repo, "t", config, &image_id, &e) == 0, "%s", e.message);
        ck_assert_int_ge(asprintf(&ref, "%s:t", repo), 0);
        env = image_env(d, ref);
        ck_assert_ptr_nonnull(env);
        for (n = 0; env[n]; n++)
                ;
        ck_assert_uint_eq(n, 3);

        none = spec_of("{\"image\": \"%s\", \"env\": {\"X\": \"1\"}}", ref);
        same = spec_of("{\"image\": \"%s\", \"env\": {\"PATH\": \"/usr/bin:/bin\", \"HOME\": \"/home\", \"X\": \"1\"}}",
                       ref);
        snap = spec_of("{\"snapshot\": \"snap-1\", \"env\": {\"LANG\": \"C.UTF-8\"}}");
        assert_round_trip(d, "env-none", none, ref);
        assert_round_trip(d, "env-same", same, ref);

        /* Docker's merge: the request's variables, then the image's others */
        id = create(d, "env-snapshot", snap, image_id);
        ck_assert_int_eq(sbx_docker_container_inspect(d, id, &info, &e), 0);
        ck_assert_str_eq(json_object_to_json_string_ext(jget(info, "Config", "Env"), JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE),
                         "[\"LANG=C.UTF-8\",\"PATH=/usr/bin:/bin\",\"HOME=/root\"]");
        ck_assert_str_eq(jstr(info, "Config", "Image"), image_id);
        ck_assert_int_eq(recover(d, id, &o, &got), 1);
        ck_assert(sbx_spec_equal(got, snap));
        ck_assert_ptr_null(got->image);
        ck_assert_str_eq(got->snapshot_id, "snap-1");
        /* without the image's environment its variables would be the spec's */
        sbx_spec_free(TAKE_PTR(got));
        ck_assert_int_eq(sbx_spec_from_container(o, NULL, &got), 0);
        ck_assert_ptr_null(got);

        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
        ck_assert_int_eq(sbx_docker_image_remove(d, ref, false, &e), 0);
        ck_assert_int_eq(sbx_docker_container_remove(d, base_id, &e), 0);
}
END_TEST

/* `docker update --cpus` after the create: the container no longer is what its
 * label attests. */
START_TEST(test_updated) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of("{}"), *got = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(json_object_putp) json_object *update = json_tokener_parse("{\"NanoCpus\": 500000000}");
        _cleanup_free_ char *id = create(d, "updated", s, s->image), *path = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(recover(d, id, &o, &got), 1);
        sbx_spec_free(TAKE_PTR(got));
        o = sbx_observed_free(o);
        ck_assert_int_ge(asprintf(&path, "/containers/%s/update", id), 0);
        ck_assert_msg(sbx_docker_request(d, "POST", path, update, 0, NULL, &e) == 200, "%s", e.message);
        ck_assert_int_eq(recover(d, id, &o, &got), 0);
        ck_assert_int_eq(o->raw_nano_cpus, 500000000);
        ck_assert_ptr_null(got);
        ck_assert_int_eq(sbx_docker_container_remove(d, id, &e), 0);
}
END_TEST

/* Runs in the parent, before the tests: the daemon and the image must be there. */
static void require_docker(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(json_object_putp) json_object *image = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        d = client();
        ck_assert_msg(sbx_docker_ping(d, &e) == 0, "%s — run tests/setup-docker.sh (as root) first", e.message);
        ck_assert_msg(sbx_docker_image_inspect(d, TEST_IMAGE, &image, &e) == 0,
                      "%s — run tests/setup-docker.sh (as root) to import " TEST_IMAGE, e.message);
}

static void remove_listed(SbxDocker *d, const char *path, bool images) {
        _cleanup_(json_object_putp) json_object *list = NULL;

        if (sbx_docker_request(d, "GET", path, NULL, 0, &list, NULL) < 0 || !list)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                const char *id = jstr(json_object_array_get_idx(list, i), "Id");

                fprintf(stderr, "teardown: removing leftover %s %s\n", images ? "image" : "container", id);
                if (images)
                        (void) sbx_docker_image_remove(d, id, true, NULL);
                else
                        (void) sbx_docker_container_remove(d, id, NULL);
        }
}

/* Runs in the parent after the tests, also when one failed. */
static void sweep(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client();
        _cleanup_free_ char *filters = NULL, *esc = NULL, *path = NULL, *volume = run_name("init"),
                            *volume_esc = NULL, *ro = scratch_dir("ro"), *rw = scratch_dir("rw");

        ck_assert_int_ge(asprintf(&filters, "{\"label\":[\"" RUN_LABEL "=%s\"]}", run_id), 0);
        ck_assert_int_eq(sbx_docker_escape(d, filters, &esc), 0);
        ck_assert_int_ge(asprintf(&path, "/containers/json?all=1&filters=%s", esc), 0);
        remove_listed(d, path, false);
        free(path);
        ck_assert_int_ge(asprintf(&path, "/images/json?filters=%s", esc), 0);
        remove_listed(d, path, true);
        free(path);
        /* the first process's volume, which Docker made at the first create */
        ck_assert_int_eq(sbx_docker_escape(d, volume, &volume_esc), 0);
        ck_assert_int_ge(asprintf(&path, "/volumes/%s", volume_esc), 0);
        (void) sbx_docker_request(d, "DELETE", path, NULL, 0, NULL, NULL);
        (void) rmdir(ro);
        (void) rmdir(rw);
        d = sbx_docker_free(d);
        curl_global_cleanup();
}

static Suite *make_suite(void) {
        Suite *s = suite_create("attested-docker");
        TCase *tc = tcase_create("real-daemon");

        snprintf(run_id, sizeof(run_id), "sbx-attested-%d", (int) getpid());
        tcase_add_unchecked_fixture(tc, require_docker, sweep);
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_image_templates);
        tcase_add_test(tc, test_image_env);
        tcase_add_test(tc, test_updated);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
