/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* One side of the full-path benchmark (bench/bench-bus.py runs both, interleaved):
 *
 *   bench-bus direct IMAGE NAME   the Docker calls themselves, with the same client
 *                                 and the same generated body as the service (root)
 *   bench-bus bus IMAGE NAME      the same cycle through org.xagent.Sandbox1 (any user)
 *
 * One cycle: create+start → verify → stop (timeout 0) → delete, then INSPECTS
 * inspections of a second sandbox. Prints one JSON line of milliseconds. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bench-bus-call.h"
#include "bench-util.h"
#include "config.h"
#include "container-body.h"
#include "docker-container.h"
#include "fingerprint.h"
#include "init-volume.h"
#include "labels.h"
#include "naming.h"
#include "spec.h"

#define INSPECTS 20

static void die(const char *what, int r, const SbxError *e) {
        fprintf(stderr, "bench-bus: %s: %s\n", what, e && e->message ? e->message : strerror(-r));
        exit(EXIT_FAILURE);
}

/* Direct ----------------------------------------------------------------- */

static char *direct_create(SbxDocker *d, const char *image, const char *name) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = sbx_spec_new();
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *cname = NULL;
        _cleanup_free_ char *init_volume = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1], *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if ((r = sbx_init_volume_ensure(d, SBX_BUILD_INIT_DIR, &init_volume, &e)) < 0)
                die("init volume", r, &e);
        spec->template_type = SBX_TEMPLATE_IMAGE;
        spec->image = strdup(image);
        if ((r = sbx_spec_normalize(spec, &e)) < 0 || (r = sbx_spec_fingerprint(spec, SBX_PYTHON_DEFAULT, fp)) < 0 ||
            (r = sbx_container_body(&(SbxContainerParams) {
                    .name = name, .spec = spec, .image = image, .fingerprint = fp, .uid = 0, .init_volume = init_volume,
                    .pids_limit = 512, .publish_address = "127.0.0.1" }, &body)) < 0 ||
            (r = sbx_container_name(name, &cname)) < 0 ||
            (r = sbx_docker_container_create(d, cname, body, &id, &e)) < 0 ||
            (r = sbx_docker_container_start(d, id, &e)) < 0)
                die("direct create", r, &e);
        return id;
}

/* The service finds a sandbox by its labels, then inspects it. */
static void direct_inspect(SbxDocker *d, const char *name) {
        _cleanup_(json_object_putp) json_object *list = NULL, *attrs = NULL;
        _cleanup_free_ char *filter = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (asprintf(&filter, SBX_LABEL_SANDBOX_NAME "=%s", name) < 0)
                die("asprintf", -ENOMEM, NULL);
        const char *labels[] = { SBX_LABEL_MANAGED "=true", filter, NULL };
        if ((r = sbx_docker_container_list(d, labels, &list, &e)) < 0 || json_object_array_length(list) != 1)
                die("direct list", r, &e);
        const char *id = json_object_get_string(json_object_object_get(json_object_array_get_idx(list, 0), "Id"));
        if ((r = sbx_docker_container_inspect(d, id, &attrs, &e)) < 0)
                die("direct inspect", r, &e);
}

static void run_direct(const char *image, const char *name) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        _cleanup_free_ char *id = NULL, *other = NULL, *other_name = NULL;
        double t0, t_create, t_verify, t_stop, t_delete, insp[INSPECTS];
        SbxError e = SBX_ERROR_NULL;
        int r;

        if ((r = sbx_docker_new(getenv("DOCKER_HOST"), &d, &e)) < 0 || (r = sbx_docker_ping(d, &e)) < 0)
                die("docker", r, &e);

        t0 = now_ms();
        id = direct_create(d, image, name);
        t_create = now_ms();
        direct_inspect(d, name);
        t_verify = now_ms();
        if ((r = sbx_docker_container_stop(d, id, 0, &e)) < 0)
                die("direct stop", r, &e);
        t_stop = now_ms();
        if ((r = sbx_docker_container_remove(d, id, &e)) < 0)
                die("direct remove", r, &e);
        t_delete = now_ms();

        if (asprintf(&other_name, "%s-inspect", name) < 0)
                die("asprintf", -ENOMEM, NULL);
        other = direct_create(d, image, other_name);
        for (size_t i = 0; i < INSPECTS; i++) {
                double s = now_ms();
                direct_inspect(d, other_name);
                insp[i] = now_ms() - s;
        }
        (void) sbx_docker_container_remove(d, other, &e);

        printf("{\"create\": %.3f, \"verify\": %.3f, \"stop\": %.3f, \"delete\": %.3f, \"cycle\": %.3f, "
               "\"inspect_p50\": %.3f}\n",
               t_create - t0, t_verify - t_create, t_stop - t_verify, t_delete - t_stop, t_delete - t0,
               median(insp, INSPECTS));
}

/* Through the bus ----------------------------------------------------------- */


static void run_bus(const char *image, const char *name) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *other = NULL;
        double t0, t_create, t_verify, t_stop, t_delete, insp[INSPECTS];
        int r;

        if ((r = sd_bus_open_system(&bus)) < 0)
                die("bus", r, NULL);
        if (asprintf(&other, "%s-inspect", name) < 0)
                die("asprintf", -ENOMEM, NULL);

        t0 = now_ms();
        sd_bus_message_unref(bench_call(bus, "bench-bus", "CreateSandbox", "sa{sv}a{sv}", name, 1, "image", "s", image, 0));
        t_create = now_ms();
        sd_bus_message_unref(bench_call(bus, "bench-bus", "VerifySandbox", "sa{sv}", name, 1, "image", "s", image));
        t_verify = now_ms();
        sd_bus_message_unref(bench_call(bus, "bench-bus", "StopSandbox", "sa{sv}", name, 1, "timeout", "u", 0));
        t_stop = now_ms();
        sd_bus_message_unref(bench_call(bus, "bench-bus", "DeleteSandbox", "s", name));
        t_delete = now_ms();

        sd_bus_message_unref(bench_call(bus, "bench-bus", "CreateSandbox", "sa{sv}a{sv}", other, 1, "image", "s", image, 0));
        for (size_t i = 0; i < INSPECTS; i++) {
                double s = now_ms();
                sd_bus_message_unref(bench_call(bus, "bench-bus", "InspectSandbox", "s", other));
                insp[i] = now_ms() - s;
        }
        sd_bus_message_unref(bench_call(bus, "bench-bus", "DeleteSandbox", "s", other));

        printf("{\"create\": %.3f, \"verify\": %.3f, \"stop\": %.3f, \"delete\": %.3f, \"cycle\": %.3f, "
               "\"inspect_p50\": %.3f}\n",
               t_create - t0, t_verify - t_create, t_stop - t_verify, t_delete - t_stop, t_delete - t0,
               median(insp, INSPECTS));
}

int main(int argc, char **argv) {
        if (argc != 4 || (!streq(argv[1], "direct") && !streq(argv[1], "bus"))) {
                fprintf(stderr, "usage: bench-bus direct|bus IMAGE NAME\n");
                return 2;
        }
        if (streq(argv[1], "direct"))
                run_direct(argv[2], argv[3]);
        else
                run_bus(argv[2], argv[3]);
        return 0;
}
