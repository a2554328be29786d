/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A sandbox's labels (user-labels.h) as the bus carries them: a{ss}; and the copies'
 * options (lifetimes: resume). */

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "error.h"

/* Reads the variant at m's read position as the labels of option key: a{ss} under the
 * rules of sbx_user_labels_add(); anything else is InvalidArgs naming key. */
int sbx_bus_read_labels(sd_bus_message *m, const char *key, json_object **ret, SbxError *error);

/* Appends labels (NULL: none) as a{ss}. */
int sbx_bus_append_labels(sd_bus_message *m, json_object *labels);

/* CopyToSandbox / CopyFromSandbox options: "resume" b (a paused sandbox is resumed
 * first); any other key is InvalidArgs. */
int sbx_bus_read_copy_options(sd_bus_message *m, bool *ret_resume, SbxError *error);

/* FindSandboxes' filter a{sv}: "labels" a{ss} (every one must match) and "state" s
 * ("running", "paused" or "stopped"); each optional, *ret_state NULL when absent. An unknown
 * key, a key given twice or a bad value is InvalidArgs naming it. */
int sbx_bus_read_find_filter(sd_bus_message *m, json_object **ret_labels, char **ret_state, SbxError *error);
