/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One side of the read benchmark (bench/bench-read.py runs the sides interleaved and
 * prints the comparison). Direct sides run as root against the Docker socket, each
 * on one persistent connection (libcurl, the service's own client); bus sides call
 * org.xagent.Sandbox1 on one bus connection as whoever runs them:
 *
 *   bench-read direct-inspect ID COUNT       GET /containers/ID/json
 *   bench-read bus-inspect NAME COUNT        InspectSandbox(NAME)
 *   bench-read bus-verify NAME IMAGE COUNT   VerifySandbox(NAME, {image: IMAGE})
 *   bench-read bus-ping COUNT                org.freedesktop.DBus.Peer.Ping to the service:
 *                                            the bus's own round trip, no work (the floor)
 *   bench-read direct-list COUNT             GET /containers/json?all=1&filters={"label":["xagent.managed=true"]}
 *   bench-read direct-list-owner UID COUNT   … and "xagent.sandbox.owner=UID": the raw list of one
 *                                            owner's sandboxes (what a member's ListSandboxes asks)
 *   bench-read bus-list COUNT                ListSandboxes()
 *   bench-read direct-readers ID THREADS MS  THREADS clients, each its own connection,
 *   bench-read bus-readers NAME THREADS MS   inspecting for MS milliseconds
 *   bench-read ping-readers THREADS MS       THREADS bus clients pinging the service (the floor)
 *   bench-read direct-cycle IMAGE NAME COUNT create+start, inspect, stop (0 s), remove by id
 *   bench-read bus-cycle IMAGE NAME COUNT    CreateSandbox, VerifySandbox, StopSandbox, DeleteSandbox
 *   bench-read rss                           this program's VmRSS and RssAnon (kB) after what
 *                                            any client of Docker and the bus must do: libcurl
 *                                            initialised, one Docker ping, one bus Hello
 *   bench-read bus-watch NAME MS             InspectSandbox(NAME) back to back for MS ms: prints
 *                                            {"changes": [[t, nano_cpus]…]}, t the CLOCK_MONOTONIC
 *                                            ms of each answer whose nano_cpus differs from the
 *                                            one before (the staleness window's reader side)
 *   bench-read cold NAME                     one InspectSandbox(NAME) on a connection made
 *                                            before it: with the service not running, the
 *                                            time from its activation to its first reply
 *   bench-read cold-list                     the same with one ListSandboxes() (prints "entries")
 *
 * Every side makes one untimed call first (the connection, the service's remembered
 * polkit answer). Prints one JSON object: {"ms": [per call or per cycle]}, with
 * "entries" for lists, or {"calls": N, "seconds": S} for the readers. */

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-bus-call.h"
#include "bench-util.h"
#include "config.h"
#include "container-body.h"
#include "docker-container.h"
#include "fileio.h"
#include "fingerprint.h"
#include "init-volume.h"
#include "labels.h"
#include "naming.h"
#include "spec.h"

#define MAX_THREADS 256

static _Noreturn void die(const char *what, int r, const SbxError *e) {
        fprintf(stderr, "bench-read: %s: %s\n", what, e && e->message ? e->message : strerror(r < 0 ? -r : r));
        exit(EXIT_FAILURE);
}

static unsigned parse_unsigned(const char *s) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (*s == 0 || *end != 0 || v == 0 || v > 1000000)
                die(s, -EINVAL, NULL);
        return (unsigned) v;
}

static void print_ms(const double *ms, size_t n, long entries) {
        printf("{\"ms\": [");
        for (size_t i = 0; i < n; i++)
                printf("%s%.4f", i ? ", " : "", ms[i]);
        printf("]");
        if (entries >= 0)
                printf(", \"entries\": %ld", entries);
        printf("}\n");
}

/* Docker ------------------------------------------------------------------- */

static SbxDocker *docker_open(void) {
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if ((r = sbx_docker_new(getenv("DOCKER_HOST"), &d, &e)) < 0 || (r = sbx_docker_ping(d, &e)) < 0)
                die("docker", r, &e);
        return d;
}

static void direct_inspect(SbxDocker *d, const char *id) {
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if ((r = sbx_docker_container_inspect(d, id, &attrs, &e)) < 0)
                die("inspect", r, &e);
}

/* owner NULL: every managed container; else only that uid's. */
static size_t direct_list(SbxDocker *d, const char *owner) {
        _cleanup_free_ char *owner_label = NULL;
        const char *labels[3] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE };
        _cleanup_(json_object_putp) json_object *list = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (owner && asprintf(&owner_label, "%s=%s", SBX_LABEL_OWNER, owner) < 0)
                die("asprintf", -ENOMEM, NULL);
        labels[1] = owner_label;
        if ((r = sbx_docker_container_list(d, labels, &list, &e)) < 0)
                die("list", r, &e);
        return json_object_array_length(list);
}

/* Bus ---------------------------------------------------------------------- */

static sd_bus *bus_open(void) {
        sd_bus *bus = NULL;
        int r;

        if ((r = sd_bus_open_system(&bus)) < 0)
                die("bus", r, NULL);
        return bus;
}

static void bus_inspect(sd_bus *bus, const char *name) {
        sd_bus_message_unref(bench_call(bus, "bench-read", "InspectSandbox", "s", name));
}

static void bus_verify(sd_bus *bus, const char *name, const char *image) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply =
                bench_call(bus, "bench-read", "VerifySandbox", "sa{sv}", name, 1, "image", "s", image);
        const char *verdict;

        if (sd_bus_message_read(reply, "s", &verdict) < 0 || !streq(verdict, "match")) {
                fprintf(stderr, "bench-read: VerifySandbox(%s): not a match\n", name);
                exit(EXIT_FAILURE);
        }
}

static void bus_ping(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(bus, "org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.freedesktop.DBus.Peer",
                               "Ping", &error, NULL, "");
        if (r < 0)
                die(error.message ?: "Ping", r, NULL);
}

static size_t bus_list(sd_bus *bus) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = bench_call(bus, "bench-read", "ListSandboxes", "");
        size_t n = 0;
        int r;

        if ((r = sd_bus_message_enter_container(reply, 'a', "(ssuso)")) < 0)
                die("ListSandboxes", r, NULL);
        while ((r = sd_bus_message_skip(reply, "(ssuso)")) > 0)
                n++;
        if (r < 0)
                die("ListSandboxes", r, NULL);
        return n;
}

/* Readers ------------------------------------------------------------------ */

typedef enum ReaderKind { READ_DIRECT, READ_BUS, READ_PING } ReaderKind;

typedef struct Reader {
        pthread_t thread;
        ReaderKind kind;
        const char *target;
        pthread_barrier_t *ready;
        double *deadline;               /* set by the main thread once all are ready */
        unsigned long calls;
} Reader;

static void reader_call(const Reader *rd, sd_bus *bus, SbxDocker *d) {
        if (rd->kind == READ_DIRECT)
                direct_inspect(d, rd->target);
        else if (rd->kind == READ_BUS)
                bus_inspect(bus, rd->target);
        else
                bus_ping(bus);
}

static void *reader_main(void *userdata) {
        Reader *rd = userdata;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;

        if (rd->kind == READ_DIRECT)
                d = docker_open();
        else
                bus = bus_open();
        reader_call(rd, bus, d);
        pthread_barrier_wait(rd->ready);        /* every client connected and warm */
        pthread_barrier_wait(rd->ready);        /* the deadline is set */
        while (now_ms() < *rd->deadline) {
                reader_call(rd, bus, d);
                rd->calls++;
        }
        return NULL;
}

static void run_readers(ReaderKind kind, const char *target, unsigned n, unsigned ms) {
        Reader readers[MAX_THREADS] = {};
        pthread_barrier_t ready;
        double deadline = 0, t0;
        unsigned long calls = 0;

        if (n > MAX_THREADS)
                die("threads", -E2BIG, NULL);
        pthread_barrier_init(&ready, NULL, n + 1);
        for (unsigned i = 0; i < n; i++) {
                readers[i] = (Reader) { .kind = kind, .target = target, .ready = &ready, .deadline = &deadline };
                if (pthread_create(&readers[i].thread, NULL, reader_main, &readers[i]) != 0)
                        die("pthread_create", -EAGAIN, NULL);
        }
        pthread_barrier_wait(&ready);
        t0 = now_ms();
        deadline = t0 + ms;
        pthread_barrier_wait(&ready);
        for (unsigned i = 0; i < n; i++) {
                pthread_join(readers[i].thread, NULL);
                calls += readers[i].calls;
        }
        printf("{\"calls\": %lu, \"seconds\": %.4f}\n", calls, (now_ms() - t0) / 1e3);
        pthread_barrier_destroy(&ready);
}

/* Cycles ------------------------------------------------------------------- */

/* What a plain Docker client does for the same sandbox: the service's own body
 * (built once), then create, start, inspect, stop, remove, all by id. */
static void run_direct_cycles(const char *image, const char *name, unsigned count) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = docker_open();
        _cleanup_(sbx_spec_freep) SbxSpec *spec = sbx_spec_new();
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *cname = NULL, *init_volume = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxError e = SBX_ERROR_NULL;
        double ms[count + 1];
        int r;

        if (!spec)
                die("spec", -ENOMEM, NULL);
        spec->template_type = SBX_TEMPLATE_IMAGE;
        spec->image = strdup(image);
        if ((r = sbx_init_volume_ensure(d, SBX_BUILD_INIT_DIR, &init_volume, &e)) < 0 ||
            (r = sbx_spec_normalize(spec, &e)) < 0 || (r = sbx_spec_fingerprint(spec, SBX_PYTHON_DEFAULT, fp)) < 0 ||
            (r = sbx_container_body(&(SbxContainerParams) {
                    .name = name, .spec = spec, .image = image, .fingerprint = fp, .uid = 0, .init_volume = init_volume,
                    .pids_limit = 512, .publish_address = "127.0.0.1" }, &body)) < 0 ||
            (r = sbx_container_name(name, &cname)) < 0)
                die("direct cycle set-up", r, &e);

        for (unsigned i = 0; i < count + 1; i++) {       /* the first one warms up */
                _cleanup_free_ char *id = NULL;
                double t0 = now_ms();

                if ((r = sbx_docker_container_create(d, cname, body, &id, &e)) < 0 ||
                    (r = sbx_docker_container_start(d, id, &e)) < 0)
                        die("direct create", r, &e);
                direct_inspect(d, id);
                if ((r = sbx_docker_container_stop(d, id, 0, &e)) < 0 ||
                    (r = sbx_docker_container_remove(d, id, &e)) < 0)
                        die("direct stop/remove", r, &e);
                ms[i] = now_ms() - t0;
        }
        print_ms(ms + 1, count, -1);
}

static void run_bus_cycles(const char *image, const char *name, unsigned count) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = bus_open();
        double ms[count + 1];

        for (unsigned i = 0; i < count + 1; i++) {
                double t0 = now_ms();

                sd_bus_message_unref(bench_call(bus, "bench-read", "CreateSandbox", "sa{sv}a{sv}", name, 1, "image", "s", image, 0));
                bus_verify(bus, name, image);
                sd_bus_message_unref(bench_call(bus, "bench-read", "StopSandbox", "sa{sv}", name, 1, "timeout", "u", 0));
                sd_bus_message_unref(bench_call(bus, "bench-read", "DeleteSandbox", "s", name));
                ms[i] = now_ms() - t0;
        }
        print_ms(ms + 1, count, -1);
}

/* The nano_cpus of an InspectSandbox reply. */
static uint64_t reply_nano_cpus(sd_bus_message *reply) {
        const char *key;
        uint64_t v = 0;
        int r;

        if (sd_bus_message_enter_container(reply, 'a', "{sv}") < 0)
                die("inspection", -EBADMSG, NULL);
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                if (sd_bus_message_read(reply, "s", &key) < 0)
                        die("inspection", -EBADMSG, NULL);
                if (streq(key, "nano_cpus")) {
                        if (sd_bus_message_read(reply, "v", "t", &v) < 0)
                                die("nano_cpus", -EBADMSG, NULL);
                } else if (sd_bus_message_skip(reply, "v") < 0)
                        die("inspection", -EBADMSG, NULL);
                if (sd_bus_message_exit_container(reply) < 0)
                        die("inspection", -EBADMSG, NULL);
        }
        return v;
}

static void run_watch(const char *name, unsigned ms) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = bus_open();
        double end = now_ms() + ms;
        uint64_t last = UINT64_MAX;
        bool first = true;

        printf("{\"changes\": [");
        while (now_ms() < end) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply =
                        bench_call(bus, "bench-read", "InspectSandbox", "s", name);
                double t = now_ms();
                uint64_t v = reply_nano_cpus(reply);

                if (v != last) {
                        printf("%s[%.4f, %" PRIu64 "]", first ? "" : ", ", t, v);
                        first = false;
                        last = v;
                }
        }
        printf("]}\n");
}

/* Main --------------------------------------------------------------------- */

static int usage(void) {
        fprintf(stderr, "usage: see the comment at the top of bench/bench-read.c\n");
        return 2;
}

int main(int argc, char **argv) {
        const char *mode = argc > 1 ? argv[1] : "";
        double *ms = NULL;
        unsigned count;
        long entries = -1;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                die("curl", -EIO, NULL);

        if (streq(mode, "direct-readers") || streq(mode, "bus-readers")) {
                if (argc != 5)
                        return usage();
                run_readers(streq(mode, "bus-readers") ? READ_BUS : READ_DIRECT, argv[2], parse_unsigned(argv[3]),
                            parse_unsigned(argv[4]));
                return 0;
        }
        if (streq(mode, "ping-readers")) {
                if (argc != 4)
                        return usage();
                run_readers(READ_PING, NULL, parse_unsigned(argv[2]), parse_unsigned(argv[3]));
                return 0;
        }
        if (streq(mode, "direct-cycle") || streq(mode, "bus-cycle")) {
                if (argc != 5)
                        return usage();
                (streq(mode, "bus-cycle") ? run_bus_cycles : run_direct_cycles)(argv[2], argv[3],
                                                                                 parse_unsigned(argv[4]));
                return 0;
        }
        if (streq(mode, "bus-watch")) {
                if (argc != 4)
                        return usage();
                run_watch(argv[2], parse_unsigned(argv[3]));
                return 0;
        }
        if (streq(mode, "rss")) {
                _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                _cleanup_free_ char *status = NULL;
                const char *rss, *anon;

                if (argc != 2)
                        return usage();
                d = docker_open();
                bus = bus_open();
                if (sd_bus_get_unique_name(bus, &(const char *) { NULL }) < 0 ||
                    sbx_read_text_file("/proc/self/status", 65536, &status, NULL) < 0 || !(rss = strstr(status, "\nVmRSS:")) ||
                    !(anon = strstr(status, "\nRssAnon:")))
                        die("rss", -EIO, NULL);
                printf("{\"rss_kb\": %ld, \"anon_kb\": %ld}\n", strtol(rss + 7, NULL, 10), strtol(anon + 9, NULL, 10));
                return 0;
        }
        if (streq(mode, "cold") || streq(mode, "cold-list")) {
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
                bool list = streq(mode, "cold-list");
                double t0, t;

                if (argc != (list ? 2 : 3))
                        return usage();
                bus = bus_open();
                /* The connection is made lazily: say Hello before the clock starts. */
                if (sd_bus_get_unique_name(bus, &(const char *) { NULL }) < 0)
                        die("bus", -EIO, NULL);
                t0 = now_ms();
                if (list)
                        entries = (long) bus_list(bus);
                else
                        bus_inspect(bus, argv[2]);
                t = now_ms() - t0;
                print_ms(&t, 1, entries);
                return 0;
        }

        if (streq(mode, "direct-list-owner")) {
                if (argc != 4)
                        return usage();
                count = parse_unsigned(argv[3]);
        } else if (streq(mode, "direct-inspect") || streq(mode, "bus-inspect") || streq(mode, "direct-list") ||
                   streq(mode, "bus-list") || streq(mode, "bus-ping")) {
                bool list = streq(mode, "direct-list") || streq(mode, "bus-list") || streq(mode, "bus-ping");
                if (argc != (list ? 3 : 4))
                        return usage();
                count = parse_unsigned(argv[list ? 2 : 3]);
        } else if (streq(mode, "bus-verify")) {
                if (argc != 5)
                        return usage();
                count = parse_unsigned(argv[4]);
        } else
                return usage();

        ms = calloc(count, sizeof(double));
        if (!ms)
                die("calloc", -ENOMEM, NULL);
        if (startswith(mode, "direct-")) {
                _cleanup_(sbx_docker_freep) SbxDocker *d = docker_open();
                bool list = startswith(mode, "direct-list");
                const char *owner = streq(mode, "direct-list-owner") ? argv[2] : NULL;

                for (unsigned i = 0; i < count + 1; i++) {
                        double t0 = now_ms();

                        if (list)
                                entries = (long) direct_list(d, owner);
                        else
                                direct_inspect(d, argv[2]);
                        if (i > 0)
                                ms[i - 1] = now_ms() - t0;
                }
        } else {
                _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = bus_open();

                for (unsigned i = 0; i < count + 1; i++) {
                        double t0 = now_ms();

                        if (streq(mode, "bus-list"))
                                entries = (long) bus_list(bus);
                        else if (streq(mode, "bus-ping"))
                                bus_ping(bus);
                        else if (streq(mode, "bus-verify"))
                                bus_verify(bus, argv[2], argv[3]);
                        else
                                bus_inspect(bus, argv[2]);
                        if (i > 0)
                                ms[i - 1] = now_ms() - t0;
                }
        }
        print_ms(ms, count, entries);
        free(ms);
        return 0;
}
