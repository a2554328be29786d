/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sbx_bus_append_spec() (the client's writer) against sbx_bus_read_spec() (the daemon's
 * reader): what one writes the other reads back, and only what is set is written. */

#include "sbx-test.h"
#include <sys/socket.h>
#include <unistd.h>

#include "bus-spec.h"
#include "spec-json.h"

/* A bus object that can make messages: started on one end of a socket pair nobody
 * answers (authentication never completes, and nothing is sent). */
static sd_bus *test_bus(int fds[2]) {
        sd_bus *bus = NULL;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        return bus;
}

/* Writes spec into a sealed message, rewound for reading. */
static int write_spec(sd_bus *bus, const SbxSpec *spec, sd_bus_message **ret, SbxError *error) {
        sd_bus_message *m = NULL;
        int r;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                                        "org.xagent.Sandbox1.Manager", "VerifySandbox"), 0);
        r = sbx_bus_append_spec(m, spec, error);
        if (r < 0) {
                sd_bus_message_unref(m);
                return r;
        }
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        *ret = m;
        return 0;
}

static SbxSpec *round_trip(const SbxSpec *spec, unsigned *ret_n_keys) {
        int fds[2];
        sd_bus *bus = test_bus(fds);
        sd_bus_message *m = NULL;
        SbxSpec *back = NULL;
        unsigned n = 0;

        ck_assert_int_eq(write_spec(bus, spec, &m, NULL), 0);
        /* Count the keys written, then read the spec as the daemon does. */
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while (sd_bus_message_skip(m, "{sv}") > 0)
                n++;
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        ck_assert_int_eq(sbx_bus_read_spec(m, &back, NULL), 0);
        ck_assert_int_eq(sd_bus_message_at_end(m, true), 1);
        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);     /* no flush: nobody reads the other end */
        close(fds[1]);
        if (ret_n_keys)
                *ret_n_keys = n;
        return back;
}

static SbxSpec *from_json(const char *json) {
        SbxSpec *s = NULL;
        ck_assert_int_eq(sbx_spec_from_json_string(json, &s, NULL), 0);
        return s;
}

/* Both normalized, then xagent's structural equality. */
static void assert_same(SbxSpec *a, SbxSpec *b) {
        ck_assert_int_eq(sbx_spec_normalize(a, NULL), 0);
        ck_assert_int_eq(sbx_spec_normalize(b, NULL), 0);
        ck_assert(sbx_spec_equal(a, b));
}

START_TEST(test_full_spec) {
        static const char *json =
                "{\"image\": \"python:3.12-slim\", \"working_dir\": \"/w\", \"cpus\": 3, \"memory\": 1024,"
                " \"env\": {\"B\": \"2\", \"A\": \"one = 1\", \"E\": \"\"},"
                " \"volumes\": [[\"/h/a\", \"/g/a\", \"ro\"], [\"/h/b\", \"/g/b\", \"rw\"]],"
                " \"network_isolated\": true, \"ports\": [[0, 80], [65535, 1]]}";
        _cleanup_(sbx_spec_freep) SbxSpec *spec = from_json(json), *expect = from_json(json), *back = NULL;
        unsigned n;

        back = round_trip(spec, &n);
        ck_assert_uint_eq(n, 8);
        ck_assert_str_eq(back->image, "python:3.12-slim");
        ck_assert_uint_eq(back->n_env, 3);
        assert_same(back, expect);
}
END_TEST

START_TEST(test_snapshot_template) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = from_json("{\"snapshot\": \"snap-1\", \"memory\": 256}"), *back = NULL;
        unsigned n;

        back = round_trip(spec, &n);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(back->template_type, SBX_TEMPLATE_SNAPSHOT);
        ck_assert_str_eq(back->snapshot_id, "snap-1");
        ck_assert_ptr_null(back->image);
        ck_assert_int_eq(back->memory, 256);
}
END_TEST

/* Nothing set, nothing written: the daemon's defaults (and the policy's image) apply. */
START_TEST(test_empty_spec_writes_no_key) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = from_json("{}"), *back = NULL;
        unsigned n;

        back = round_trip(spec, &n);
        ck_assert_uint_eq(n, 0);
        ck_assert_int_eq(back->template_type, SBX_TEMPLATE_IMAGE);
        ck_assert_ptr_null(back->image);
        ck_assert_ptr_null(back->working_dir);
        ck_assert_int_eq(back->cpus, 0);
        ck_assert(!back->network_isolated);
}
END_TEST

/* "" is not "unset": an empty image goes out, for the daemon to refuse by name. */
START_TEST(test_empty_image_is_written) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = from_json("{\"image\": \"\"}"), *back = NULL;
        unsigned n;

        back = round_trip(spec, &n);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(back->image, "");
}
END_TEST

static void assert_refused(SbxSpec *spec, const char *needle) {
        SbxError e = SBX_ERROR_NULL;
        sd_bus_message *m = NULL;
        int fds[2];
        sd_bus *bus = test_bus(fds);

        ck_assert_int_lt(write_spec(bus, spec, &m, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(strstr(e.message, needle), "message \"%s\" lacks \"%s\"", e.message, needle);
        sbx_error_free(&e);
        sd_bus_close_unref(bus);     /* no flush: nobody reads the other end */
        close(fds[1]);
}

START_TEST(test_out_of_range) {
        _cleanup_(sbx_spec_freep) SbxSpec *cpus = from_json("{}"), *memory = from_json("{}"), *ports = from_json("{}");

        cpus->cpus = -1;
        assert_refused(cpus, "cpus");
        memory->memory = (int64_t) UINT32_MAX + 1;
        assert_refused(memory, "memory");
        ck_assert_int_eq(sbx_spec_add_port(ports, 70000, 80), 0);
        assert_refused(ports, "ports");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("bus-spec");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_full_spec);
        tcase_add_test(tc, test_snapshot_template);
        tcase_add_test(tc, test_empty_spec_writes_no_key);
        tcase_add_test(tc, test_empty_image_is_written);
        tcase_add_test(tc, test_out_of_range);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
