/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What is mounted is what was checked (DESIGN §10, docs/security.md). dockerd
 * mounts a volume by its path, resolving it again at every start, so a path that
 * was checked can point elsewhere by the time it is mounted. The service therefore
 * holds the checked directory open, and after the start compares it with what the
 * container's first process actually has at the guest path, read from
 * /proc/<pid>/mountinfo: the same device and the same path within that file
 * system. The first process is this service's own init running as a uid that is
 * not the owner's, so nothing of the owner's runs in the container, and the owner
 * cannot reach into it, before this check has passed. */

#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "spec.h"

typedef struct SbxMountIdentity {
        unsigned major, minor;  /* the device of its file system */
        char *fs_path;          /* its path within that file system */
} SbxMountIdentity;

void sbx_mount_identity_done(SbxMountIdentity *id);

/* The identity of what fd (an O_PATH descriptor) refers to, as seen in this
 * process's mount namespace. */
int sbx_mount_identity_of_fd(int fd, SbxMountIdentity *ret, SbxError *error);

/* Compares each volume's guest path in the mount namespace of pid (a container's
 * first process, in the host's PID namespace) with ids[i] and the volume's mode.
 * 0 when all agree; else SBX_ERROR_RUNTIME_CONFLICT naming the first volume that
 * differs and what is mounted there instead. */
int sbx_mounts_verify(pid_t pid, const SbxVolume *volumes, const SbxMountIdentity *ids, size_t n,
                      SbxError *error);

/* For inspection, without a checked descriptor: does each bind mount of the
 * running container (pid) show the directory its source path names now (symlinks
 * followed, as dockerd would)? 1 yes, 0 no, negative on an error reading /proc. */
int sbx_mounts_truthful(pid_t pid, const SbxVolume *volumes, size_t n);
