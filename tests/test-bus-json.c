/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* sbx_bus_read_json() (src/shared/bus-json.c), the one D-Bus-to-JSON reader of
 * xagent-sandboxctl and xagent-sandbox-mcp: every basic type, a{s…} as an object, other
 * arrays and structs as arrays, variants as their contents, the whole 't' range, and
 * what it refuses. */

#include "sbx-test.h"
#include "sbx-test-bus.h"
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "bus-json.h"
#include "json-util.h"

typedef struct Message {
        int fds[2];
        sd_bus *bus;
        sd_bus_message *m;
} Message;

static void message_new(Message *t) {
        t->bus = sbx_test_bus(t->fds);
        ck_assert_int_ge(sd_bus_message_new_method_call(t->bus, &t->m, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                                        "org.xagent.Sandbox1.Manager", "GetPolicy"), 0);
}

/* Sealed and rewound: read from the start. */
static sd_bus_message *message_read(Message *t) {
        ck_assert_int_ge(sd_bus_message_seal(t->m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(t->m, true), 0);
        return t->m;
}

static void message_free(Message *t) {
        sd_bus_message_unref(t->m);
        sd_bus_close_unref(t->bus);
        close(t->fds[1]);
}

/* The next value of m as plain JSON text (freed by the caller). */
static char *next_json(sd_bus_message *m) {
        _cleanup_(json_object_putp) json_object *j = NULL;

        ck_assert_int_eq(sbx_bus_read_json(m, &j), 0);
        return strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
}

static void assert_next(sd_bus_message *m, const char *want) {
        char *got = next_json(m);

        ck_assert_str_eq(got, want);
        free(got);
}

START_TEST(test_basic_types) {
        Message t;

        message_new(&t);
        ck_assert_int_ge(sd_bus_message_append(t.m, "ynqiuxtdbsog", 255, -32768, 65535, INT32_MIN, UINT32_MAX,
                                               INT64_MIN, UINT64_MAX, 0.5, 1, "a \"q\" ü", "/o/p", "a{sv}"), 0);
        sd_bus_message *m = message_read(&t);
        assert_next(m, "255");
        assert_next(m, "-32768");
        assert_next(m, "65535");
        assert_next(m, "-2147483648");
        assert_next(m, "4294967295");
        assert_next(m, "-9223372036854775808");
        assert_next(m, "18446744073709551615");
        assert_next(m, "0.5");
        assert_next(m, "true");
        assert_next(m, "\"a \\\"q\\\" ü\"");
        assert_next(m, "\"\\/o\\/p\"");
        assert_next(m, "\"a{sv}\"");
        ck_assert_int_eq(sd_bus_message_at_end(m, true), 1);
        message_free(&t);
}
END_TEST

START_TEST(test_containers) {
        Message t;

        message_new(&t);
        /* An inspection-like a{sv}: nested dictionaries, arrays, structs, a variant in a variant. */
        ck_assert_int_ge(sd_bus_message_append(t.m, "a{sv}", 5,
                                               "name", "s", "work",
                                               "ports", "a(qq)", 2, 8080, 80, 0, 443,
                                               "env", "a{ss}", 1, "A", "1",
                                               "nested", "v", "u", 7,
                                               "empty", "as", 0), 0);
        ck_assert_int_ge(sd_bus_message_append(t.m, "(sas)a(sx)", "x", 2, "p", "q", 1, "k", INT64_C(-1)), 0);
        sd_bus_message *m = message_read(&t);
        assert_next(m, "{\"name\":\"work\",\"ports\":[[8080,80],[0,443]],\"env\":{\"A\":\"1\"},\"nested\":7,\"empty\":[]}");
        assert_next(m, "[\"x\",[\"p\",\"q\"]]");
        assert_next(m, "[[\"k\",-1]]");
        ck_assert_int_eq(sd_bus_message_at_end(m, true), 1);
        message_free(&t);
}
END_TEST

START_TEST(test_an_array_of_pairs_not_keyed_by_strings_is_an_array) {
        Message t;

        message_new(&t);
        ck_assert_int_ge(sd_bus_message_append(t.m, "a{us}", 2, 1, "one", 2, "two"), 0);
        assert_next(message_read(&t), "[[1,\"one\"],[2,\"two\"]]");
        message_free(&t);
}
END_TEST

START_TEST(test_refused) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        Message t;

        /* A descriptor (no reply of the service carries one), and the end of the message. */
        message_new(&t);
        ck_assert_int_ge(sd_bus_message_append(t.m, "h", STDIN_FILENO), 0);
        sd_bus_message *m = message_read(&t);
        ck_assert_int_eq(sbx_bus_read_json(m, &j), -EBADMSG);
        ck_assert_ptr_null(j);
        message_free(&t);

        message_new(&t);
        ck_assert_int_eq(sbx_bus_read_json(message_read(&t), &j), -EBADMSG);
        ck_assert_ptr_null(j);
        message_free(&t);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("bus-json");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_basic_types);
        tcase_add_test(tc, test_containers);
        tcase_add_test(tc, test_an_array_of_pairs_not_keyed_by_strings_is_an_array);
        tcase_add_test(tc, test_refused);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
