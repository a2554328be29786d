/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* pull: PullImage, its PullProgress signals shown as they come (a bar on a terminal,
 * plain lines otherwise). */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "ctl-agent.h"
#include "ctl-bus.h"
#include "ctl-verbs.h"
#include "json-util.h"

/* A pull is as long as the image is big. */
#define PULL_CALL_TIMEOUT_USEC (3600ULL * 1000 * 1000)
#define BAR_WIDTH 30

typedef struct Pull {
        const CtlOptions *o;
        bool terminal;          /* standard error is one: a bar redrawn in place */
        bool drawn;
        bool done;
        sd_bus_message *reply;
        sd_bus_error error;
} Pull;

static void draw(Pull *p, const char *reference, uint64_t done, uint64_t total) {
        char bar[BAR_WIDTH + 1];
        unsigned pct = total > 0 ? (unsigned) MIN(done * 100 / total, 100) : 0;
        size_t filled = (size_t) pct * BAR_WIDTH / 100;

        for (size_t i = 0; i < BAR_WIDTH; i++)
                bar[i] = i < filled ? '#' : '.';
        bar[BAR_WIDTH] = 0;
        fprintf(stderr, "\r%s [%s] %3u%% %.1f of %.1f MiB", reference, bar, pct, done / 1048576.0,
                total / 1048576.0);
        fflush(stderr);
        p->drawn = true;
}

static int on_progress(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Pull *p = userdata;
        const char *reference;
        uint64_t done, total;

        if (sd_bus_message_read(m, "stt", &reference, &done, &total) < 0 || p->o->json)
                return 0;
        if (p->terminal)
                draw(p, reference, done, total);
        else
                printf("progress: %" PRIu64 " of %" PRIu64 " bytes\n", done, total);
        fflush(stdout);
        return 0;
}

static int on_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Pull *p = userdata;

        p->done = true;
        if (sd_bus_message_is_method_error(m, NULL))
                return sd_bus_error_copy(&p->error, sd_bus_message_get_error(m)), 0;
        p->reply = sd_bus_message_ref(m);
        return 0;
}

/* Calls PullImage and dispatches the signals until its reply. */
static int call(sd_bus *bus, const char *reference, Pull *p) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if ((r = sd_bus_match_signal(bus, NULL, CTL_BUS_SERVICE, CTL_BUS_MANAGER_PATH, CTL_BUS_MANAGER_INTERFACE,
                                     "PullProgress", on_progress, p)) < 0 ||
            (r = ctl_bus_new_call(bus, "PullImage", &m)) < 0 ||
            (r = sd_bus_message_append(m, "sa{sv}", reference, 0)) < 0 ||
            (r = sd_bus_call_async(bus, NULL, m, on_reply, p, PULL_CALL_TIMEOUT_USEC)) < 0)
                return r;
        while (!p->done) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r == 0 && (r = sd_bus_wait(bus, UINT64_MAX)) < 0 && r != -EINTR)
                        return r;
        }
        return 0;
}

int verb_pull(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(json_object_putp) json_object *out = NULL;
        Pull p = { .o = o, .terminal = isatty(STDERR_FILENO), .error = SD_BUS_ERROR_NULL };
        const char *image_id;
        pid_t agent = 0;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 1, 1)) != CTL_PROCEED)
                return r;
        if (o->owner)
                return ctl_usage_error("pull", "--owner: an image is pulled for the host, not for a user");
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if (o->ask_password)
                (void) ctl_agent_open(&agent);
        r = call(bus, argv[optind], &p);
        ctl_agent_close(agent);
        if (p.drawn)
                fputc('\n', stderr);
        if (r < 0) {
                sd_bus_error_free(&p.error);
                return ctl_bus_fail("PullImage", r);
        }
        if (sd_bus_error_is_set(&p.error)) {
                ctl_error(p.error.name, "%s", p.error.message ?: p.error.name);
                sd_bus_error_free(&p.error);
                return CTL_EXIT_FAILURE;
        }
        r = sd_bus_message_read(p.reply, "s", &image_id);
        if (r < 0) {
                sd_bus_message_unref(p.reply);
                return ctl_bus_fail("PullImage reply", r);
        }
        if (!o->json)
                printf("image_id: %s\n", image_id);
        else if (!(out = json_object_new_object()) || sbx_json_put(out, "image_id", json_object_new_string(image_id)) < 0)
                r = -ENOMEM;
        else
                ctl_print_json(out);
        sd_bus_message_unref(p.reply);
        return r < 0 ? ctl_bus_fail("pull", r) : 0;
}
