/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The container labels (xagent-contract.md §3, docs/security.md). xagent's keys plus the owner.
 * The attestation keys (fingerprint, version) and the owner are always written,
 * blank when there is nothing to attest: Docker merges image labels into a new
 * container and `docker commit` copies container labels into the image, and an
 * inherited label can only be overwritten, never removed. Blank means absent. */

#include <json-c/json.h>
#include <stdint.h>
#include <sys/types.h>

#include "spec.h"

#define SBX_LABEL_MANAGED               "xagent.managed"
#define SBX_LABEL_MANAGED_VALUE         "true"
#define SBX_LABEL_SANDBOX_NAME          "xagent.sandbox.name"
#define SBX_LABEL_TEMPLATE_TYPE         "xagent.sandbox.template.type"
#define SBX_LABEL_SNAPSHOT_ID           "xagent.sandbox.snapshot_id"
#define SBX_LABEL_SPEC_FINGERPRINT      "xagent.sandbox.spec.fingerprint"
#define SBX_LABEL_SPEC_VERSION          "xagent.sandbox.spec.version"
#define SBX_LABEL_OWNER                 "xagent.sandbox.owner"
/* Which service instance (its state directory) made the container: only its own are
 * recorded again or removed when rows are missing (docs/lifecycle.md). */
#define SBX_LABEL_SERVICE               "xagent.sandbox.service"
/* A warm pool's member: the digest of the policy it was made under (docs/lifecycle.md,
 * "Warm pools"); kept by the sandbox it becomes (Docker cannot change labels). */
#define SBX_LABEL_POOL                  "xagent.sandbox.pool"

/* Builds the labels for a new container (the create body's Config.Labels):
 * managed "true", name, template type, snapshot_id (only for a snapshot template
 * with a non-empty id), fingerprint + version (the contract version) when
 * fingerprint is non-empty, else both "", and owner = decimal uid. -EINVAL for
 * an unknown template type, -ENOMEM. */
int sbx_labels_build(const char *name, const SbxSpec *spec, const char *fingerprint, uid_t owner,
                     json_object **ret);

/* A snapshot intent's token (store.h), written by its commit into the image, so that
 * the image of an interrupted snapshot is found again (docs/lifecycle.md). */
#define SBX_LABEL_SNAPSHOT_INTENT       "xagent.sandbox.snapshot.intent"

/* The config of a snapshot's commit (the body of POST /commit), which Docker merges
 * into the container's own (a value given replaces the container's; a label given ""
 * blanks it):
 * - every label this service or xagent writes on a container blanked: managed, name,
 *   template type, snapshot id, fingerprint, version, owner, service, pool — a container
 *   made from the image outside the service is nobody's sandbox and attests nothing
 *   (xagent's own creates write theirs);
 * - SBX_LABEL_SNAPSHOT_INTENT = token;
 * - the Entrypoint, Cmd and User of source, the Config of the image the container was
 *   made from, instead of the service's first process (which exists only as the
 *   service's mount) and its uid: the image starts as that image did. Docker cannot
 *   blank a value, so no entrypoint is written as [] and the default user as "0". A
 *   source that is itself a snapshot made before this (its entrypoint the service's
 *   first process) counts as having none. source NULL (the image is gone): no
 *   entrypoint, user "0", the container's Cmd. */
int sbx_labels_build_commit_config(json_object *source, const char *token, json_object **ret);

/* Reads an attestation label value: NULL or "" (blank) → NULL, else the value. */
const char *sbx_label_attestation(const char *value);

/* Parses an owner label value. NULL or "" → uid 0 (a container without an owner
 * label belongs to root). A canonical decimal uid (no sign, no spaces, no leading
 * zeros, below (uid_t) -1) → that uid. Anything else → -EINVAL: owned by nobody. */
int sbx_label_parse_owner(const char *value, uid_t *ret);

/* Whose a container is, from its owner and service label values (NULL = absent): as
 * sbx_label_parse_owner(), except that a blank owner on a container carrying a service
 * label is -ENOENT: no sandbox at all. This service always writes the owner, so such a
 * container was made outside it from an image that still carried a service's labels (a
 * snapshot committed before they were blanked): never root's, never listed, never
 * recorded or removed. */
int sbx_label_parse_owner_of(const char *owner, const char *service, uid_t *ret);
