/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The relay against local descriptors, without Docker: the stream is one end of a
 * socketpair the test plays Docker on. A caller's descriptor is shared with the
 * caller, who may empty or fill it between the relay's poll() and its read() or
 * write(): this binary's poll() (which the relay's call binds to) can play that
 * caller, deterministically. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "docker-relay.h"
#include "macro.h"
#include "sbx-test.h"

/* glibc's own, under its other name. */
extern int __poll(struct pollfd *fds, nfds_t n, int timeout);

/* The racing caller: once poll() said `steal_fd` is readable, it empties it first;
 * once poll() said `fill_fd` is writable, it fills it up. */
static int steal_fd = -1, fill_fd = -1;

static void empty(int fd) {
        char buf[4096];
        int flags = fcntl(fd, F_GETFL);

        (void) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        while (read(fd, buf, sizeof buf) > 0)
                ;
        (void) fcntl(fd, F_SETFL, flags);
}

static void fill(int fd) {
        char buf[4096] = {};
        int flags = fcntl(fd, F_GETFL);

        (void) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        while (write(fd, buf, sizeof buf) > 0)
                ;
        while (write(fd, buf, 1) > 0)
                ;
        (void) fcntl(fd, F_SETFL, flags);
}

int poll(struct pollfd *fds, nfds_t n, int timeout) {
        int k = __poll(fds, n, timeout);

        for (nfds_t i = 0; k > 0 && i < n; i++) {
                if (fds[i].fd >= 0 && fds[i].fd == steal_fd && (fds[i].revents & POLLIN))
                        empty(steal_fd);
                if (fds[i].fd >= 0 && fds[i].fd == fill_fd && (fds[i].revents & POLLOUT))
                        fill(fill_fd);
        }
        return k;
}

static uint64_t elapsed_ms(uint64_t since_us) {
        return (sbx_now_monotonic_us() - since_us) / 1000U;
}

START_TEST(test_bounded_read_of_an_empty_pipe) {
        int p[2];
        char c;
        uint64_t t0;

        ck_assert_int_eq(pipe(p), 0);
        t0 = sbx_now_monotonic_us();
        ck_assert_int_eq(sbx_relay_io_bounded(p[0], NULL, &c, 1), -EAGAIN);
        ck_assert_uint_ge(elapsed_ms(t0), 40);
        ck_assert_uint_lt(elapsed_ms(t0), 1000);
        /* what is there is read at once */
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        ck_assert_int_eq(sbx_relay_io_bounded(p[0], NULL, &c, 1), 1);
        ck_assert_int_eq(c, 'x');
        close(p[0]);
        close(p[1]);
}
END_TEST

START_TEST(test_bounded_write_to_a_full_pipe) {
        int p[2];
        uint64_t t0;

        ck_assert_int_eq(pipe(p), 0);
        fill(p[1]);
        t0 = sbx_now_monotonic_us();
        ck_assert_int_eq(sbx_relay_io_bounded(p[1], "x", NULL, 1), -EAGAIN);
        ck_assert_uint_lt(elapsed_ms(t0), 1000);
        ck_assert_int_eq(fcntl(p[1], F_GETFL) & O_NONBLOCK, 0);         /* the flags stay */
        close(p[0]);
        close(p[1]);
}
END_TEST

/* stdin is a blocking pipe whose byte the caller takes between poll() and read():
 * the relay is never held in the read, and its deadline holds. */
START_TEST(test_a_caller_emptying_stdin_cannot_hold_the_relay) {
        SbxRelay r = SBX_RELAY_INIT;
        int sv[2], p[2];
        uint64_t t0;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(write(p[1], "x", 1), 1);
        steal_fd = p[0];
        r.sock = sv[0];
        r.tty = true;
        r.in_fd = p[0];
        r.deadline_us = sbx_now_monotonic_us() + 500000U;
        t0 = sbx_now_monotonic_us();
        ck_assert_int_eq(sbx_relay_run(&r), -ETIME);
        ck_assert_uint_lt(elapsed_ms(t0), 2000);
        steal_fd = -1;
        ck_assert_int_eq(fcntl(p[0], F_GETFL) & O_NONBLOCK, 0);
        sbx_relay_done(&r);
        close(sv[1]);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* stdout is a blocking pipe the caller fills between poll() and write(). */
START_TEST(test_a_caller_filling_stdout_cannot_hold_the_relay) {
        SbxRelay r = SBX_RELAY_INIT;
        int sv[2], p[2];
        uint64_t t0;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(write(sv[1], "output", 6), 6);
        fill_fd = p[1];
        r.sock = sv[0];
        r.tty = true;
        r.out[0].fd = p[1];
        r.deadline_us = sbx_now_monotonic_us() + 500000U;
        t0 = sbx_now_monotonic_us();
        ck_assert_int_eq(sbx_relay_run(&r), -ETIME);
        ck_assert_uint_lt(elapsed_ms(t0), 2000);
        fill_fd = -1;
        sbx_relay_done(&r);
        close(sv[1]);
        close(p[0]);
        close(p[1]);
}
END_TEST

static void frame(int fd, unsigned stream, const char *data, size_t n) {
        unsigned char h[8] = { stream, 0, 0, 0, (n >> 24) & 0xff, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff };

        ck_assert_int_eq(write(fd, h, sizeof h), (ssize_t) sizeof h);
        ck_assert_int_eq(write(fd, data, n), (ssize_t) n);
}

/* Both streams together keep no more than kept_limit (one ExecSandbox reply). */
START_TEST(test_both_streams_share_the_kept_limit) {
        SbxRelay r = SBX_RELAY_INIT;
        int sv[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        frame(sv[1], 1, "0123456789", 10);
        frame(sv[1], 2, "abcdefghij", 10);
        frame(sv[1], 1, "more", 4);
        close(sv[1]);
        r.sock = sv[0];
        r.out[0].limit = r.out[1].limit = 10;
        r.kept_limit = 15;
        ck_assert_int_eq(sbx_relay_run(&r), 0);
        ck_assert_uint_eq(r.out[0].size, 10);
        ck_assert_uint_eq(r.out[1].size, 5);
        ck_assert_str_eq(r.out[1].data, "abcde");
        ck_assert(r.out[0].truncated && r.out[1].truncated);
        sbx_relay_done(&r);
}
END_TEST

static Suite *relay_suite(void) {
        Suite *s = suite_create("docker-relay");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 10);
        tcase_add_test(tc, test_bounded_read_of_an_empty_pipe);
        tcase_add_test(tc, test_bounded_write_to_a_full_pipe);
        tcase_add_test(tc, test_a_caller_emptying_stdin_cannot_hold_the_relay);
        tcase_add_test(tc, test_a_caller_filling_stdout_cannot_hold_the_relay);
        tcase_add_test(tc, test_both_streams_share_the_kept_limit);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(relay_suite)
