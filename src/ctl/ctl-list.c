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

/* list and snapshots: --no-legend leaves out the header and the count, as machinectl;
 * list --label K=V (repeatable) lists those with every label given (FindSandboxes). */
enum { ARG_NO_LEGEND = 0x200, ARG_LABEL };

typedef struct ListArgs {
        const char *verb;
        bool no_legend;
        json_object *labels;
} ListArgs;

static void list_args_done(ListArgs *a) {
        json_object_put(a->labels);
}

static int list_option(int c, const char *arg, void *userdata) {
        ListArgs *a = userdata;

        if (c == ARG_LABEL && streq(a->verb, "list"))
                return ctl_label_parse(a->verb, arg, &a->labels);
        if (c != ARG_NO_LEGEND)
                return CTL_EXIT_USAGE;
        a->no_legend = true;
        return CTL_PROCEED;
}

static int parse_list_args(int argc, char **argv, CtlOptions *o, ListArgs *a) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "no-legend", no_argument,       NULL, ARG_NO_LEGEND },
                { "label",     required_argument, NULL, ARG_LABEL     },
                {}
        };

        return ctl_parse_args(argc, argv, options, o, list_option, a, 0, 0);
}

static void print_table(const CtlTable *t, bool no_legend, const char *one, const char *many) {
        size_t n = ctl_table_rows(t);

        ctl_table_print(t, stdout, !no_legend);
        if (!no_legend)
                printf("\n%zu %s listed.\n", n, n == 1 ? one : many);
}

/* method, or with labels FindSandboxes filtered by them. */
static int call_list(const char *method, json_object *labels, const CtlOptions *o, sd_bus_message **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        int r;

        if (labels)
                method = "FindSandboxes";
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = ctl_bus_new_call(bus, method, &m)) < 0)
                return ctl_bus_fail(method, r);
        if (labels && ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
                       (r = ctl_bus_append_labels_entry(m, labels)) < 0 ||
                       (r = sd_bus_message_close_container(m)) < 0))
                return ctl_bus_fail(method, r);
        if (ctl_bus_call(bus, m, 0, o, ret) < 0)
                return CTL_EXIT_FAILURE;
        return CTL_PROCEED;
}

static const char *row_string(json_object *row, const char *key) {
        return json_object_get_string(json_object_object_get(row, key));
}

static int64_t row_int(json_object *row, const char *key) {
        return json_object_get_int64(json_object_object_get(row, key));
}

/* Rows in a stable order, whatever order the service answered in: by the key, then by
 * owner (root sees everyone's, and names repeat across owners). */
static int compare_rows(json_object *a, json_object *b, const char *key) {
        int c = strcmp(row_string(a, key), row_string(b, key));
        int64_t oa = row_int(a, "owner"), ob = row_int(b, "owner");

        return c != 0 ? c : (oa > ob) - (oa < ob);
}

static int compare_sandboxes(const void *a, const void *b) {
        return compare_rows(*(json_object *const *) a, *(json_object *const *) b, "name");
}

static int compare_snapshots(const void *a, const void *b) {
        return compare_rows(*(json_object *const *) a, *(json_object *const *) b, "snapshot_id");
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

/* The reply's sandboxes as the JSON rows of --json, sorted. */
static int read_sandboxes(sd_bus_message *reply, json_object *array) {
        int r;

        if ((r = sd_bus_message_enter_container(reply, 'a', "(ssuso)")) < 0)
                return r;
        for (;;) {
                const char *name, *state, *verdict, *path;
                uint32_t owner;

                r = sd_bus_message_read(reply, "(ssuso)", &name, &state, &owner, &verdict, &path);
                if (r <= 0)
                        break;
                if ((r = list_row_json(array, name, state, owner, verdict, path)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        json_object_array_sort(array, compare_sandboxes);
        return 0;
}

int verb_list(int argc, char **argv, CtlOptions *o) {
        static const char *const titles[] = { "NAME", "STATE", "OWNER", "VERDICT" };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *array = json_object_new_array();
        _cleanup_(ctl_table_freep) CtlTable *t = ctl_table_new(ELEMENTSOF(titles), titles);
        _cleanup_(list_args_done) ListArgs a = { .verb = argv[0] };
        int r;

        if ((r = parse_list_args(argc, argv, o, &a)) != CTL_PROCEED ||
            (r = call_list("ListSandboxes", a.labels, o, &reply)) != CTL_PROCEED)
                return r;
        if (!array || !t)
                return ctl_bus_fail("list", -ENOMEM);
        if ((r = read_sandboxes(reply, array)) < 0)
                return ctl_bus_fail("ListSandboxes reply", r);
        if (o->json) {
                ctl_print_json(array);
                return 0;
        }
        for (size_t i = 0; i < json_object_array_length(array); i++) {
                json_object *row = json_object_array_get_idx(array, i);
                char owner[64];

                format_owner((uint32_t) row_int(row, "owner"), owner, sizeof owner);
                r = ctl_table_add_row(t, (const char *const[]) { row_string(row, "name"), row_string(row, "state"),
                                                                owner, row_string(row, "verdict") });
                if (r < 0)
                        return ctl_bus_fail("list", r);
        }
        print_table(t, a.no_legend, "sandbox", "sandboxes");
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

static int read_snapshots(sd_bus_message *reply, json_object *array) {
        int r;

        if ((r = sd_bus_message_enter_container(reply, 'a', "(sssut)")) < 0)
                return r;
        for (;;) {
                const char *id, *source, *image;
                uint32_t owner;
                uint64_t created;

                r = sd_bus_message_read(reply, "(sssut)", &id, &source, &image, &owner, &created);
                if (r <= 0)
                        break;
                if ((r = snapshot_row_json(array, id, source, image, owner, created)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        json_object_array_sort(array, compare_snapshots);
        return 0;
}

int verb_snapshots(int argc, char **argv, CtlOptions *o) {
        static const char *const titles[] = { "ID", "SOURCE", "OWNER", "CREATED", "IMAGE" };
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(json_object_putp) json_object *array = json_object_new_array();
        _cleanup_(ctl_table_freep) CtlTable *t = ctl_table_new(ELEMENTSOF(titles), titles);
        _cleanup_(list_args_done) ListArgs a = { .verb = argv[0] };
        int r;

        if ((r = parse_list_args(argc, argv, o, &a)) != CTL_PROCEED ||
            (r = call_list("ListSnapshots", NULL, o, &reply)) != CTL_PROCEED)
                return r;
        if (!array || !t)
                return ctl_bus_fail("snapshots", -ENOMEM);
        if ((r = read_snapshots(reply, array)) < 0)
                return ctl_bus_fail("ListSnapshots reply", r);
        if (o->json) {
                ctl_print_json(array);
                return 0;
        }
        for (size_t i = 0; i < json_object_array_length(array); i++) {
                json_object *row = json_object_array_get_idx(array, i);
                char owner[64], created[64], image[16];

                format_owner((uint32_t) row_int(row, "owner"), owner, sizeof owner);
                format_time(json_object_get_uint64(json_object_object_get(row, "created_us")), created,
                            sizeof created);
                format_image_id(row_string(row, "image_id"), image, sizeof image);
                r = ctl_table_add_row(t, (const char *const[]) { row_string(row, "snapshot_id"),
                                                                row_string(row, "source"), owner, created, image });
                if (r < 0)
                        return ctl_bus_fail("snapshots", r);
        }
        print_table(t, a.no_legend, "snapshot", "snapshots");
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
        if ((r = call_list("GetPolicy", NULL, o, &reply)) != CTL_PROCEED)
                return r;
        if ((r = sbx_bus_read_json(reply, &policy)) < 0)
                return ctl_bus_fail("GetPolicy", r);
        ctl_print_dict(policy, o->json);
        return 0;
}
