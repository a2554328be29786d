/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Python 3.11's int(s) for a str s in base 10 (xagent-contract.md §5 rule 2: the spec
 * version label is compared after int()). */

#include <stdint.h>

/* The largest number of digits int() converts (sys.int_info.default_max_str_digits);
 * longer numbers raise ValueError, leading zeros included. */
#define SBX_PY_INT_MAX_STR_DIGITS 4300

/* Parses s (UTF-8) as int(s) would: surrounding Python whitespace, an optional
 * sign, decimal digits of any script (Unicode Nd) with single underscores only
 * between digits, leading zeros allowed. -EINVAL where int() raises ValueError
 * (and for invalid UTF-8), -ERANGE where int() succeeds but the value does not
 * fit in int64_t. */
int sbx_py_int_parse(const char *s, int64_t *ret);
