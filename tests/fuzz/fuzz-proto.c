/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Fuzz target: every reader of the channel's protocol (src/core/proto.c) over
 * arbitrary bytes — what the daemon reads from the program in a sandbox (replies,
 * list entries, errors, a detached process's ring file) and what that program reads
 * from the daemon (requests).
 * Built two ways: with libFuzzer (tools/fuzz.sh), and with fuzz-driver.c into the
 * unit suite, where it runs natively, under ASan+UBSan and under valgrind. */

#include <stddef.h>
#include <stdint.h>

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
        static uint8_t out[4096], err_out[4096];
        size_t pos = 0, n_out, n_err, half;
        SbxRingHeader ring;
        char why[64];
        bool truncated;
        int n;

        /* A ring file's header, and its output split by tags (the first half of the
         * bytes as output, the rest as tags, the position from the header). */
        if (sbx_ring_parse_header(data, size, &ring) < 0)
                ring.commit = size;
        half = MIN(size / 2, sizeof out);
        (void) sbx_ring_split(data, half, ring.commit, data + half, size - half, out, &n_out, err_out, &n_err);
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
