/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clocks, in microseconds: monotonic for deadlines and ages, real time for
 * what is stored or shown (a row's creation, a mount report's "since"). */

#include <stdint.h>

uint64_t sbx_now_monotonic_us(void);
uint64_t sbx_now_realtime_us(void);
