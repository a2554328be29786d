/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The labels a caller gives a sandbox (create/ensure option "labels", docs/api.md): its
 * own metadata, stored with the sandbox's row and copied onto the container under
 * SBX_USER_LABEL_PREFIX. They are never part of the spec or its fingerprint; the store
 * is what they are, read back from the container only when its row was lost (a
 * container recorded again: sbx_user_labels_from_docker()). A set is a json_object of
 * string values (an empty object: none). */

#include <json-c/json.h>
#include <stdbool.h>

#include "error.h"
#include "spec.h"

#define SBX_USER_LABELS_MAX 32U
#define SBX_USER_LABELS_MAX_BYTES 4096U         /* the keys' and values' bytes, all together */
/* The Docker label a caller's key K is written as: outside xagent's "xagent." keys,
 * which xagent's verification reads (xagent-contract.md §3). */
#define SBX_USER_LABEL_PREFIX "org.xagent.sandbox.label."

/* Adds key=value to labels (an object) unless that breaks a rule: a key of
 * [a-z0-9._/-] (non-empty), not in the service's own namespace (xagent, xagent.*,
 * org.xagent.*), given once; a value of UTF-8; at most SBX_USER_LABELS_MAX keys and
 * SBX_USER_LABELS_MAX_BYTES in all. InvalidArgs naming the key and the rule. */
int sbx_user_labels_add(json_object *labels, const char *key, const char *value, SbxError *error);

/* The stored form: a JSON object with its keys sorted; NULL labels → "{}". */
int sbx_user_labels_to_string(json_object *labels, char **ret);
/* The stored form read back; NULL or "" → an empty object; anything but an object
 * of strings → -EBADMSG. */
int sbx_user_labels_from_string(const char *s, json_object **ret);

/* Adds each label to docker_labels (a container's Config.Labels) as PREFIX + key. */
int sbx_user_labels_to_docker(json_object *labels, json_object *docker_labels);

/* Adds to commit_labels (a commit's Config.Labels) every PREFIX key of container_labels
 * (the container's Config.Labels, NULL: none) as "": a snapshot's image carries no
 * sandbox's labels into the containers made from it (Docker cannot remove a label,
 * only blank it). */
int sbx_user_labels_blank_docker(json_object *container_labels, json_object *commit_labels);

/* The caller's labels a container carries: its PREFIX labels (Config.Labels, n of
 * them), less those its image carries with the same value (image_labels, the image's
 * Config.Labels; NULL: none), which are the image's, not a caller's. A blank one is
 * absent (a snapshot's image blanks them); one that breaks a rule of
 * sbx_user_labels_add() is left out. */
int sbx_user_labels_from_docker(const SbxEnvVar *labels, size_t n, json_object *image_labels, json_object **ret);

/* Whether every key of want is in have with the same value (NULL: no labels). */
bool sbx_user_labels_match(json_object *have, json_object *want);
/* Whether both hold the same keys and values. */
bool sbx_user_labels_equal(json_object *a, json_object *b);
