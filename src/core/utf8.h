/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* Decodes one UTF-8 sequence at s (at most len bytes). Returns its length (1–4)
 * and the code point, or -EILSEQ for anything that is not well-formed UTF-8
 * (overlong forms, surrogates, values above U+10FFFF, truncation). */
int sbx_utf8_decode(const char *s, size_t len, uint32_t *ret_cp);

/* True if the NUL-terminated string is well-formed UTF-8. */
bool sbx_utf8_is_valid(const char *s) _pure_;
