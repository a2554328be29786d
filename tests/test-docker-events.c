/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Docker's event stream, split and parsed: any chunking, only container events with
 * an id and an action, labels read, overlong and broken lines skipped. */

#include "sbx-test.h"

#include "docker-events.h"

typedef struct Seen {
        char log[4096];
        unsigned n;
} Seen;

static void record(const SbxDockerEvent *e, void *userdata) {
        Seen *s = userdata;
        size_t l = strlen(s->log);

        snprintf(s->log + l, sizeof s->log - l, "%s %s %s %s;", e->action, e->id, e->name_label ?: "-",
                 e->owner_label ?: "-");
        s->n++;
}

static const char stream[] =
        "{\"Type\":\"container\",\"Action\":\"start\",\"Actor\":{\"ID\":\"c1\",\"Attributes\":"
        "{\"xagent.sandbox.name\":\"~1001:w\",\"xagent.sandbox.owner\":\"1001\",\"image\":\"i\"}},\"time\":1}\n"
        "{\"Type\":\"network\",\"Action\":\"connect\",\"Actor\":{\"ID\":\"n1\"}}\n"
        "not json at all\n"
        "\n"
        "{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"ID\":\"c2\"}}\n"
        "{\"Type\":\"container\",\"Actor\":{\"ID\":\"c3\"}}\n"
        "{\"Type\":\"container\",\"Action\":\"destroy\",\"Actor\":{\"ID\":\"c1\",\"Attributes\":"
        "{\"xagent.sandbox.name\":\"~1001:w\",\"xagent.sandbox.owner\":\"1001\"}}}\n";

static const char expected[] = "start c1 ~1001:w 1001;die c2 - -;destroy c1 ~1001:w 1001;";

START_TEST(test_whole_and_byte_by_byte) {
        for (size_t chunk = 1; chunk <= sizeof stream; chunk = chunk == 1 ? 7 : chunk * 3) {
                Seen s = {};
                SbxEventParser p = { .callback = record, .userdata = &s };

                for (size_t i = 0; i < sizeof stream - 1; i += chunk)
                        ck_assert(sbx_event_parser_feed(&p, stream + i, MIN(chunk, sizeof stream - 1 - i)));
                ck_assert_msg(streq(s.log, expected), "chunk %zu: %s", chunk, s.log);
                sbx_event_parser_done(&p);
        }
}
END_TEST

/* A line beyond the limit is skipped whole, and the next one is read again. */
START_TEST(test_overlong_line_skipped) {
        static const char tail[] = "{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"ID\":\"c9\"}}\n";
        _cleanup_free_ char *big = malloc(SBX_DOCKER_EVENT_LINE_MAX + 10);
        Seen s = {};
        SbxEventParser p = { .callback = record, .userdata = &s };

        ck_assert_ptr_nonnull(big);
        memcpy(big, "{\"Type\":\"container\",\"Action\":\"die\",\"Actor\":{\"ID\":\"", 51);
        memset(big + 51, 'x', SBX_DOCKER_EVENT_LINE_MAX + 10 - 51);
        for (size_t i = 0; i < SBX_DOCKER_EVENT_LINE_MAX + 10; i += 65536)
                ck_assert(sbx_event_parser_feed(&p, big + i, MIN(65536, SBX_DOCKER_EVENT_LINE_MAX + 10 - i)));
        ck_assert(sbx_event_parser_feed(&p, "\"}}\n", 4));
        ck_assert_uint_eq(s.n, 0);
        ck_assert(sbx_event_parser_feed(&p, tail, sizeof tail - 1));
        ck_assert_str_eq(s.log, "die c9 - -;");
        ck_assert_uint_le(p.allocated, SBX_DOCKER_EVENT_LINE_MAX + 1);
        sbx_event_parser_done(&p);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("docker-events");
        TCase *tc = tcase_create("docker-events");

        tcase_add_test(tc, test_whole_and_byte_by_byte);
        tcase_add_test(tc, test_overlong_line_skipped);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
