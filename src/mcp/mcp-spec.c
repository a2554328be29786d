/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The spec arguments of create/ensure/verify: the tool's arguments made the spec
 * JSON, parsed by the project's own spec parser, appended as the bus's a{sv}. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-spec.h"
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
