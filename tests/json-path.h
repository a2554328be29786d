/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading nested members of Docker's JSON answers in tests. */

#include <json-c/json.h>
#include <stdarg.h>

static inline json_object *jget_v(json_object *j, va_list ap) {
        const char *key;

        while (j && (key = va_arg(ap, const char *)))
                if (!json_object_object_get_ex(j, key, &j))
                        return NULL;
        return j;
}

/* The member at a path of keys (NULL-terminated), or NULL. */
static inline json_object *jget_(json_object *j, ...) {
        va_list ap;

        va_start(ap, j);
        j = jget_v(j, ap);
        va_end(ap);
        return j;
}
#define jget(j, ...) jget_(j, __VA_ARGS__, NULL)
#define jstr(j, ...) json_object_get_string(jget(j, __VA_ARGS__))
