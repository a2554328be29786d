/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A detached process's ring file, as the in-sandbox program opens and judges it
 * (serve.c's OUTPUT, attach.c): the reading itself is src/core/ring.c's. The file
 * and its directory are the owner's: nothing here follows a link, blocks on a FIFO
 * put in its place, or trusts a position. */

#include "ring.h"

/* The ring file of DIR, read-only: a descriptor, or -1 with errno (EBADMSG: not a
 * regular file). */
int ring_file_open(const char *dir);
/* The same, of the directory dir relative to the directory at. */
int ring_file_openat(int at, const char *dir);

/* The callback for SbxRingSource, its userdata a pointer to the descriptor. */
int ring_file_pread(void *userdata, uint64_t off, void *buf, size_t n);

/* Field 22 of a /proc/PID/stat (the process's start time), or 0 when it cannot be
 * read (the process is gone). */
uint64_t ring_file_start_time(const char *stat_path);

/* SBX_RING_STATE_*: the header's, or LOST when it says running but its supervisor
 * (its pid with the start time it recorded) is not there any more. */
unsigned ring_file_state(const SbxRingHeader *h);
