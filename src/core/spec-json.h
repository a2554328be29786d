/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec as JSON, for files, the CLI and the store (DESIGN §3): the D-Bus keys,
 * `volumes` as [["/h","/g","rw"]], `ports` as [[8080,80]].
 *
 * Parsing yields a raw spec (sbx_spec_finalize() completes it); the canonical
 * form written by sbx_spec_to_json() always has every key, in a fixed order, and
 * parses back to an equal spec. */

#include <json-c/json.h>

#include "spec.h"

/* Raw spec from a JSON object. Unknown keys, wrong types, embedded NUL bytes and
 * both "image" and "snapshot" are InvalidArgs naming the key. Neither key leaves
 * an image template without an image, for sbx_spec_finalize() to fill in. */
int sbx_spec_from_json(json_object *obj, SbxSpec **ret, SbxError *error);
int sbx_spec_from_json_string(const char *text, SbxSpec **ret, SbxError *error);

/* Canonical JSON of a normalized spec. */
int sbx_spec_to_json(const SbxSpec *spec, json_object **ret);
int sbx_spec_to_json_string(const SbxSpec *spec, char **ret);
