/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The spec arguments of create/ensure/verify: the tool's arguments made the spec
 * JSON, parsed by the project's own spec parser, appended as the bus's a{sv}. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-spec.h"
#include "mcp-json.h"
#include "mcp-spec.h"
#include "spec-json.h"

/* volumes [{host, guest, mode}] and ports [{host, guest}] become the spec JSON's
 * [[h, g, mode]] and [[h, g]]; the rest of the spec keys go as they are. */
static int spec_list(json_object *args, const char *key, json_object *spec, char **error) {
        json_object *list, *out;
        bool volumes = streq(key, "volumes");

        if (!json_object_object_get_ex(args, key, &list) || !list)
                return 0;
        if (!json_object_is_type(list, json_type_array))
                return asprintf(error, "argument '%s': must be an array", key), -EINVAL;
        out = json_object_new_array();
        if (!out || sbx_json_put(spec, key, out) < 0)
                return -ENOMEM;
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *item = json_object_array_get_idx(list, i), *row, *host, *guest, *mode;

                if (!json_object_is_type(item, json_type_object))
                        return asprintf(error, "argument '%s[%zu]': must be an object", key, i), -EINVAL;
                json_object_object_foreach(item, k, v) {
                        (void) v;
                        if (!streq(k, "host") && !streq(k, "guest") && !(volumes && streq(k, "mode")))
                                return asprintf(error, "argument '%s[%zu]': unknown key '%s'", key, i, k), -EINVAL;
                }
                row = json_object_new_array();
                if (!row || sbx_json_push(out, row) < 0)
                        return -ENOMEM;
                if (!json_object_object_get_ex(item, "host", &host))
                        host = NULL;
                if (!json_object_object_get_ex(item, "guest", &guest) || !guest)
                        return asprintf(error, "argument '%s[%zu]': 'guest' is required", key, i), -EINVAL;
                if (volumes && !host)
                        return asprintf(error, "argument '%s[%zu]': 'host' is required", key, i), -EINVAL;
                if (sbx_json_push(row, host ? json_object_get(host) : json_object_new_int(0)) < 0 ||
                    sbx_json_push(row, json_object_get(guest)) < 0)
                        return -ENOMEM;
                if (volumes) {
                        if (!json_object_object_get_ex(item, "mode", &mode) || !mode)
                                mode = NULL;
                        if (sbx_json_push(row, mode ? json_object_get(mode) : json_object_new_string("rw")) < 0)
                                return -ENOMEM;
                }
        }
        return 0;
}

int append_spec_args(sd_bus_message *m, json_object *args, char **error) {
        static const char *const plain[] = {
                "image", "snapshot", "working_dir", "cpus", "memory", "env", "network_isolated",
        };
        _cleanup_(json_object_putp) json_object *spec = json_object_new_object();
        _cleanup_(sbx_spec_freep) SbxSpec *parsed = NULL;
        SbxError e = {};
        int r;

        if (!spec)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(plain); i++) {
                json_object *v;

                if (json_object_object_get_ex(args, plain[i], &v) && v &&
                    sbx_json_put(spec, plain[i], json_object_get(v)) < 0)
                        return -ENOMEM;
        }
        if ((r = spec_list(args, "volumes", spec, error)) < 0 || (r = spec_list(args, "ports", spec, error)) < 0)
                return r;
        /* The project's own spec parser: its errors name the key. */
        r = sbx_spec_from_json_string(json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN), &parsed, &e);
        if (r >= 0)
                r = sbx_bus_append_spec(m, parsed, &e);
        if (r < 0) {
                if (asprintf(error, "%s", e.message[0] ? e.message : strerror(-r)) < 0)
                        *error = NULL;
                return -EINVAL;
        }
        return 0;
}

int append_labels_entry(sd_bus_message *m, json_object *labels, char **error) {
        int r;

        if (!json_object_is_type(labels, json_type_object))
                return asprintf(error, "argument 'labels': must be an object of strings"), -EINVAL;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "labels")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{ss}")) < 0)
                return r;
        json_object_object_foreach(labels, key, value) {
                if (!json_object_is_type(value, json_type_string))
                        return asprintf(error, "argument 'labels.%s': must be a string", key), -EINVAL;
                if ((r = sd_bus_message_append(m, "{ss}", key, json_object_get_string(value))) < 0)
                        return r;
        }
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* The lifetimes go only when given: the service bounds them by policy. */
static int append_lifetimes(sd_bus_message *m, json_object *args, char **error) {
        static const char *const seconds[] = { "idle_timeout", "expire_after" };
        const char *on_idle = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(seconds); i++) {
                uint64_t v = UINT64_MAX;

                if (arg_uint(args, seconds[i], UINT32_MAX, &v, error) < 0)
                        return -EINVAL;
                if (v != UINT64_MAX && (r = sd_bus_message_append(m, "{sv}", seconds[i], "u", (uint32_t) v)) < 0)
                        return r;
        }
        if (arg_string(args, "on_idle", false, &on_idle, error) < 0)
                return -EINVAL;
        if (on_idle && (r = sd_bus_message_append(m, "{sv}", "on_idle", "s", on_idle)) < 0)
                return r;
        if (json_object_object_get_ex(args, "idle_counts_processes", NULL)) {
                bool counts;

                if (arg_bool(args, "idle_counts_processes", &counts, error) < 0)
                        return -EINVAL;
                if ((r = sd_bus_message_append(m, "{sv}", "idle_counts_processes", "b", counts)) < 0)
                        return r;
        }
        return 0;
}

int append_lifetime_options(sd_bus_message *m, json_object *args, char **error) {
        static const char *const keys[] = { "idle_timeout", "expire_after", "on_idle", "idle_counts_processes" };
        bool any = false;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                any = any || json_object_object_get_ex(args, keys[i], NULL);
        if (!any)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 || (r = append_lifetimes(m, args, error)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return 1;
}

int append_egress_value(sd_bus_message *m, json_object *egress, char **error) {
        json_object *allow = NULL;
        const char *mode = NULL;
        int r;

        if (!json_object_is_type(egress, json_type_object))
                return arg_error(error, "egress", "must be an object {mode, allow}");
        json_object_object_foreach(egress, key, val) {
                (void) val;
                if (!streq(key, "mode") && !streq(key, "allow"))
                        return arg_error(error, "egress", "takes only mode and allow");
        }
        if (arg_string(egress, "mode", false, &mode, error) < 0)
                return -EINVAL;
        if (json_object_object_get_ex(egress, "allow", &allow) && !json_object_is_type(allow, json_type_array))
                return arg_error(error, "egress", "allow must be an array of strings");
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (mode && (r = sd_bus_message_append(m, "{sv}", "mode", "s", mode)) < 0))
                return r;
        if (allow) {
                if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
                    (r = sd_bus_message_append_basic(m, 's', "allow")) < 0 ||
                    (r = sd_bus_message_open_container(m, 'v', "as")) < 0 ||
                    (r = sd_bus_message_open_container(m, 'a', "s")) < 0)
                        return r;
                for (size_t i = 0; i < json_object_array_length(allow); i++) {
                        json_object *x = json_object_array_get_idx(allow, i);

                        if (!json_object_is_type(x, json_type_string))
                                return arg_error(error, "egress", "allow must be an array of strings");
                        if ((r = sd_bus_message_append_basic(m, 's', json_object_get_string(x))) < 0)
                                return r;
                }
                if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
                    (r = sd_bus_message_close_container(m)) < 0)
                        return r;
        }
        return sd_bus_message_close_container(m);
}

int append_make_options(sd_bus_message *m, json_object *args, bool ensure, char **error) {
        const char *on_mismatch = "fail";
        const char *name_prefix = NULL;
        uint64_t stop_timeout = SBX_ENSURE_STOP_TIMEOUT_DEFAULT;
        const char *runtime = NULL;
        json_object *labels = NULL, *egress = NULL;
        int r;

        if (ensure && (arg_string(args, "on_mismatch", false, &on_mismatch, error) < 0 ||
                       arg_uint(args, "stop_timeout", SBX_STOP_TIMEOUT_MAX, &stop_timeout, error) < 0))
                return -EINVAL;
        if (arg_string(args, "name_prefix", false, &name_prefix, error) < 0)
                return -EINVAL;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        if (ensure && (r = sd_bus_message_append(m, "{sv}{sv}", "on_mismatch", "s", on_mismatch, "stop_timeout", "u",
                                                 (uint32_t) stop_timeout)) < 0)
                return r;
        if (name_prefix && (r = sd_bus_message_append(m, "{sv}", "name_prefix", "s", name_prefix)) < 0)
                return r;
        if (json_object_object_get_ex(args, "labels", &labels) && labels &&
            (r = append_labels_entry(m, labels, error)) < 0)
                return r;
        /* the runtime it runs under (docs/security.md, "Runtimes"): the service judges it */
        if (arg_string(args, "runtime", false, &runtime, error) < 0)
                return -EINVAL;
        if (runtime && (r = sd_bus_message_append(m, "{sv}", "runtime", "s", runtime)) < 0)
                return r;
        if ((r = append_lifetimes(m, args, error)) < 0)
                return r;
        if (json_object_object_get_ex(args, "egress", &egress) &&
            ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
             (r = sd_bus_message_append_basic(m, 's', "egress")) < 0 ||
             (r = sd_bus_message_open_container(m, 'v', "a{sv}")) < 0 ||
             (r = append_egress_value(m, egress, error)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
             (r = sd_bus_message_close_container(m)) < 0))
                return r;
        return sd_bus_message_close_container(m);
}
