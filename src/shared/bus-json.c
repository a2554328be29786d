/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "bus-json.h"
#include "bus-lifetime.h"
#include "json-util.h"

static int read_basic(sd_bus_message *m, char type, json_object **ret) {
        union {
                int b;
                double d;
                const char *s;
        } v;
        json_object *j;
        int64_t x;
        int r;

        if (sbx_bus_type_is_integer(type)) {
                if ((r = sbx_bus_read_integer(m, type, &x)) < 0)
                        return r;
                j = type == 't' ? json_object_new_uint64((uint64_t) x) : json_object_new_int64(x);
        } else if (type == 'h')
                return -EBADMSG;        /* no reply of the service sends file descriptors */
        else if ((r = sd_bus_message_read_basic(m, type, &v)) < 0)
                return r;
        else if (type == 'b')
                j = json_object_new_boolean(v.b);
        else if (type == 'd')
                j = json_object_new_double(v.d);
        else
                j = json_object_new_string(v.s);        /* s, o, g */
        if (!j)
                return -ENOMEM;
        *ret = j;
        return 0;
}

/* The members of the container m has entered, as an array or (for a{s…}) an object. */
static int read_members(sd_bus_message *m, bool as_object, json_object **ret) {
        _cleanup_(json_object_putp) json_object *out = as_object ? json_object_new_object()
                                                                 : json_object_new_array();
        int r;

        if (!out)
                return -ENOMEM;
        while ((r = sd_bus_message_at_end(m, false)) == 0) {
                _cleanup_(json_object_putp) json_object *value = NULL;
                const char *key;

                if (!as_object) {
                        if ((r = sbx_bus_read_json(m, &value)) < 0 || (r = sbx_json_push(out, TAKE_PTR(value))) < 0)
                                return r;
                        continue;
                }
                if ((r = sd_bus_message_enter_container(m, 'e', NULL)) < 0 ||
                    (r = sd_bus_message_read_basic(m, 's', &key)) < 0 ||
                    (r = sbx_bus_read_json(m, &value)) < 0 ||
                    (r = sbx_json_put(out, key, TAKE_PTR(value))) < 0 ||
                    (r = sd_bus_message_exit_container(m)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(out);
        return 0;
}

int sbx_bus_read_json(sd_bus_message *m, json_object **ret) {
        const char *contents;
        char type;
        int r;

        r = sd_bus_message_peek_type(m, &type, &contents);
        if (r <= 0)
                return r < 0 ? r : -EBADMSG;
        if (!strchr("arve", type))
                return read_basic(m, type, ret);
        if ((r = sd_bus_message_enter_container(m, type, contents)) < 0)
                return r;
        if (type == 'v')
                r = sbx_bus_read_json(m, ret);
        else
                r = read_members(m, type == 'a' && contents[0] == '{' && contents[1] == 's', ret);
        if (r < 0)
                return r;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? r : 0;
}
