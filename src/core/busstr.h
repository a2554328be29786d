/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Strings on D-Bus: an 's' must be valid UTF-8 without U+0000, and sd-bus also
 * refuses Unicode noncharacters (U+FDD0…U+FDEF, U+xxFFFE, U+xxFFFF), which Docker
 * and xagent accept. What the service reports (an inspection) carries such a
 * value escaped rather than failing. */

#include <stdbool.h>

#include "macro.h"

/* s can be sent as a D-Bus string as it is. */
bool sbx_bus_string_ok(const char *s) _pure_;

/* The escaped form: a backslash becomes "\\", a noncharacter "\uXXXX" (or
 * "\UXXXXXXXX" above U+FFFF, lowercase hex, as Python's repr() writes them), a
 * byte that is not part of valid UTF-8 "\xhh"; everything else stays. The result
 * is always a valid D-Bus string, and unescaping it gives s back byte for byte. */
int sbx_bus_string_escape(const char *s, char **ret);
