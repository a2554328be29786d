/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What is mounted is what was checked (docs/security.md). dockerd
 * mounts a volume by its path, resolving it again at every start, so a path that
 * was checked can point elsewhere by the time it is mounted. The service therefore
 * holds the checked directory open and, after the start, compares it with what the
 * container actually has at the guest path: the same device and the same path
 * within that file system. What the container has is the mount table its first
 * process reports in the container's log (src/init): that process is this
 * service's own init running as a uid that is not the owner's, so nothing of the
 * owner's runs in the container, and the owner cannot reach into it or write to
 * its log, before this check has passed. */

#include <stddef.h>
#include <stdint.h>

#include "docker.h"
#include "mountinfo.h"
#include "spec.h"

/* How long a start waits for the init's report. */
#define SBX_MOUNT_REPORT_TIMEOUT_MS 5000U

typedef struct SbxMountTable {
        SbxMountInfo *m;
        size_t n;
} SbxMountTable;

void sbx_mount_table_done(SbxMountTable *t);

/* The mount table the container's first process reported for a start at or after
 * since_us (µs since the epoch), waiting for the report up to timeout_ms (0: look
 * once). No report is RuntimeConflict. */
int sbx_container_mounts(SbxDocker *d, const char *id, uint64_t since_us, unsigned timeout_ms, SbxMountTable *ret,
                         SbxError *error);

/* Before starting a container that ran before: on an engine that stamps its log
 * lines in whole seconds (Podman; sbx_dialect_report_since()), waits for the next
 * second, so that every line of an earlier run is stamped before the start's
 * second and no earlier report can pass for the start's (at most 1 s). */
void sbx_mount_report_new_second(SbxDocker *d);

/* Compares each volume's guest path in the table with what fds[i] (the checked
 * descriptor of volume i) refers to now, and with the volume's mode. The
 * descriptor's path is read now from the kernel, as the table's was when it was
 * reported, so a directory renamed meanwhile still compares equal to itself and
 * never to another. 0 when all agree; else SBX_ERROR_RUNTIME_CONFLICT naming the
 * first volume that differs and what is mounted there instead. */
int sbx_mounts_verify(const SbxMountTable *t, const SbxVolume *volumes, const int *fds, size_t n,
                      SbxError *error);

/* For inspection, without a checked descriptor: does each bind mount in the table
 * show the directory its source path names now (symlinks followed, as dockerd
 * would)? */
bool sbx_mounts_truthful(const SbxMountTable *t, const SbxVolume *volumes, size_t n);
