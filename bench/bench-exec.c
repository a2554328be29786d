/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Exec round trips and streaming throughput, one side per run (bench-exec.py runs
 * them interleaved and prints the comparison):
 *
 *   bench-exec direct CONTAINER USER N     N × exec `true` with the Docker exec API on
 *                                          one persistent client (create, hijacked
 *                                          start, read to the end, inspect)
 *   bench-exec bus NAME N                  N × ExecSandbox(["true"]) on one connection
 *   bench-exec direct-stream CONTAINER USER BYTES
 *                                          BYTES of output read straight off Docker
 *   bench-exec bus-stream NAME BYTES       the same through StartExec into a pipe
 *   bench-exec direct-parallel CONTAINER USER K N
 *                                          K threads at once, each N × exec `true` on
 *                                          a client of its own
 *   bench-exec bus-parallel NAME K N WAIT  K connections at once, each N ×
 *                                          ExecSandbox(["true"]) (option wait WAIT s if > 0)
 *
 * Prints one JSON object: {"median_ms": …}, {"seconds": …, "mb_per_s": …} or
 * {"seconds": …, "per_s": …, "ok": …, "failed": …, "error": …}. */

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-util.h"
#include "docker-exec.h"
#include "docker-relay.h"

static int die(const char *what, const char *why) {
        fprintf(stderr, "bench-exec: %s: %s\n", what, why);
        return 1;
}

/* One exec of argv read to its end, its exit code waited for. */
static int direct_once(SbxDocker *d, const char *container, const char *user, char **argv, bool discard,
                       size_t *ret_bytes) {
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int fd = -1, code;

        if (sbx_docker_exec_create(d, container, &(SbxExecConfig) { .argv = argv, .user = user, .attach_stdin = true },
                                   &id, &e) < 0 ||
            sbx_docker_exec_start(d, id, false, &fd, &e) < 0)
                return die("exec", e.message);
        (void) shutdown(fd, SHUT_WR);
        if (discard) {
                static char buf[65536];
                ssize_t k;
                size_t n = 0;

                /* Raw frames, counted as they come: the cheapest possible reader. */
                for (;;) {
                        k = recv(fd, buf, sizeof buf, 0);
                        if (k < 0 && errno == EAGAIN) {
                                fd_set s;
                                FD_ZERO(&s);
                                FD_SET(fd, &s);
                                (void) select(fd + 1, &s, NULL, NULL, NULL);
                                continue;
                        }
                        if (k <= 0)
                                break;
                        n += (size_t) k;
                }
                *ret_bytes = n;
        } else {
                SbxRelay r = SBX_RELAY_INIT;
                r.sock = fd;
                r.out[0].limit = r.out[1].limit = 1 << 20;
                (void) sbx_relay_run(&r);
                fd = -1;
                sbx_relay_done(&r);
        }
        if (fd >= 0)
                close(fd);
        if (sbx_docker_exec_wait(d, id, &code, &e) < 0)
                return die("exec wait", e.message);
        return 0;
}

static int direct(const char *container, const char *user, int n) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        double *t = calloc((size_t) n, sizeof(double));
        size_t bytes;

        if (!t || sbx_docker_new(NULL, &d, NULL) < 0)
                return die("client", "cannot make one");
        for (int i = 0; i < n; i++) {
                double t0 = now_ms();
                if (direct_once(d, container, user, (char *[]) { (char *) "true", NULL }, false, &bytes) != 0)
                        return 1;
                t[i] = now_ms() - t0;
        }
        printf("{\"median_ms\": %.3f}\n", median(t, (size_t) n));
        free(t);
        return 0;
}

static int bus(const char *name, int n) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
        double *t = calloc((size_t) n, sizeof(double));

        if (!t || sd_bus_open_system(&b) < 0)
                return die("bus", "cannot connect");
        for (int i = 0; i < n; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                double t0 = now_ms();

                if (sd_bus_call_method(b, "org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                                       "ExecSandbox", &error, &reply, "sasa{sv}", name, 1, "true", 0) < 0)
                        return die("ExecSandbox", error.message ?: "failed");
                t[i] = now_ms() - t0;
        }
        printf("{\"median_ms\": %.3f}\n", median(t, (size_t) n));
        free(t);
        return 0;
}

static char *stream_command(const char *bytes) {
        char *s;

        return asprintf(&s, "head -c %s /dev/zero", bytes) < 0 ? NULL : s;
}

static void print_rate(double ms, size_t bytes) {
        printf("{\"seconds\": %.3f, \"bytes\": %zu, \"mb_per_s\": %.1f}\n", ms / 1e3, bytes, bytes / 1e6 / (ms / 1e3));
}

static int direct_stream(const char *container, const char *user, const char *bytes) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_free_ char *cmd = stream_command(bytes);
        size_t n = 0;
        double t0;

        if (!cmd || sbx_docker_new(NULL, &d, NULL) < 0 || sbx_docker_negotiate(d, NULL) < 0)
                return die("client", "cannot make one");
        t0 = now_ms();
        if (direct_once(d, container, user, (char *[]) { (char *) "sh", (char *) "-c", cmd, NULL }, true, &n) != 0)
                return 1;
        print_rate(now_ms() - t0, n);
        return 0;
}

static int bus_stream(const char *name, const char *bytes) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *cmd = stream_command(bytes);
        static char buf[65536];
        int p[2], devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        size_t n = 0;
        ssize_t k;
        double t0;

        if (!cmd || devnull < 0 || pipe2(p, O_CLOEXEC) < 0 || sd_bus_open_system(&b) < 0)
                return die("setup", strerror(errno));
        t0 = now_ms();
        if (sd_bus_call_method(b, "org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                               "StartExec", &error, &reply, "sasa{sv}hhh", name, 3, "sh", "-c", cmd, 0, devnull, p[1],
                               devnull) < 0)
                return die("StartExec", error.message ?: "failed");
        close(p[1]);
        while ((k = read(p[0], buf, sizeof buf)) > 0)
                n += (size_t) k;
        print_rate(now_ms() - t0, n);
        return 0;
}

/* ---- K at once ------------------------------------------------------------------- */

typedef struct Par {
        const char *a, *b;              /* container and user, or name */
        int n, wait_s;
        int ok, failed;
        char error[256];
} Par;

static void *direct_thread(void *p_) {
        Par *p = p_;
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        size_t bytes;

        if (sbx_docker_new(NULL, &d, NULL) < 0)
                return NULL;
        for (int i = 0; i < p->n; i++)
                *(direct_once(d, p->a, p->b, (char *[]) { (char *) "true", NULL }, false, &bytes) == 0 ?
                  &p->ok : &p->failed) += 1;
        return NULL;
}

static void *bus_thread(void *p_) {
        Par *p = p_;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *b = NULL;

        if (sd_bus_open_system(&b) < 0)
                return NULL;
        for (int i = 0; i < p->n; i++) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
                int r = p->wait_s > 0 ?
                        sd_bus_call_method(b, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                           "org.xagent.Sandbox1.Manager", "ExecSandbox", &error, &reply,
                                           "sasa{sv}", p->a, 1, "true", 1, "wait", "u", (uint32_t) p->wait_s) :
                        sd_bus_call_method(b, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                           "org.xagent.Sandbox1.Manager", "ExecSandbox", &error, &reply,
                                           "sasa{sv}", p->a, 1, "true", 0);

                if (r >= 0)
                        p->ok++;
                else {
                        p->failed++;
                        snprintf(p->error, sizeof p->error, "%s", error.name ?: "?");
                }
        }
        return NULL;
}

static int parallel(void *(*fn)(void *), const char *a, const char *b, int k, int n, int wait_s) {
        Par *p = calloc((size_t) k, sizeof(Par));
        pthread_t *t = calloc((size_t) k, sizeof(pthread_t));
        int ok = 0, failed = 0;
        const char *error = "";
        double t0;

        if (!p || !t || k <= 0)
                return die("parallel", "bad arguments");
        t0 = now_ms();
        for (int i = 0; i < k; i++) {
                p[i] = (Par) { .a = a, .b = b, .n = n, .wait_s = wait_s };
                if (pthread_create(&t[i], NULL, fn, &p[i]) != 0)
                        return die("parallel", "cannot start a thread");
        }
        for (int i = 0; i < k; i++) {
                (void) pthread_join(t[i], NULL);
                ok += p[i].ok;
                failed += p[i].failed;
                if (p[i].error[0])
                        error = p[i].error;
        }
        double s = (now_ms() - t0) / 1e3;
        printf("{\"seconds\": %.3f, \"per_s\": %.2f, \"ok\": %d, \"failed\": %d, \"error\": \"%s\"}\n", s,
               ok / s, ok, failed, error);
        free(p);
        free(t);
        return 0;
}

int main(int argc, char **argv) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        if (argc == 5 && streq(argv[1], "direct"))
                return direct(argv[2], argv[3], atoi(argv[4]));
        if (argc == 4 && streq(argv[1], "bus"))
                return bus(argv[2], atoi(argv[3]));
        if (argc == 5 && streq(argv[1], "direct-stream"))
                return direct_stream(argv[2], argv[3], argv[4]);
        if (argc == 4 && streq(argv[1], "bus-stream"))
                return bus_stream(argv[2], argv[3]);
        if (argc == 6 && streq(argv[1], "direct-parallel"))
                return parallel(direct_thread, argv[2], argv[3], atoi(argv[4]), atoi(argv[5]), 0);
        if (argc == 6 && streq(argv[1], "bus-parallel"))
                return parallel(bus_thread, argv[2], NULL, atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
        fprintf(stderr, "usage: see the comment at the top of bench/bench-exec.c\n");
        return 2;
}
