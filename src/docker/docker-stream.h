/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker's multiplexed stream (logs, and an exec's output without a terminal):
 * frames of an 8-byte header — the stream (0 stdin, 1 stdout, 2 stderr), three
 * zero bytes, the big-endian payload size — followed by the payload. The
 * demultiplexer is incremental: bytes arrive in any chunking (a header may be
 * split across reads) and come out as (stream, slice of the input) pieces,
 * without copying the payload. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_DOCKER_FRAME_HEADER 8U

typedef struct SbxDemux {
        uint8_t header[SBX_DOCKER_FRAME_HEADER];
        size_t header_fill;             /* bytes of the current header seen */
        size_t remaining;               /* payload bytes of the current frame still to come */
        unsigned stream;                /* of the current frame */
        bool status_stream;             /* stream 3 is accepted too (a channel command's status, proto.h) */
} SbxDemux;

#define SBX_DEMUX_INIT ((SbxDemux) {})

/* Consumes a prefix of data[0..size): returns the number of bytes consumed (≥ 1
 * when size > 0) and, when the prefix ended in payload, that payload in
 * *ret_piece / *ret_piece_size with its stream in *ret_stream (size 0 when the
 * prefix was header bytes only). A frame for a stream other than 1 or 2 is
 * -EBADMSG. Call again with the rest until everything is consumed. */
ssize_t sbx_demux_step(SbxDemux *d, const char *data, size_t size, unsigned *ret_stream,
                       const char **ret_piece, size_t *ret_piece_size);

/* True between frames: the stream may end here. */
bool sbx_demux_at_boundary(const SbxDemux *d);

/* The payload of a whole multiplexed answer, all streams concatenated,
 * NUL-terminated. A truncated or malformed frame is BackendError. */
int sbx_demux_all(const char *data, size_t size, char **ret, SbxError *error);
