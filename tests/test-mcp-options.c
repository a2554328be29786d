/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* xagent-sandbox-mcp's create/ensure arguments as the bus's options a{sv}
 * (append_make_options, src/mcp/mcp-spec.c): labels, a claim's name_prefix s, and the lifetimes idle_timeout u,
 * expire_after u and on_idle s sent only when given, each with the type the service
 * reads; a wrong argument named. */

#include "sbx-test.h"
#include "sbx-test-bus.h"
#include <errno.h>
#include <unistd.h>

#include "mcp-json.h"
#include "mcp-spec.h"

/* The options written for the tool arguments `args`, as "key:signature=value" lines
 * sorted by key order of writing; or NULL with *ret_error when refused. */
static char *options_of(const char *args, bool ensure, int *ret_r, char **ret_error) {
        _cleanup_(json_object_putp) json_object *a = json_tokener_parse(args);
        _cleanup_free_ char *error = NULL;
        sd_bus_message *m = NULL;
        char *out = NULL;
        size_t size = 0;
        FILE *f;
        int fds[2], r;
        sd_bus *bus = sbx_test_bus(fds);

        ck_assert_ptr_nonnull(a);
        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.xagent.Sandbox1", "/org/xagent/Sandbox1",
                                                        "org.xagent.Sandbox1.Manager", "CreateSandbox"), 0);
        r = append_make_options(m, a, ensure, &error);
        *ret_r = r;
        if (r < 0) {
                *ret_error = TAKE_PTR(error);
                goto done;
        }
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        f = open_memstream(&out, &size);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                _cleanup_(json_object_putp) json_object *value = NULL;
                const char *key, *contents;
                char type;

                ck_assert_int_ge(sd_bus_message_read(m, "s", &key), 0);
                ck_assert_int_gt(sd_bus_message_peek_type(m, &type, &contents), 0);
                ck_assert_int_eq(type, 'v');
                ck_assert_int_ge(sbx_bus_read_json(m, &value), 0);
                fprintf(f, "%s:%s=%s\n", key, contents, json_object_to_json_string_ext(value, JSON_C_TO_STRING_PLAIN));
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        ck_assert_int_eq(sd_bus_message_at_end(m, true), 1);
        fclose(f);
done:
        sd_bus_message_unref(m);
        sd_bus_close_unref(bus);
        close(fds[1]);
        return out;
}

static void assert_options(const char *args, bool ensure, const char *want) {
        _cleanup_free_ char *got = NULL, *error = NULL;
        int r;

        got = options_of(args, ensure, &r, &error);
        ck_assert_msg(r >= 0, "%s refused: %s", args, error);
        ck_assert_str_eq(got, want);
}

static void assert_refused(const char *args, bool ensure, const char *names) {
        _cleanup_free_ char *got = NULL, *error = NULL;
        int r;

        got = options_of(args, ensure, &r, &error);
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(error);
        ck_assert_msg(strstr(error, names), "'%s' does not name %s", error, names);
}

START_TEST(test_create_sends_only_what_is_given) {
        assert_options("{\"name\": \"x\", \"image\": \"i\"}", false, "");
        assert_options("{\"labels\": {}}", false, "labels:a{ss}={}\n");
}
END_TEST

START_TEST(test_labels_and_lifetimes) {
        assert_options("{\"labels\": {\"team\": \"a\", \"job.id\": \"7\"}, \"idle_timeout\": 600, "
                       "\"expire_after\": 86400, \"on_idle\": \"pause\"}", false,
                       "labels:a{ss}={\"team\":\"a\",\"job.id\":\"7\"}\n"
                       "idle_timeout:u=600\n"
                       "expire_after:u=86400\n"
                       "on_idle:s=\"pause\"\n");
        assert_options("{\"expire_after\": 0}", false, "expire_after:u=0\n");
        assert_options("{\"idle_timeout\": 4294967295}", false, "idle_timeout:u=4294967295\n");
        assert_options("{\"idle_counts_processes\": true}", false, "idle_counts_processes:b=true\n");
        assert_options("{\"idle_counts_processes\": false}", true,
                       "on_mismatch:s=\"fail\"\nstop_timeout:u=30\nidle_counts_processes:b=false\n");
}
END_TEST

START_TEST(test_ensure_keeps_its_own_options) {
        assert_options("{}", true, "on_mismatch:s=\"fail\"\nstop_timeout:u=30\n");
        assert_options("{\"on_mismatch\": \"recreate\", \"stop_timeout\": 5, \"labels\": {\"k\": \"v\"}, "
                       "\"idle_timeout\": 60, \"on_idle\": \"stop\"}", true,
                       "on_mismatch:s=\"recreate\"\nstop_timeout:u=5\nlabels:a{ss}={\"k\":\"v\"}\n"
                       "idle_timeout:u=60\non_idle:s=\"stop\"\n");
        /* create has no on_mismatch: not read (the tool's schema refuses it before). */
        assert_options("{\"on_mismatch\": \"recreate\"}", false, "");
}
END_TEST

START_TEST(test_claim_sends_its_name_prefix) {
        assert_options("{\"name_prefix\": \"job-\", \"labels\": {\"k\": \"v\"}, \"expire_after\": 60}", false,
                       "name_prefix:s=\"job-\"\nlabels:a{ss}={\"k\":\"v\"}\nexpire_after:u=60\n");
        assert_refused("{\"name_prefix\": 7}", false, "'name_prefix'");
}
END_TEST

START_TEST(test_wrong_arguments_are_named) {
        assert_refused("{\"labels\": [\"a\"]}", false, "'labels'");
        assert_refused("{\"labels\": {\"k\": 1}}", true, "'labels.k'");
        assert_refused("{\"idle_timeout\": -1}", false, "'idle_timeout'");
        assert_refused("{\"idle_timeout\": 4294967296}", false, "'idle_timeout'");
        assert_refused("{\"expire_after\": \"1h\"}", false, "'expire_after'");
        assert_refused("{\"on_idle\": 3}", true, "'on_idle'");
        assert_refused("{\"idle_counts_processes\": 1}", false, "'idle_counts_processes'");
        assert_refused("{\"stop_timeout\": -2}", true, "'stop_timeout'");
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("mcp-options");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_create_sends_only_what_is_given);
        tcase_add_test(tc, test_labels_and_lifetimes);
        tcase_add_test(tc, test_ensure_keeps_its_own_options);
        tcase_add_test(tc, test_claim_sends_its_name_prefix);
        tcase_add_test(tc, test_wrong_arguments_are_named);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
