/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The lifecycle layer's overhead over the bare Docker calls, against a real
 * dockerd and the test image (tests/setup-docker.sh).
 *
 * A cycle through the lifecycle: create → start → verify → stop(0) → delete.
 * A direct cycle, same client, same generated body: create, start, inspect,
 * stop(0), remove(force). After 2 warm-up cycles of each, N cycles of each run
 * interleaved (direct, lifecycle, direct, …). The lifecycle's create already
 * starts, verifies what Docker made and records the row, so its "start" is the
 * idempotent no-op a caller would make. Then inspect alone: the lifecycle's
 * inspect against a direct list-by-label + inspect, interleaved.
 *
 * Prints the median of each phase and of the whole cycle in ms, and the ratio
 * lifecycle/direct (the target is ≤ 1.05; reported, not asserted).
 *
 * A remote engine: DOCKER_HOST=tcp://HOST:PORT with SBX_BENCH_TLS_CA, _CERT, _KEY
 * (and _SERVER_NAME) runs both over mutual TLS, the direct cycle on the client's one
 * kept connection (a POST's fresh one aside, as the service does); the sandboxes
 * are network_isolated there (target ≤ 1.10). */

#include <curl/curl.h>
#include <errno.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#include "config.h"
#include "container-body.h"
#include "docker-container.h"
#include "docker-image.h"
#include "docker.h"
#include "docker-tls.h"
#include "fingerprint.h"
#include "init-volume.h"
#include "labels.h"
#include "lifecycle.h"
#include "naming.h"
#include "spec-json.h"

#define TEST_IMAGE "xagent-sandbox-test:latest"
#define WARMUP 2

enum { PH_CREATE, PH_START, PH_VERIFY, PH_STOP, PH_DELETE, PH_TOTAL, _PH_MAX };

static const char *const phase_direct[_PH_MAX] = {
        "create", "start", "inspect", "stop(t=0)", "remove(force)", "total",
};
static const char *const phase_lifecycle[_PH_MAX] = {
        "create (+start, verify, record)", "start (no-op)", "verify", "stop(t=0)", "delete", "total",
};

static const SbxOwner owner = { .uid = 65534, .gid = 65534, .name = "nobody", .home = "/nonexistent" };

typedef struct Bench {
        SbxLifecycle l;
        char *init_volume;
        const SbxSpec *spec;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        char prefix[64];
        unsigned counter;
} Bench;

static int fail(const char *what, const SbxError *e, int r) {
        fprintf(stderr, "bench-lifecycle: %s: %s\n", what, e && e->message ? e->message : strerror(-r));
        return r;
}

static char *next_name(Bench *b, const char *kind) {
        char *n;

        if (asprintf(&n, "%s-%s-%u", b->prefix, kind, b->counter++) < 0)
                return NULL;
        return n;
}

/* One direct cycle; t[] gets the phases' times. */
static int cycle_direct(Bench *b, double t[_PH_MAX]) {
        _cleanup_free_ char *n = next_name(b, "direct"), *cname = NULL, *id = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL, *info = NULL;
        SbxError e = SBX_ERROR_NULL;
        double t0, start = now_ms();
        int r;

        if (!n)
                return -ENOMEM;
        /* the body is generated in both cycles: the lifecycle generates it inside create */
        t0 = now_ms();
        if ((r = sbx_container_body(&(SbxContainerParams) {
                    .name = n, .spec = b->spec, .image = TEST_IMAGE, .fingerprint = b->fp,
                    .uid = owner.uid, .init_volume = b->init_volume, .pids_limit = b->l.policy->pids_limit,
                    .publish_address = b->l.policy->publish_address,
            }, &body)) < 0 || (r = sbx_container_name(n, &cname)) < 0)
                return fail("body", NULL, r);
        if ((r = sbx_docker_container_create(b->l.docker, cname, body, &id, &e)) < 0)
                return fail("direct create", &e, r);
        t[PH_CREATE] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_docker_container_start(b->l.docker, id, &e)) < 0)
                return fail("direct start", &e, r);
        t[PH_START] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_docker_container_inspect(b->l.docker, id, &info, &e)) < 0)
                return fail("direct inspect", &e, r);
        t[PH_VERIFY] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_docker_container_stop(b->l.docker, id, 0, &e)) < 0)
                return fail("direct stop", &e, r);
        t[PH_STOP] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_docker_container_remove(b->l.docker, id, &e)) < 0)
                return fail("direct remove", &e, r);
        t[PH_DELETE] = now_ms() - t0;
        t[PH_TOTAL] = now_ms() - start;
        return 0;
}

static int cycle_lifecycle(Bench *b, double t[_PH_MAX]) {
        _cleanup_free_ char *n = next_name(b, "lifecycle");
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        SbxError e = SBX_ERROR_NULL;
        SbxVerdict v;
        unsigned fields;
        double t0, start = now_ms();
        int r;

        if (!n)
                return -ENOMEM;
        t0 = now_ms();
        if ((r = sbx_lifecycle_create(&b->l, n, b->spec, &owner, &sb, &e)) < 0)
                return fail("create", &e, r);
        t[PH_CREATE] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_lifecycle_start(&b->l, n, &e)) < 0)
                return fail("start", &e, r);
        t[PH_START] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_lifecycle_verify(&b->l, n, b->spec, &v, &fields, NULL, &e)) < 0)
                return fail("verify", &e, r);
        t[PH_VERIFY] = now_ms() - t0;
        if (v != SBX_VERDICT_MATCH)
                return fail("verify: not a match", NULL, -EBADMSG);

        t0 = now_ms();
        if ((r = sbx_lifecycle_stop(&b->l, n, 0, &e)) < 0)
                return fail("stop", &e, r);
        t[PH_STOP] = now_ms() - t0;

        t0 = now_ms();
        if ((r = sbx_lifecycle_delete(&b->l, n, &e)) < 0)
                return fail("delete", &e, r);
        t[PH_DELETE] = now_ms() - t0;
        t[PH_TOTAL] = now_ms() - start;
        return 0;
}

/* The direct equivalent of the lifecycle's inspect: find by label, inspect. */
static int inspect_direct(Bench *b, const char *n) {
        _cleanup_(json_object_putp) json_object *list = NULL, *info = NULL;
        _cleanup_free_ char *filter = NULL;
        const char *labels[3] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, NULL, NULL };
        json_object *c, *id;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (asprintf(&filter, "%s=%s", SBX_LABEL_SANDBOX_NAME, n) < 0)
                return -ENOMEM;
        labels[1] = filter;
        if ((r = sbx_docker_container_list(b->l.docker, labels, &list, &e)) < 0)
                return fail("direct list", &e, r);
        c = json_object_array_get_idx(list, 0);
        if (!c || !json_object_object_get_ex(c, "Id", &id))
                return fail("direct list: not found", NULL, -ENOENT);
        if ((r = sbx_docker_container_inspect(b->l.docker, json_object_get_string(id), &info, &e)) < 0)
                return fail("direct inspect", &e, r);
        return 0;
}

static int bench_inspect(Bench *b, unsigned rounds, double *ret_direct, double *ret_lifecycle) {
        _cleanup_free_ char *n = next_name(b, "inspect");
        _cleanup_free_ double *td = calloc(rounds, sizeof(double)), *tl = calloc(rounds, sizeof(double));
        _cleanup_(sbx_sandbox_freep) SbxSandbox *created = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r = 0;

        if (!n || !td || !tl)
                return -ENOMEM;
        if ((r = sbx_lifecycle_create(&b->l, n, b->spec, &owner, &created, &e)) < 0)
                return fail("inspect: create", &e, r);
        for (unsigned i = 0; i < WARMUP + rounds && r >= 0; i++) {
                _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
                double t0 = now_ms();

                if ((r = inspect_direct(b, n)) < 0)
                        break;
                if (i >= WARMUP)
                        td[i - WARMUP] = now_ms() - t0;
                t0 = now_ms();
                if ((r = sbx_lifecycle_inspect(&b->l, n, &sb, &e)) < 0) {
                        fail("inspect", &e, r);
                        break;
                }
                if (i >= WARMUP)
                        tl[i - WARMUP] = now_ms() - t0;
        }
        sbx_error_free(&e);
        (void) sbx_lifecycle_delete(&b->l, n, NULL);
        if (r < 0)
                return r;
        *ret_direct = median(td, rounds);
        *ret_lifecycle = median(tl, rounds);
        return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) remove(path);
        return 0;
}

/* Whatever a failed run left: containers whose name label carries our prefix. */
static void sweep(Bench *b) {
        static const char *const managed[] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, NULL };
        _cleanup_(json_object_putp) json_object *list = NULL;
        size_t plen = strlen(b->prefix);

        if (sbx_docker_container_list(b->l.docker, managed, &list, NULL) < 0)
                return;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i), *labels, *name, *id;

                if (json_object_object_get_ex(c, "Labels", &labels) &&
                    json_object_object_get_ex(labels, SBX_LABEL_SANDBOX_NAME, &name) &&
                    strncmp(json_object_get_string(name), b->prefix, plen) == 0 &&
                    json_object_object_get_ex(c, "Id", &id))
                        (void) sbx_docker_container_remove(b->l.docker, json_object_get_string(id), NULL);
        }
}

static int parse_args(int argc, char **argv, unsigned *cycles) {
        static const struct option options[] = {
                { "cycles", required_argument, NULL, 'n' },
                { "help",   no_argument,       NULL, 'h' },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "n:h", options, NULL)) >= 0)
                switch (c) {
                case 'n': {
                        char *end;
                        unsigned long v;

                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno || *end || v == 0 || v > 10000) {
                                fprintf(stderr, "bench-lifecycle: --cycles: not a count: %s\n", optarg);
                                return -EINVAL;
                        }
                        *cycles = (unsigned) v;
                        break;
                }
                case 'h':
                        printf("%s [--cycles N]\n  N create→start→verify→stop→delete cycles (default 20) "
                               "through the lifecycle and directly, interleaved.\n", argv[0]);
                        return 0;
                default:
                        return -EINVAL;
                }
        return 1;
}

static int run(Bench *b, unsigned cycles) {
        _cleanup_free_ double *td = calloc((size_t) cycles * _PH_MAX, sizeof(double));
        _cleanup_free_ double *tl = calloc((size_t) cycles * _PH_MAX, sizeof(double));
        double scratch[_PH_MAX], md[_PH_MAX], ml[_PH_MAX], col[cycles], id_ms = 0, il_ms = 0;
        int r;

        if (!td || !tl)
                return -ENOMEM;
        for (unsigned i = 0; i < WARMUP; i++)
                if ((r = cycle_direct(b, scratch)) < 0 || (r = cycle_lifecycle(b, scratch)) < 0)
                        return r;
        for (unsigned i = 0; i < cycles; i++)
                if ((r = cycle_direct(b, td + (size_t) i * _PH_MAX)) < 0 ||
                    (r = cycle_lifecycle(b, tl + (size_t) i * _PH_MAX)) < 0)
                        return r;
        if ((r = bench_inspect(b, cycles * 5, &id_ms, &il_ms)) < 0)
                return r;

        for (unsigned p = 0; p < _PH_MAX; p++) {
                for (unsigned i = 0; i < cycles; i++)
                        col[i] = td[(size_t) i * _PH_MAX + p];
                md[p] = median(col, cycles);
                for (unsigned i = 0; i < cycles; i++)
                        col[i] = tl[(size_t) i * _PH_MAX + p];
                ml[p] = median(col, cycles);
        }

        printf("bench-lifecycle: %u cycles each (after %u warm-up), interleaved; Docker API %s; medians in ms\n",
               cycles, WARMUP, sbx_docker_api_version(b->l.docker) ?: "?");
        printf("  %-14s %9s   %-32s %9s\n", "direct", "ms", "lifecycle", "ms");
        for (unsigned p = 0; p < _PH_MAX; p++)
                printf("  %-14s %9.2f   %-32s %9.2f\n", phase_direct[p], md[p], phase_lifecycle[p], ml[p]);
        printf("  create+start:  direct %.2f, lifecycle %.2f\n", md[PH_CREATE] + md[PH_START],
               ml[PH_CREATE] + ml[PH_START]);
        printf("  ratio lifecycle/direct (median totals): %.3f (target <= 1.05)\n", ml[PH_TOTAL] / md[PH_TOTAL]);
        printf("  inspect alone (%u rounds): direct list+inspect %.2f, lifecycle inspect %.2f, ratio %.3f\n",
               cycles * 5, id_ms, il_ms, il_ms / id_ms);
        return 0;
}

int main(int argc, char **argv) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_(sbx_store_closep) SbxStore *store = NULL;
        _cleanup_(sbx_keyed_lock_registry_freep) SbxKeyedLockRegistry *locks = NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *policy = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(sbx_spec_memo_freep) SbxSpecMemo *specs = sbx_spec_memo_new();
        char state_dir[] = "/tmp/sbx-bench-XXXXXX";
        SbxError e = SBX_ERROR_NULL;
        unsigned cycles = 20;
        Bench b = {};
        int r;

        r = parse_args(argc, argv, &cycles);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return EXIT_FAILURE;
        if (!mkdtemp(state_dir)) {
                perror("bench-lifecycle: mkdtemp");
                return EXIT_FAILURE;
        }

        if (getenv("SBX_BENCH_TLS_CA") &&
            (r = sbx_docker_tls_setup(&(const SbxDockerTls) {
                    .ca = getenv("SBX_BENCH_TLS_CA"), .cert = getenv("SBX_BENCH_TLS_CERT"),
                    .key = getenv("SBX_BENCH_TLS_KEY"), .server_name = getenv("SBX_BENCH_TLS_SERVER_NAME"),
            }, &e)) < 0) {
                fail("TLS setup", &e, r);
                goto finish;
        }
        if ((r = sbx_docker_new(getenv("DOCKER_HOST"), &d, &e)) < 0 || (r = sbx_docker_ping(d, &e)) < 0 ||
            (r = sbx_store_open(state_dir, &store, &e)) < 0 ||
            (r = sbx_policy_parse("{ \"default_image\": \"" TEST_IMAGE "\", \"allowed_images\": [\"" TEST_IMAGE
                                  "\"] }", &policy, &e)) < 0 ||
            (r = sbx_spec_from_json_string(sbx_docker_remote(d) ? "{\"network_isolated\": true}" : "{}", &spec,
                                           &e)) < 0 ||
            (r = sbx_spec_finalize(spec, TEST_IMAGE, &e)) < 0 ||
            (r = sbx_spec_fingerprint(spec, SBX_PYTHON_DEFAULT, b.fp)) < 0 ||
            (r = sbx_docker_remote(d)
                 ? sbx_init_volume_ensure_remote(d, SBX_BUILD_INIT_DIR, TEST_IMAGE, &b.init_volume, &e)
                 : sbx_init_volume_ensure(d, SBX_BUILD_INIT_DIR, &b.init_volume, &e)) < 0 ||
            !(locks = sbx_keyed_lock_registry_new()) || !specs) {
                fail("setup", &e, r < 0 ? r : -ENOMEM);
                goto finish;
        }
        b.l = (SbxLifecycle) { .docker = d, .store = store, .locks = locks, .policy = policy,
                               .docker_socket = sbx_docker_remote(d) ? NULL : SBX_DOCKER_SOCKET_DEFAULT, .init_dir = SBX_BUILD_INIT_DIR,
                               .specs = specs };
        b.spec = spec;
        /* The owner (nobody) is not root: its names are "~<uid>:<name>" (naming.h). */
        snprintf(b.prefix, sizeof b.prefix, "~%u:bench-%d-", (unsigned) owner.uid, (int) getpid());

        r = run(&b, cycles);
        sweep(&b);
finish:
        sbx_error_free(&e);
        free(b.init_volume);
        store = sbx_store_close(store);
        (void) nftw(state_dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
        d = sbx_docker_free(d);
        curl_global_cleanup();
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
