/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The file-system half of the volume checks (docs/security.md): the path exists, no
 * component below its volume root is a symbolic link, it is a regular file or a
 * directory, and the caller owns it (rw) or may read it (ro). The pure half
 * (canonical, admitted by a root, not a protected path) is sbx_policy_*().
 *
 * On its own this is a policy check, not a guarantee: Docker mounts the volume by
 * path later, and between this check and that mount the caller may swap a
 * component for a symlink (time of check to time of use). The guarantee comes from
 * mount-check.h: the descriptor of what was checked is held, and what the sandbox
 * actually got mounted is compared with it before the sandbox is handed over. */

#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* Checks host_path, mounted with mode ("ro" or "rw"), for the caller uid/gid with
 * the supplementary groups (n_groups of them; groups may be NULL when 0).
 *
 * root and host_path are canonical absolute paths and host_path is root or lies
 * below it on a segment boundary (root as sbx_policy_find_root() returned it);
 * else, or for another mode, SBX_ERROR_INVALID_ARGS.
 *
 * The root is opened following symlinks (the administrator chose it; %h may well
 * be a symlinked home) and must be a directory. Each component below it is opened
 * relative to its parent without following symlinks. The rules, each refusal a
 * SBX_ERROR_POLICY_VIOLATION naming the path, the offending component and the rule:
 *   - the path must exist (every component, the root included);
 *   - no component below the root is a symbolic link;
 *   - only files and directories can be volumes (no sockets, FIFOs, devices);
 *   - the caller (unless uid 0) can reach it: every directory strictly between
 *     the root and the path grants the caller search (x) permission;
 *   - rw: the path is owned by the caller (unless uid 0);
 *   - ro: the caller (unless uid 0) may read it: read (r) permission, and for a
 *     directory also search (x) permission.
 * Permissions are decided as the kernel decides them for uid, gid and groups: from
 * the file's POSIX access ACL when it has one (an entry user:caller:--- on a
 * directory refuses; a named entry may also grant), else from the mode bits, of
 * which only the one class that applies counts (a file of mode 0044 is not readable
 * by its owner).
 *
 * Returns 0 when admissible, a negative errno otherwise (SBX_ERROR_IO when the file
 * system fails in another way than these rules describe). */
int sbx_volume_check_fs(const char *root, const char *host_path, const char *mode, uid_t uid, gid_t gid,
                        const gid_t *groups, size_t n_groups, SbxError *error);

/* The same, returning an O_PATH descriptor of the checked file or directory: what
 * the check saw, held while dockerd mounts the path (mount-check.h). */
int sbx_volume_open_checked(const char *root, const char *host_path, const char *mode, uid_t uid, gid_t gid,
                            const gid_t *groups, size_t n_groups, SbxError *error);

/* The working directory lies inside a volume (rest: its path below the volume's
 * guest path, non-empty): it must exist below volume_fd as a directory, reached
 * without symlinks, or dockerd would create it as root in the owner's directory.
 * PolicyViolation naming working_dir otherwise. */
int sbx_volume_check_working_dir(int volume_fd, const char *host_path, const char *rest, const char *working_dir,
                                 SbxError *error);
