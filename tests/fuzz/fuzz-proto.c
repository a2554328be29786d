/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Fuzz target: every reader of the channel's protocol (src/core/proto.c) over
 * arbitrary bytes — what the daemon reads from the program in a sandbox (replies,
 * list entries, errors, OUTPUT replies, a detached process's ring file through the
 * ring's one reader, src/core/ring.c) and what that program reads
 * from the daemon (requests).
 * Built two ways: with libFuzzer (tools/fuzz.sh), and with fuzz-driver.c into the
 * unit suite, where it runs natively, under ASan+UBSan and under valgrind. */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto.h"
#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct Bytes {
        const uint8_t *data;
        size_t size;
} Bytes;

/* The input as a ring file: what lies past its end reads as a short file. */
static int bytes_pread(void *userdata, uint64_t off, void *buf, size_t n) {
        const Bytes *b = userdata;

        if (off > b->size || n > b->size - off)
                return -EBADMSG;
        memcpy(buf, b->data + off, n);
        return 0;
}

/* The ring's one reader over the input: what it returns lies within the commit
 * and is never more than asked for. */
static void read_ring(const uint8_t *data, size_t size, uint64_t cursor) {
        static uint8_t buf[4096];
        Bytes b = { data, size };
        SbxRingSource src = { .pread = bytes_pread, .userdata = &b };
        SbxRingHeader h;
        uint64_t pos[2];

        if (sbx_ring_read_header(&src, &h) < 0 || sbx_ring_cursor_positions(cursor, h.commit, pos) < 0)
                return;
        for (int s = 0; s < 2; s++) {
                size_t n = SIZE_MAX;

                if (sbx_ring_read_stream(&src, &h, s, &pos[s], buf, sizeof buf, &n) == 0 &&
                    (n > sizeof buf || pos[s] + n > h.commit[s]))
                        abort();
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static SbxProtoRequest q;
        static SbxProtoEntry e;
        SbxProtoReadReply rr;
        SbxProtoOutputReply out;
        SbxProtoError err;
        SbxProtoFrame f;
        SbxProtoField field;
        size_t pos = 0;
        SbxRingHeader ring;
        char why[64];
        bool truncated;
        int n;

        /* A ring file's header, and a cursor (its last, unused 8 bytes) over its
         * commits: the positions it names are never past them, and name it again. */
        if (sbx_ring_parse_header(data, size, &ring) >= 0) {
                uint64_t cursor, at[2];

                memcpy(&cursor, data + SBX_RING_HEADER_SIZE - 8, 8);
                if (sbx_ring_cursor_positions(cursor, ring.commit, at) == 0 &&
                    (at[0] > ring.commit[0] || at[1] > ring.commit[1] ||
                     sbx_ring_cursor(at) != cursor))
                        abort();
                read_ring(data, size, cursor);
        }
        while (size > 0 && (n = sbx_proto_frame(data, size, &f)) > 0) {
                (void) sbx_proto_request_parse(&f, &q, why, sizeof why);
                (void) sbx_proto_error_parse(&f, &err);
                (void) sbx_proto_read_reply_parse(&f, SBX_PROTO_MAX_DATA, &rr);
                if (sbx_proto_output_reply_parse(&f, SBX_PROTO_MAX_OUTPUT, &out) == 0)
                        for (int s = 0; s < 2; s++)
                                if (out.pos[s] + out.size[s] > out.commit[s] || out.commit[s] > INT64_MAX)
                                        abort();
                (void) sbx_proto_list_truncated(&f, &truncated);
                pos = 0;
                while (sbx_proto_list_next(&f, &pos, &e) > 0)
                        ;
                data += n;
                size -= (size_t) n;
        }
        /* The field reader alone, on the rest as a payload. */
        pos = 0;
        while (sbx_proto_next(data, size, &pos, &field) > 0)
                (void) sbx_proto_find(field.data, field.size, SBX_TAG_NAME, &field);
        return 0;
}
