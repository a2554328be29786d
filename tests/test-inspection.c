/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The inspection a{sv}: a container whose env holds a Unicode noncharacter (valid
 * for Docker and xagent, refused by sd-bus in a string) is carried escaped, and
 * the key is listed in "escaped"; the other keys go as they are; with the checks
 * planned once (a kept description), the same. */

#include "sbx-test.h"
#include <sys/socket.h>
#include <unistd.h>

#include "bus-inspection.h"
#include "lifecycle.h"

typedef struct Read {
        const char *ka, *kb, *kl, *a, *b, *escaped, *label;
} Read;

/* The inspection of s as bus_append_inspection_planned() builds it with plan. */
static sd_bus_message *build(sd_bus *bus, const SbxSandbox *s, unsigned *plan, Read *ret) {
        sd_bus_message *m = NULL;
        const char *key;

        *ret = (Read) {};
        ck_assert_int_ge(sd_bus_message_new_signal(bus, &m, "/t", "t.T", "S"), 0);
        ck_assert_int_ge(plan ? bus_append_inspection_planned(m, s, plan) : bus_append_inspection(m, s), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);

        ck_assert_int_ge(sd_bus_message_enter_container(m, 'a', "{sv}"), 0);
        while (sd_bus_message_enter_container(m, 'e', "sv") > 0) {
                ck_assert_int_ge(sd_bus_message_read_basic(m, 's', &key), 0);
                if (streq(key, "env"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "a{ss}", 2, &ret->ka, &ret->a, &ret->kb, &ret->b), 0);
                else if (streq(key, "escaped"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "as", 1, &ret->escaped), 0);
                else if (streq(key, "labels"))
                        ck_assert_int_ge(sd_bus_message_read(m, "v", "a{ss}", 1, &ret->kl, &ret->label), 0);
                else
                        ck_assert_int_ge(sd_bus_message_skip(m, "v"), 0);
                ck_assert_int_ge(sd_bus_message_exit_container(m), 0);
        }
        return m;
}

START_TEST(test_noncharacter_is_escaped) {
        static const char json[] =
                "{\"Id\": \"abc\", \"State\": {\"Status\": \"running\"}, \"Config\": {\"Image\": \"img\","
                " \"Env\": [\"A=x\\ufdd0y\", \"B=back\\\\slash\"], \"Labels\": {\"k\": \"v\"}}}";
        _cleanup_(sbx_sandbox_freep) SbxSandbox *s = calloc(1, sizeof(SbxSandbox));
        unsigned plan = BUS_INSPECTION_UNPLANNED;
        sd_bus *bus = NULL;
        int fds[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        ck_assert_int_eq(sbx_observed_from_string(json, &s->observed, NULL), 0);
        s->name = strdup("n");
        s->container_id = strdup("abc");
        s->status = strdup("running");
        s->image = strdup("img");
        s->fingerprint = strdup("");

        /* unplanned, planning (the checks noted), and planned: the same answer */
        for (unsigned *p = NULL, round = 0; round < 3; round++, p = &plan) {
                Read r;
                sd_bus_message *m = build(bus, s, p, &r);

                ck_assert_str_eq(r.ka, "A");
                ck_assert_str_eq(r.a, "x\\ufdd0y");
                ck_assert_str_eq(r.b, "back\\\\slash");      /* the whole key is escaped */
                ck_assert_str_eq(r.escaped, "env");
                ck_assert_str_eq(r.label, "v");
                sd_bus_message_unref(m);
                if (round > 0)
                        ck_assert_uint_eq(plan, 1U << 4);       /* env: the fifth key of Docker's strings */
        }
        /* a plan is followed as it is (it is kept only for a sandbox that does not change) */
        plan = 0;
        {
                sd_bus_message *m = NULL;

                ck_assert_int_ge(sd_bus_message_new_signal(bus, &m, "/t", "t.T", "S"), 0);
                ck_assert_int_lt(bus_append_inspection_planned(m, s, &plan), 0);   /* sd-bus refuses it */
                sd_bus_message_unref(m);
        }
        sd_bus_close_unref(bus);
        close(fds[1]);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("inspection");
        TCase *tc = tcase_create("inspection");

        tcase_add_test(tc, test_noncharacter_is_escaped);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
