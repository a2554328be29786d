/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker names derived from logical names, exactly as xagent derives them
 * (contract §3): the container name and the snapshot image reference. */

#define SBX_CONTAINER_NAME_PREFIX "xagent_sandbox_"
#define SBX_SNAPSHOT_REPOSITORY "xagent-sandbox-snapshot"

/* xagent's _make_safe_name(): runs of characters outside [a-zA-Z0-9_.-] become
 * one "-", "-" and "." are stripped at both ends, "sandbox" if nothing is left,
 * lowercased, then "-" and the first 10 hex digits of the SHA-1 of the original
 * name. Returns 0 and a new string in *ret, or -ENOMEM / -EIO (hashing failed). */
int sbx_make_safe_name(const char *name, char **ret);

/* "xagent_sandbox_" + safe(name). */
int sbx_container_name(const char *name, char **ret);

/* The tag part of a snapshot image reference: safe(snapshot_id). */
int sbx_snapshot_image_tag(const char *snapshot_id, char **ret);

/* The full snapshot image reference: "xagent-sandbox-snapshot:" + safe(snapshot_id). */
int sbx_snapshot_image_ref(const char *snapshot_id, char **ret);
