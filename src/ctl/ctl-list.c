/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* list, snapshots and policy: the Manager's calls about the caller, not one sandbox. */

#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctl-bus.h"
#include "ctl-table.h"
#include "ctl-verbs.h"
#include "json-util.h"

/* The owner for people: the user name, or the uid when it has none here. */
static void format_owner(uint32_t uid, char *buf, size_t size) {
        struct passwd *pw = getpwuid(uid);

        if (pw)
                snprintf(buf, size, "%s", pw->pw_name);
        else
                snprintf(buf, size, "%" PRIu32, uid);
}

static void format_time(uint64_t usec, char *buf, size_t size) {
        time_t t = (time_t) (usec / 1000000);
        struct tm tm;

        if (usec == 0 || !localtime_r(&t, &tm) || strftime(buf, size, "%Y-%m-%d %H:%M:%S %Z", &tm) == 0)
                snprintf(buf, size, "-");
}

/* Docker's short form of an image id: 12 hex digits without "sha256:". */
static void format_image_id(const char *id, char *buf, size_t size) {
        const char *hex = strncmp(id, "sha256:", 7) == 0 ? id + 7 : id;

        snprintf(buf, size, "%.12s", hex);
}

static void print_legend(const CtlTable *t, const char *one, const char *many) {
        size_t n = ctl_table_rows(t);

        ctl_table_print(t, stdout);
        printf("\n%zu %s listed.\n", n, n == 1 ? one : many);
}

static int call_list(const char *method, const CtlOptions *o, sd_bus_message **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = ctl_bus_new_call(bus, method, &m)) < 0)
                return ctl_bus_fail(method, r);
        if (ctl_bus_call(bus, m, 0, o, ret) < 0)
                return CTL_EXIT_FAILURE;
        return CTL_PROCEED;
}

static int list_row_json(json_object *array, const char *name, const char *state, uint32_t owner,
                         const char *verdict, const char *path) {
        _cleanup_(json_object_putp) json_object *row = json_object_new_object();

        if (!row ||
            sbx_json_put(row, "name", json_object_new_string(name)) < 0 ||
            sbx_json_put(row, "state", json_object_new_string(state)) < 0 ||
            sbx_json_put(row, "owner", json_object_new_int64(owner)) < 0 ||
            sbx_json_put(row, "verdict", json_object_new_string(verdict)) < 0 ||
            sbx_json_put(row, "object", json_object_new_string(path)) < 0)
                return -ENOMEM;
        return sbx_json_push(array, TAKE_PTR(row));
}

int verb_list(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        static const char *const titles[] = { "NAME", "STATE", "OWNER", "VERDICT" };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *array = json_object_new_array();
        _cleanup_(ctl_table_freep) CtlTable *t = ctl_table_new(ELEMENTSOF(titles), titles);
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 0, 0)) != CTL_PROCEED ||
            (r = call_list("ListSandboxes", o, &reply)) != CTL_PROCEED)
                return r;
        if (!array || !t)
                return ctl_bus_fail("list", -ENOMEM);
        if ((r = sd_bus_message_enter_container(reply, 'a', "(ssuso)")) < 0)
                return ctl_bus_fail("ListSandboxes reply", r);
        for (;;) {
                const char *name, *state, *verdict, *path;
                uint32_t owner;
                char owner_str[64];

                r = sd_bus_message_read(reply, "(ssuso)", &name, &state, &owner, &verdict, &path);
                if (r < 0)
                        return ctl_bus_fail("ListSandboxes reply", r);
                if (r == 0)
                        break;
                format_owner(owner, owner_str, sizeof owner_str);
                if (o->json)
                        r = list_row_json(array, name, state, owner, verdict, path);
                else
                        r = ctl_table_add_row(t, (const char *const[]) { name, state, owner_str, verdict });
                if (r < 0)
                        return ctl_bus_fail("list", r);
        }
        if (o->json)
                ctl_print_json(array);
        else
                print_legend(t, "sandbox", "sandboxes");
        return 0;
}

static int snapshot_row_json(json_object *array, const char *id, const char *source, const char *image,
                             uint32_t owner, uint64_t created) {
        _cleanup_(json_object_putp) json_object *row = json_object_new_object();

        if (!row ||
            sbx_json_put(row, "snapshot_id", json_object_new_string(id)) < 0 ||
            sbx_json_put(row, "source", json_object_new_string(source)) < 0 ||
            sbx_json_put(row, "image_id", json_object_new_string(image)) < 0 ||
            sbx_json_put(row, "owner", json_object_new_int64(owner)) < 0 ||
            sbx_json_put(row, "created_us", json_object_new_uint64(created)) < 0)
                return -ENOMEM;
        return sbx_json_push(array, TAKE_PTR(row));
}

int verb_snapshots(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        static const char *const titles[] = { "ID", "SOURCE", "OWNER", "CREATED", "IMAGE" };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *array = json_object_new_array();
        _cleanup_(ctl_table_freep) CtlTable *t = ctl_table_new(ELEMENTSOF(titles), titles);
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 0, 0)) != CTL_PROCEED ||
            (r = call_list("ListSnapshots", o, &reply)) != CTL_PROCEED)
                return r;
        if (!array || !t)
                return ctl_bus_fail("snapshots", -ENOMEM);
        if ((r = sd_bus_message_enter_container(reply, 'a', "(sssut)")) < 0)
                return ctl_bus_fail("ListSnapshots reply", r);
        for (;;) {
                const char *id, *source, *image;
                uint32_t owner;
                uint64_t created;
                char owner_str[64], created_str[64], image_str[16];

                r = sd_bus_message_read(reply, "(sssut)", &id, &source, &image, &owner, &created);
                if (r < 0)
                        return ctl_bus_fail("ListSnapshots reply", r);
                if (r == 0)
                        break;
                format_owner(owner, owner_str, sizeof owner_str);
                format_time(created, created_str, sizeof created_str);
                format_image_id(image, image_str, sizeof image_str);
                if (o->json)
                        r = snapshot_row_json(array, id, source, image, owner, created);
                else
                        r = ctl_table_add_row(t, (const char *const[]) { id, source, owner_str, created_str, image_str });
                if (r < 0)
                        return ctl_bus_fail("snapshots", r);
        }
        if (o->json)
                ctl_print_json(array);
        else
                print_legend(t, "snapshot", "snapshots");
        return 0;
}

/* What the host policy allows the caller: its limits, images and volume roots. */
int verb_policy(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *policy = NULL;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 0, 0)) != CTL_PROCEED)
                return r;
        if (o->owner)
                return ctl_usage_error(argv[0], "the policy shown is always the caller's own; --owner does not apply");
        if ((r = call_list("GetPolicy", o, &reply)) != CTL_PROCEED)
                return r;
        if ((r = ctl_bus_read_json(reply, &policy)) < 0)
                return ctl_bus_fail("GetPolicy", r);
        ctl_print_dict(policy, o->json);
        return 0;
}
