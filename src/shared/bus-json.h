/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* D-Bus values as JSON, for the clients that print or pass on what the service answers
 * (xagent-sandboxctl, xagent-sandbox-mcp). */

#include <json-c/json.h>
#include <systemd/sd-bus.h>

/* Reads the next complete value of m, whatever its type, as JSON: numbers, booleans
 * and strings as such, a{s…} as an object, other arrays and structs as arrays,
 * variants as their contents. 0, or a negative errno (-EBADMSG at the end of m or for
 * a file descriptor, which no reply of the service carries). */
int sbx_bus_read_json(sd_bus_message *m, json_object **ret);
