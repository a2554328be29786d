/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The ring's one reader (src/core/ring.c) over a ring file in memory: the header's
 * bounds, the cursor (part 0 only for position 0, whatever a stream's length), and
 * the stream reader against a writer that races it — what it returns is always
 * bytes of the stream in order, and under a writer faster than the reader the
 * newest kept, never nothing; a forged file fails typed or returns what it keeps.
 * Also the OUTPUT reply's checks (src/core/proto.c). */

#include "sbx-test.h"
#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "ring.h"

#define CAP SBX_RING_CAP_MIN

static void put_le(uint8_t *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

/* A ring file of cap CAP in memory, and a writer that appends as detach.c does
 * (intent, data, commit), the byte at stream position p being (uint8_t) p. */
typedef struct Ring {
        uint8_t file[SBX_RING_FILE_SIZE(CAP)];
        uint64_t written[2];
        uint64_t speed;                 /* the racing writer appends speed/4 bytes for each byte of data read */
        unsigned reads;
} Ring;

static void ring_init(Ring *r) {
        memset(r, 0, sizeof *r);
        memcpy(r->file, SBX_RING_MAGIC, 8);
        put_le(r->file + SBX_RING_CAP_OFFSET, CAP);
}

static void ring_append(Ring *r, int s, uint64_t n) {
        uint64_t pos = r->written[s];

        put_le(r->file + SBX_RING_INTENT_OFFSET(CAP, s), pos + n);
        for (uint64_t i = n > CAP ? n - CAP : 0; i < n; i++)         /* only the newest CAP bytes stay */
                r->file[SBX_RING_DATA_OFFSET(CAP, s) + (pos + i) % CAP] = (uint8_t) (pos + i);
        r->written[s] = pos + n;
        put_le(r->file + SBX_RING_COMMIT_OFFSET(s), pos + n);
}

static int mem_pread(void *userdata, uint64_t off, void *buf, size_t n) {
        Ring *r = userdata;

        if (off > sizeof r->file || n > sizeof r->file - off)
                return -EBADMSG;
        memcpy(buf, r->file + off, n);
        /* A read of the data (not of the header or an intent) lets the writer run. */
        if (off >= SBX_RING_HEADER_SIZE && off < SBX_RING_INTENT_OFFSET(CAP, 0) && r->speed > 0)
                ring_append(r, 0, n * r->speed / 4);
        r->reads++;
        return 0;
}

/* Every byte returned is its stream position's (one check: each is a message to
 * the runner). */
static void assert_stream_bytes(const uint8_t *b, size_t n, uint64_t pos) {
        size_t wrong = 0;

        for (size_t i = 0; i < n; i++)
                wrong += b[i] != (uint8_t) (pos + i);
        ck_assert_uint_eq(wrong, 0);
}

START_TEST(test_header) {
        uint8_t h[SBX_RING_HEADER_SIZE] = {};
        SbxRingHeader r;

        memcpy(h, SBX_RING_MAGIC, 8);
        put_le(h + SBX_RING_CAP_OFFSET, SBX_RING_CAP_DEFAULT);
        put_le(h + SBX_RING_COMMIT_OFFSET(0), 5000000);
        put_le(h + SBX_RING_COMMIT_OFFSET(1), 12);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), 0);
        ck_assert_uint_eq(r.cap, SBX_RING_CAP_DEFAULT);
        ck_assert_uint_eq(r.commit[0], 5000000);
        ck_assert_uint_eq(r.commit[1], 12);
        ck_assert(!r.exited);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h - 1, &r), -EBADMSG);
        /* a position at 2^63 or above */
        put_le(h + SBX_RING_COMMIT_OFFSET(1), UINT64_C(1) << 63);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EBADMSG);
        put_le(h + SBX_RING_COMMIT_OFFSET(1), 12);
        /* a cap out of the ring's bounds, a state or status not of the layout, the older layout */
        put_le(h + SBX_RING_CAP_OFFSET, SBX_RING_CAP_MAX + 1);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EBADMSG);
        put_le(h + SBX_RING_CAP_OFFSET, SBX_RING_CAP_MIN - 1);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EBADMSG);
        put_le(h + SBX_RING_CAP_OFFSET, SBX_RING_CAP_MIN);
        put_le(h + SBX_RING_STATE_OFFSET, 2);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EBADMSG);
        put_le(h + SBX_RING_STATE_OFFSET, SBX_RING_EXITED);
        put_le(h + SBX_RING_STATUS_OFFSET, 256);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EBADMSG);
        memcpy(h, SBX_RING_MAGIC_V1, 8);
        ck_assert_int_eq(sbx_ring_parse_header(h, sizeof h, &r), -EPROTONOSUPPORT);
}
END_TEST

/* Counting a cursor on by bytes passed gives the cursor of the advanced positions,
 * across 2^32 and its multiples as below them. */
START_TEST(test_cursor_advance) {
        static const uint64_t starts[] = { 0, 1, 5, UINT64_C(0xFFFFFFFE), UINT64_C(0xFFFFFFFF),
                                           UINT64_C(0x100000000), UINT64_C(0x2FFFFFFFD) };
        static const uint64_t steps[] = { 0, 1, 3, UINT64_C(0xFFFFFFFF), UINT64_C(0x100000001) };

        for (size_t a = 0; a < ELEMENTSOF(starts); a++)
                for (size_t b = 0; b < ELEMENTSOF(steps); b++) {
                        uint64_t pos[2] = { starts[a], starts[ELEMENTSOF(starts) - 1 - a] };
                        uint64_t n[2] = { steps[b], steps[ELEMENTSOF(steps) - 1 - b] };
                        uint64_t to[2] = { pos[0] + n[0], pos[1] + n[1] };

                        ck_assert_uint_eq(sbx_ring_cursor_advance(sbx_ring_cursor(pos), n), sbx_ring_cursor(to));
                }
}
END_TEST

START_TEST(test_cursor) {
        uint64_t commit[2] = { 5000000, 12 }, pos[2];

        /* 0 is both streams' start; below 2^32 a part is the position itself */
        ck_assert_int_eq(sbx_ring_cursor_positions(0, commit, pos), 0);
        ck_assert_uint_eq(pos[0], 0);
        ck_assert_uint_eq(pos[1], 0);
        ck_assert_uint_eq(sbx_ring_cursor(commit), 5000000 | (UINT64_C(12) << 32));
        ck_assert_int_eq(sbx_ring_cursor_positions(sbx_ring_cursor((uint64_t[]) { 4000000, 3 }), commit, pos), 0);
        ck_assert_uint_eq(pos[0], 4000000);
        ck_assert_uint_eq(pos[1], 3);
        /* past a stream's end */
        ck_assert_int_eq(sbx_ring_cursor_positions(sbx_ring_cursor((uint64_t[]) { 4000000, 13 }), commit, pos),
                         -ERANGE);
        ck_assert_int_eq(sbx_ring_cursor_positions(5000001, commit, pos), -ERANGE);
        ck_assert_int_eq(sbx_ring_cursor_positions(1, (uint64_t[]) { 0, 0 }, pos), -ERANGE);

        /* At and beyond 2^32 a part is never 0: a reader that caught up with a stream
         * at 2^32, or at 2^62 (a forged header's), is not sent back to the start. */
        for (uint64_t at = (UINT64_C(1) << 32) - 2; at < (UINT64_C(1) << 32) + 3; at++)
                ck_assert_uint_ne(sbx_ring_cursor((uint64_t[]) { at, at }), 0);
        ck_assert_uint_ne(sbx_ring_cursor((uint64_t[]) { UINT64_C(1) << 62, 0 }), 0);

        /* Every position a reader can hold, near the commit, is named again. */
        commit[0] = (UINT64_C(5) << 32) + 100;
        commit[1] = UINT64_C(1) << 62;
        for (uint64_t back = 0; back < 70000; back += 997) {
                uint64_t want[2] = { commit[0] - back, commit[1] - back };

                ck_assert_int_eq(sbx_ring_cursor_positions(sbx_ring_cursor(want), commit, pos), 0);
                ck_assert_uint_eq(pos[0], want[0]);
                ck_assert_uint_eq(pos[1], want[1]);
        }
        /* the newest position of a part, never past the commit */
        ck_assert_int_eq(sbx_ring_cursor_positions(200, commit, pos), 0);
        ck_assert_uint_le(pos[0], commit[0]);
        ck_assert_uint_eq(sbx_ring_cursor(pos) & UINT32_MAX, 200);
        ck_assert_uint_gt(pos[0], commit[0] - (UINT64_C(1) << 32));
}
END_TEST

START_TEST(test_read_plain_and_wrapped) {
        static Ring r;
        static uint8_t buf[CAP];
        SbxRingSource src = { .pread = mem_pread, .userdata = &r };
        SbxRingHeader h;
        uint64_t pos = 0;
        size_t n;

        ring_init(&r);
        ring_append(&r, 0, 1000);
        ring_append(&r, 1, 7);
        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, sizeof buf, &n), 0);
        ck_assert_uint_eq(pos, 0);
        ck_assert_uint_eq(n, 1000);
        assert_stream_bytes(buf, n, pos);
        pos = 993;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, 5, &n), 0);
        ck_assert_uint_eq(pos, 993);
        ck_assert_uint_eq(n, 5);
        assert_stream_bytes(buf, n, pos);
        /* caught up: nothing, at the commit */
        pos = 1000;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, sizeof buf, &n), 0);
        ck_assert_uint_eq(n, 0);
        pos = 1001;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, sizeof buf, &n), -ERANGE);

        /* three caps later: the oldest kept on, wrapped around the ring's end */
        ring_append(&r, 0, 3 * CAP + 123);
        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
        pos = 0;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, sizeof buf, &n), 0);
        ck_assert_uint_eq(pos, r.written[0] - CAP);
        ck_assert_uint_eq(n, CAP);
        assert_stream_bytes(buf, n, pos);
        pos = 0;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 1, &pos, buf, sizeof buf, &n), 0);
        ck_assert_uint_eq(n, 7);
}
END_TEST

START_TEST(test_read_under_a_writer) {
        static Ring r;
        static uint8_t buf[CAP];
        SbxRingSource src = { .pread = mem_pread, .userdata = &r };
        SbxRingHeader h;

        /* A writer from a quarter as fast as the reader to 1,000 times as fast: the
         * oldest bytes asked for are overwritten while read, the rest comes; a
         * writer faster than a whole read gets the newest bytes, fewer of them. */
        for (uint64_t speed = 1; speed <= 4000; speed = speed * 3 + 1) {
                for (int round = 0; round < 10; round++) {
                        uint64_t pos = 0;
                        size_t n = 0;

                        ring_init(&r);
                        ring_append(&r, 0, CAP + 17 * (uint64_t) round);
                        r.speed = speed;
                        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
                        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos, buf, sizeof buf, &n), 0);
                        /* never nothing, always the stream's own bytes */
                        ck_assert_uint_gt(n, 0);
                        assert_stream_bytes(buf, n, pos);
                        ck_assert_uint_le(pos + n, h.commit[0]);
                }
        }
}
END_TEST

START_TEST(test_forged) {
        static Ring r;
        static uint8_t buf[CAP];
        SbxRingSource src = { .pread = mem_pread, .userdata = &r };
        SbxRingHeader h;
        uint64_t pos[2];
        size_t n;

        /* A commit near 2^62 written by the owner: a read from cursor 0 returns what
         * the ring keeps (a cap's worth) and a cursor that is not 0 again. */
        ring_init(&r);
        put_le(r.file + SBX_RING_COMMIT_OFFSET(0), UINT64_C(1) << 62);
        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
        ck_assert_int_eq(sbx_ring_cursor_positions(0, h.commit, pos), 0);
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos[0], buf, sizeof buf, &n), 0);
        ck_assert_uint_eq(n, CAP);
        pos[0] += n;
        pos[1] = 0;
        ck_assert_uint_ne(sbx_ring_cursor(pos), 0);

        /* An intent that says everything is always being overwritten: typed. */
        put_le(r.file + SBX_RING_INTENT_OFFSET(CAP, 0), (UINT64_C(1) << 62) + 10 * CAP);
        pos[0] = 0;
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos[0], buf, sizeof buf, &n), -EAGAIN);

        /* A commit that went back below the reader's position: typed. */
        ring_init(&r);
        ring_append(&r, 0, 100);
        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
        pos[0] = 100;
        put_le(r.file + SBX_RING_COMMIT_OFFSET(0), 10);
        ck_assert_int_eq(sbx_ring_read_header(&src, &h), 0);
        ck_assert_int_eq(sbx_ring_read_stream(&src, &h, 0, &pos[0], buf, sizeof buf, &n), -ERANGE);
}
END_TEST

static SbxProtoFrame output_frame(SbxProtoWriter *w, uint64_t pos0, uint64_t commit0, size_t n0) {
        static const uint8_t bytes[16] = "0123456789abcdef";
        SbxProtoFrame f;

        w->size = 0;
        sbx_proto_begin(w, SBX_PROTO_OK);
        sbx_proto_put_u64(w, SBX_TAG_STATE, SBX_RING_STATE_RUNNING);
        sbx_proto_put_u64(w, SBX_TAG_STATUS, 0);
        sbx_proto_put_u64(w, SBX_TAG_POS_OUT, pos0);
        sbx_proto_put_u64(w, SBX_TAG_COMMIT_OUT, commit0);
        sbx_proto_put(w, SBX_TAG_STDOUT, bytes, n0);
        sbx_proto_put_u64(w, SBX_TAG_POS_ERR, 0);
        sbx_proto_put_u64(w, SBX_TAG_COMMIT_ERR, 0);
        sbx_proto_put(w, SBX_TAG_STDERR, NULL, 0);
        ck_assert_int_gt(sbx_proto_end(w), 0);
        ck_assert_int_gt(sbx_proto_frame(w->buf, w->size, &f), 0);
        return f;
}

START_TEST(test_output_reply) {
        SbxProtoWriter w = {};
        SbxProtoOutputReply o;
        SbxProtoFrame f;

        f = output_frame(&w, 10, 26, 16);
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 16, &o), 0);
        ck_assert_uint_eq(o.pos[0], 10);
        ck_assert_uint_eq(o.size[0], 16);
        ck_assert_uint_eq(o.size[1], 0);
        /* more than asked for, past the commit, a position at 2^63 */
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 15, &o), -EBADMSG);
        f = output_frame(&w, 20, 26, 16);
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 16, &o), -EBADMSG);
        f = output_frame(&w, 0, UINT64_C(1) << 63, 16);
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 16, &o), -EBADMSG);
        /* "there is more" with nothing returned is no progress; a state query is */
        f = output_frame(&w, 10, 26, 0);
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 16, &o), -EBADMSG);
        ck_assert_int_eq(sbx_proto_output_reply_parse(&f, 0, &o), 0);
        free(w.buf);
}
END_TEST

static Suite *ring_suite(void) {
        Suite *s = suite_create("ring");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_header);
        tcase_add_test(tc, test_cursor);
        tcase_add_test(tc, test_cursor_advance);
        tcase_add_test(tc, test_read_plain_and_wrapped);
        tcase_add_test(tc, test_read_under_a_writer);
        tcase_add_test(tc, test_forged);
        tcase_add_test(tc, test_output_reply);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(ring_suite)
