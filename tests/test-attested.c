/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sbx_spec_from_container(): each spec is sent through sbx_container_body(), turned
 * into the inspect answer Docker gives for such a create (docker_create() below,
 * after Docker 20.10's merge of the image's config; tests/docker-inspect-fixtures.h
 * has real answers), parsed, and must come back equal to the normalized original;
 * whatever the label does not prove must give 0. test-attested-docker.c does the
 * same against the real dockerd. */

#include <stdio.h>

#include "attested.h"
#include "config.h"
#include "container-body.h"
#include "fingerprint.h"
#include "json-util.h"
#include "labels.h"
#include "sbx-test.h"
#include "spec-json.h"
#include "verdict.h"

#define IMAGE_ID "sha256:b18f22e185dec3cac8c46d31212181291d559adf090e8b317b509935b7015841"
#define SNAPSHOT_IMAGE_ID "sha256:2ceddd91fd395cbe9007d0222f00eec728f94a2408698a52904f77bc16aad7f4"
#define DEFAULT_IMAGE "xprobe/xagent-sandbox:latest"

/* What docker_create() may vary beyond the body. */
enum {
        EPHEMERAL_AS_EMPTY = 1 << 0,    /* HostPort "0" reported as "" */
};

static SbxSpec *spec_of(const char *json) {
        SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_spec_from_json_string(json, &s, &e) == 0, "%s: %s", json, e.message);
        ck_assert_msg(sbx_spec_finalize(s, DEFAULT_IMAGE, &e) == 0, "%s: %s", json, e.message);
        return s;
}

static void fingerprint(const SbxSpec *s, SbxPythonVersion v, char hex[static SBX_FINGERPRINT_HEX_LEN + 1]) {
        ck_assert_int_eq(sbx_spec_fingerprint(s, v, hex), 0);
}

/* The image the body names: the spec's, or a snapshot's image id (resolve_image()). */
static const char *body_image(const SbxSpec *s) {
        return s->template_type == SBX_TEMPLATE_SNAPSHOT ? SNAPSHOT_IMAGE_ID : s->image;
}

static json_object *body_of(const SbxSpec *s, const char *fp) {
        json_object *b = NULL;

        ck_assert_int_eq(sbx_container_body(&(SbxContainerParams) {
                .name = "user::7", .spec = s, .image = body_image(s), .fingerprint = fp, .uid = 1000,
                .init_volume = "xagent-sandbox-init-0123456789ab", .pids_limit = 256,
                .publish_address = "127.0.0.1",
        }, &b), 0);
        return b;
}

static bool env_key_eq(const char *a, const char *b) {
        size_t la = strcspn(a, "="), lb = strcspn(b, "=");
        return la == lb && strncmp(a, b, la) == 0;
}

/* Docker's merge of Config.Env (daemon/commit.go merge()): the request's entries,
 * then each image entry whose name the request does not set. */
static json_object *merge_env(json_object *body_env, char *const *image_env) {
        json_object *env = json_object_new_array();

        for (size_t i = 0; i < json_object_array_length(body_env); i++)
                ck_assert_int_eq(sbx_json_push(env, json_object_get(json_object_array_get_idx(body_env, i))), 0);
        for (char *const *e = image_env; e && *e; e++) {
                bool found = false;

                for (size_t i = 0; !found && i < json_object_array_length(body_env); i++)
                        found = env_key_eq(*e, json_object_get_string(json_object_array_get_idx(body_env, i)));
                if (!found)
                        ck_assert_int_eq(sbx_json_push(env, json_object_new_string(*e)), 0);
        }
        return env;
}

/* The image's labels under the request's (image_labels may be NULL). */
static json_object *merge_labels(json_object *body_labels, json_object *image_labels) {
        json_object *labels = NULL;

        ck_assert_int_eq(json_object_deep_copy(body_labels, &labels, NULL), 0);
        if (image_labels) {
                json_object_object_foreach(image_labels, k, v)
                        if (!json_object_object_get_ex(labels, k, NULL))
                                ck_assert_int_eq(sbx_json_put(labels, k, json_object_get(v)), 0);
        }
        return labels;
}

/* Inspect's top-level Mounts for HostConfig.Mounts. */
static json_object *mounts_of(json_object *host_mounts) {
        json_object *mounts = json_object_new_array();

        for (size_t i = 0; i < json_object_array_length(host_mounts); i++) {
                json_object *h = json_object_array_get_idx(host_mounts, i), *m = json_object_new_object();
                const char *type = json_object_get_string(json_object_object_get(h, "Type"));
                const char *source = json_object_get_string(json_object_object_get(h, "Source"));
                bool rw = !json_object_get_boolean(json_object_object_get(h, "ReadOnly"));
                _cleanup_free_ char *data = NULL;

                ck_assert_int_eq(sbx_json_push(mounts, m), 0);
                ck_assert_int_eq(sbx_json_put(m, "Type", json_object_new_string(type)), 0);
                if (streq(type, "volume")) {
                        ck_assert_int_ge(asprintf(&data, "/var/lib/docker/volumes/%s/_data", source), 0);
                        ck_assert_int_eq(sbx_json_put(m, "Name", json_object_new_string(source)), 0);
                        ck_assert_int_eq(sbx_json_put(m, "Source", json_object_new_string(data)), 0);
                        ck_assert_int_eq(sbx_json_put(m, "Driver", json_object_new_string("local")), 0);
                } else
                        ck_assert_int_eq(sbx_json_put(m, "Source", json_object_new_string(source)), 0);
                ck_assert_int_eq(sbx_json_put(m, "Destination",
                                              json_object_get(json_object_object_get(h, "Target"))), 0);
                ck_assert_int_eq(sbx_json_put(m, "Mode", json_object_new_string(streq(type, "volume") ? "z" : "")), 0);
                ck_assert_int_eq(sbx_json_put(m, "RW", json_object_new_boolean(rw)), 0);
                ck_assert_int_eq(sbx_json_put(m, "Propagation",
                                              json_object_new_string(streq(type, "bind") ? "rprivate" : "")), 0);
        }
        return mounts;
}

/* The inspect answer of a container created (not started) from body, on an image
 * with image_env and image_labels. */
static json_object *docker_create(json_object *body, const char *image_id, char *const *image_env,
                                  json_object *image_labels, unsigned flags) {
        json_object *inspect = json_object_new_object(), *config = json_object_new_object(), *host = NULL,
                    *state = json_object_new_object(), *settings = json_object_new_object(),
                    *networks = json_object_new_object();
        bool isolated = json_object_get_boolean(json_object_object_get(body, "NetworkDisabled"));

        ck_assert_int_eq(json_object_deep_copy(json_object_object_get(body, "HostConfig"), &host, NULL), 0);
        if (flags & EPHEMERAL_AS_EMPTY) {
                json_object_object_foreach(json_object_object_get(host, "PortBindings"), key, list) {
                        (void) key;
                        for (size_t i = 0; i < json_object_array_length(list); i++) {
                                json_object *b = json_object_array_get_idx(list, i);

                                if (streq(json_object_get_string(json_object_object_get(b, "HostPort")), "0"))
                                        ck_assert_int_eq(sbx_json_put(b, "HostPort", json_object_new_string("")), 0);
                        }
                }
        }

        ck_assert_int_eq(sbx_json_put(inspect, "Id", json_object_new_string(
                        "d748df018f9c5ef6960a08f83dd0da818f61735b44848341a4defd3ded3f8a32")), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "Created", json_object_new_string("2026-11-29T13:57:02.592794018Z")), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "State", state), 0);
        ck_assert_int_eq(sbx_json_put(state, "Status", json_object_new_string("created")), 0);
        ck_assert_int_eq(sbx_json_put(state, "Pid", json_object_new_int(0)), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "Image", json_object_new_string(image_id)), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "Name", json_object_new_string("/xagent_sandbox_user-7-90f03f41d2")), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "HostConfig", host), 0);
        ck_assert_int_eq(sbx_json_put(inspect, "Mounts", mounts_of(json_object_object_get(host, "Mounts"))), 0);

        ck_assert_int_eq(sbx_json_put(inspect, "Config", config), 0);
        ck_assert_int_eq(sbx_json_put(config, "Hostname", json_object_new_string("d748df018f9c")), 0);
        ck_assert_int_eq(sbx_json_put(config, "User", json_object_get(json_object_object_get(body, "User"))), 0);
        ck_assert_int_eq(sbx_json_put(config, "ExposedPorts",
                                      json_object_get(json_object_object_get(body, "ExposedPorts"))), 0);
        ck_assert_int_eq(sbx_json_put(config, "Env", merge_env(json_object_object_get(body, "Env"), image_env)), 0);
        ck_assert_int_eq(sbx_json_put(config, "Image", json_object_get(json_object_object_get(body, "Image"))), 0);
        ck_assert_int_eq(sbx_json_put(config, "WorkingDir",
                                      json_object_get(json_object_object_get(body, "WorkingDir"))), 0);
        ck_assert_int_eq(sbx_json_put(config, "Entrypoint",
                                      json_object_get(json_object_object_get(body, "Entrypoint"))), 0);
        /* omitempty */
        if (isolated)
                ck_assert_int_eq(sbx_json_put(config, "NetworkDisabled", json_object_new_boolean(true)), 0);
        ck_assert_int_eq(sbx_json_put(config, "Labels",
                                      merge_labels(json_object_object_get(body, "Labels"), image_labels)), 0);

        ck_assert_int_eq(sbx_json_put(inspect, "NetworkSettings", settings), 0);
        ck_assert_int_eq(sbx_json_put(settings, "Ports", json_object_new_object()), 0);
        ck_assert_int_eq(sbx_json_put(settings, "Networks", networks), 0);
        ck_assert_int_eq(sbx_json_put(networks, isolated ? "none" : "bridge", json_object_new_object()), 0);
        return inspect;
}

static SbxObserved *observe(json_object *inspect) {
        SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_observed_from_json(inspect, &o, &e) == 0, "%s", e.message);
        return o;
}

/* sbx_spec_from_container() on the container body makes on an image with image_env. */
static int recover(json_object *inspect, char *const *image_env, SbxSpec **ret) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = observe(inspect);

        *ret = NULL;
        return sbx_spec_from_container(o, image_env, ret);
}

/* A spec created with its fingerprint under version v comes back equal, and the
 * verdict of what came back against the container is a match. */
static void round_trip(const char *json, char *const *image_env, SbxPythonVersion v, unsigned flags) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(json), *got = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL, *inspect = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxFingerprints fps;

        fingerprint(s, v, fp);
        body = body_of(s, fp);
        inspect = docker_create(body, s->template_type == SBX_TEMPLATE_SNAPSHOT ? SNAPSHOT_IMAGE_ID : IMAGE_ID,
                                image_env, NULL, flags);
        o = observe(inspect);
        ck_assert_msg(sbx_spec_from_container(o, image_env, &got) == 1, "%s: not recovered", json);
        ck_assert_msg(sbx_spec_equal(got, s), "%s: recovered another spec", json);
        ck_assert_int_eq(sbx_spec_fingerprints(got, &fps), 0);
        ck_assert(sbx_fingerprints_contain(&fps, fp));
        ck_assert_int_eq(sbx_verdict(got, &fps, o, SBX_CONTRACT_VERSION), SBX_VERDICT_MATCH);
        /* what comes back is a spec this service would create */
        ck_assert_int_eq(sbx_spec_check_admissible(got, NULL), 0);
}

#define ENV(...) ((char *const[]) { __VA_ARGS__, NULL })

START_TEST(test_image_templates) {
        /* every default */
        round_trip("{\"image\": \"img:tag\"}", NULL, SBX_PYTHON_DEFAULT, 0);
        round_trip("{}", NULL, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"registry.example:5000/team/img@sha256:0123456789abcdef\"}", NULL,
                   SBX_PYTHON_DEFAULT, 0);
        /* every field set */
        round_trip("{\"image\": \"img:tag\", \"working_dir\": \"/work/dir\", \"cpus\": 4, \"memory\": 2048,"
                   " \"env\": {\"B\": \"2\", \"A\": \"1\", \"EMPTY\": \"\", \"EQ\": \"a=b=c\"},"
                   " \"volumes\": [[\"/h/rw\", \"/g/rw\", \"rw\"], [\"/h/ro\", \"/g/ro\", \"ro\"],"
                   "               [\"/h/ro\", \"/g/ro2\", \"ro\"]],"
                   " \"ports\": [[0, 80], [18080, 81], [18081, 81], [0, 8000]]}", NULL, SBX_PYTHON_DEFAULT, 0);
        /* spelled non-canonically: what comes back is the normalized spec */
        round_trip("{\"image\": \"img\", \"working_dir\": \"//work/./dir/\", \"cpus\": 0, \"memory\": 0,"
                   " \"volumes\": [[\"//h/x/../rw/\", \"/g/./rw\", \"rw\"], [\"/h/rw\", \"/g/rw\", \"rw\"]],"
                   " \"ports\": [[8080, 80], [8080, 80]]}", NULL, SBX_PYTHON_DEFAULT, 0);
        /* the working directory given as the default */
        round_trip("{\"image\": \"img\", \"working_dir\": \"/home\"}", NULL, SBX_PYTHON_DEFAULT, 0);
        /* network isolated */
        round_trip("{\"image\": \"img\", \"network_isolated\": true, \"volumes\": [[\"/h\", \"/g\", \"ro\"]]}",
                   NULL, SBX_PYTHON_DEFAULT, 0);
        /* ephemeral ports reported with HostPort "" */
        round_trip("{\"image\": \"img\", \"ports\": [[0, 80], [0, 81], [9000, 90]]}", NULL, SBX_PYTHON_DEFAULT,
                   EPHEMERAL_AS_EMPTY);
        /* strings repr() escapes or quotes */
        round_trip("{\"image\": \"img\", \"env\": {\"Q1\": \"it's\", \"Q2\": \"say \\\"hi\\\"\","
                   " \"Q3\": \"both ' and \\\"\", \"NL\": \"a\\nb\", \"BS\": \"c:\\\\d\", \"U\": \"caf\\u00e9\","
                   " \"C\": \"\\u0001\", \"Z\": \"\\u200b\"},"
                   " \"volumes\": [[\"/h/with space\", \"/g/caf\\u00e9\", \"rw\"]]}", NULL, SBX_PYTHON_DEFAULT, 0);
}
END_TEST

START_TEST(test_snapshot_templates) {
        /* the container runs the snapshot's image id; the spec holds None */
        round_trip("{\"snapshot\": \"snap-1\"}", NULL, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"snapshot\": \"snap-1\", \"working_dir\": \"/workspace\", \"cpus\": 4, \"memory\": 2048,"
                   " \"env\": {\"PATH\": \"/usr/bin\"}, \"volumes\": [[\"/data/u7\", \"/data/u7\", \"rw\"]],"
                   " \"ports\": [[0, 8000]]}", NULL, SBX_PYTHON_DEFAULT, 0);
        /* a snapshot's image carries the environment of the sandbox it was made of */
        round_trip("{\"snapshot\": \"my snap\", \"env\": {\"PATH\": \"/usr/bin\", \"NEW\": \"1\"}}",
                   ENV("PATH=/usr/bin", "OLD=from-source", "NEW=0"), SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"snapshot\": \"s\"}", ENV("PATH=/usr/bin", "OLD=from-source"), SBX_PYTHON_DEFAULT, 0);
}
END_TEST

START_TEST(test_image_env) {
        char *const image_env[] = { "PATH=/usr/local/bin:/usr/bin", "LANG=C.UTF-8", "HOME=/root", NULL };

        /* no overlap */
        round_trip("{\"image\": \"img\", \"env\": {\"A\": \"1\"}}", image_env, SBX_PYTHON_DEFAULT, 0);
        /* the spec shadows image variables with other values */
        round_trip("{\"image\": \"img\", \"env\": {\"PATH\": \"/opt/bin\", \"HOME\": \"\"}}", image_env,
                   SBX_PYTHON_DEFAULT, 0);
        /* … and with the same values: the label tells whether the spec had them */
        round_trip("{\"image\": \"img\", \"env\": {\"PATH\": \"/usr/local/bin:/usr/bin\"}}", image_env,
                   SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"img\", \"env\": {\"PATH\": \"/usr/local/bin:/usr/bin\", \"LANG\": \"C.UTF-8\","
                   " \"HOME\": \"/root\"}}", image_env, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"img\", \"env\": {\"LANG\": \"C.UTF-8\", \"HOME\": \"/home\", \"X\": \"y\"}}",
                   image_env, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"img\"}", image_env, SBX_PYTHON_DEFAULT, 0);
        /* an image entry without '=' and a repeated one (the later value is Docker's) */
        round_trip("{\"image\": \"img\", \"env\": {\"R\": \"2\"}}", ENV("NOVALUE", "R=1", "R=2"),
                   SBX_PYTHON_DEFAULT, 0);
}
END_TEST

/* Ten variables the image has with the same value: 1024 candidates, one proven. */
START_TEST(test_ten_ambiguous) {
        char *const image_env[] = { "K0=v", "K1=v", "K2=v", "K3=v", "K4=v", "K5=v", "K6=v", "K7=v", "K8=v",
                                    "K9=v", NULL };

        round_trip("{\"image\": \"img\"}", image_env, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"img\", \"env\": {\"K2\": \"v\", \"K3\": \"v\", \"K5\": \"v\", \"K7\": \"v\","
                   " \"K9\": \"v\", \"K0\": \"other\"}}", image_env, SBX_PYTHON_DEFAULT, 0);
        round_trip("{\"image\": \"img\", \"env\": {\"K0\": \"v\", \"K1\": \"v\", \"K2\": \"v\", \"K3\": \"v\","
                   " \"K4\": \"v\", \"K5\": \"v\", \"K6\": \"v\", \"K7\": \"v\", \"K8\": \"v\", \"K9\": \"v\"}}",
                   image_env, SBX_PYTHON_DEFAULT, 0);
}
END_TEST

/* A label xagent wrote on another Python: U+1FA75 is unassigned in Python 3.11's
 * Unicode 14 (repr() escapes it) and printable from 3.12's Unicode 15 on. */
START_TEST(test_python_versions) {
        static const char json[] = "{\"image\": \"img\", \"env\": {\"HEART\": \"\\ud83e\\ude75\"}}";
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(json);
        char a[SBX_FINGERPRINT_HEX_LEN + 1], b[SBX_FINGERPRINT_HEX_LEN + 1];

        fingerprint(s, SBX_PYTHON_3_11, a);
        fingerprint(s, SBX_PYTHON_3_12, b);
        ck_assert_str_ne(a, b);
        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++)
                round_trip(json, NULL, v, 0);
}
END_TEST

/* What a spec's container says, with its label replaced by fp (NULL = removed). */
static json_object *container_of(const char *json, char *const *image_env, const char *fp) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(json);
        _cleanup_(json_object_putp) json_object *body = NULL;
        char own[SBX_FINGERPRINT_HEX_LEN + 1];
        json_object *inspect;

        fingerprint(s, SBX_PYTHON_DEFAULT, own);
        body = body_of(s, own);
        inspect = docker_create(body, IMAGE_ID, image_env, NULL, 0);
        if (!fp || !streq(fp, own)) {
                json_object *labels = json_object_object_get(json_object_object_get(inspect, "Config"), "Labels");

                if (fp)
                        ck_assert_int_eq(sbx_json_put(labels, SBX_LABEL_SPEC_FINGERPRINT,
                                                      json_object_new_string(fp)), 0);
                else
                        json_object_object_del(labels, SBX_LABEL_SPEC_FINGERPRINT);
        }
        return inspect;
}

static const char FULL[] = "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                           " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[0, 80]]}";

static char *fingerprint_of(const char *json) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(json);
        char hex[SBX_FINGERPRINT_HEX_LEN + 1];

        fingerprint(s, SBX_PYTHON_DEFAULT, hex);
        return strdup(hex);
}

/* Nothing proven; what names the case. */
static void assert_not_proven(json_object *inspect, char *const *image_env, const char *what) {
        _cleanup_(sbx_spec_freep) SbxSpec *got = NULL;
        int r = recover(inspect, image_env, &got);

        ck_assert_msg(r == 0, "%s: %d, expected 0 (nothing proven)", what, r);
        ck_assert_ptr_null(got);
}

START_TEST(test_no_label) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(FULL), *got = NULL;
        _cleanup_(json_object_putp) json_object *body = body_of(s, ""), *blank = NULL, *none = NULL, *own = NULL;
        _cleanup_free_ char *fp = fingerprint_of(FULL);

        /* created with nothing to attest: the label is blank */
        blank = docker_create(body, IMAGE_ID, NULL, NULL, 0);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_object_get(
                json_object_object_get(blank, "Config"), "Labels"), SBX_LABEL_SPEC_FINGERPRINT)), "");
        assert_not_proven(blank, NULL, "blank label");
        /* no label at all */
        none = container_of(FULL, NULL, NULL);
        assert_not_proven(none, NULL, "no label");
        /* the same container with its own label is proven */
        own = container_of(FULL, NULL, fp);
        ck_assert_int_eq(recover(own, NULL, &got), 1);
        ck_assert(sbx_spec_equal(got, s));
}
END_TEST

START_TEST(test_other_label) {
        static const char *const others[] = {
                "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"2\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[0, 80]]}",
                "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"ro\"]], \"ports\": [[0, 80]]}",
                "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[8080, 80]]}",
                "{\"image\": \"img:other\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[0, 80]]}",
                "{\"snapshot\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[0, 80]]}",
                "{\"image\": \"img:tag\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]], \"ports\": [[0, 80]]}",
                "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]]}",
                "{\"image\": \"img:tag\", \"working_dir\": \"/w\", \"cpus\": 2, \"memory\": 256,"
                " \"network_isolated\": true, \"env\": {\"A\": \"1\"}, \"volumes\": [[\"/h\", \"/g\", \"rw\"]]}",
        };

        for (size_t i = 0; i < ELEMENTSOF(others); i++) {
                _cleanup_free_ char *fp = fingerprint_of(others[i]);
                _cleanup_(json_object_putp) json_object *inspect = container_of(FULL, NULL, fp);

                assert_not_proven(inspect, NULL, others[i]);
        }
        /* a label that is no fingerprint at all */
        _cleanup_(json_object_putp) json_object *junk = container_of(FULL, NULL, "not-a-fingerprint");
        assert_not_proven(junk, NULL, "junk label");
}
END_TEST

/* `docker update` after the create: the limits no longer are what the label says. */
START_TEST(test_updated_limits) {
        static const struct {
                const char *key;
                int64_t value;          /* < 0: removed */
        } updates[] = {
                { "NanoCpus", INT64_C(4000000000) },
                { "NanoCpus", INT64_C(1000000000) },
                { "NanoCpus", INT64_C(1500000000) },
                { "NanoCpus", 0 },
                { "NanoCpus", -1 },
                { "Memory", INT64_C(512) << 20 },
                { "Memory", (INT64_C(256) << 20) + 1 },
                { "Memory", 0 },
                { "Memory", -1 },
        };
        _cleanup_free_ char *own = fingerprint_of(FULL);

        for (size_t i = 0; i < ELEMENTSOF(updates); i++) {
                _cleanup_(json_object_putp) json_object *inspect = container_of(FULL, NULL, own);
                json_object *host = json_object_object_get(inspect, "HostConfig");

                if (updates[i].value < 0)
                        json_object_object_del(host, updates[i].key);
                else
                        ck_assert_int_eq(sbx_json_put(host, updates[i].key,
                                                      json_object_new_int64(updates[i].value)), 0);
                assert_not_proven(inspect, NULL, updates[i].key);
        }
}
END_TEST

/* Eleven variables the image has with the same value: not attempted, even though
 * the spec that set none of them would be proven. */
START_TEST(test_too_many_ambiguous) {
        char *const eleven[] = { "K0=v", "K1=v", "K2=v", "K3=v", "K4=v", "K5=v", "K6=v", "K7=v", "K8=v",
                                 "K9=v", "K10=v", NULL };
        char *const ten_and_other[] = { "K0=v", "K1=v", "K2=v", "K3=v", "K4=v", "K5=v", "K6=v", "K7=v", "K8=v",
                                        "K9=v", "K10=w", NULL };
        _cleanup_free_ char *own = fingerprint_of("{\"image\": \"img\"}");
        _cleanup_(json_object_putp) json_object *inspect = container_of("{\"image\": \"img\"}", eleven, own),
                                                *shadowed = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *got = NULL;
        _cleanup_free_ char *fp = NULL;

        assert_not_proven(inspect, eleven, "eleven ambiguous");
        /* one of the eleven set by the spec with another value: ten ambiguous, proven */
        fp = fingerprint_of("{\"image\": \"img\", \"env\": {\"K10\": \"v\"}}");
        shadowed = container_of("{\"image\": \"img\", \"env\": {\"K10\": \"v\"}}", ten_and_other, fp);
        ck_assert_int_eq(recover(shadowed, ten_and_other, &got), 1);
        ck_assert_uint_eq(got->n_env, 1);
        ck_assert_str_eq(got->env[0].key, "K10");
        ck_assert_str_eq(got->env[0].value, "v");
}
END_TEST

/* The image's environment must be the one Docker merged in. */
START_TEST(test_wrong_image_env) {
        char *const image_env[] = { "PATH=/usr/bin", NULL };
        _cleanup_free_ char *own = fingerprint_of("{\"image\": \"img\"}");
        _cleanup_(json_object_putp) json_object *inspect = container_of("{\"image\": \"img\"}", image_env, own);
        _cleanup_(sbx_spec_freep) SbxSpec *got = NULL;

        /* without it, PATH looks like the spec's */
        assert_not_proven(inspect, NULL, "no image env");
        assert_not_proven(inspect, ENV("PATH=/bin"), "another image env");
        ck_assert_int_eq(recover(inspect, image_env, &got), 1);
        ck_assert_uint_eq(got->n_env, 0);
}
END_TEST

static void set_label(json_object *inspect, const char *key, const char *value) {
        json_object *labels = json_object_object_get(json_object_object_get(inspect, "Config"), "Labels");

        if (value)
                ck_assert_int_eq(sbx_json_put(labels, key, json_object_new_string(value)), 0);
        else
                json_object_object_del(labels, key);
}

/* The template is read from the labels and Config.Image: changed, nothing is proven. */
START_TEST(test_template_labels) {
        static const char snap[] = "{\"snapshot\": \"snap-1\"}";
        _cleanup_free_ char *own = fingerprint_of(FULL), *own_snap = fingerprint_of(snap);
        static const struct {
                bool snapshot;
                const char *key;
                const char *value;
        } changes[] = {
                { false, SBX_LABEL_TEMPLATE_TYPE, NULL },
                { false, SBX_LABEL_TEMPLATE_TYPE, "" },
                { false, SBX_LABEL_TEMPLATE_TYPE, "snapshot" },
                { false, SBX_LABEL_TEMPLATE_TYPE, "IMAGE" },
                { true, SBX_LABEL_TEMPLATE_TYPE, "image" },
                { true, SBX_LABEL_SNAPSHOT_ID, NULL },
                { true, SBX_LABEL_SNAPSHOT_ID, "" },
                { true, SBX_LABEL_SNAPSHOT_ID, "snap-2" },
        };

        for (size_t i = 0; i < ELEMENTSOF(changes); i++) {
                _cleanup_(json_object_putp) json_object *inspect =
                        changes[i].snapshot ? container_of(snap, NULL, own_snap) : container_of(FULL, NULL, own);

                set_label(inspect, changes[i].key, changes[i].value);
                assert_not_proven(inspect, NULL, changes[i].key);
        }

        /* an image template's container made from a snapshot image inherits its
         * snapshot_id label; the template type says it is not one */
        _cleanup_(json_object_putp) json_object *inherited = container_of(FULL, NULL, own), *retagged = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *got = NULL, *want = spec_of(FULL);
        set_label(inherited, SBX_LABEL_SNAPSHOT_ID, "snap-1");
        ck_assert_int_eq(recover(inherited, NULL, &got), 1);
        ck_assert(sbx_spec_equal(got, want));

        /* Config.Image is what the spec named */
        retagged = container_of(FULL, NULL, own);
        ck_assert_int_eq(sbx_json_put(json_object_object_get(retagged, "Config"), "Image",
                                      json_object_new_string("img:other")), 0);
        assert_not_proven(retagged, NULL, "another Config.Image");
        json_object_object_del(json_object_object_get(retagged, "Config"), "Image");
        assert_not_proven(retagged, NULL, "no Config.Image");
}
END_TEST

/* The first process's volume is no spec volume, and a stale fingerprint label the
 * image carries is overwritten by the container's. */
START_TEST(test_body_extras) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_of(FULL), *got = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL, *inspect = NULL, *image_labels = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *own = fingerprint_of(FULL);

        _cleanup_free_ char *stale = fingerprint_of("{\"image\": \"img:tag\"}");

        /* labels of an image committed by hand from another sandbox */
        image_labels = json_object_new_object();
        ck_assert_int_eq(sbx_json_put(image_labels, SBX_LABEL_SPEC_FINGERPRINT, json_object_new_string(stale)), 0);
        ck_assert_int_eq(sbx_json_put(image_labels, SBX_LABEL_SNAPSHOT_ID, json_object_new_string("old")), 0);
        body = body_of(s, own);
        inspect = docker_create(body, IMAGE_ID, NULL, image_labels, 0);
        o = observe(inspect);
        ck_assert_str_eq(o->init_volume, "xagent-sandbox-init-0123456789ab");
        ck_assert_uint_eq(o->n_volumes, 1);
        ck_assert_int_eq(sbx_spec_from_container(o, NULL, &got), 1);
        ck_assert(sbx_spec_equal(got, s));
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("attested");
        TCase *tc = tcase_create("attested");

        tcase_add_test(tc, test_image_templates);
        tcase_add_test(tc, test_snapshot_templates);
        tcase_add_test(tc, test_image_env);
        tcase_add_test(tc, test_ten_ambiguous);
        tcase_add_test(tc, test_python_versions);
        tcase_add_test(tc, test_no_label);
        tcase_add_test(tc, test_other_label);
        tcase_add_test(tc, test_updated_limits);
        tcase_add_test(tc, test_too_many_ambiguous);
        tcase_add_test(tc, test_wrong_image_env);
        tcase_add_test(tc, test_template_labels);
        tcase_add_test(tc, test_body_extras);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
