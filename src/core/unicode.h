/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Unicode character properties Python's repr() and int() use, as Python
 * 3.11 has them (Unicode 14.0.0, tables in unicode-tables.c). */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/* Python's str.isprintable() for one code point: false for categories Cc, Cf,
 * Cs, Co, Cn, Zl, Zp and Zs other than U+0020. repr() escapes exactly these. */
bool sbx_unicode_is_printable(uint32_t cp) _pure_;

/* Python's str.isspace() for one code point. */
bool sbx_unicode_is_space(uint32_t cp) _pure_;

/* The decimal digit value (0–9) of a code point with str.isdecimal(), or -1. */
int sbx_unicode_decimal_value(uint32_t cp) _pure_;
