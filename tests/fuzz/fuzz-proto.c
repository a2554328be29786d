/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Fuzz target: every reader of the channel's protocol (src/core/proto.c) over
 * arbitrary bytes — what the daemon reads from the program in a sandbox (replies,
 * list entries, errors, a detached process's ring file) and what that program reads
 * from the daemon (requests).
 * Built two ways: with libFuzzer (tools/fuzz.sh), and with fuzz-driver.c into the
 * unit suite, where it runs natively, under ASan+UBSan and under valgrind. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static SbxProtoRequest q;
        static SbxProtoEntry e;
        SbxProtoReadReply rr;
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
        }
        while (size > 0 && (n = sbx_proto_frame(data, size, &f)) > 0) {
                (void) sbx_proto_request_parse(&f, &q, why, sizeof why);
                (void) sbx_proto_error_parse(&f, &err);
                (void) sbx_proto_read_reply_parse(&f, SBX_PROTO_MAX_DATA, &rr);
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
