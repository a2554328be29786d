/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clocks, in microseconds: monotonic for deadlines and ages, real time for
 * what is stored or shown (a row's creation, a mount report's "since"); and waiting
 * for a descriptor until a deadline. */

#include <stdint.h>

uint64_t sbx_now_monotonic_us(void);
uint64_t sbx_now_realtime_us(void);
/* Monotonic, and counting a suspend as the wall clock does. */
uint64_t sbx_now_boottime_us(void);

/* Waits for events on fd until deadline_ms (monotonic, in ms): 1 when they came, 0 on
 * timeout, else -errno. */
int sbx_fd_wait(int fd, short events, uint64_t deadline_ms);
