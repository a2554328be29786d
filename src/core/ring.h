/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one reader of a detached process's ring file (its layout: proto.h,
 * SBX_RING_*). Pure: the file is read through a callback, so the same code serves
 * the in-sandbox program's OUTPUT request (src/init/serve.c), its Attach copy
 * (src/init/attach.c) and the unit tests (over memory). Everything in the file is
 * hostile input — the owner's processes can write it — and a writer may be racing
 * the read: what is returned is consistent (bytes of the stream, in order, none
 * overwritten meanwhile) and, under a writer faster than the reader, the newest
 * bytes kept rather than nothing. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

/* Reads n bytes at off of the file into buf: 0, or a negative errno (a short read
 * included: -EBADMSG). */
typedef int (*SbxRingPread)(void *userdata, uint64_t off, void *buf, size_t n);

typedef struct SbxRingSource {
        SbxRingPread pread;
        void *userdata;
} SbxRingSource;

/* The header in buf (n bytes): 0; -EPROTONOSUPPORT for layout 1; -EBADMSG when it
 * is not a header of this layout (a cap outside SBX_RING_CAP_MIN…MAX, a position at
 * or above 2^63, a status above 255 included). */
int sbx_ring_parse_header(const uint8_t *buf, size_t n, SbxRingHeader *ret);
/* The same, read through src. */
int sbx_ring_read_header(const SbxRingSource *src, SbxRingHeader *ret);

/* ReadOutput's offset is a cursor over both streams: stdout's part in the low 32
 * bits, stderr's in the high 32. A position p's part is p itself below 2^32 and
 * 1 + (p - 1) mod (2^32 - 1) in general: only position 0 has part 0, so a cursor
 * part of 0 always means "from the oldest byte kept" and a reader that caught up
 * never gets it back, whatever the stream's length (a part 0 for a stream at 2^32
 * would name its end and its start at once). */
uint64_t sbx_ring_cursor(const uint64_t pos[2]);
/* The cursor n[0] bytes of stdout and n[1] of stderr further than cursor (what a
 * reader that passed them on without positions, StreamOutput's, counts on with). */
uint64_t sbx_ring_cursor_advance(uint64_t cursor, const uint64_t n[2]);
/* The positions a cursor names, given each stream's commit: for each stream the
 * newest position <= its commit whose part is the cursor's (0 for part 0); -ERANGE
 * when there is none (the cursor is past a stream's end). */
int sbx_ring_cursor_positions(uint64_t cursor, const uint64_t commit[2], uint64_t ret[2]);

/* How often a read overwritten meanwhile is tried again (each time on a fresh
 * header, and from the newest bytes, half as many as before). */
#define SBX_RING_READ_TRIES 12U

/* Stream s of the ring from *pos on (bytes dropped before it skipped: a read starts
 * at the oldest byte kept at the latest), at most max bytes, into buf. On success
 * *pos is the position of the first byte returned and *ret_n how many; h is the
 * header the bytes were read under (re-read when a racing write overwrote them).
 * -ERANGE when *pos is past the stream's commit, -EAGAIN when every try was
 * overwritten before it was read, or the callback's error. */
int sbx_ring_read_stream(const SbxRingSource *src, SbxRingHeader *h, int s, uint64_t *pos, uint8_t *buf,
                         size_t max, size_t *ret_n);
