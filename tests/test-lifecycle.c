/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The lifecycle operations against a real dockerd (tests/setup-docker.sh starts
 * one and imports xagent-sandbox-test:latest), a real store in a scratch state
 * directory, a real volume tree chowned to an unprivileged owner (nobody).
 *
 * Every sandbox name and snapshot id of a run starts with "lct-<pid>-"; the test
 * case's teardown runs in the parent even when a test failed and removes every
 * managed container whose name label, and every snapshot image whose tag, starts
 * with it, then the run's scratch directory (state directories, volume tree). */

#include "json-path.h"
#include "config.h"
#include "sbx-test.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "container-body.h"
#include "docker-container.h"
#include "docker-image.h"
#include "docker.h"
#include "fingerprint.h"
#include "labels.h"
#include "lifecycle.h"
#include "mount-check.h"
#include "naming.h"
#include "posture.h"
#include "spec-json.h"

#define TEST_IMAGE "xagent-sandbox-test:latest"
#define OWNER_UID 65534         /* nobody */
#define OWNER_GID 65534
#define OTHER_UID 65533
#define PIDS_LIMIT 256
#define MIB 1048576LL

static char run_id[64];                 /* lct-<pid>: prefix of every name of this run */
static char run_dir[PATH_MAX];          /* scratch: state directories and the volume root */
static char vol_root[PATH_MAX];         /* <run_dir>/vols, the policy's only volume root */

static const SbxOwner owner = {
        .uid = OWNER_UID,
        .gid = OWNER_GID,
        .name = "nobody",
        .home = "/nonexistent",
};

static const SbxOwner other = {
        .uid = OTHER_UID,
        .gid = OTHER_UID,
        .name = "other",
        .home = "/nonexistent",
};

/* One test's lifecycle: its own client, store (fresh state directory), locks, policy. */
typedef struct Fixture {
        char state_dir[PATH_MAX];
        SbxDocker *docker;
        SbxStore *store;
        SbxKeyedLockRegistry *locks;
        SbxPolicy *policy;
        SbxVerdictCache *judgements;
        SbxSpecMemo *specs;
        SbxLifecycle l;
} Fixture;

static Fixture F;

static void assert_error(const SbxError *e, SbxErrorKind kind, const char *needle) {
        ck_assert_msg(e->kind == kind, "kind %s, expected %s (%s)",
                      sbx_error_kind_name(e->kind), sbx_error_kind_name(kind), e->message);
        ck_assert_msg(!needle || (e->message && strstr(e->message, needle)), "message \"%s\" lacks \"%s\"",
                      e->message, needle);
}

static SbxDocker *client(const char *host) {
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_new(host, &d, &e), 0);
        return d;
}

/* A Docker-level name of this run in uid's namespace (naming.h). */
static char *name_of(uid_t uid, const char *what) {
        _cleanup_free_ char *plain = NULL;
        char *s;

        ck_assert_int_ge(asprintf(&plain, "%s-%s", run_id, what), 0);
        ck_assert_int_eq(sbx_name_qualify(uid, plain, &s), 0);
        return s;
}

static char *name(const char *what) {
        return name_of(OWNER_UID, what);
}

/* The name as its owner calls it (what messages show). */
static const char *plain_of(const char *qualified) {
        const char *p;

        (void) sbx_name_unqualify(qualified, &p);
        return p;
}

static char *vol(const char *rel) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "%s/%s", vol_root, rel), 0);
        return s;
}

/* A directory below the volume root, owned by the test owner. */
static char *mk_vol(const char *rel) {
        char *p = vol(rel);

        ck_assert_msg(mkdir(p, 0755) == 0 || errno == EEXIST, "mkdir %s: %m", p);
        ck_assert_int_eq(chown(p, OWNER_UID, OWNER_GID), 0);
        return p;
}

static SbxPolicy *policy(void) {
        _cleanup_free_ char *text = NULL;
        SbxPolicy *p = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&text,
                                  "{ \"default_image\": \"" TEST_IMAGE "\",\n"
                                  "  \"allowed_images\": [\"xagent-sandbox-test:*\"],\n"
                                  "  \"volume_roots\": [ { \"path\": \"%s\", \"modes\": [\"ro\", \"rw\"] } ],\n"
                                  "  \"pids_limit\": %d }", vol_root, PIDS_LIMIT), 0);
        ck_assert_msg(sbx_policy_parse(text, &p, &e) == 0, "policy: %s", e.message);
        return p;
}

static SbxStore *store_open(const char *state_dir) {
        SbxStore *s = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_store_open(state_dir, &s, &e) == 0, "store: %s", e.message);
        return s;
}

/* Runs in the child before each test. */
static void fixture_setup(void) {
        ck_assert_int_lt(snprintf(F.state_dir, sizeof F.state_dir, "%s/state-XXXXXX", run_dir),
                         (int) sizeof F.state_dir);
        ck_assert_ptr_nonnull(mkdtemp(F.state_dir));
        F.docker = client(getenv("DOCKER_HOST"));
        F.store = store_open(F.state_dir);
        F.locks = sbx_keyed_lock_registry_new();
        ck_assert_ptr_nonnull(F.locks);
        F.policy = policy();
        F.judgements = sbx_verdict_cache_new();
        F.specs = sbx_spec_memo_new();
        ck_assert_ptr_nonnull(F.specs);
        F.l = (SbxLifecycle) {
                .docker = F.docker,
                .store = F.store,
                .locks = F.locks,
                .policy = F.policy,
                .docker_socket = "/var/run/docker.sock",
                .init_dir = SBX_BUILD_INIT_DIR,
                .service_id = run_id,   /* this run's containers only: others on the dockerd are left alone */
                .judgements = F.judgements,
                .specs = F.specs,
        };
}

static void fixture_teardown(void) {
        ck_assert_int_eq(sbx_keyed_lock_registry_size(F.locks), 0);    /* every lock released */
        F.docker = sbx_docker_free(F.docker);
        F.store = sbx_store_close(F.store);
        F.locks = sbx_keyed_lock_registry_free(F.locks);
        F.policy = sbx_policy_free(F.policy);
        F.judgements = sbx_verdict_cache_free(F.judgements);
        F.specs = sbx_spec_memo_free(F.specs);
}

/* A finalized spec from JSON text. */
static SbxSpec *spec(const char *fmt, ...) _printf_(1, 2);
static SbxSpec *spec(const char *fmt, ...) {
        _cleanup_free_ char *text = NULL;
        SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;
        va_list ap;

        va_start(ap, fmt);
        ck_assert_int_ge(vasprintf(&text, fmt, ap), 0);
        va_end(ap);
        ck_assert_msg(sbx_spec_from_json_string(text, &s, &e) == 0, "spec %s: %s", text, e.message);
        ck_assert_msg(sbx_spec_finalize(s, TEST_IMAGE, &e) == 0, "finalize %s: %s", text, e.message);
        return s;
}

static SbxSandbox *create_ok(SbxLifecycle *l, const char *n, const SbxSpec *s, const SbxOwner *o) {
        SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_lifecycle_create(l, n, s, o, &sb, &e) == 0, "create %s: %s", n, e.message);
        ck_assert_ptr_nonnull(sb);
        return sb;
}

/* Docker's summaries of the managed containers labelled with sandbox name n. */
static json_object *containers_named(SbxDocker *d, const char *n) {
        _cleanup_free_ char *filter = NULL;
        const char *labels[3] = { SBX_LABEL_MANAGED "=true", NULL, NULL };
        json_object *list = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&filter, SBX_LABEL_SANDBOX_NAME "=%s", n), 0);
        labels[1] = filter;
        ck_assert_msg(sbx_docker_container_list(d, labels, &list, &e) == 0, "list: %s", e.message);
        return list;
}

static size_t count_containers(const char *n) {
        _cleanup_(json_object_putp) json_object *list = containers_named(F.docker, n);

        return json_object_array_length(list);
}

/* Docker's inspect of the one container labelled n. */
static json_object *inspect_raw(const char *n) {
        _cleanup_(json_object_putp) json_object *list = containers_named(F.docker, n);
        json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_uint_eq(json_object_array_length(list), 1);
        ck_assert_int_eq(sbx_docker_container_inspect(F.docker, jstr(json_object_array_get_idx(list, 0), "Id"),
                                                      &info, &e), 0);
        return info;
}

static bool has_row(const char *n) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r = sbx_store_get_sandbox(F.store, n, &row, NULL);

        ck_assert_int_ge(r, 0);
        return r > 0;
}

static SbxSandboxState row_state(const char *n) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;

        ck_assert_int_eq(sbx_store_get_sandbox(F.store, n, &row, NULL), 1);
        return row->state;
}

static void assert_no_such_sandbox(int r, SbxError *e, const char *n) {
        ck_assert_int_eq(r, -ENXIO);
        assert_error(e, SBX_ERROR_NO_SUCH_SANDBOX, plain_of(n));
        sbx_error_free(e);
}

/* A managed container as xagent's legacy get_or_create makes it: no spec
 * labels, no owner label; started. */
static char *create_legacy(const char *n) {
        _cleanup_free_ char *cname = NULL, *text = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL;
        SbxError e = SBX_ERROR_NULL;
        char *id = NULL;

        ck_assert_int_eq(sbx_container_name(n, &cname), 0);
        ck_assert_int_ge(asprintf(&text, "{\"Image\":\"" TEST_IMAGE "\",\"Cmd\":[\"tail\",\"-f\",\"/dev/null\"],"
                                  "\"Labels\":{\"" SBX_LABEL_MANAGED "\":\"true\",\"" SBX_LABEL_SANDBOX_NAME
                                  "\":\"%s\"}}", n), 0);
        body = json_tokener_parse(text);
        ck_assert_ptr_nonnull(body);
        ck_assert_msg(sbx_docker_container_create(F.docker, cname, body, &id, &e) == 0, "%s", e.message);
        ck_assert_int_eq(sbx_docker_container_start(F.docker, id, &e), 0);
        return id;
}

/* POST /containers/{id}/update with body (a JSON object text): a real change
 * behind the service's back, as `docker update` makes it. */
static int docker_update(SbxDocker *d, const char *id, const char *body_text) {
        _cleanup_(json_object_putp) json_object *body = json_tokener_parse(body_text), *answer = NULL;
        _cleanup_free_ char *path = NULL;

        if (!body || asprintf(&path, "/containers/%s/update", id) < 0)
                return -ENOMEM;
        return sbx_docker_request(d, "POST", path, body, 0, &answer, NULL);
}

/* A TCP port on 127.0.0.1 that nothing listens on right now. */
static unsigned free_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
        ck_assert_int_eq(close(fd), 0);
        ck_assert_uint_ge(ntohs(sa.sin_port), 1024);
        return ntohs(sa.sin_port);
}

static bool observed_has_port(const SbxObserved *o, int64_t host, int64_t guest) {
        for (size_t i = 0; i < o->n_ports; i++)
                if (o->ports[i].host == host && o->ports[i].guest == guest)
                        return true;
        return false;
}

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void verify(SbxLifecycle *l, const char *n, const SbxSpec *s, SbxVerdict expect, unsigned expect_fields) {
        SbxVerdict v = _SBX_VERDICT_MAX;
        unsigned fields = ~0u;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_lifecycle_verify(l, n, s, &v, &fields, NULL, &e) == 0, "verify %s: %s", n, e.message);
        ck_assert_msg(v == expect, "verdict %s, expected %s", sbx_verdict_to_string(v), sbx_verdict_to_string(expect));
        ck_assert_uint_eq(fields, expect_fields);
}

static SbxSandbox *inspect_ok(SbxLifecycle *l, const char *n) {
        SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_lifecycle_inspect(l, n, &sb, &e) == 0, "inspect %s: %s", n, e.message);
        return sb;
}

/* 1. The hardened body as Docker reports it, and the verdicts. */
START_TEST(test_create_hardened) {
        _cleanup_free_ char *n = name("hardened");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{\"memory\": 256, \"env\": {\"A\": \"1\"}}");
        _cleanup_(sbx_spec_freep) SbxSpec *more_memory = spec("{\"memory\": 512, \"env\": {\"A\": \"1\"}}");
        _cleanup_(sbx_spec_freep) SbxSpec *other_image = spec("{\"image\": \"xagent-sandbox-test:other\","
                                                              "\"memory\": 256, \"env\": {\"A\": \"1\"}}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL, *second = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *owner_label = NULL;
        const char *names[SBX_SPEC_FIELD_COUNT + 1];
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxError e = SBX_ERROR_NULL;
        json_object *hc, *sec;
        bool nnp = false;

        ck_assert_int_eq(sbx_spec_fingerprint(s, SBX_PYTHON_DEFAULT, fp), 0);
        created = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(created->verdict, SBX_VERDICT_MATCH);
        ck_assert(created->hardened);
        ck_assert_int_eq(created->state, SBX_STATE_RUNNING);
        ck_assert_str_eq(created->fingerprint, fp);

        info = inspect_raw(n);
        ck_assert_str_eq(jstr(info, "Id"), created->container_id);
        ck_assert_str_eq(jstr(info, "Config", "User"), "65534:65534");
        ck_assert_str_eq(jstr(info, "Config", "Image"), TEST_IMAGE);
        hc = jget(info, "HostConfig");
        ck_assert_str_eq(json_object_to_json_string_ext(jget(hc, "CapDrop"), JSON_C_TO_STRING_PLAIN), "[\"ALL\"]");
        ck_assert(!json_object_get_boolean(jget(hc, "Privileged")));
        sec = jget(hc, "SecurityOpt");
        for (size_t i = 0; i < json_object_array_length(sec); i++)
                nnp = nnp || streq(json_object_get_string(json_object_array_get_idx(sec, i)), "no-new-privileges:true");
        ck_assert(nnp);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "PidsLimit")), PIDS_LIMIT);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "Memory")), 256 * MIB);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "MemorySwap")), 256 * MIB);
        ck_assert_int_eq(json_object_get_int64(jget(hc, "NanoCpus")), 1000000000);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_MANAGED), "true");
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_SANDBOX_NAME), n);
        ck_assert_int_ge(asprintf(&owner_label, "%d", OWNER_UID), 0);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_OWNER), owner_label);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_SPEC_FINGERPRINT), fp);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_SPEC_VERSION), "1");
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_TEMPLATE_TYPE), "image");

        ck_assert_int_eq(sbx_observed_from_json(info, &o, &e), 0);
        ck_assert_uint_eq(sbx_posture_check(o, &(SbxPostureExpect) {
                .pids_limit = PIDS_LIMIT,
                .publish_address = "127.0.0.1", .network_isolated = false, .memory_bytes = 256 * MIB,
        }), 0);
        ck_assert_str_eq(sbx_observed_get_env(o, "A"), "1");

        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert(sb->hardened);
        ck_assert(sb->has_row);
        ck_assert(sb->owner_valid);
        ck_assert_uint_eq(sb->owner, OWNER_UID);
        ck_assert_str_eq(sb->image, TEST_IMAGE);
        ck_assert_uint_gt(sb->created_us, 0);
        ck_assert(has_row(n));
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_RUNNING);

        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        verify(&F.l, n, more_memory, SBX_VERDICT_MISMATCH, SBX_SPEC_FIELD_MEMORY);
        verify(&F.l, n, other_image, SBX_VERDICT_MISMATCH, SBX_SPEC_FIELD_IMAGE);
        sbx_spec_fields_to_names(SBX_SPEC_FIELD_IMAGE | SBX_SPEC_FIELD_MEMORY, names);
        ck_assert_str_eq(names[0], "image");
        ck_assert_str_eq(names[1], "memory");
        ck_assert_ptr_null(names[2]);

        /* a second create of the name, in any state */
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &second, &e), -EEXIST);
        assert_error(&e, SBX_ERROR_SANDBOX_EXISTS, plain_of(n));
        sbx_error_free(&e);
        ck_assert_ptr_null(second);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 2. `docker update --cpus` behind our back: verify names cpus. */
START_TEST(test_mismatch_after_update) {
        _cleanup_free_ char *n = name("update");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;

        created = create_ok(&F.l, n, s, &owner);
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        ck_assert_int_eq(docker_update(F.docker, created->container_id, "{\"NanoCpus\": 500000000}"), 200);
        info = inspect_raw(n);
        ck_assert_int_eq(json_object_get_int64(jget(info, "HostConfig", "NanoCpus")), 500000000);

        verify(&F.l, n, s, SBX_VERDICT_MISMATCH, SBX_SPEC_FIELD_CPUS);
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MISMATCH);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 3. A legacy container (no spec labels, no owner label) is unverified, owned
 * by uid 0, listed. */
START_TEST(test_unverified_legacy) {
        _cleanup_free_ char *n = name_of(0, "legacy"), *id = NULL, *other_n = NULL;  /* root's: no owner label */
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxSandbox **list = NULL;
        size_t n_list = 0;
        bool found = false;
        SbxError e = SBX_ERROR_NULL;

        id = create_legacy(n);
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_UNVERIFIED);
        ck_assert(sb->owner_valid);
        ck_assert_uint_eq(sb->owner, 0);
        ck_assert(!sb->has_row);
        ck_assert(!sb->hardened);
        ck_assert_str_eq(sb->container_id, id);
        ck_assert_str_eq(sb->fingerprint, "");
        ck_assert_int_eq(sb->state, SBX_STATE_RUNNING);
        verify(&F.l, n, s, SBX_VERDICT_UNVERIFIED, 0);

        ck_assert_msg(sbx_lifecycle_list(&F.l, SBX_STORE_ANY_OWNER, &list, &n_list, &e) == 0, "list: %s", e.message);
        for (size_t i = 0; i < n_list; i++)
                if (streq(list[i]->name, n)) {
                        ck_assert(!found);
                        found = true;
                        ck_assert_int_eq(list[i]->verdict, SBX_VERDICT_UNVERIFIED);
                        ck_assert_uint_eq(list[i]->owner, 0);
                        ck_assert_str_eq(list[i]->container_id, id);
                }
        sbx_sandbox_list_free(list, n_list);
        ck_assert(found);

        /* it is root's: the same name in another owner's namespace is not it */
        other_n = name("legacy");
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, other_n, 0, &e), &e, other_n);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, other_n, &e), 0);
        ck_assert_uint_eq(count_containers(n), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_uint_eq(count_containers(n), 0);
}
END_TEST

/* 4. `//`, trailing slashes, `..` and a duplicate volume: one canonical mount, MATCH. */
START_TEST(test_path_spellings) {
        _cleanup_free_ char *n = name("paths"), *a = mk_vol("a");
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL, *canonical = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        SbxError e = SBX_ERROR_NULL;

        s = spec("{\"working_dir\": \"/home/\", \"volumes\": [[\"/%s/\", \"/data/\", \"rw\"],"
                 "[\"%s\", \"/nested/../data\", \"rw\"]]}", a, a);
        canonical = spec("{\"volumes\": [[\"%s\", \"/data\", \"rw\"]]}", a);
        ck_assert(sbx_spec_equal(s, canonical));

        created = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(created->verdict, SBX_VERDICT_MATCH);
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        verify(&F.l, n, canonical, SBX_VERDICT_MATCH, 0);

        sb = inspect_ok(&F.l, n);
        ck_assert_uint_eq(sb->observed->n_volumes, 1);
        ck_assert_str_eq(sb->observed->volumes[0].host, a);
        ck_assert_str_eq(sb->observed->volumes[0].guest, "/data");
        ck_assert_str_eq(sb->observed->volumes[0].mode, "rw");
        ck_assert_str_eq(sb->observed->working_dir, "/home");
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 5. Host port 0 stays 0 (ephemeral); a fixed port ≥ 1024 is published on the
 * policy's address. */
START_TEST(test_ports) {
        _cleanup_free_ char *n = name("port0"), *n2 = name("portfixed"), *hp = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{\"ports\": [[0, 8080]]}"), *fixed = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *a = NULL, *b = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        unsigned port = free_port();
        SbxError e = SBX_ERROR_NULL;
        json_object *bound;

        a = create_ok(&F.l, n, s, &owner);
        ck_assert_uint_eq(a->observed->n_ports, 1);
        ck_assert(observed_has_port(a->observed, 0, 8080));
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        info = inspect_raw(n);
        bound = json_object_array_get_idx(jget(info, "NetworkSettings", "Ports", "8080/tcp"), 0);
        ck_assert_str_eq(jstr(bound, "HostIp"), "127.0.0.1");
        ck_assert_int_gt(atoi(jstr(bound, "HostPort")), 0);  /* Docker chose one */
        json_object_put(TAKE_PTR(info));

        fixed = spec("{\"ports\": [[%u, 80]]}", port);
        b = create_ok(&F.l, n2, fixed, &owner);
        ck_assert(observed_has_port(b->observed, port, 80));
        ck_assert_uint_eq(b->observed->n_ports, 1);
        ck_assert(b->hardened);
        verify(&F.l, n2, fixed, SBX_VERDICT_MATCH, 0);
        info = inspect_raw(n2);
        bound = json_object_array_get_idx(jget(info, "NetworkSettings", "Ports", "80/tcp"), 0);
        ck_assert_int_ge(asprintf(&hp, "%u", port), 0);
        ck_assert_str_eq(jstr(bound, "HostIp"), "127.0.0.1");
        ck_assert_str_eq(jstr(bound, "HostPort"), hp);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n2, &e), 1);
}
END_TEST

/* 6. Snapshots: blanked attestation, a MATCHing create from one, ownership,
 * SnapshotExists, delete idempotent and refused while in use. */
START_TEST(test_snapshot) {
        _cleanup_free_ char *a = name("snap-src"), *b = name("snap-user"), *c = name_of(OTHER_UID, "snap-other");
        _cleanup_free_ char *other_snap = name_of(OTHER_UID, "snap");
        _cleanup_free_ char *snap = name("snap"), *image_id = NULL, *again = NULL, *ref = NULL, *text = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}"), *from_snap = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sa = NULL, *sb = NULL, *sc = NULL, *insp = NULL;
        _cleanup_(json_object_putp) json_object *image = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxError e = SBX_ERROR_NULL;

        sa = create_ok(&F.l, a, s, &owner);
        ck_assert_msg(sbx_lifecycle_snapshot(&F.l, a, snap, &image_id, &e) == 0,
                      "snapshot: %s", e.message);
        ck_assert(strncmp(image_id, "sha256:", 7) == 0);
        ck_assert_int_eq(sbx_snapshot_image_ref(snap, &ref), 0);
        ck_assert_int_eq(sbx_docker_image_inspect(F.docker, ref, &image, &e), 0);
        ck_assert_str_eq(jstr(image, "Id"), image_id);
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_SPEC_FINGERPRINT), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_SPEC_VERSION), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_OWNER), "");
        /* nobody's sandbox, and it starts as the image it came from did */
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_MANAGED), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_SANDBOX_NAME), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_SERVICE), "");
        ck_assert_str_eq(jstr(image, "Config", "Labels", SBX_LABEL_TEMPLATE_TYPE), "");
        ck_assert_uint_eq(strlen(jstr(image, "Config", "Labels", SBX_LABEL_SNAPSHOT_INTENT)), 32);
        ck_assert_str_eq(json_object_to_json_string_ext(jget(image, "Config", "Entrypoint"), JSON_C_TO_STRING_PLAIN),
                         "[]");
        ck_assert_str_eq(json_object_to_json_string_ext(jget(image, "Config", "Cmd"), JSON_C_TO_STRING_PLAIN |
                                                        JSON_C_TO_STRING_NOSLASHESCAPE), "[\"/bin/sh\"]");  /* the test image's */
        ck_assert_str_eq(jstr(image, "Config", "User"), "0");
        /* the first process's mount is the container's, never the image's */
        ck_assert_ptr_null(jget(image, "Config", "Volumes", SBX_INIT_GUEST_DIR));

        /* a second snapshot of that id, from any sandbox */
        ck_assert_int_eq(sbx_lifecycle_snapshot(&F.l, a, snap, &again, &e), -ENOTEMPTY);
        assert_error(&e, SBX_ERROR_SNAPSHOT_EXISTS, plain_of(snap));
        sbx_error_free(&e);
        ck_assert_ptr_null(again);

        /* the spec names the snapshot as its owner calls it */
        ck_assert_int_ge(asprintf(&text, "{\"snapshot\": \"%s\"}", plain_of(snap)), 0);
        from_snap = spec("%s", text);
        ck_assert_int_eq(sbx_spec_fingerprint(from_snap, SBX_PYTHON_DEFAULT, fp), 0);
        sb = create_ok(&F.l, b, from_snap, &owner);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_str_eq(sb->image, ref);               /* made from the tag, as xagent makes it … */
        ck_assert_str_eq(sb->fingerprint, fp);
        ck_assert(sb->hardened);
        insp = inspect_ok(&F.l, b);
        ck_assert_int_eq(insp->verdict, SBX_VERDICT_MATCH);
        ck_assert_str_eq(insp->observed->image_ref, ref);
        ck_assert_str_eq(insp->observed->image_digest, image_id);      /* … running the image recorded */
        ck_assert_str_eq(sbx_observed_get_label(insp->observed, SBX_LABEL_SNAPSHOT_ID), plain_of(snap));
        ck_assert_str_eq(sbx_observed_get_label(insp->observed, SBX_LABEL_TEMPLATE_TYPE), "snapshot");
        verify(&F.l, b, from_snap, SBX_VERDICT_MATCH, 0);
        verify(&F.l, b, s, SBX_VERDICT_MISMATCH,
               SBX_SPEC_FIELD_TEMPLATE_TYPE | SBX_SPEC_FIELD_IMAGE | SBX_SPEC_FIELD_SNAPSHOT_ID);

        /* another owner's snapshot is as good as absent */
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, c, from_snap, &other, &sc, &e), -ENOENT);
        assert_error(&e, SBX_ERROR_NO_SUCH_SNAPSHOT, plain_of(snap));
        sbx_error_free(&e);
        ck_assert_ptr_null(sc);
        ck_assert_uint_eq(count_containers(c), 0);
        /* the same id in the other's namespace is nothing of the owner's */
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, other_snap, &e), 0);
        json_object_put(TAKE_PTR(image));
        ck_assert_int_eq(sbx_docker_image_inspect(F.docker, ref, &image, &e), 0);

        /* in use by b: Docker refuses, the row stays */
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "is being used by running container");
        fprintf(stderr, "delete_snapshot in use: %s\n", e.message);
        sbx_error_free(&e);
        json_object_put(TAKE_PTR(image));
        ck_assert_int_eq(sbx_docker_image_inspect(F.docker, ref, &image, &e), 0);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, b, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap, &e), 0);
        json_object_put(TAKE_PTR(image));
        ck_assert_int_eq(sbx_docker_image_inspect(F.docker, ref, &image, &e), -ENODATA);
        sbx_error_free(&e);

        /* gone: a create from it is NoSuchSnapshot */
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, b, from_snap, &owner, &sc, &e), -ENOENT);
        assert_error(&e, SBX_ERROR_NO_SUCH_SNAPSHOT, plain_of(snap));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, a, &e), 1);
}
END_TEST

/* A container made with Docker directly from body (JSON text), as xagent or anyone
 * with the socket makes one; started. */
static char *create_direct(const char *cname, const char *text) {
        _cleanup_(json_object_putp) json_object *body = NULL;
        SbxError e = SBX_ERROR_NULL;
        char *id = NULL;

        ck_assert_ptr_nonnull(body = json_tokener_parse(text));
        ck_assert_msg(sbx_docker_container_create(F.docker, cname, body, &id, &e) == 0, "%s", e.message);
        ck_assert_msg(sbx_docker_container_start(F.docker, id, &e) == 0, "start %s: %s", cname, e.message);
        return id;
}

static bool running(const char *id) {
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_container_inspect(F.docker, id, &info, &e), 0);
        return json_object_get_boolean(jget(info, "State", "Running"));
}

/* Whether a list of owner (SBX_STORE_ANY_OWNER: everyone's) shows the container. */
static bool listed(uid_t who, const char *container_id) {
        SbxSandbox **list = NULL;
        size_t n_list = 0;
        bool found = false;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_lifecycle_list(&F.l, who, &list, &n_list, &e) == 0, "list: %s", e.message);
        for (size_t i = 0; i < n_list; i++)
                found = found || streq(list[i]->container_id, container_id);
        sbx_sandbox_list_free(list, n_list);
        return found;
}

/* 6b. A snapshot starts outside the service: xagent's create from it (its command, as
 * root, no entrypoint of ours) and a plain one run. Neither is this service's: the
 * plain one is no managed container at all, xagent's is root's (no service label);
 * a container that inherited an older snapshot's service label with a blank owner is
 * nobody's — not listed, not found by name, not removed by the reconciliation. */
START_TEST(test_snapshot_startable) {
        _cleanup_free_ char *a = name("start-src"), *snap = name("start-snap"), *image_id = NULL, *ref = NULL;
        _cleanup_free_ char *xname = name_of(0, "start-xagent"), *oldname = name_of(0, "start-old"), *body = NULL;
        _cleanup_free_ char *xcname = NULL, *plain_cname = NULL, *old_cname = NULL;
        _cleanup_free_ char *xid = NULL, *plain_id = NULL, *old_id = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sa = NULL, *sx = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        sa = create_ok(&F.l, a, s, &owner);
        ck_assert_msg(sbx_lifecycle_snapshot(&F.l, a, snap, &image_id, &e) == 0, "snapshot: %s", e.message);
        ck_assert_int_eq(sbx_snapshot_image_ref(snap, &ref), 0);

        /* xagent's create from a snapshot template */
        ck_assert_int_eq(sbx_container_name(xname, &xcname), 0);
        ck_assert_int_ge(asprintf(&body, "{\"Image\":\"%s\",\"Cmd\":[\"tail\",\"-f\",\"/dev/null\"],"
                                  "\"User\":\"root\",\"Labels\":{\"" SBX_LABEL_MANAGED "\":\"true\",\""
                                  SBX_LABEL_SANDBOX_NAME "\":\"%s\",\"" SBX_LABEL_TEMPLATE_TYPE "\":\"snapshot\","
                                  "\"" SBX_LABEL_SPEC_FINGERPRINT "\":\"\",\"" SBX_LABEL_SPEC_VERSION "\":\"\"}}",
                                  ref, xname), 0);
        xid = create_direct(xcname, body);
        ck_assert(running(xid));
        sx = inspect_ok(&F.l, xname);
        ck_assert_uint_eq(sx->owner, 0);
        ck_assert(sx->owner_valid);
        ck_assert_str_eq(sx->container_id, xid);

        /* a plain run from the tag: its own image's command */
        ck_assert_int_ge(asprintf(&plain_cname, "%s-plain", run_id), 0);
        free(body);
        ck_assert_int_ge(asprintf(&body, "{\"Image\":\"%s\",\"Cmd\":[\"sleep\",\"60\"]}", ref), 0);
        plain_id = create_direct(plain_cname, body);
        ck_assert(running(plain_id));
        ck_assert_int_eq(sbx_docker_container_inspect(F.docker, plain_id, &info, &e), 0);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_MANAGED), "");
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_SERVICE), "");
        ck_assert_str_eq(jstr(info, "Config", "User"), "0");
        ck_assert(!listed(SBX_STORE_ANY_OWNER, plain_id));

        /* one from an older snapshot: its service label, a blank owner */
        ck_assert_int_eq(sbx_container_name(oldname, &old_cname), 0);
        free(body);
        ck_assert_int_ge(asprintf(&body, "{\"Image\":\"" TEST_IMAGE "\",\"Cmd\":[\"sleep\",\"60\"],\"Labels\":{\""
                                  SBX_LABEL_MANAGED "\":\"true\",\"" SBX_LABEL_SANDBOX_NAME "\":\"%s\",\""
                                  SBX_LABEL_SERVICE "\":\"%s\",\"" SBX_LABEL_OWNER "\":\"\"}}", oldname, run_id), 0);
        old_id = create_direct(old_cname, body);
        ck_assert(!listed(SBX_STORE_ANY_OWNER, old_id));
        ck_assert(listed(SBX_STORE_ANY_OWNER, xid));
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, oldname, 0, &e), &e, oldname);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, oldname, &e), 0);
        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.removed + st.adopted, 0);
        ck_assert(running(old_id) && running(xid) && running(plain_id));

        ck_assert_int_eq(sbx_docker_container_remove(F.docker, old_id, &e), 0);
        ck_assert_int_eq(sbx_docker_container_remove(F.docker, plain_id, &e), 0);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, xname, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, a, &e), 1);
}
END_TEST

static bool image_exists(const char *id) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_docker_image_inspect(F.docker, id, &j, &e);

        sbx_error_free(&e);
        return r >= 0;
}

/* POST /images/{from}/tag: the snapshot's tag moved to another image, as anyone with
 * the socket (or xagent's snapshot of the same id) can move it. */
static void retag(const char *from, const char *ref) {
        _cleanup_free_ char *path = NULL, *repo = NULL, *esc_from = NULL, *esc_tag = NULL;
        const char *colon = strrchr(ref, ':');

        ck_assert_ptr_nonnull(colon);
        ck_assert_ptr_nonnull(repo = strndup(ref, (size_t) (colon - ref)));
        ck_assert_int_eq(sbx_docker_escape(F.docker, from, &esc_from), 0);
        ck_assert_int_eq(sbx_docker_escape(F.docker, colon + 1, &esc_tag), 0);
        ck_assert_int_ge(asprintf(&path, "/images/%s/tag?repo=%s&tag=%s", esc_from, repo, esc_tag), 0);
        ck_assert_int_eq(sbx_docker_request(F.docker, "POST", path, NULL, 0, NULL, NULL), 201);
}

static void seam_move_tag(SbxLifecycle *l, const char *container_name, void *userdata) {
        retag(TEST_IMAGE, userdata);
}

/* 6c. The tag moved since the snapshot was made: the sandbox is made from the image id
 * recorded (Config.Image is then that id). Moved after the create looked at it (and
 * before Docker resolved it), what Docker made would run another image: refused,
 * RuntimeConflict naming image, nothing left. */
START_TEST(test_snapshot_tag_moved) {
        _cleanup_free_ char *a = name("moved-src"), *b = name("moved-user"), *c = name("moved-race");
        _cleanup_free_ char *snap = name("moved-snap"), *image_id = NULL, *ref = NULL, *text = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}"), *from_snap = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sa = NULL, *sb = NULL, *sc = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        SbxError e = SBX_ERROR_NULL;

        sa = create_ok(&F.l, a, s, &owner);
        ck_assert_msg(sbx_lifecycle_snapshot(&F.l, a, snap, &image_id, &e) == 0, "snapshot: %s", e.message);
        ck_assert_int_eq(sbx_snapshot_image_ref(snap, &ref), 0);
        ck_assert_int_ge(asprintf(&text, "{\"snapshot\": \"%s\"}", plain_of(snap)), 0);
        from_snap = spec("%s", text);

        /* moved in the meantime: between the create's look at the tag and Docker's */
        F.l.seam_before_create = seam_move_tag;
        F.l.seam_userdata = ref;
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, c, from_snap, &owner, &sc, &e), -EADDRINUSE);
        F.l.seam_before_create = NULL;
        assert_error(&e, SBX_ERROR_RUNTIME_CONFLICT, "mismatched fields: image");
        sbx_error_free(&e);
        ck_assert_ptr_null(sc);
        ck_assert_uint_eq(count_containers(c), 0);
        ck_assert(!has_row(c));
        ck_assert_int_eq(sbx_store_get_intent(F.store, c, &in, NULL), 0);

        /* moved before: made from the image id recorded */
        sb = create_ok(&F.l, b, from_snap, &owner);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_str_eq(sb->image, image_id);
        ck_assert_str_eq(sb->observed->image_digest, image_id);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, b, &e), 1);

        /* deleted by the id recorded: the image the tag named then */
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap, &e), 1);
        ck_assert(!image_exists(image_id));
        ck_assert_int_eq(sbx_docker_image_remove(F.docker, ref, false, &e), 0);        /* the moved tag only */
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, a, &e), 1);
}
END_TEST

/* An interrupted snapshot as a crash leaves it: the intent, and the image its commit
 * made with the intent's token (unless commit is false). Returns the image id or NULL. */
static char *interrupted_snapshot(const char *container_id, const char *source, const char *snap_id,
                                  const char *token, bool abandoned, bool commit) {
        _cleanup_free_ char *tag = NULL, *ref = NULL;
        _cleanup_(json_object_putp) json_object *config = NULL;
        SbxError e = SBX_ERROR_NULL;
        char *image_id = NULL;

        ck_assert_int_eq(sbx_snapshot_image_tag(snap_id, &tag), 0);
        ck_assert_int_eq(sbx_snapshot_image_ref(snap_id, &ref), 0);
        ck_assert_int_eq(sbx_store_put_snapshot_intent(F.store, &(SbxSnapshotIntentRow) {
                .id = (char *) snap_id, .owner_uid = OWNER_UID, .source_sandbox = (char *) source,
                .image_tag = ref, .token = (char *) token, .abandoned = abandoned }, NULL), 0);
        if (!commit)
                return NULL;
        ck_assert_int_eq(sbx_labels_build_commit_config(NULL, token, &config), 0);
        ck_assert_msg(sbx_docker_commit(F.docker, container_id, SBX_SNAPSHOT_REPOSITORY, tag, config, &image_id, &e) == 0,
                      "commit: %s", e.message);
        return image_id;
}

static bool has_snapshot_intent(const char *id) {
        _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *in = NULL;
        int r = sbx_store_get_snapshot_intent(F.store, id, &in, NULL);

        ck_assert_int_ge(r, 0);
        return r > 0;
}

/* 6d. Interrupted snapshots (a crash after the commit, or a commit whose answer was
 * lost): the reconciliation records the complete image of one whose caller was never
 * answered, removes the image of one whose caller was told it failed, drops one that
 * made nothing; a snapshot or delete of the id settles its intent first. */
START_TEST(test_snapshot_interrupted) {
        _cleanup_free_ char *a = name("intr-src"), *kept = name("intr-kept"), *failed = name("intr-failed");
        _cleanup_free_ char *none = name("intr-none"), *del = name("intr-del"), *again = name("intr-again");
        _cleanup_free_ char *kept_img = NULL, *failed_img = NULL, *del_img = NULL, *again_img = NULL, *img = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sa = NULL;
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *row = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        sa = create_ok(&F.l, a, s, &owner);
        kept_img = interrupted_snapshot(sa->container_id, a, kept, "00000000000000000000000000000001", false, true);
        failed_img = interrupted_snapshot(sa->container_id, a, failed, "00000000000000000000000000000002", true, true);
        (void) interrupted_snapshot(sa->container_id, a, none, "00000000000000000000000000000003", false, false);
        ck_assert(image_exists(kept_img) && image_exists(failed_img));

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.snapshots, 3);
        ck_assert_int_eq(sbx_store_get_snapshot(F.store, kept, &row, NULL), 1);
        ck_assert_str_eq(row->image_id, kept_img);
        ck_assert_uint_eq(row->owner_uid, OWNER_UID);
        ck_assert_str_eq(row->source_sandbox, a);
        ck_assert(!image_exists(failed_img));
        row = sbx_snapshot_row_free(row);
        ck_assert_int_eq(sbx_store_get_snapshot(F.store, failed, &row, NULL), 0);
        ck_assert(!has_snapshot_intent(kept) && !has_snapshot_intent(failed) && !has_snapshot_intent(none));
        /* recorded: the id is taken; the others are free */
        ck_assert_int_eq(sbx_lifecycle_snapshot(&F.l, a, kept, &img, &e), -ENOTEMPTY);
        assert_error(&e, SBX_ERROR_SNAPSHOT_EXISTS, plain_of(kept));
        sbx_error_free(&e);
        ck_assert_msg(sbx_lifecycle_snapshot(&F.l, a, failed, &img, &e) == 0, "%s", e.message);
        img = mfree(img);
        ck_assert_msg(sbx_lifecycle_snapshot(&F.l, a, none, &img, &e) == 0, "%s", e.message);
        img = mfree(img);

        /* a delete of an interrupted one: its image goes */
        del_img = interrupted_snapshot(sa->container_id, a, del, "00000000000000000000000000000004", false, true);
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, del, &e), 1);
        ck_assert(!image_exists(del_img));
        ck_assert(!has_snapshot_intent(del));
        /* a snapshot of an interrupted one's id: recorded first, so it exists */
        again_img = interrupted_snapshot(sa->container_id, a, again, "00000000000000000000000000000005", false, true);
        ck_assert_int_eq(sbx_lifecycle_snapshot(&F.l, a, again, &img, &e), -ENOTEMPTY);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_store_get_snapshot(F.store, again, &row, NULL), 1);
        ck_assert_str_eq(row->image_id, again_img);

        for (const char *const *id = (const char *const[]) { kept, failed, none, again, NULL }; *id; id++)
                ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, *id, &e), 1);
        ck_assert(!image_exists(kept_img) && !image_exists(again_img));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, a, &e), 1);
}
END_TEST

/* 7. A real start failure (the host port is taken): Docker's error, and nothing left. */
START_TEST(test_start_failure) {
        _cleanup_free_ char *n = name("startfail");
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(closep) int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof sa), 0);
        ck_assert_int_eq(listen(fd, 1), 0);
        ck_assert_int_eq(getsockname(fd, (struct sockaddr *) &sa, &len), 0);
        ck_assert_uint_ge(ntohs(sa.sin_port), 1024);

        s = spec("{\"ports\": [[%u, 80]]}", ntohs(sa.sin_port));
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &sb, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "address already in use");
        fprintf(stderr, "start failure: %s\n", e.message);
        sbx_error_free(&e);
        ck_assert_ptr_null(sb);
        ck_assert_uint_eq(count_containers(n), 0);
        ck_assert(!has_row(n));
}
END_TEST

/* The seam: a real daemon-side change between start and publish verification. */
static void seam_update(SbxLifecycle *l, const char *container_id, void *userdata) {
        int *status = userdata;

        *status = docker_update(l->docker, container_id, "{\"NanoCpus\": 500000000}");
}

/* 8. Publish verification catches it: RuntimeConflict naming the field, nothing left. */
START_TEST(test_publish_failure) {
        _cleanup_free_ char *n = name("publishfail");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;
        int status = 0;

        F.l.seam_after_start = seam_update;
        F.l.seam_userdata = &status;
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &sb, &e), -EADDRINUSE);
        ck_assert_int_eq(status, 200);
        assert_error(&e, SBX_ERROR_RUNTIME_CONFLICT, "mismatched fields: cpus");
        sbx_error_free(&e);
        ck_assert_ptr_null(sb);
        ck_assert_uint_eq(count_containers(n), 0);
        ck_assert(!has_row(n));

        /* without the seam the same create succeeds: the name is free again */
        F.l.seam_after_start = NULL;
        sb = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* Between the volume check and dockerd's mount: the checked directory moves aside
 * and a symlink to another directory takes its place. */
typedef struct Swap {
        const char *path, *aside, *target;
} Swap;

static void seam_swap(SbxLifecycle *l, const char *container_id, void *userdata) {
        const Swap *w = userdata;

        ck_assert_int_eq(rename(w->path, w->aside), 0);
        ck_assert_int_eq(symlink(w->target, w->path), 0);
}

static void unswap(const Swap *w) {
        ck_assert_int_eq(unlink(w->path), 0);
        ck_assert_int_eq(rename(w->aside, w->path), 0);
}

/* 8b. What dockerd mounted is compared with what was checked: a swap after the
 * check is caught after the start, and the container removed; the sandbox that
 * passes shows its own directory; a later swap is seen by inspect. */
START_TEST(test_swap_between_check_and_mount) {
        _cleanup_free_ char *n = name("swap"), *ws = mk_vol("swap-ws"), *elsewhere = mk_vol("swap-other"), *aside = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;
        Swap w;

        ck_assert_int_ge(asprintf(&aside, "%s.aside", ws), 0);
        w = (Swap) { .path = ws, .aside = aside, .target = elsewhere };
        s = spec("{\"volumes\": [[\"%s\", \"/w\", \"rw\"]]}", ws);

        F.l.seam_before_start = seam_swap;
        F.l.seam_userdata = &w;
        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &sb, &e), -EADDRINUSE);
        F.l.seam_before_start = NULL;
        assert_error(&e, SBX_ERROR_RUNTIME_CONFLICT, "'/w' in the sandbox is not the checked");
        ck_assert_msg(strstr(e.message, elsewhere), "%s", e.message);
        sbx_error_free(&e);
        ck_assert_uint_eq(count_containers(n), 0);
        ck_assert(!has_row(n));
        unswap(&w);

        sb = create_ok(&F.l, n, s, &owner);
        ck_assert(sb->hardened);
        sb = sbx_sandbox_free(sb);
        /* swapped while it runs: what is mounted is still the checked directory, but
         * the path names another one now, and inspect and start say so */
        ck_assert_int_eq(rename(ws, aside), 0);
        ck_assert_int_eq(symlink(elsewhere, ws), 0);
        sb = inspect_ok(&F.l, n);
        ck_assert(!sb->hardened);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MISMATCH);
        sb = sbx_sandbox_free(sb);
        verify(&F.l, n, s, SBX_VERDICT_MISMATCH, SBX_SPEC_FIELD_VOLUMES);
        unswap(&w);
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        sb = inspect_ok(&F.l, n);
        ck_assert(sb->hardened);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

#define N_RACERS 16

typedef struct Racer {
        pthread_barrier_t *barrier;
        const char *name;
        const SbxSpec *spec;
        SbxPolicy *policy;              /* NULL: the fixture's */
        int r;
        SbxErrorKind kind;
        char *message;
} Racer;

static void *race(void *userdata) {
        Racer *racer = userdata;
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(sbx_store_closep) SbxStore *store = NULL;
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_spec_memo_freep) SbxSpecMemo *specs = sbx_spec_memo_new();
        SbxError e = SBX_ERROR_NULL;
        SbxLifecycle l;

        racer->r = specs ? sbx_docker_new(getenv("DOCKER_HOST"), &d, &e) : -ENOMEM;
        if (racer->r >= 0)
                racer->r = sbx_store_open(F.state_dir, &store, &e);
        pthread_barrier_wait(racer->barrier);
        if (racer->r >= 0) {
                l = (SbxLifecycle) { .docker = d, .store = store, .locks = F.locks,
                                     .policy = racer->policy ?: F.policy, .docker_socket = "/var/run/docker.sock",
                                     .init_dir = SBX_BUILD_INIT_DIR, .service_id = run_id, .specs = specs };
                racer->r = sbx_lifecycle_create(&l, racer->name, racer->spec, &owner, &sb, &e);
        }
        racer->kind = e.kind;
        racer->message = TAKE_PTR(e.message);
        return NULL;
}

/* 9. 16 threads create one name at once: one wins, 15 get SandboxExists. */
START_TEST(test_concurrent_create) {
        _cleanup_free_ char *n = name("race");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        pthread_barrier_t barrier;
        pthread_t threads[N_RACERS];
        Racer racers[N_RACERS];
        unsigned ok = 0, exists = 0;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(pthread_barrier_init(&barrier, NULL, N_RACERS), 0);
        for (size_t i = 0; i < N_RACERS; i++) {
                racers[i] = (Racer) { .barrier = &barrier, .name = n, .spec = s };
                ck_assert_int_eq(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
        }
        for (size_t i = 0; i < N_RACERS; i++)
                ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        pthread_barrier_destroy(&barrier);

        for (size_t i = 0; i < N_RACERS; i++) {
                if (racers[i].r == 0)
                        ok++;
                else if (racers[i].r == -EEXIST && racers[i].kind == SBX_ERROR_SANDBOX_EXISTS)
                        exists++;
                else
                        fprintf(stderr, "racer %zu: %d %s: %s\n", i, racers[i].r,
                                sbx_error_kind_name(racers[i].kind), racers[i].message);
                free(racers[i].message);
        }
        ck_assert_uint_eq(ok, 1);
        ck_assert_uint_eq(exists, N_RACERS - 1);
        ck_assert_uint_eq(count_containers(n), 1);
        ck_assert(has_row(n));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 9b. Six threads create six names of one owner at once, with a limit of two: the
 * count and the intent are one transaction, so exactly two are made. */
START_TEST(test_concurrent_creates_limited) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_policy_freep) SbxPolicy *p = NULL;
        _cleanup_free_ char *text = NULL;
        char *names[6] = {};
        pthread_barrier_t barrier;
        pthread_t threads[6];
        Racer racers[6];
        unsigned ok = 0, refused = 0;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_ge(asprintf(&text, "{ \"default_image\": \"" TEST_IMAGE "\", \"allowed_images\": "
                                  "[\"xagent-sandbox-test:*\"], \"max_sandboxes_per_user\": 2 }"), 0);
        ck_assert_int_eq(sbx_policy_parse(text, &p, NULL), 0);
        ck_assert_int_eq(pthread_barrier_init(&barrier, NULL, 6), 0);
        for (size_t i = 0; i < 6; i++) {
                char what[16];

                snprintf(what, sizeof what, "limited-%zu", i);
                names[i] = name(what);
                racers[i] = (Racer) { .barrier = &barrier, .name = names[i], .spec = s, .policy = p };
                ck_assert_int_eq(pthread_create(&threads[i], NULL, race, &racers[i]), 0);
        }
        for (size_t i = 0; i < 6; i++)
                ck_assert_int_eq(pthread_join(threads[i], NULL), 0);
        pthread_barrier_destroy(&barrier);
        for (size_t i = 0; i < 6; i++) {
                if (racers[i].r == 0)
                        ok++;
                else if (racers[i].kind == SBX_ERROR_POLICY_VIOLATION &&
                         strstr(racers[i].message, "max_sandboxes_per_user"))
                        refused++;
                else
                        fprintf(stderr, "racer %zu: %d %s: %s\n", i, racers[i].r,
                                sbx_error_kind_name(racers[i].kind), racers[i].message);
                free(racers[i].message);
        }
        ck_assert_uint_eq(ok, 2);
        ck_assert_uint_eq(refused, 4);
        for (size_t i = 0; i < 6; i++) {
                ck_assert_uint_eq(count_containers(names[i]), racers[i].r == 0);
                ck_assert_int_ge(sbx_lifecycle_delete(&F.l, names[i], &e), 0);
                free(names[i]);
        }
}
END_TEST

/* 10. Stop and start: idempotent, the timeout honoured, the row converges. */
START_TEST(test_stop_start) {
        _cleanup_free_ char *n = name("stopstart");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        double t0, dt;

        created = create_ok(&F.l, n, s, &owner);

        /* the first process ends on SIGTERM: a stop does not wait out its timeout */
        t0 = now_s();
        ck_assert_msg(sbx_lifecycle_stop(&F.l, n, 30, &e) == 1, "stop: %s", e.message);
        dt = now_s() - t0;
        ck_assert_msg(dt < 5, "stop with timeout 30 took %.2f s", dt);
        ck_assert_int_eq(json_object_get_int(jget(jget(info = inspect_raw(n), "State"), "ExitCode")), 0);
        json_object_put(TAKE_PTR(info));
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);
        info = inspect_raw(n);
        ck_assert_str_eq(jstr(info, "State", "Status"), "exited");
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 0);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->state, SBX_STATE_STOPPED);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        sb = sbx_sandbox_free(sb);

        ck_assert_msg(sbx_lifecycle_start(&F.l, n, &e) == 1, "start: %s", e.message);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_RUNNING);
        ck_assert_int_eq(sbx_lifecycle_start(&F.l, n, &e), 0);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_RUNNING);
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->state, SBX_STATE_RUNNING);
        sb = sbx_sandbox_free(sb);

        /* timeout 0: killed at once */
        t0 = now_s();
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 1);
        dt = now_s() - t0;
        ck_assert_msg(dt < 5, "stop with timeout 0 took %.2f s", dt);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);

        /* a row changed behind our back converges on the next call */
        ck_assert_int_eq(sbx_store_update_sandbox_state(F.store, n, SBX_SANDBOX_RUNNING, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 0);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 11. Delete idempotent; a missing name; the wrong owner changes nothing. */
START_TEST(test_delete_missing_owner) {
        _cleanup_free_ char *n = name("del"), *missing = name("missing"), *snap_id = name("del-snap"), *img = NULL;
        _cleanup_free_ char *other_n = NULL, *other_snap = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *snap = NULL;
        SbxVerdict v;
        unsigned fields;
        SbxError e = SBX_ERROR_NULL;

        assert_no_such_sandbox(sbx_lifecycle_start(&F.l, missing, &e), &e, missing);
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, missing, 0, &e), &e, missing);
        assert_no_such_sandbox(sbx_lifecycle_inspect(&F.l, missing, &sb, &e), &e, missing);
        ck_assert_ptr_null(sb);
        assert_no_such_sandbox(sbx_lifecycle_verify(&F.l, missing, s, &v, &fields, NULL, &e), &e, missing);
        assert_no_such_sandbox(sbx_lifecycle_snapshot(&F.l, missing, snap_id, &img, &e),
                               &e, missing);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, missing, &e), 0);
        ck_assert_int_eq(sbx_lifecycle_delete_snapshot(&F.l, snap_id, &e), 0);

        /* the same name in another owner's namespace is not this sandbox: nothing of it
         * can be touched or learnt through that name */
        created = create_ok(&F.l, n, s, &owner);
        other_n = name_of(OTHER_UID, "del");
        other_snap = name_of(OTHER_UID, "del-snap");
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, other_n, 0, &e), &e, other_n);
        assert_no_such_sandbox(sbx_lifecycle_start(&F.l, other_n, &e), &e, other_n);
        assert_no_such_sandbox(sbx_lifecycle_inspect(&F.l, other_n, &sb, &e), &e, other_n);
        assert_no_such_sandbox(sbx_lifecycle_snapshot(&F.l, other_n, other_snap, &img, &e), &e, other_n);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, other_n, &e), 0);
        ck_assert_ptr_null(img);
        ck_assert_int_eq(sbx_store_get_snapshot(F.store, snap_id, &snap, &e), 0);
        info = inspect_raw(n);
        ck_assert_str_eq(jstr(info, "State", "Status"), "running");
        ck_assert_str_eq(jstr(info, "Id"), created->container_id);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_RUNNING);

        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 1);
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_uint_eq(count_containers(n), 0);
        ck_assert(!has_row(n));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 0);
        assert_no_such_sandbox(sbx_lifecycle_inspect(&F.l, n, &sb, &e), &e, n);

        /* a row whose container is gone is still deleted (1) */
        created = sbx_sandbox_free(created);
        created = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(sbx_docker_container_remove(F.docker, created->container_id, &e), 0);
        ck_assert(has_row(n));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert(!has_row(n));
}
END_TEST

static void assert_create_refused(const char *n, const SbxSpec *s, int r, SbxErrorKind kind, const char *needle) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &sb, &e), r);
        assert_error(&e, kind, needle);
        sbx_error_free(&e);
        ck_assert_ptr_null(sb);
        ck_assert_uint_eq(count_containers(n), 0);
        ck_assert(!has_row(n));
}

/* 12. Conflicts and policy refusals create nothing. */
START_TEST(test_refusals) {
        _cleanup_free_ char *n = name("refused"), *c = mk_vol("c"), *outside = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *vols = NULL, *ports = NULL, *out = NULL, *cpus = NULL, *mem = NULL;
        unsigned p1 = free_port(), p2 = p1 == 65535 ? p1 - 1 : p1 + 1;
        char tmpl[PATH_MAX];

        vols = spec("{\"volumes\": [[\"%s\", \"/g1\", \"rw\"], [\"%s\", \"/g2\", \"rw\"]]}", c, c);
        assert_create_refused(n, vols, -EADDRINUSE, SBX_ERROR_RUNTIME_CONFLICT, "host path");

        ports = spec("{\"ports\": [[%u, 80], [%u, 80]]}", p1, p2);
        assert_create_refused(n, ports, -EADDRINUSE, SBX_ERROR_RUNTIME_CONFLICT, "guest port 80");

        /* a directory the owner owns, but outside the policy's roots */
        ck_assert_int_lt(snprintf(tmpl, sizeof tmpl, "%s/outside-XXXXXX", run_dir), (int) sizeof tmpl);
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        ck_assert_int_eq(chown(tmpl, OWNER_UID, OWNER_GID), 0);
        outside = strdup(tmpl);
        out = spec("{\"volumes\": [[\"%s\", \"/data\", \"rw\"]]}", outside);
        assert_create_refused(n, out, -EPERM, SBX_ERROR_POLICY_VIOLATION, outside);

        cpus = spec("{\"cpus\": %d}", SBX_POLICY_DEFAULT_MAX_CPUS + 1);
        assert_create_refused(n, cpus, -EPERM, SBX_ERROR_POLICY_VIOLATION, "max_cpus");
        mem = spec("{\"memory\": %d}", SBX_POLICY_DEFAULT_MAX_MEMORY_MIB + 1);
        assert_create_refused(n, mem, -EPERM, SBX_ERROR_POLICY_VIOLATION, "max_memory_mib");
}
END_TEST

/* 13. An image that is not on this host: BackendError naming it. */
START_TEST(test_missing_image) {
        _cleanup_free_ char *n = name("noimage"), *image = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;

        ck_assert_int_ge(asprintf(&image, "xagent-sandbox-test:absent-%s", run_id), 0);
        s = spec("{\"image\": \"%s\"}", image);
        assert_create_refused(n, s, -EPROTO, SBX_ERROR_BACKEND_ERROR, image);
}
END_TEST

/* 14. Docker unreachable: BackendUnavailable, no crash. */
START_TEST(test_unreachable) {
        _cleanup_free_ char *n = name("unreachable");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_docker_freep) SbxDocker *d = client("unix:///tmp/nonexistent.sock");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxLifecycle l = F.l;
        SbxSandbox **list = NULL;
        size_t n_list = 0;
        SbxVerdict v;
        unsigned fields;
        SbxError e = SBX_ERROR_NULL;

        l.docker = d;
        ck_assert_int_eq(sbx_lifecycle_create(&l, n, s, &owner, &sb, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "nonexistent.sock");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_inspect(&l, n, &sb, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, NULL);
        sbx_error_free(&e);
        ck_assert_ptr_null(sb);
        ck_assert_int_eq(sbx_lifecycle_list(&l, SBX_STORE_ANY_OWNER, &list, &n_list, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, NULL);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_verify(&l, n, s, &v, &fields, NULL, &e), -EHOSTDOWN);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_stop(&l, n, 0, &e), -EHOSTDOWN);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_delete(&l, n, &e), -EHOSTDOWN);
        sbx_error_free(&e);
        ck_assert(!has_row(n));
}
END_TEST

/* 15. Reconcile drops the row whose container is gone; a container without an owner
 * label (xagent's own) and without a row is left alone; a row that says running for
 * a stopped container is corrected. */
START_TEST(test_reconcile) {
        _cleanup_free_ char *gone = name("rec-gone"), *kept = name("rec-kept"), *legacy = name_of(0, "rec-legacy");
        _cleanup_free_ char *legacy_id = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *a = NULL, *b = NULL, *sb = NULL;
        SbxError e = SBX_ERROR_NULL;

        SbxReconcileStats st;

        a = create_ok(&F.l, gone, s, &owner);
        b = create_ok(&F.l, kept, s, &owner);
        legacy_id = create_legacy(legacy);
        ck_assert_int_eq(sbx_docker_container_remove(F.docker, a->container_id, &e), 0);
        ck_assert(has_row(gone));
        ck_assert_int_eq(sbx_docker_container_stop(F.docker, b->container_id, 0, &e), 0);
        ck_assert_int_eq(row_state(kept), SBX_SANDBOX_RUNNING);

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.dropped, 1);
        ck_assert_uint_eq(st.repaired, 1);
        ck_assert_uint_eq(st.removed, 0);
        ck_assert_uint_eq(st.adopted, 0);
        ck_assert_int_eq(row_state(kept), SBX_SANDBOX_STOPPED);
        ck_assert(!has_row(gone));
        ck_assert(has_row(kept));
        ck_assert(!has_row(legacy));
        sb = inspect_ok(&F.l, legacy);
        ck_assert_str_eq(sb->container_id, legacy_id);
        ck_assert_int_eq(sb->state, SBX_STATE_RUNNING);
        sb = sbx_sandbox_free(sb);
        sb = inspect_ok(&F.l, kept);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.dropped + st.repaired + st.removed + st.adopted + st.settled, 0);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, kept, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, legacy, &e), 1);
}
END_TEST

/* The Docker calls each operation makes (sbx_docker_n_requests): a create looks for
 * the name once, a by-name operation goes by the id its row records, never through a list that makes dockerd look at
 * every container; a list is one call once the judgements are cached, and an event
 * (here: forgetting the container, as a die event does) makes it inspect again. */
static unsigned long calls_since(unsigned long *mark) {
        unsigned long now = sbx_docker_n_requests(F.docker), d = now - *mark;

        *mark = now;
        return d;
}

START_TEST(test_docker_calls) {
        _cleanup_free_ char *n = name("calls");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxSandbox **list = NULL;
        size_t n_list = 0;
        SbxError e = SBX_ERROR_NULL;
        unsigned long mark, lists;

        lists = sbx_docker_n_lists(F.docker);
        sb = create_ok(&F.l, n, s, &owner);
        /* One list: the owner's, for both spellings of the name (the init's mount
         * report may take more than one look, so the other calls vary). */
        ck_assert_uint_eq(sbx_docker_n_lists(F.docker) - lists, 1);
        mark = sbx_docker_n_requests(F.docker);
        sb = sbx_sandbox_free(sb);
        sb = inspect_ok(&F.l, n);
        ck_assert_uint_eq(calls_since(&mark), 1);               /* GET /containers/{id}/json */
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        ck_assert_uint_eq(calls_since(&mark), 1);
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 1);
        ck_assert_uint_eq(calls_since(&mark), 2);               /* inspect, stop */
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 0);
        ck_assert_uint_eq(calls_since(&mark), 1);               /* inspect: stopped already */

        /* Judgements are of observations (the event stream followed, here by fiat). */
        ck_assert_ptr_nonnull(F.l.observations = sbx_observation_cache_new());
        sbx_observation_cache_connected(F.l.observations);
        F.policy->observation_max_age = 600;
        ck_assert_int_eq(sbx_lifecycle_list(&F.l, OWNER_UID, &list, &n_list, &e), 0);
        sbx_sandbox_list_free(list, n_list);
        ck_assert_uint_ge(calls_since(&mark), 1);
        ck_assert_int_eq(sbx_lifecycle_list(&F.l, OWNER_UID, &list, &n_list, &e), 0);
        ck_assert_uint_ge(n_list, 1);
        for (size_t i = 0; i < n_list; i++)
                if (streq(list[i]->name, n)) {
                        ck_assert_int_eq(list[i]->verdict, SBX_VERDICT_MATCH);
                        ck_assert_int_eq(list[i]->state, SBX_STATE_STOPPED);
                        ck_assert_str_eq(list[i]->status, "exited");
                        ck_assert_str_eq(list[i]->image, TEST_IMAGE);
                        ck_assert(list[i]->hardened && list[i]->has_row);
                }
        sbx_sandbox_list_free(list, n_list);
        ck_assert_uint_eq(calls_since(&mark), 1);               /* the list alone */
        sbx_observation_cache_event(F.l.observations, sb->container_id, "die");        /* as events.c does */
        sbx_verdict_cache_forget(F.judgements, sb->container_id);
        ck_assert_int_eq(sbx_lifecycle_list(&F.l, OWNER_UID, &list, &n_list, &e), 0);
        sbx_sandbox_list_free(list, n_list);
        ck_assert_uint_eq(calls_since(&mark), 2);               /* the list, and that one inspected */
        /* a refresh drops the observation: the next list's judgement is of Docker's
         * answer then, not of the one before */
        sbx_observation_cache_drop(F.l.observations, sb->container_id);
        ck_assert_int_eq(sbx_lifecycle_list(&F.l, OWNER_UID, &list, &n_list, &e), 0);
        sbx_sandbox_list_free(list, n_list);
        ck_assert_uint_eq(calls_since(&mark), 2);
        F.l.observations = sbx_observation_cache_free(F.l.observations);

        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_uint_eq(calls_since(&mark), 1);               /* DELETE by the row's id */
}
END_TEST

/* The seam for test_create_one_pass: waits, on a client of its own (its requests are
 * not the create's), until the init's mount report is in the container's log, so that
 * the create finds it at its first look; then marks the create's request count. */
typedef struct OnePass {
        unsigned long after_start;
        int waited;
} OnePass;

static void seam_report_logged(SbxLifecycle *l, const char *container_id, void *userdata) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client(sbx_docker_host(l->docker));
        _cleanup_(sbx_mount_table_done) SbxMountTable t = {};
        SbxError e = SBX_ERROR_NULL;
        OnePass *p = userdata;

        p->waited = sbx_container_mounts(d, container_id, 0, SBX_MOUNT_REPORT_TIMEOUT_MS, &t, &e);
        sbx_error_free(&e);
        p->after_start = sbx_docker_n_requests(l->docker);
}

/* One pass per create: after the start, the mount report is read once (one GET of the
 * container's logs, here the report being there at the first look) and passed on to
 * the reply's judgement — one inspect and the rename besides, nothing else; and the
 * create's CreatedAt is the one stored, which every later inspect reports. */
START_TEST(test_create_one_pass) {
        _cleanup_free_ char *n = name("onepass"), *a = mk_vol("onepass");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{\"volumes\": [[\"%s\", \"/data\", \"rw\"]]}", a);
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        SbxError e = SBX_ERROR_NULL;
        unsigned long after;
        OnePass p = {};

        F.l.seam_after_start = seam_report_logged;
        F.l.seam_userdata = &p;
        created = create_ok(&F.l, n, s, &owner);
        F.l.seam_after_start = NULL;
        after = sbx_docker_n_requests(F.docker) - p.after_start;
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);        /* before any assertion can fail */

        ck_assert_int_eq(p.waited, 0);
        /* GET /containers/{id}/logs, GET /containers/{id}/json, POST /containers/{id}/rename */
        ck_assert_uint_eq(after, 3);
        ck_assert_int_eq(created->verdict, SBX_VERDICT_MATCH);
        ck_assert(created->hardened);
        ck_assert_uint_gt(created->created_us, 0);
        ck_assert_uint_eq(sb->created_us, created->created_us);
}
END_TEST

/* 15b. Lost rows (a truncated store): a container whose spec is proven by its label
 * is recorded again and matches; one whose label proves nothing (changed behind
 * the service's back), and one still under its provisional name, are removed. */
START_TEST(test_reconcile_lost_rows) {
        _cleanup_free_ char *adopt = name("lost-adopt"), *bogus = name("lost-bogus"), *pend = name("lost-pending");
        _cleanup_free_ char *cname = NULL, *pname = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{\"env\": {\"A\": \"1\"}, \"cpus\": 2}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *a = NULL, *b = NULL, *c = NULL, *sb = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        a = create_ok(&F.l, adopt, s, &owner);
        b = create_ok(&F.l, bogus, s, &owner);
        c = create_ok(&F.l, pend, s, &owner);
        ck_assert_int_eq(docker_update(F.docker, b->container_id, "{\"NanoCpus\": 500000000}"), 200);
        ck_assert_int_eq(sbx_container_name(pend, &cname), 0);
        ck_assert_int_ge(asprintf(&pname, "%s.pending", cname), 0);
        ck_assert_int_eq(sbx_docker_container_rename(F.docker, c->container_id, pname, &e), 0);
        for (const char *const *n = (const char *const[]) { adopt, bogus, pend, NULL }; *n; n++)
                ck_assert_int_eq(sbx_store_delete_sandbox(F.store, *n, NULL), 1);

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_ge(st.owned, 3);
        ck_assert_uint_eq(st.adopted, 1);
        ck_assert_uint_eq(st.removed, 2);
        ck_assert(has_row(adopt));
        ck_assert_int_eq(row_state(adopt), SBX_SANDBOX_RUNNING);
        sb = inspect_ok(&F.l, adopt);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_str_eq(sb->container_id, a->container_id);
        ck_assert_uint_eq(count_containers(bogus), 0);
        ck_assert_uint_eq(count_containers(pend), 0);
        ck_assert(!has_row(bogus) && !has_row(pend));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, adopt, &e), 1);
}
END_TEST

/* Docker gone between the container's creation and its start: the create fails with
 * BackendUnavailable, its intent stays, and the provisional container is removed by
 * the next reconciliation (or create of the name) once Docker answers. */
static void seam_lose_docker(SbxLifecycle *l, const char *container_id, void *userdata) {
        *(SbxDocker **) userdata = l->docker;
        l->docker = client("unix:///nonexistent.sock");
}

START_TEST(test_interrupted_create_settled) {
        _cleanup_free_ char *n = name("interrupted"), *m = name("interrupted2");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        SbxDocker *real = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        for (int round = 0; round < 2; round++) {
                const char *which = round == 0 ? n : m;

                F.l.seam_before_start = seam_lose_docker;
                F.l.seam_userdata = &real;
                ck_assert_int_eq(sbx_lifecycle_create(&F.l, which, s, &owner, &sb, &e), -EHOSTDOWN);
                F.l.seam_before_start = NULL;
                sbx_docker_free(F.l.docker);
                F.l.docker = real;
                assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, NULL);
                sbx_error_free(&e);
                ck_assert_uint_eq(count_containers(which), 1);          /* left, pending */
                ck_assert_int_eq(sbx_store_get_intent(F.store, which, &in, NULL), 1);
                ck_assert_msg(strstr(in->container_name, ".pending"), "%s", in->container_name);
                in = sbx_intent_row_free(in);
                ck_assert(!has_row(which));
        }

        /* the first: settled by a create of its name, which then succeeds */
        sb = create_ok(&F.l, n, s, &owner);
        ck_assert_uint_eq(count_containers(n), 1);
        ck_assert_int_eq(sbx_store_get_intent(F.store, n, &in, NULL), 0);
        sb = sbx_sandbox_free(sb);
        /* the second: by the reconciliation */
        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.settled, 1);
        ck_assert_uint_eq(count_containers(m), 0);
        ck_assert_int_eq(sbx_store_get_intent(F.store, m, &in, NULL), 0);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* A crash after the rename (verified) and before the row: the reconciliation records
 * the sandbox from its intent, and it matches. */
START_TEST(test_verified_create_recorded_from_intent) {
        _cleanup_free_ char *n = name("renamed");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        sb = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(sbx_store_get_sandbox(F.store, n, &row, NULL), 1);
        /* back to the moment before the row: the intent, no row */
        ck_assert_int_eq(sbx_store_put_intent(F.store, &(SbxIntentRow) {
                .name = row->name, .owner_uid = row->owner_uid, .owner_gid = row->owner_gid,
                .container_name = (char *) "xagent_sandbox_nothing.pending", .fingerprint = row->fingerprint,
                .spec_json = row->spec_json,
        }, 0, NULL), 0);
        ck_assert_int_eq(sbx_store_delete_sandbox(F.store, n, NULL), 1);

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.settled, 1);
        ck_assert_uint_eq(st.removed + st.adopted, 0);
        ck_assert(has_row(n));
        ck_assert_int_eq(sbx_store_get_intent(F.store, n, &in, NULL), 0);
        sb = sbx_sandbox_free(sb);
        sb = inspect_ok(&F.l, n);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* A name with spaces, '=', ',', quotes, '/' and non-ASCII: the label keeps it
 * whole, the container name is xagent's safe form, lookups find it. */
START_TEST(test_odd_name) {
        _cleanup_free_ char *n = name("ünï côde=a,b \"q\"/x::1"), *cname = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxError e = SBX_ERROR_NULL;

        created = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(sbx_container_name(n, &cname), 0);
        info = inspect_raw(n);
        ck_assert_str_eq(jstr(info, "Name") + 1, cname);
        ck_assert_str_eq(jstr(info, "Config", "Labels", SBX_LABEL_SANDBOX_NAME), n);
        sb = inspect_ok(&F.l, n);
        ck_assert_str_eq(sb->name, n);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        verify(&F.l, n, s, SBX_VERDICT_MATCH, 0);
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_uint_eq(count_containers(n), 0);
}
END_TEST

/* 16. A container labelled with an owner's Docker-level name but without that owner's
 * label (xagent's own sandbox literally named "~65534:x", whose container name is
 * the one the owner's "x" derives) is nobody's: listed to no one, not root's "x", and
 * the owner's create of the name works, its container taking another name. */
START_TEST(test_nobodys_name) {
        _cleanup_free_ char *n = name("nobodys"), *foreign = NULL, *cname = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL, *again = NULL;
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        foreign = create_legacy(n);             /* name label n, no owner label */
        ck_assert(!listed(SBX_STORE_ANY_OWNER, foreign));
        ck_assert(!listed(0, foreign));
        ck_assert(!listed(OWNER_UID, foreign));
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, plain_of(n), 0, &e), &e, plain_of(n));

        sb = create_ok(&F.l, n, s, &owner);
        ck_assert_str_ne(sb->container_id, foreign);
        ck_assert_int_eq(sb->verdict, SBX_VERDICT_MATCH);
        ck_assert_int_eq(sbx_container_name(n, &cname), 0);
        ck_assert_int_eq(sbx_docker_container_inspect(F.docker, sb->container_id, &info, &e), 0);
        ck_assert_msg(strncmp(jstr(info, "Name") + 1, cname, strlen(cname)) == 0 &&
                      !streq(jstr(info, "Name") + 1, cname), "%s", jstr(info, "Name"));
        again = inspect_ok(&F.l, n);
        ck_assert_str_eq(again->container_id, sb->container_id);
        ck_assert(listed(OWNER_UID, sb->container_id));

        /* nobody's is not this service's to adopt or remove */
        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(count_containers(n), 2);
        ck_assert(has_row(n));
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        ck_assert_uint_eq(count_containers(n), 1);
        ck_assert_int_eq(sbx_docker_container_remove(F.docker, foreign, &e), 0);
}
END_TEST

/* 5. A create Docker carried out after the create had given up and its intent was
 * settled: a container of this service under the provisional name, no intent. It is
 * no sandbox (not listed, not found) and the next create of the name removes it and
 * succeeds. */
START_TEST(test_late_pending_removed) {
        _cleanup_free_ char *n = name("late"), *cname = NULL, *pname = NULL, *late = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *a = NULL, *b = NULL;
        _cleanup_(json_object_putp) json_object *gone = NULL;
        SbxError e = SBX_ERROR_NULL;

        a = create_ok(&F.l, n, s, &owner);
        late = strdup(a->container_id);
        ck_assert_int_eq(sbx_container_name(n, &cname), 0);
        ck_assert_int_ge(asprintf(&pname, "%s.pending", cname), 0);
        ck_assert_int_eq(sbx_docker_container_stop(F.docker, late, 0, &e), 0);
        ck_assert_int_eq(sbx_docker_container_rename(F.docker, late, pname, &e), 0);
        ck_assert_int_eq(sbx_store_delete_sandbox(F.store, n, NULL), 1);

        ck_assert(!listed(OWNER_UID, late));
        assert_no_such_sandbox(sbx_lifecycle_stop(&F.l, n, 0, &e), &e, n);
        b = create_ok(&F.l, n, s, &owner);
        ck_assert_str_ne(b->container_id, late);
        ck_assert_int_lt(sbx_docker_container_inspect(F.docker, late, &gone, &e), 0);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, NULL);
        sbx_error_free(&e);
        ck_assert_uint_eq(count_containers(n), 1);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 5. An intent with nothing there before the create's deadline: Docker may still make
 * its container, so the intent is kept (a create of the name is BackendUnavailable,
 * the reconciliation counts it in flight); after the deadline it is settled. */
START_TEST(test_intent_in_flight) {
        _cleanup_free_ char *n = name("inflight"), *cname = NULL, *pname = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_container_name(n, &cname), 0);
        ck_assert_int_ge(asprintf(&pname, "%s.pending", cname), 0);
        for (int round = 0; round < 2; round++) {
                /* round 0: just written; round 1: older than docker_timeout */
                int64_t created = ((int64_t) time(NULL) - (round == 0 ? 0 : F.policy->docker_timeout + 1)) * 1000000;

                ck_assert_int_ge(sbx_store_put_intent(F.store, &(SbxIntentRow) {
                        .name = n, .owner_uid = OWNER_UID, .owner_gid = OWNER_GID, .container_name = pname,
                        .fingerprint = (char *) "f", .spec_json = (char *) "{}", .created_us = created,
                }, 0, NULL), 0);
                ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
                ck_assert_uint_eq(st.in_flight, round == 0);
                ck_assert_int_eq(sbx_store_get_intent(F.store, n, &in, NULL), round == 0);
                in = sbx_intent_row_free(in);
                if (round == 0) {
                        ck_assert_int_eq(sbx_lifecycle_create(&F.l, n, s, &owner, &sb, &e), -EHOSTDOWN);
                        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "may still be carried out");
                        sbx_error_free(&e);
                        ck_assert_int_eq(sbx_store_get_intent(F.store, n, &in, NULL), 1);
                        in = sbx_intent_row_free(in);
                        ck_assert_int_eq(sbx_store_delete_intent(F.store, n, NULL), 1);
                }
        }
        sb = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* 15. Adoption within max_sandboxes_per_user: of two proven containers without rows
 * of an owner whose limit leaves one place, one is recorded again and the other
 * stays as it is, listed unverified without a row (not this service's to remove);
 * an ensure that reuses a proven container without a row records it only within
 * the limit too. */
START_TEST(test_adoption_within_limit) {
        _cleanup_free_ char *a = name("quota-a"), *b = name("quota-b"), *c = name("quota-c");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sa = NULL, *sb = NULL, *sc = NULL, *ens = NULL;
        SbxEnsureOutcome outcome;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        sa = create_ok(&F.l, a, s, &owner);
        sb = create_ok(&F.l, b, s, &owner);
        sc = create_ok(&F.l, c, s, &owner);
        ck_assert_int_eq(sbx_store_delete_sandbox(F.store, b, NULL), 1);
        ck_assert_int_eq(sbx_store_delete_sandbox(F.store, c, NULL), 1);
        F.policy->max_sandboxes_per_user = 2;

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.adopted, 1);
        ck_assert_uint_eq(st.over_limit, 1);
        ck_assert_uint_eq(st.removed, 0);
        ck_assert_int_eq(sbx_store_count_sandboxes(F.store, OWNER_UID, NULL), 2);
        ck_assert(has_row(b) != has_row(c));
        ck_assert_uint_eq(count_containers(b) + count_containers(c), 2);
        ck_assert(listed(OWNER_UID, has_row(b) ? sc->container_id : sb->container_id));

        /* the one left: an ensure reuses it, but records it only within the limit */
        {
                const char *left = has_row(b) ? c : b;

                ck_assert_msg(sbx_lifecycle_ensure(&F.l, left, s, &owner, &(SbxEnsureOptions) {}, &ens, &outcome,
                                                   &e) == 0, "ensure: %s", e.message);
                ck_assert_int_eq(outcome, SBX_ENSURE_REUSED);
                ck_assert(!has_row(left));
                ck_assert_int_eq(sbx_store_count_sandboxes(F.store, OWNER_UID, NULL), 2);
                ens = sbx_sandbox_free(ens);
                F.policy->max_sandboxes_per_user = 3;
                ck_assert_msg(sbx_lifecycle_ensure(&F.l, left, s, &owner, &(SbxEnsureOptions) {}, &ens, &outcome,
                                                   &e) == 0, "ensure: %s", e.message);
                ck_assert(has_row(left));
                ck_assert_int_eq(ens->verdict, SBX_VERDICT_MATCH);
        }
        for (const char *const *n = (const char *const[]) { a, b, c, NULL }; *n; n++)
                ck_assert_int_eq(sbx_lifecycle_delete(&F.l, *n, &e), 1);
}
END_TEST

/* 15. A proven container without a row that lacks the posture now (here its pids
 * limit raised behind the service's back, which no spec field shows): recorded
 * again, but stopped in its row (so its owner's processes stay out, and a start
 * refuses it), and inspected hardened false. */
START_TEST(test_adopted_unhardened) {
        _cleanup_free_ char *n = name("unhardened");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL, *sb = NULL;
        SbxReconcileStats st;
        SbxError e = SBX_ERROR_NULL;

        created = create_ok(&F.l, n, s, &owner);
        ck_assert_int_eq(docker_update(F.docker, created->container_id, "{\"PidsLimit\": 4096}"), 200);
        ck_assert_int_eq(sbx_store_delete_sandbox(F.store, n, NULL), 1);

        ck_assert_int_eq(sbx_lifecycle_reconcile(&F.l, &st, &e), 0);
        ck_assert_uint_eq(st.adopted, 1);
        ck_assert(has_row(n));
        ck_assert_int_eq(row_state(n), SBX_SANDBOX_STOPPED);
        sb = inspect_ok(&F.l, n);
        ck_assert(!sb->hardened);
        ck_assert_int_eq(sb->state, SBX_STATE_RUNNING);
        ck_assert_int_eq(sbx_lifecycle_start(&F.l, n, &e), -ENOTRECOVERABLE);
        assert_error(&e, SBX_ERROR_RECOVERY_REQUIRED, "posture");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
}
END_TEST

/* Runs in the parent, before the tests: the daemon, the image, the scratch tree. */
static void require_docker(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(json_object_putp) json_object *image = NULL;
        SbxError e = SBX_ERROR_NULL;
        char tmpl[] = "/tmp/sbx-lct-XXXXXX";

        ck_assert_int_eq(geteuid(), 0);         /* chowns the volume tree */
        ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
        d = client(getenv("DOCKER_HOST"));
        ck_assert_msg(sbx_docker_ping(d, &e) == 0, "%s — run tests/setup-docker.sh (as root) first", e.message);
        ck_assert_msg(sbx_docker_image_inspect(d, TEST_IMAGE, &image, &e) == 0,
                      "%s — run tests/setup-docker.sh (as root) to import " TEST_IMAGE, e.message);

        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        ck_assert_ptr_nonnull(realpath(tmpl, run_dir));
        ck_assert_int_eq(chmod(run_dir, 0755), 0);
        ck_assert_int_lt(snprintf(vol_root, sizeof vol_root, "%s/vols", run_dir), (int) sizeof vol_root);
        ck_assert_int_eq(mkdir(vol_root, 0755), 0);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

/* Every managed container whose name label starts with the run's prefix. */
static bool of_this_run(const char *s) {
        size_t plen = strlen(run_id);

        return s && strncmp(s, run_id, plen) == 0 && s[plen] == '-';
}

/* Every container of this run: its name label (in any owner's namespace), its service
 * label, or its own name (those made with Docker directly) says so. */
static void sweep_containers(SbxDocker *d) {
        _cleanup_(json_object_putp) json_object *list = NULL;

        if (sbx_docker_container_list(d, NULL, &list, NULL) < 0)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i);
                const char *label = jstr(c, "Labels", SBX_LABEL_SANDBOX_NAME), *plain = NULL;
                const char *cname = json_object_get_string(json_object_array_get_idx(jget(c, "Names"), 0));

                if (label)
                        (void) sbx_name_unqualify(label, &plain);
                if (of_this_run(plain) || streq_ptr(jstr(c, "Labels", SBX_LABEL_SERVICE), run_id) ||
                    (cname && of_this_run(cname + 1))) {
                        fprintf(stderr, "teardown: removing leftover container %s\n", cname ?: "?");
                        (void) sbx_docker_container_remove(d, jstr(c, "Id"), NULL);
                }
        }
}

/* Every snapshot tag of the run, removed by the tag (a moved one may name the test
 * image itself): an image goes with its last tag, unless a container uses it. */
static void sweep_images(SbxDocker *d) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *filters = NULL, *esc = NULL, *path = NULL;

        if (asprintf(&filters, "{\"reference\":[\"" SBX_SNAPSHOT_REPOSITORY ":*%s-*\"]}", run_id) < 0 ||
            sbx_docker_escape(d, filters, &esc) < 0 || asprintf(&path, "/images/json?filters=%s", esc) < 0)
                return;
        if (sbx_docker_request(d, "GET", path, NULL, 0, &list, NULL) < 0 || !list)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *tags = jget(json_object_array_get_idx(list, i), "RepoTags");

                for (size_t k = 0; json_object_is_type(tags, json_type_array) && k < json_object_array_length(tags); k++) {
                        const char *tag = json_object_get_string(json_object_array_get_idx(tags, k));

                        if (!tag || !strstr(tag, run_id) || strncmp(tag, SBX_SNAPSHOT_REPOSITORY ":",
                                                                    strlen(SBX_SNAPSHOT_REPOSITORY ":")) != 0)
                                continue;
                        fprintf(stderr, "teardown: removing leftover snapshot tag %s\n", tag);
                        (void) sbx_docker_image_remove(d, tag, false, NULL);
                }
        }
}

/* Runs in the parent after the tests, also when one failed. */
static void sweep(void) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = client(getenv("DOCKER_HOST"));

        sweep_containers(d);
        sweep_images(d);
        if (run_dir[0])
                (void) nftw(run_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        d = sbx_docker_free(d);
        curl_global_cleanup();
}

/* The kept channel (channel.h): file calls answered by the service's program in the
 * sandbox as the owner, one exec for all of them, reopened when the sandbox was
 * restarted; what the owner may not reach stays out of reach. */
static void read_ok(const char *n, const char *path, uint64_t offset, uint64_t length, const char *want,
                    bool eof) {
        _cleanup_(sbx_file_data_done) SbxFileData d = {};
        SbxError e = SBX_ERROR_NULL;

        ck_assert_msg(sbx_lifecycle_read_file(&F.l, n, path, offset, length, &d, &e) == 0, "read %s: %s", path,
                      e.message);
        ck_assert_uint_eq(d.size, strlen(want));
        ck_assert_mem_eq(d.data, want, d.size);
        ck_assert_int_eq(d.eof, eof);
}

START_TEST(test_channel_files) {
        _cleanup_free_ char *n = name("files");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec("{}");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_channels_freep) SbxChannels *channels = NULL;
        _cleanup_(sbx_file_data_done) SbxFileData d = {};
        SbxFileEntry *entries = NULL;
        size_t n_entries = 0;
        bool truncated, saw_deep = false;
        SbxError e = SBX_ERROR_NULL;
        unsigned long mark;

        ck_assert_int_eq(sbx_channels_new(&channels), 0);
        F.l.channels = channels;
        sb = create_ok(&F.l, n, s, &owner);

        ck_assert_int_eq(sbx_lifecycle_write_file(&F.l, n, "/tmp/a.txt", "hello world", 11, 0640, 0, &e), 0);
        mark = sbx_docker_n_requests(F.docker);
        read_ok(n, "/tmp/a.txt", 0, 100, "hello world", true);
        read_ok(n, "/tmp/a.txt", 6, 3, "wor", false);
        ck_assert_uint_eq(calls_since(&mark), 0);               /* no exec per call: the kept channel */

        ck_assert_int_eq(sbx_lifecycle_read_file(&F.l, n, "/tmp/a.txt", 0, 100, &d, &e), 0);
        ck_assert_uint_eq(d.mode, 0100640);
        ck_assert_uint_eq(d.file_size, 11);
        sbx_file_data_done(&d);

        ck_assert_int_eq(sbx_lifecycle_write_file(&F.l, n, "/tmp/d/e/deep", "x", 1, 0600, SBX_WRITE_MAKE_PARENTS,
                                                  &e), 0);
        ck_assert_int_eq(sbx_lifecycle_write_file(&F.l, n, "/tmp/a.txt", "!", 1, 0, SBX_WRITE_APPEND, &e), 0);
        read_ok(n, "/tmp/a.txt", 0, 100, "hello world!", true);
        ck_assert_int_eq(sbx_lifecycle_list_files(&F.l, n, "/tmp", 3, 100, &entries, &n_entries, &truncated, &e), 0);
        ck_assert(!truncated);
        for (size_t i = 0; i < n_entries; i++)
                if (streq(entries[i].name, "d/e/deep")) {
                        ck_assert_str_eq(entries[i].kind, "file");
                        ck_assert_uint_eq(entries[i].size, 1);
                        saw_deep = true;
                }
        ck_assert(saw_deep);
        sbx_file_entries_free(entries, n_entries);

        /* Errors name the path and what the sandbox said, typed. */
        ck_assert_int_lt(sbx_lifecycle_remove_file(&F.l, n, "/tmp/d", false, &e), 0);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "/tmp/d");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_remove_file(&F.l, n, "/tmp/d", true, &e), 0);
        ck_assert_int_lt(sbx_lifecycle_read_file(&F.l, n, "/tmp/d/e/deep", 0, 1, &d, &e), 0);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "No such file");
        sbx_error_free(&e);
        /* The first process runs as another uid and is not dumpable: its root is
         * not the owner's way out (it is the same root anyway). */
        ck_assert_int_lt(sbx_lifecycle_read_file(&F.l, n, "/proc/1/root/etc/passwd", 0, 1, &d, &e), 0);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "Permission denied");
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_lifecycle_read_file(&F.l, n, "relative", 0, 1, &d, &e), 0);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "absolute path");
        sbx_error_free(&e);

        /* A restarted sandbox: the old channel ended with it, a new one is opened. */
        ck_assert_int_eq(sbx_lifecycle_stop(&F.l, n, 0, &e), 1);
        ck_assert_int_lt(sbx_lifecycle_read_file(&F.l, n, "/tmp/a.txt", 0, 1, &d, &e), 0);
        assert_error(&e, SBX_ERROR_NOT_RUNNING, NULL);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_lifecycle_start(&F.l, n, &e), 1);
        ck_assert_int_eq(sbx_lifecycle_write_file(&F.l, n, "/tmp/again", "2", 1, 0644, 0, &e), 0);
        read_ok(n, "/tmp/again", 0, 10, "2", true);
        ck_assert_int_eq(sbx_lifecycle_delete(&F.l, n, &e), 1);
        F.l.channels = NULL;
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("lifecycle");
        TCase *tc = tcase_create("real-daemon");

        snprintf(run_id, sizeof(run_id), "lct-%d", (int) getpid());
        tcase_add_unchecked_fixture(tc, require_docker, sweep);
        tcase_add_checked_fixture(tc, fixture_setup, fixture_teardown);
        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_create_hardened);
        tcase_add_test(tc, test_mismatch_after_update);
        tcase_add_test(tc, test_unverified_legacy);
        tcase_add_test(tc, test_path_spellings);
        tcase_add_test(tc, test_ports);
        tcase_add_test(tc, test_snapshot);
        tcase_add_test(tc, test_snapshot_startable);
        tcase_add_test(tc, test_snapshot_tag_moved);
        tcase_add_test(tc, test_snapshot_interrupted);
        tcase_add_test(tc, test_start_failure);
        tcase_add_test(tc, test_publish_failure);
        tcase_add_test(tc, test_swap_between_check_and_mount);
        tcase_add_test(tc, test_concurrent_create);
        tcase_add_test(tc, test_stop_start);
        tcase_add_test(tc, test_delete_missing_owner);
        tcase_add_test(tc, test_refusals);
        tcase_add_test(tc, test_missing_image);
        tcase_add_test(tc, test_unreachable);
        tcase_add_test(tc, test_concurrent_creates_limited);
        tcase_add_test(tc, test_reconcile);
        tcase_add_test(tc, test_docker_calls);
        tcase_add_test(tc, test_create_one_pass);
        tcase_add_test(tc, test_reconcile_lost_rows);
        tcase_add_test(tc, test_interrupted_create_settled);
        tcase_add_test(tc, test_verified_create_recorded_from_intent);
        tcase_add_test(tc, test_odd_name);
        tcase_add_test(tc, test_channel_files);
        tcase_add_test(tc, test_nobodys_name);
        tcase_add_test(tc, test_late_pending_removed);
        tcase_add_test(tc, test_intent_in_flight);
        tcase_add_test(tc, test_adoption_within_limit);
        tcase_add_test(tc, test_adopted_unhardened);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
