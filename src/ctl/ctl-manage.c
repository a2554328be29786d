/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* inspect, usage, start, stop, pause, resume, delete, snapshot, delete-snapshot: calls by name or id. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "ctl-bus.h"
#include "ctl-verbs.h"
#include "json-util.h"
#include "bus-egress.h"
#include "bus-spec.h"

static const struct option common_options[] = { CTL_COMMON_OPTIONS, {} };

/* Connects and calls method with the arguments "s" (and, with extra, what it appends). */
static int call_by_name(const CtlOptions *o, const char *method, const char *name, uint64_t timeout_usec,
                        int (*extra)(sd_bus_message *m, void *userdata), void *userdata,
                        sd_bus_message **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if (ctl_bus_new_sandbox_call(bus, o, method, name, &m) < 0)
                return CTL_EXIT_FAILURE;
        if (extra && (r = extra(m, userdata)) < 0)
                return ctl_bus_fail(method, r);
        if (ctl_bus_call(bus, m, timeout_usec, o, ret) < 0)
                return CTL_EXIT_FAILURE;
        return CTL_PROCEED;
}

/* The a{sv} of a call by name, printed. */
static int print_dict_of(CtlOptions *o, const char *method, const char *name) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *dict = NULL;
        int r;

        if ((r = call_by_name(o, method, name, 0, NULL, NULL, &reply)) != CTL_PROCEED)
                return r;
        if ((r = sbx_bus_read_json(reply, &dict)) < 0)
                return ctl_bus_fail(method, r);
        ctl_print_dict(dict, o->json);
        return 0;
}

/* inspect and usage: one argument, an a{sv} to print. */
static int dict_call(int argc, char **argv, CtlOptions *o, const char *method) {
        int r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 1, 1);

        return r != CTL_PROCEED ? r : print_dict_of(o, method, argv[optind]);
}

enum { ARG_FRESH = 0x200 };

static int inspect_option(int c, const char *arg, void *userdata) {
        if (c != ARG_FRESH)
                return CTL_EXIT_USAGE;
        *(bool *) userdata = true;
        return CTL_PROCEED;
}

/* --fresh: Docker's answer of this instant (RefreshSandbox), not an observation. */
int verb_inspect(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, { "fresh", no_argument, NULL, ARG_FRESH }, {} };
        bool fresh = false;
        int r = ctl_parse_args(argc, argv, options, o, inspect_option, &fresh, 1, 1);

        return r != CTL_PROCEED ? r : print_dict_of(o, fresh ? "RefreshSandbox" : "InspectSandbox", argv[optind]);
}

int verb_usage(int argc, char **argv, CtlOptions *o) {
        return dict_call(argc, argv, o, "GetSandboxUsage");
}

/* start, pause, resume, delete and delete-snapshot: one argument, nothing to print. */
static int simple_call(int argc, char **argv, CtlOptions *o, const char *method) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        if ((r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 1, 1)) != CTL_PROCEED ||
            (r = call_by_name(o, method, argv[optind], 0, NULL, NULL, &reply)) != CTL_PROCEED)
                return r;
        return 0;
}

int verb_start(int argc, char **argv, CtlOptions *o) {
        return simple_call(argc, argv, o, "StartSandbox");
}

int verb_pause(int argc, char **argv, CtlOptions *o) {
        return simple_call(argc, argv, o, "PauseSandbox");
}

/* egress NAME MODE [ENTRY...]: SetSandboxEgress. */
static int append_egress(sd_bus_message *m, void *userdata) {
        char **args = userdata;

        return sbx_bus_append_egress(m, args[0], args + 1);
}

int verb_egress(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        if ((r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 2, INT_MAX)) != CTL_PROCEED)
                return r;
        r = call_by_name(o, "SetSandboxEgress", argv[optind], 0, append_egress, argv + optind + 1, &reply);
        return r == CTL_PROCEED ? 0 : r;
}

int verb_resume(int argc, char **argv, CtlOptions *o) {
        return simple_call(argc, argv, o, "ResumeSandbox");
}

int verb_delete(int argc, char **argv, CtlOptions *o) {
        return simple_call(argc, argv, o, "DeleteSandbox");
}

int verb_delete_snapshot(int argc, char **argv, CtlOptions *o) {
        if (o->owner)
                return ctl_usage_error("delete-snapshot", "--owner: a snapshot is deleted by its owner");
        return simple_call(argc, argv, o, "DeleteSnapshot");
}

enum { ARG_TIMEOUT = 0x200, ARG_FORCE };

typedef struct StopArgs {
        const char *verb;
        uint64_t timeout;
        bool have_timeout;
        bool force;
} StopArgs;

static int stop_option(int c, const char *arg, void *userdata) {
        StopArgs *a = userdata;
        int r;

        if (c == ARG_FORCE) {
                a->force = true;
                return CTL_PROCEED;
        }
        r = ctl_parse_uint(a->verb, "--timeout", arg, 0, SBX_STOP_TIMEOUT_MAX, &a->timeout);
        a->have_timeout = r == CTL_PROCEED;
        return r;
}

static int append_stop_options(sd_bus_message *m, void *userdata) {
        const StopArgs *a = userdata;
        int r = sd_bus_message_open_container(m, 'a', "{sv}");

        if (r >= 0 && a->have_timeout)
                r = sd_bus_message_append(m, "{sv}", "timeout", "u", (uint32_t) a->timeout);
        if (r >= 0 && a->force)
                r = sd_bus_message_append(m, "{sv}", "force", "b", 1);
        return r < 0 ? r : sd_bus_message_close_container(m);
}

int verb_stop(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "timeout", required_argument, NULL, ARG_TIMEOUT },
                { "force",   no_argument,       NULL, ARG_FORCE   },
                {}
        };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        StopArgs a = { .verb = argv[0], .timeout = SBX_STOP_TIMEOUT_DEFAULT };
        uint64_t call_timeout;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, stop_option, &a, 1, 1)) != CTL_PROCEED)
                return r;
        /* Docker waits up to the timeout before SIGKILL; the call must outwait it. */
        call_timeout = CTL_BUS_CALL_TIMEOUT_USEC + a.timeout * 1000 * 1000;
        if ((r = call_by_name(o, "StopSandbox", argv[optind], call_timeout, append_stop_options, &a,
                              &reply)) != CTL_PROCEED)
                return r;
        return 0;
}

static int append_snapshot_id(sd_bus_message *m, void *userdata) {
        return sd_bus_message_append(m, "s", (const char *) userdata);
}

int verb_snapshot(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *out = NULL;
        const char *image_id;
        int r;

        if ((r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 2, 2)) != CTL_PROCEED ||
            (r = call_by_name(o, "SnapshotSandbox", argv[optind], 0, append_snapshot_id, argv[optind + 1],
                              &reply)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_read(reply, "s", &image_id)) < 0)
                return ctl_bus_fail("SnapshotSandbox reply", r);
        if (!o->json) {
                printf("image_id: %s\n", image_id);
                return 0;
        }
        out = json_object_new_object();
        if (!out || sbx_json_put(out, "image_id", json_object_new_string(image_id)) < 0)
                return ctl_bus_fail("snapshot", -ENOMEM);
        ctl_print_json(out);
        return 0;
}
