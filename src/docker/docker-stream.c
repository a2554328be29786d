/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "docker-stream.h"

static size_t frame_size(const uint8_t h[static SBX_DOCKER_FRAME_HEADER]) {
        return (size_t) h[4] << 24 | (size_t) h[5] << 16 | (size_t) h[6] << 8 | (size_t) h[7];
}

ssize_t sbx_demux_step(SbxDemux *d, const char *data, size_t size, unsigned *ret_stream,
                       const char **ret_piece, size_t *ret_piece_size) {
        size_t n;

        *ret_piece = NULL;
        *ret_piece_size = 0;
        if (size == 0)
                return 0;

        if (d->remaining == 0) {
                n = MIN(size, SBX_DOCKER_FRAME_HEADER - d->header_fill);
                memcpy(d->header + d->header_fill, data, n);
                d->header_fill += n;
                if (d->header_fill < SBX_DOCKER_FRAME_HEADER)
                        return (ssize_t) n;
                d->header_fill = 0;
                d->stream = d->header[0];
                if ((d->stream != 1 && d->stream != 2 && !(d->status_stream && d->stream == 3)) || d->header[1] || d->header[2] || d->header[3])
                        return -EBADMSG;
                d->remaining = frame_size(d->header);
                return (ssize_t) n;
        }

        n = MIN(size, d->remaining);
        d->remaining -= n;
        *ret_stream = d->stream;
        *ret_piece = data;
        *ret_piece_size = n;
        return (ssize_t) n;
}

bool sbx_demux_at_boundary(const SbxDemux *d) {
        return d->remaining == 0 && d->header_fill == 0;
}

int sbx_demux_all(const char *data, size_t size, char **ret, SbxError *error) {
        _cleanup_free_ char *out = malloc(size + 1);
        SbxDemux d = SBX_DEMUX_INIT;
        size_t n = 0;

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < size;) {
                const char *piece;
                size_t piece_size;
                unsigned stream;
                ssize_t k = sbx_demux_step(&d, data + i, size - i, &stream, &piece, &piece_size);

                if (k < 0)
                        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker: a malformed stream frame");
                if (piece_size > 0) {           /* a header-only step has no piece */
                        memcpy(out + n, piece, piece_size);
                        n += piece_size;
                }
                i += (size_t) k;
        }
        if (!sbx_demux_at_boundary(&d))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker: a truncated stream frame");
        out[n] = 0;
        *ret = TAKE_PTR(out);
        return 0;
}
