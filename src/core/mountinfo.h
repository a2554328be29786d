/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* /proc/<pid>/mountinfo (proc(5)), parsed. Pure: the text is read elsewhere. A
 * bind mount's root is the path of the mounted directory within its file system,
 * so (device, root) names what is mounted, whatever path it was mounted by. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

typedef struct SbxMountInfo {
        int mount_id;
        unsigned major, minor;
        char *root;             /* unescaped */
        char *mount_point;      /* unescaped; relative to the reading process's root */
        bool read_only;         /* the per-mount option "ro" */
} SbxMountInfo;

/* Parses every line; a malformed line is -EBADMSG. */
int sbx_mountinfo_parse(const char *text, SbxMountInfo **ret, size_t *ret_n);
void sbx_mountinfo_free(SbxMountInfo *m, size_t n);

/* The mount that is visible at path: the last one mounted there. NULL if none. */
const SbxMountInfo *sbx_mountinfo_at(const SbxMountInfo *m, size_t n, const char *mount_point) _pure_;
const SbxMountInfo *sbx_mountinfo_by_id(const SbxMountInfo *m, size_t n, int mount_id) _pure_;

/* The path within its file system of path, which lies on mount m (at or below its
 * mount point): m's root joined with the rest of path. -EINVAL if path is not
 * at or below the mount point. */
int sbx_mountinfo_fs_path(const SbxMountInfo *m, const char *path, char **ret);

/* The sandbox init's report (src/init): in a container log tail as Docker returns it
 * with timestamps ("<RFC 3339> <line>" per line), the mount table between the last
 * "xagent-sandbox-init: mounts begin" and "… end" marker lines, all of them logged at
 * or after since_us (µs since the epoch; earlier lines are an earlier start's).
 * Returns 1 and the table's text, 0 if no complete report of this start is there
 * (yet), -EBADMSG if the init reported an error or a line is malformed. */
int sbx_mountinfo_from_init_log(const char *log, uint64_t since_us, char **ret);
