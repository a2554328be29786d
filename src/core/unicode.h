/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Unicode character properties Python's repr() and int() use (tables in
 * unicode-tables.c). repr() depends on the Python version: each ships its own
 * Unicode database, and a code point assigned in a newer one is printed as is
 * instead of escaped. int() of a version label is Python 3.11's. */

#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

/* The Python versions xagent may run on, by their Unicode database. */
typedef enum SbxPythonVersion {
        SBX_PYTHON_3_11,        /* Unicode 14.0.0 */
        SBX_PYTHON_3_12,        /* Unicode 15.0.0 */
        SBX_PYTHON_3_13,        /* Unicode 15.1.0 */
        SBX_PYTHON_3_14,        /* Unicode 16.0.0 */
        _SBX_PYTHON_VERSION_MAX,
        SBX_PYTHON_DEFAULT = SBX_PYTHON_3_11,
} SbxPythonVersion;

/* "3.11" … "3.14"; NULL if out of range. */
const char *sbx_python_version_to_string(SbxPythonVersion v) _pure_;
/* The Unicode version of v's database, "14.0.0" …; NULL if out of range. */
const char *sbx_python_unicode_version(SbxPythonVersion v) _pure_;
/* "3.11" … "3.14" exactly; -EINVAL for anything else. */
int sbx_python_version_from_string(const char *s, SbxPythonVersion *ret);

/* Python's str.isprintable() for one code point under version v: false for
 * categories Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs other than U+0020. repr()
 * escapes exactly these. */
bool sbx_unicode_is_printable(SbxPythonVersion v, uint32_t cp) _pure_;

/* Python's str.isspace() for one code point (3.11). */
bool sbx_unicode_is_space(uint32_t cp) _pure_;

/* The decimal digit value (0–9) of a code point with str.isdecimal() (3.11), or -1. */
int sbx_unicode_decimal_value(uint32_t cp) _pure_;

/* Unicode noncharacters: U+FDD0…U+FDEF and the last two code points of every
 * plane (U+xxFFFE, U+xxFFFF). Valid UTF-8, but sd-bus refuses them in strings. */
bool sbx_unicode_is_noncharacter(uint32_t cp) _pure_;
