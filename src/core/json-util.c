/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "json-util.h"

int sbx_json_put(json_object *object, const char *key, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_object_add(object, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int sbx_json_push(json_object *array, json_object *v) {
        if (!v)
                return -ENOMEM;
        if (json_object_array_add(array, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}
