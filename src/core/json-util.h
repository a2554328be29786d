/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* Add v under key / append v, taking ownership of v in every case (it is released
 * if adding fails). v == NULL (a failed constructor) is -ENOMEM. */
int sbx_json_put(json_object *object, const char *key, json_object *v);
int sbx_json_push(json_object *array, json_object *v);
