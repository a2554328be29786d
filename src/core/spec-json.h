/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec as JSON, for files, the CLI and the store (docs/security.md): the D-Bus keys,
 * `volumes` as [["/h","/g","rw"]], `ports` as [[8080,80]].
 *
 * Parsing yields a raw spec (sbx_spec_finalize() completes it); the canonical
 * form written by sbx_spec_to_json() always has every key, in a fixed order, and
 * parses back to an equal spec. */

#include <json-c/json.h>

#include "spec.h"

/* Raw spec from a JSON document holding one object: contract-level parsing
 * (strings, integers within int64, lists of at most SBX_MAX_INPUT_ENTRIES);
 * null for working_dir, cpus, memory, env, volumes or ports means the default,
 * as None does for from_parts(). Unknown keys and wrong types are InvalidArgs
 * naming the key. The text must be strict JSON (sbx_json_parse_strict(): no
 * comments, trailing commas, single quotes, leading zeros, NaN or Infinity);
 * every \u escape is decoded as Python's json.loads() does, except that a lone
 * surrogate is refused saying so, never replaced. A U+0000 anywhere (a \u0000
 * escape in a key or a string) is InvalidArgs saying so: json-c would cut a key
 * there, and no part of a spec can hold it, so it is refused, never truncated.
 * "snapshot" makes a snapshot
 * template; neither "image" nor "snapshot" leaves an image template without an
 * image, for sbx_spec_complete()/sbx_spec_finalize() to fill in. */
int sbx_spec_from_json_string(const char *text, SbxSpec **ret, SbxError *error);

/* Canonical JSON of a normalized spec. */
int sbx_spec_to_json(const SbxSpec *spec, json_object **ret);
int sbx_spec_to_json_string(const SbxSpec *spec, char **ret);
