/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-error.h"
#include "bus-labels.h"
#include "bus-spec.h"
#include "ctl-agent.h"
#include "ctl-bus.h"
#include "json-util.h"
#include "naming.h"

int ctl_bus_connect(const CtlOptions *o, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = sd_bus_error_add_map(sbx_bus_error_map);
        if (r < 0)
                return ctl_bus_fail("registering the error map", r), r;
        r = sd_bus_open_system(&bus);
        if (r < 0) {
                ctl_error_unnamed(ctl_errno_name(r), "cannot connect to the system bus: %s", strerror(-r));
                return r;
        }
        r = sd_bus_set_allow_interactive_authorization(bus, o->ask_password);
        if (r < 0)
                return ctl_bus_fail("setting interactive authorization", r), r;
        *ret = TAKE_PTR(bus);
        return 0;
}

int ctl_bus_new_call(sd_bus *bus, const char *method, sd_bus_message **ret) {
        return sd_bus_message_new_method_call(bus, ret, CTL_BUS_SERVICE, CTL_BUS_MANAGER_PATH,
                                              CTL_BUS_MANAGER_INTERFACE, method);
}

static int parse_user(const char *user, uid_t *ret) {
        struct passwd *pw;
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(user, &end, 10);
        if (*user && !*end && errno == 0 && v < (uid_t) -1) {
                *ret = (uid_t) v;
                return 0;
        }
        pw = getpwnam(user);
        if (!pw)
                return -ESRCH;
        *ret = pw->pw_uid;
        return 0;
}

int ctl_bus_new_sandbox_call(sd_bus *bus, const CtlOptions *o, const char *method, const char *name,
                             sd_bus_message **ret) {
        _cleanup_free_ char *qualified = NULL, *path = NULL, *object_method = NULL;
        const char *suffix;
        uid_t uid;
        int r;

        if (!o->owner) {
                if ((r = ctl_bus_new_call(bus, method, ret)) < 0 || (r = sd_bus_message_append(*ret, "s", name)) < 0)
                        return ctl_bus_fail(method, r), r;
                return 0;
        }
        if (parse_user(o->owner, &uid) < 0) {
                ctl_error_unnamed(SD_BUS_ERROR_INVALID_ARGS, "--owner: no such user: %s", o->owner);
                return -ESRCH;
        }
        /* The object's method is the Manager's without "Sandbox": InspectSandbox →
         * Inspect, GetSandboxUsage → GetUsage, StartExec stays. */
        suffix = strstr(method, "Sandbox");
        if ((r = sbx_name_qualify(uid, name, &qualified)) < 0 ||
            (r = sd_bus_path_encode(CTL_BUS_SANDBOX_PREFIX, qualified, &path)) < 0 ||
            !(object_method = suffix ? strndup(method, (size_t) (suffix - method)) : strdup(method)))
                return ctl_bus_fail(method, r < 0 ? r : -ENOMEM), -ENOMEM;
        if (suffix && suffix[strlen("Sandbox")]) {
                char *full = NULL;

                if (asprintf(&full, "%s%s", object_method, suffix + strlen("Sandbox")) < 0)
                        return ctl_bus_fail(method, -ENOMEM), -ENOMEM;
                free(object_method);
                object_method = full;
        }
        r = sd_bus_message_new_method_call(bus, ret, CTL_BUS_SERVICE, path, CTL_BUS_SANDBOX_INTERFACE,
                                           object_method);
        if (r < 0)
                return ctl_bus_fail(method, r), r;
        return 0;
}

int ctl_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout_usec, const CtlOptions *o,
                 sd_bus_message **ret) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        pid_t agent = 0;
        int r;

        /* Without an agent polkit just says no, so a failure to start one is no error. */
        if (o->ask_password)
                (void) ctl_agent_open(&agent);
        r = sd_bus_call(bus, m, timeout_usec ?: CTL_BUS_CALL_TIMEOUT_USEC, &error, ret);
        ctl_agent_close(agent);
        if (r >= 0)
                return r;
        if (sd_bus_error_is_set(&error))
                ctl_error(error.name, "%s", error.message ?: strerror(-r));
        else
                ctl_error_unnamed(ctl_errno_name(r), "%s: %s", sd_bus_message_get_member(m), strerror(-r));
        return r;
}

int ctl_bus_fail(const char *what, int r) {
        ctl_error_unnamed(ctl_errno_name(r), "%s: %s", what, strerror(-r));
        return CTL_EXIT_FAILURE;
}

int ctl_label_parse(const char *verb, const char *arg, json_object **labels) {
        _cleanup_free_ char *key = NULL;
        const char *eq = strchr(arg, '=');
        json_object *v;

        if (!eq || eq == arg)
                return ctl_usage_error(verb, "--label: '%s' is not KEY=VALUE", arg);
        if (!*labels && !(*labels = json_object_new_object()))
                return ctl_bus_fail(verb, -ENOMEM);
        key = strndup(arg, eq - arg);
        v = json_object_new_string(eq + 1);
        if (!key || !v || json_object_object_add(*labels, key, v) < 0) {
                json_object_put(v);
                return ctl_bus_fail(verb, -ENOMEM);
        }
        return CTL_PROCEED;
}

int ctl_bus_append_labels_entry(sd_bus_message *m, json_object *labels) {
        int r;

        if (!labels)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "labels")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
            (r = sbx_bus_append_labels(m, labels)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}
