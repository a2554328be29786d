/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker names derived from logical names, exactly as xagent derives them
 * (xagent-contract.md §3): the container name and the snapshot image reference. */

#include <stdbool.h>
#include <sys/types.h>

#include "macro.h"

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

/* Names belong to their owner (docs/security.md): a sandbox name or snapshot id is
 * one owner's. The Docker-level name — the xagent.sandbox.name label, and so the
 * container name and the snapshot image tag — of root's name is the name itself
 * (xagent's, so interop with xagent is unchanged); of any other owner's it is
 * "~<uid>:<name>", a form no caller's name may take (sbx_name_is_reserved()), so
 * it never collides with root's or another user's. */
int sbx_name_qualify(uid_t owner, const char *name, char **ret);

/* The owner and the plain name of a Docker-level name: "~<uid>:<name>" with uid not
 * 0 gives (uid, name); anything else is root's (0, itself). *ret_name points into
 * qualified. */
uid_t sbx_name_unqualify(const char *qualified, const char **ret_name);

/* The Docker-level name of a container from its labels: its name label as the
 * owner label's namespace reads it. A name label without the owner's form on a
 * container of a non-root owner is one made before names had owners: it is that
 * owner's name. A name label in the form of another owner's names ("~1002:x" on
 * root's container, one without an owner label, or on uid 1003's) is in nobody's
 * namespace: -EBADMSG, and the container is no one's sandbox. NULL name → NULL. */
int sbx_name_from_labels(const char *name_label, uid_t owner, char **ret);

/* "~", decimal digits, ":" at the start: the form of another owner's Docker-level
 * name, which no name given by a caller may have. */
bool sbx_name_is_reserved(const char *name) _pure_;
