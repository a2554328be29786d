/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <json-c/json.h>

#include "error.h"
#include "macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);

/* Add v under key / append v, taking ownership of v in every case (it is released
 * if adding fails). v == NULL (a failed constructor) is -ENOMEM. */
int sbx_json_put(json_object *object, const char *key, json_object *v);
int sbx_json_push(json_object *array, json_object *v);

/* One JSON document, strictly as RFC 8259 has it, read with json-c: no comments,
 * trailing commas, single quotes, leading zeros, NaN or Infinity, control
 * characters or bytes that are not UTF-8 in strings, nothing after the value; at
 * most SBX_JSON_MAX_DEPTH arrays and objects deep. Every \u escape is decoded
 * here, not by json-c (which turns a lone surrogate, and each pair whose code
 * point has its low 16 bits in D800–DFFF, into U+FFFD): a surrogate pair becomes
 * its code point, a lone or reversed surrogate is refused saying so, as is
 * \u0000 (json-c would cut a key at it). Errors are InvalidArgs, "what: …",
 * naming the byte offset and the innermost key. */
#define SBX_JSON_MAX_DEPTH 32
int sbx_json_parse_strict(const char *text, const char *what, json_object **ret, SbxError *error);

/* v as a string without NUL and valid UTF-8 (*ret borrowed from v), or InvalidArgs
 * naming field. */
int sbx_json_get_text(const char *field, json_object *v, const char **ret, SbxError *error);
