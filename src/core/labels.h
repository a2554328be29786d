/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The container labels (contract §3, docs/security.md). xagent's keys plus the owner.
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

/* Builds the labels for a new container (the create body's Config.Labels):
 * managed "true", name, template type, snapshot_id (only for a snapshot template
 * with a non-empty id), fingerprint + version (the contract version) when
 * fingerprint is non-empty, else both "", and owner = decimal uid. -EINVAL for
 * an unknown template type, -ENOMEM. */
int sbx_labels_build(const char *name, const SbxSpec *spec, const char *fingerprint, uid_t owner,
                     json_object **ret);

/* The labels a snapshot commit writes into its image so that no container made
 * from it is falsely attested or owned: fingerprint, version and owner, all "". */
int sbx_labels_build_commit_blank(json_object **ret);

/* The same as Dockerfile instructions for the commit's `changes` parameter
 * ("LABEL <key>="), a static NULL-terminated array. */
const char *const *sbx_labels_commit_changes(void);

/* Reads an attestation label value: NULL or "" (blank) → NULL, else the value. */
const char *sbx_label_attestation(const char *value);

/* Parses an owner label value. NULL or "" → uid 0 (a container without an owner
 * label belongs to root). A canonical decimal uid (no sign, no spaces, no leading
 * zeros, below (uid_t) -1) → that uid. Anything else → -EINVAL: owned by nobody. */
int sbx_label_parse_owner(const char *value, uid_t *ret);
