/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* Parses Docker's RFC 3339 time ("2026-01-01T00:00:00.123456789Z", or with a
 * "+hh:mm" offset) into µs since the epoch. -EINVAL if it is not one. */
int sbx_parse_rfc3339_usec(const char *s, uint64_t *ret);
