/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* JSON helpers of the MCP server (mcp-json.c); D-Bus values as JSON: bus-json.h. */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-json.h"
#include "json-util.h"
#include "macro.h"

/* Argument helpers: NULL/absent is "not given" (ret untouched, returns 0). A wrong
 * type is -EINVAL with *error set to a message naming the argument. */
int arg_string(json_object *args, const char *key, bool required, const char **ret, char **error);
int arg_uint(json_object *args, const char *key, uint64_t max, uint64_t *ret, char **error);
int arg_cursor(json_object *args, const char *key, uint64_t *ret, char **error);
int arg_bool(json_object *args, const char *key, bool *ret, char **error);

/* Text: bytes as a JSON string of valid UTF-8 (each bad byte U+FFFD). With
 * ret_consumed, a sequence cut at the end is left for the next chunk. */
json_object *json_string_from_bytes(const char *data, size_t len, size_t *ret_consumed);
char *base64_encode(const void *data, size_t len);
int base64_decode(const char *text, void **ret, size_t *ret_len);
