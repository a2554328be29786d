/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The polkit client (src/bus/bus-polkit.c) against a fake authority on a private bus
 * (tests/fake-polkit.py): the subject and details it sends, each answer it can get,
 * and a hung polkitd costing no more than the timeout. */

#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bus-polkit.h"
#include "sbx-test.h"

extern char **environ;

static pid_t dbus_pid, fake_pid;
static char address[512];

static pid_t spawn_reading(char *const argv[], char *line, size_t size) {
        int fds[2];
        pid_t pid;
        posix_spawn_file_actions_t fa;
        FILE *f;

        ck_assert_int_eq(pipe(fds), 0);
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&fa, fds[0]);
        ck_assert_int_eq(posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ), 0);
        posix_spawn_file_actions_destroy(&fa);
        close(fds[1]);
        f = fdopen(fds[0], "r");
        ck_assert_ptr_nonnull(fgets(line, (int) size, f));
        line[strcspn(line, "\n")] = 0;
        fclose(f);
        return pid;
}

static void setup(void) {
        char ready[64], *source = getenv("SBX_SOURCE_ROOT"), script[1024];

        dbus_pid = spawn_reading((char *[]) { (char *) "dbus-daemon", (char *) "--session", (char *) "--nofork",
                                              (char *) "--print-address=1", NULL }, address, sizeof address);
        snprintf(script, sizeof script, "%s/tests/fake-polkit.py", source ?: "..");
        fake_pid = spawn_reading((char *[]) { (char *) "/usr/bin/python3", script, address, NULL }, ready,
                                 sizeof ready);
        ck_assert_str_eq(ready, "ready");
}

static void stop(pid_t *pid) {
        if (*pid > 0) {
                kill(*pid, SIGTERM);
                waitpid(*pid, NULL, 0);
        }
        *pid = 0;
}

static void teardown(void) {
        stop(&fake_pid);
        stop(&dbus_pid);
}

typedef struct Result {
        bool done;
        int r;
        SbxErrorKind kind;
        char message[512];
} Result;

static void on_result(int r, SbxError *error, void *userdata) {
        Result *res = userdata;

        res->done = true;
        res->r = r;
        res->kind = error ? error->kind : SBX_ERROR_NONE;
        snprintf(res->message, sizeof res->message, "%s", error && error->message ? error->message : "");
}

static Result check(const char *action, bool interactive, uint64_t timeout_usec, double *ret_seconds) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        struct timespec t0, t1;
        Result res = {};

        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_address(bus, address), 0);
        ck_assert_int_ge(sd_bus_set_bus_client(bus, true), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(sbx_polkit_check_async(bus, ":1.4242", action,
                                                (const char *const[]) { "verb", "start", "sandbox", "work",
                                                                        "owner", "1001", NULL },
                                                interactive, timeout_usec, on_result, &res, &slot), 0);
        while (!res.done) {
                int r = sd_bus_process(bus, NULL);
                ck_assert_int_ge(r, 0);
                if (r == 0)
                        ck_assert_int_ge(sd_bus_wait(bus, 50 * 1000ULL), 0);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (ret_seconds)
                *ret_seconds = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        return res;
}

START_TEST(test_answers) {
        Result r;
        double seconds;

        r = check("org.test.yes", false, 0, NULL);
        ck_assert_int_eq(r.r, 0);
        r = check("org.test.no", false, 0, NULL);
        ck_assert_int_eq(r.kind, SBX_ERROR_ACCESS_DENIED);
        ck_assert_ptr_nonnull(strstr(r.message, "org.test.no"));
        /* a challenge: without the interactive flag the caller must ask again with it */
        r = check("org.test.challenge", false, 0, NULL);
        ck_assert_int_eq(r.kind, SBX_ERROR_INTERACTIVE_AUTH_REQUIRED);
        r = check("org.test.challenge", true, 0, NULL);
        ck_assert_int_eq(r.kind, SBX_ERROR_ACCESS_DENIED);
        /* polkit failing is a no, naming polkit */
        r = check("org.test.error", false, 0, NULL);
        ck_assert_int_eq(r.kind, SBX_ERROR_ACCESS_DENIED);
        ck_assert_ptr_nonnull(strstr(r.message, "polkit answered org.freedesktop.PolicyKit1.Error.Failed"));
        /* a hung polkitd costs the timeout, then a transient error of its own (no
         * refusal) naming polkit and the limit */
        r = check("org.test.hang", false, 300 * 1000, &seconds);
        ck_assert_int_eq(r.kind, SBX_ERROR_AUTHORIZATION_TIMED_OUT);
        ck_assert_ptr_nonnull(strstr(r.message, "polkit did not answer within 0.3 s"));
        ck_assert_msg(seconds < 3.0, "took %.2f s", seconds);
        /* polkit not there at all: no */
        teardown();
        setup();
        stop(&fake_pid);
        r = check("org.test.yes", false, 0, NULL);
        ck_assert_int_eq(r.kind, SBX_ERROR_ACCESS_DENIED);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("bus-polkit");
        TCase *tc = tcase_create("fake-authority");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_answers);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
