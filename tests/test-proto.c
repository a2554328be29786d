/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The channel's protocol (src/core/proto.c): what one end writes the other reads,
 * and every malformed byte sequence is refused, never read past. */

#include "sbx-test.h"
#include <errno.h>

#include "macro.h"
#include "proto.h"

static SbxProtoFrame parse(const SbxProtoWriter *w, int n) {
        SbxProtoFrame f;

        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(sbx_proto_frame(w->buf, w->size, &f), n);
        return f;
}

START_TEST(test_request_round_trip) {
        static const uint8_t data[] = "contents";
        SbxProtoWriter w = {};
        SbxProtoRequest q = { .type = SBX_PROTO_WRITE, .path = "/tmp/x", .data = data, .data_size = 8,
                              .mode = 0600, .flags = SBX_PROTO_WRITE_APPEND }, got;
        char why[128];
        SbxProtoFrame f = parse(&w, sbx_proto_request_write(&w, &q));

        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), 0);
        ck_assert_uint_eq(got.type, SBX_PROTO_WRITE);
        ck_assert_str_eq(got.path, "/tmp/x");
        ck_assert_uint_eq(got.data_size, 8);
        ck_assert_mem_eq(got.data, data, 8);
        ck_assert_uint_eq(got.mode, 0600);
        ck_assert_uint_eq(got.flags, SBX_PROTO_WRITE_APPEND);
        free(w.buf);
}
END_TEST

START_TEST(test_defaults_and_bounds) {
        SbxProtoWriter w = {};
        SbxProtoRequest got;
        char why[128];
        SbxProtoFrame f;

        sbx_proto_begin(&w, SBX_PROTO_LIST);
        sbx_proto_put_str(&w, SBX_TAG_PATH, "/");
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), 0);
        ck_assert_uint_eq(got.depth, SBX_PROTO_DEFAULT_DEPTH);
        ck_assert_uint_eq(got.limit, SBX_PROTO_DEFAULT_LIMIT);

        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_LIST);
        sbx_proto_put_str(&w, SBX_TAG_PATH, "/");
        sbx_proto_put_u64(&w, SBX_TAG_LIMIT, SBX_PROTO_MAX_LIMIT + 1);
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), -EINVAL);
        ck_assert_ptr_nonnull(strstr(why, "limit"));

        /* A READ asking for more than the cap gets the cap. */
        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_READ);
        sbx_proto_put_str(&w, SBX_TAG_PATH, "/dev/zero");
        sbx_proto_put_u64(&w, SBX_TAG_LENGTH, UINT64_MAX);
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), 0);
        ck_assert_uint_eq(got.length, SBX_PROTO_MAX_DATA);

        /* A path that is relative, too long, or holds a NUL. */
        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_READ);
        sbx_proto_put(&w, SBX_TAG_PATH, "/a\0b", 4);
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), -EINVAL);
        free(w.buf);
}
END_TEST

START_TEST(test_frames_in_pieces_and_hostile_headers) {
        SbxProtoWriter w = {};
        SbxProtoFrame f;
        uint8_t bad[12];
        int n;

        sbx_proto_begin(&w, SBX_PROTO_HELLO);
        sbx_proto_put_u64(&w, SBX_TAG_VERSION, 1);
        n = sbx_proto_end(&w);
        for (int i = 0; i < n; i++)
                ck_assert_int_eq(sbx_proto_frame(w.buf, (size_t) i, &f), 0);
        ck_assert_int_eq(sbx_proto_frame(w.buf, (size_t) n, &f), n);

        memcpy(bad, w.buf, 12);
        bad[0] = 'Y';
        ck_assert_int_eq(sbx_proto_frame(bad, 1, &f), -EBADMSG);
        memcpy(bad, w.buf, 12);
        bad[3] = 2;
        ck_assert_int_eq(sbx_proto_frame(bad, 4, &f), -EBADMSG);
        memcpy(bad, w.buf, 12);
        bad[8] = bad[9] = bad[10] = bad[11] = 0xff;
        ck_assert_int_eq(sbx_proto_frame(bad, 12, &f), -EMSGSIZE);
        free(w.buf);
}
END_TEST

START_TEST(test_fields_never_read_past_the_payload) {
        /* A field whose length runs past the payload, and one cut inside its header. */
        static const uint8_t past[] = { SBX_TAG_PATH, 10, 0, 0, 0, '/', 'x' };
        static const uint8_t cut[] = { SBX_TAG_PATH, 1, 0 };
        static const uint8_t huge[] = { SBX_TAG_PATH, 0xff, 0xff, 0xff, 0xff };
        SbxProtoField fl;
        size_t pos = 0;

        ck_assert_int_eq(sbx_proto_next(past, sizeof past, &pos, &fl), -EBADMSG);
        pos = 0;
        ck_assert_int_eq(sbx_proto_next(cut, sizeof cut, &pos, &fl), -EBADMSG);
        pos = 0;
        ck_assert_int_eq(sbx_proto_next(huge, sizeof huge, &pos, &fl), -EBADMSG);
        ck_assert_int_eq(sbx_proto_find(past, sizeof past, SBX_TAG_PATH, &fl), -EBADMSG);
}
END_TEST

START_TEST(test_fixed_writer_never_grows) {
        uint8_t buf[32];
        SbxProtoWriter w = { .buf = buf, .alloc = sizeof buf, .fixed = true };

        sbx_proto_begin(&w, SBX_PROTO_OK);
        sbx_proto_put(&w, SBX_TAG_DATA, "0123456789012345678901234567890", 31);
        ck_assert_int_eq(sbx_proto_end(&w), -ENOBUFS);
        ck_assert_ptr_eq(w.buf, buf);
}
END_TEST

static SbxProtoFrame list_reply(SbxProtoWriter *w, const char *name, const char *kind) {
        size_t at;

        w->size = 0;
        sbx_proto_begin(w, SBX_PROTO_OK);
        at = sbx_proto_open_nested(w, SBX_TAG_ENTRY);
        sbx_proto_put_str(w, SBX_TAG_NAME, name);
        sbx_proto_put_str(w, SBX_TAG_KIND, kind);
        sbx_proto_put_u64(w, SBX_TAG_SIZE, 5);
        sbx_proto_put_u64(w, SBX_TAG_MTIME, 7);
        sbx_proto_put_u64(w, SBX_TAG_MODE, 0100644);
        sbx_proto_close_nested(w, at);
        sbx_proto_put_u64(w, SBX_TAG_TRUNCATED, 1);
        return parse(w, sbx_proto_end(w));
}

START_TEST(test_list_entries_are_checked) {
        static const char *const bad_names[] = { "", "/etc", "a/../b", "..", "a//b", "./a", "a/" };
        SbxProtoWriter w = {};
        SbxProtoEntry e;
        SbxProtoFrame f = list_reply(&w, "d/file", "file");
        size_t pos = 0;
        bool truncated;

        ck_assert_int_eq(sbx_proto_list_next(&f, &pos, &e), 1);
        ck_assert_str_eq(e.name, "d/file");
        ck_assert_str_eq(e.kind, "file");
        ck_assert_uint_eq(e.size, 5);
        ck_assert_uint_eq(e.mode, 0100644);
        ck_assert_int_eq(sbx_proto_list_next(&f, &pos, &e), 0);
        ck_assert_int_eq(sbx_proto_list_truncated(&f, &truncated), 0);
        ck_assert(truncated);

        for (size_t i = 0; i < ELEMENTSOF(bad_names); i++) {
                f = list_reply(&w, bad_names[i], "file");
                pos = 0;
                ck_assert_int_eq(sbx_proto_list_next(&f, &pos, &e), -EBADMSG);
        }
        f = list_reply(&w, "x", "door");
        pos = 0;
        ck_assert_int_eq(sbx_proto_list_next(&f, &pos, &e), -EBADMSG);
        free(w.buf);
}
END_TEST

/* STATES: a request of its own, and each entry of the reply checked as hostile. */
START_TEST(test_states_request_and_reply) {
        SbxProtoWriter w = {};
        SbxProtoRequest q = { .type = SBX_PROTO_STATES, .path = "/tmp/d", .limit = 7 }, got;
        SbxProtoState st;
        char why[128];
        SbxProtoFrame f = parse(&w, sbx_proto_request_write(&w, &q));
        size_t pos = 0, at;
        bool truncated;

        ck_assert_int_eq(sbx_proto_request_parse(&f, &got, why, sizeof why), 0);
        ck_assert_uint_eq(got.type, SBX_PROTO_STATES);
        ck_assert_str_eq(got.path, "/tmp/d");
        ck_assert_uint_eq(got.limit, 7);

        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_OK);
        at = sbx_proto_open_nested(&w, SBX_TAG_ENTRY);
        sbx_proto_put_str(&w, SBX_TAG_NAME, "abc");
        sbx_proto_put_u64(&w, SBX_TAG_STATE, SBX_RING_STATE_EXITED);
        sbx_proto_put_u64(&w, SBX_TAG_STATUS, 3);
        sbx_proto_close_nested(&w, at);
        at = sbx_proto_open_nested(&w, SBX_TAG_ENTRY);
        sbx_proto_put_str(&w, SBX_TAG_NAME, "def");
        sbx_proto_put_u64(&w, SBX_TAG_ERRNO, ENOENT);
        sbx_proto_close_nested(&w, at);
        at = sbx_proto_open_nested(&w, SBX_TAG_ENTRY);
        sbx_proto_put_str(&w, SBX_TAG_NAME, "ghi");
        sbx_proto_put_u64(&w, SBX_TAG_STATE, 9);      /* no such state */
        sbx_proto_put_u64(&w, SBX_TAG_STATUS, 0);
        sbx_proto_close_nested(&w, at);
        sbx_proto_put_u64(&w, SBX_TAG_TRUNCATED, 0);
        f = parse(&w, sbx_proto_end(&w));

        ck_assert_int_eq(sbx_proto_states_next(&f, &pos, &st), 1);
        ck_assert_str_eq(st.name, "abc");
        ck_assert_int_eq(st.err, 0);
        ck_assert_uint_eq(st.state, SBX_RING_STATE_EXITED);
        ck_assert_uint_eq(st.status, 3);
        ck_assert_int_eq(sbx_proto_states_next(&f, &pos, &st), 1);
        ck_assert_str_eq(st.name, "def");
        ck_assert_int_eq(st.err, ENOENT);
        ck_assert_int_eq(sbx_proto_states_next(&f, &pos, &st), -EBADMSG);
        ck_assert_int_eq(sbx_proto_list_truncated(&f, &truncated), 0);
        ck_assert(!truncated);
        free(w.buf);
}
END_TEST

START_TEST(test_read_reply_and_error) {
        SbxProtoWriter w = {};
        SbxProtoReadReply rr;
        SbxProtoError err;
        SbxProtoFrame f;

        sbx_proto_begin(&w, SBX_PROTO_OK);
        sbx_proto_put(&w, SBX_TAG_DATA, "abcd", 4);
        sbx_proto_put_u64(&w, SBX_TAG_SIZE, 4);
        sbx_proto_put_u64(&w, SBX_TAG_MODE, 0100600);
        sbx_proto_put_u64(&w, SBX_TAG_MTIME, 99);
        sbx_proto_put_u64(&w, SBX_TAG_EOF, 1);
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_read_reply_parse(&f, 4, &rr), 0);
        ck_assert_uint_eq(rr.data_size, 4);
        ck_assert(rr.eof);
        /* More data than was asked for is refused. */
        ck_assert_int_eq(sbx_proto_read_reply_parse(&f, 3, &rr), -EBADMSG);
        ck_assert_int_eq(sbx_proto_error_parse(&f, &err), -EBADMSG);

        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_ERROR);
        sbx_proto_put_u64(&w, SBX_TAG_ERRNO, ENOENT);
        sbx_proto_put_str(&w, SBX_TAG_MESSAGE, "'/x': cannot open: No such file or directory");
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_error_parse(&f, &err), 0);
        ck_assert_int_eq(err.err, ENOENT);
        ck_assert_int_eq(sbx_proto_read_reply_parse(&f, 100, &rr), -EBADMSG);

        w.size = 0;
        sbx_proto_begin(&w, SBX_PROTO_ERROR);
        sbx_proto_put_u64(&w, SBX_TAG_ERRNO, 0);
        sbx_proto_put_str(&w, SBX_TAG_MESSAGE, "zero is no error");
        f = parse(&w, sbx_proto_end(&w));
        ck_assert_int_eq(sbx_proto_error_parse(&f, &err), -EBADMSG);
        free(w.buf);
}
END_TEST

static Suite *proto_suite(void) {
        Suite *s = suite_create("proto");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_request_round_trip);
        tcase_add_test(tc, test_defaults_and_bounds);
        tcase_add_test(tc, test_frames_in_pieces_and_hostile_headers);
        tcase_add_test(tc, test_fields_never_read_past_the_payload);
        tcase_add_test(tc, test_fixed_writer_never_grows);
        tcase_add_test(tc, test_list_entries_are_checked);
        tcase_add_test(tc, test_read_reply_and_error);
        tcase_add_test(tc, test_states_request_and_reply);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(proto_suite)
