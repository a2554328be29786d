/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sbx_bus_append_spec() (the client's writer) against sbx_bus_read_spec() (the daemon's
 * reader): what one writes the other reads back, and only what is set is written. */

#include "sbx-test.h"
#include "sbx-test-bus.h"
#include <stdarg.h>
#include <unistd.h>

#include "bus-spec.h"
#include "spec-json.h"

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
        sd_bus *bus = sbx_test_bus(fds);
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

/* Numbers beyond 'u' / (qq) are contract-valid (xagent takes any int): they go
 * out as 'x' / a(xx) and come back unchanged. */
START_TEST(test_wide_numbers) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = from_json("{\"cpus\": -1, \"memory\": 4294967296,"
                                                            " \"ports\": [[70000, 80], [-5, 0]]}"), *back = NULL;

        back = round_trip(spec, NULL);
        ck_assert_int_eq(back->cpus, -1);
        ck_assert_int_eq(back->memory, INT64_C(4294967296));
        ck_assert_uint_eq(back->n_ports, 2);
        ck_assert_int_eq(back->ports[0].host, 70000);
        ck_assert_int_eq(back->ports[1].host, -5);
}
END_TEST

/* A message whose body is one a{sv} appended with sd_bus_message_appendv(), rewound. */
static sd_bus_message *dict(sd_bus *bus, const char *types, ...) {
        sd_bus_message *m = NULL;
        va_list ap;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                                        "org.xagent.Sandbox1.Manager", "VerifySandbox"), 0);
        va_start(ap, types);
        ck_assert_int_ge(sd_bus_message_appendv(m, types, ap), 0);
        va_end(ap);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        return m;
}

typedef struct Bus {
        sd_bus *bus;
        int fds[2];
} Bus;

static void bus_done(Bus *b) {
        sd_bus_close_unref(b->bus);
        close(b->fds[1]);
}

/* python3-dbus and GLib send a plain int as 'i' or 'x': every integer type reads. */
START_TEST(test_integer_types) {
        _cleanup_(bus_done) Bus b = {};
        static const char types[] = "ynqiuxt";

        b.bus = sbx_test_bus(b.fds);
        for (const char *t = types; *t; t++) {
                char sig[2] = { *t, 0 }, ports_sig[] = { 'a', '(', *t, 'i', ')', 0 };
                _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
                sd_bus_message *m;
                SbxStopOptions stop;

                /* every type carries 2, 200 and 80; the varargs are promoted alike */
                if (*t == 'x' || *t == 't')
                        m = dict(b.bus, "a{sv}", 3, "cpus", sig, (int64_t) 2, "memory", sig, (int64_t) 200,
                                 "ports", ports_sig, 1, (int64_t) 80, 8080);
                else
                        m = dict(b.bus, "a{sv}", 3, "cpus", sig, 2, "memory", sig, 200, "ports", ports_sig, 1, 80, 8080);
                ck_assert_msg(sbx_bus_read_spec(m, &s, NULL) == 0, "type %c", *t);
                ck_assert_int_eq(s->cpus, 2);
                ck_assert_int_eq(s->memory, 200);
                ck_assert_int_eq(s->ports[0].host, 80);
                ck_assert_int_eq(s->ports[0].guest, 8080);
                sd_bus_message_unref(m);

                if (*t == 'x' || *t == 't')
                        m = dict(b.bus, "a{sv}", 1, "timeout", sig, (int64_t) 30);
                else
                        m = dict(b.bus, "a{sv}", 1, "timeout", sig, 30);
                ck_assert_int_eq(sbx_bus_read_stop_options(m, &stop, NULL), 0);
                ck_assert_uint_eq(stop.timeout, 30);
                ck_assert(!stop.force);
                sd_bus_message_unref(m);
        }
}
END_TEST

/* The one reader of any integer type (the daemon's options, the CLI's JSON output). */
START_TEST(test_read_integer) {
        _cleanup_(bus_done) Bus b = {};
        sd_bus_message *m;
        int64_t v;

        b.bus = sbx_test_bus(b.fds);
        m = dict(b.bus, "ynqiuxtts", 255, -32768, 65535, INT32_MIN, UINT32_MAX, INT64_MIN,
                 (uint64_t) INT64_MAX, UINT64_MAX, "1");
        ck_assert_int_eq(sbx_bus_read_integer(m, 'y', &v), 0);
        ck_assert_int_eq(v, 255);
        ck_assert_int_eq(sbx_bus_read_integer(m, 'n', &v), 0);
        ck_assert_int_eq(v, -32768);
        ck_assert_int_eq(sbx_bus_read_integer(m, 'q', &v), 0);
        ck_assert_int_eq(v, 65535);
        ck_assert_int_eq(sbx_bus_read_integer(m, 'i', &v), 0);
        ck_assert_int_eq(v, INT32_MIN);
        ck_assert_int_eq(sbx_bus_read_integer(m, 'u', &v), 0);
        ck_assert_int_eq(v, UINT32_MAX);
        ck_assert_int_eq(sbx_bus_read_integer(m, 'x', &v), 0);
        ck_assert_int_eq(v, INT64_MIN);
        ck_assert_int_eq(sbx_bus_read_integer(m, 't', &v), 0);
        ck_assert_int_eq(v, INT64_MAX);
        /* above int64: its bits, and 1 to say so */
        ck_assert_int_eq(sbx_bus_read_integer(m, 't', &v), 1);
        ck_assert_uint_eq((uint64_t) v, UINT64_MAX);
        ck_assert_int_eq(sbx_bus_read_integer(m, 's', &v), -EMEDIUMTYPE);
        ck_assert(!sbx_bus_type_is_integer('s'));
        ck_assert(!sbx_bus_type_is_integer(0));
        ck_assert(sbx_bus_type_is_integer('q'));
        sd_bus_message_unref(m);
}
END_TEST

static void assert_read_refused(sd_bus_message *m, bool stop, const char *needle) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        SbxError e = SBX_ERROR_NULL;
        SbxStopOptions options;

        ck_assert_int_lt(stop ? sbx_bus_read_stop_options(m, &options, &e) : sbx_bus_read_spec(m, &s, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(strstr(e.message, needle), "message \"%s\" lacks \"%s\"", e.message, needle);
        sbx_error_free(&e);
        sd_bus_message_unref(m);
}

/* Range checks name the key; a value that is no integer is a wrong type. */
START_TEST(test_integer_ranges) {
        _cleanup_(bus_done) Bus b = {};

        b.bus = sbx_test_bus(b.fds);
        assert_read_refused(dict(b.bus, "a{sv}", 1, "timeout", "i", -1), true, "timeout: the value is outside 0–3600");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "timeout", "t", (uint64_t) 3601), true, "timeout: the value");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "timeout", "d", 1.0), true, "timeout: expected an integer");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "cpus", "t", UINT64_MAX), false, "cpus: the value is outside");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "memory", "s", "512"), false, "memory: expected an integer");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "ports", "a(tq)", 1, UINT64_MAX, 80), false,
                            "ports: a port is outside");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "ports", "a(qqq)", 1, 1, 2, 3), false, "ports: expected");
        assert_read_refused(dict(b.bus, "a{sv}", 1, "ports", "a(sq)", 1, "80", 80), false, "ports: expected");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("bus-spec");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_full_spec);
        tcase_add_test(tc, test_snapshot_template);
        tcase_add_test(tc, test_empty_spec_writes_no_key);
        tcase_add_test(tc, test_empty_image_is_written);
        tcase_add_test(tc, test_wide_numbers);
        tcase_add_test(tc, test_integer_types);
        tcase_add_test(tc, test_integer_ranges);
        tcase_add_test(tc, test_read_integer);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
