/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A bus object for unit tests that make and read messages without a bus. */

#include <check.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

/* Started on one end of a socket pair nobody answers (authentication never completes,
 * and nothing is sent); the caller closes fds[1] after sd_bus_close_unref(). */
static inline sd_bus *sbx_test_bus(int fds[2]) {
        sd_bus *bus = NULL;

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        return bus;
}
