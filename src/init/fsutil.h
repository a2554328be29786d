/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* File-system steps the init's modes share (unpack.c, serve.c, stream.c, attach.c):
 * whole writes, making directories, and files that appear under their name only once
 * complete. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define FS_TMP_NAME_MAX 64

/* Makes every directory of path (relative to root, or absolute) that is missing,
 * mode 0755 as tar does, when make is set; an open descriptor of the last one, or
 * -1 with errno. */
/* Writes all n bytes of p to fd (again after EINTR): 0, or -1 with errno. */
int fs_write_all(int fd, const uint8_t *p, size_t n);

int fs_open_dirs(int root, const char *path, bool make);

/* A new file in dir with no name yet (O_TMPFILE), or where the file system has
 * none a hidden temporary name written to tmp; *unnamed says which. -1 with errno. */
int fs_create_hidden(int dir, char tmp[FS_TMP_NAME_MAX], bool *unnamed);

/* Closes fd and puts the file in place under base (replacing what is there, but
 * not a directory); on failure nothing is left of it. -1 with errno. */
int fs_publish(int dir, int fd, bool unnamed, const char *tmp, const char *base);

/* Closes fd and leaves nothing of the file. */
void fs_discard(int dir, int fd, bool unnamed, const char *tmp);

/* A temporary name for a link made in dir before it is renamed into place. */
void fs_tmp_name(char tmp[FS_TMP_NAME_MAX]);

/* Moves tmp to base in dir; on failure tmp is removed. -1 with errno. */
int fs_rename_into_place(int dir, const char *tmp, const char *base);

/* What a file takes on disk: its blocks, not its length (a sparse file's holes take none). */
uint64_t fs_disk_bytes(const struct stat *st);

/* What removing the entry name of dir gives back: its blocks when it is the last link. */
uint64_t fs_released_by(int dir, const char *name);

/* The directory part of an absolute path (into dir, as long as path) and its last
 * component (a path ending in "/" has none: NULL). */
const char *fs_split(const char *path, char *dir);
