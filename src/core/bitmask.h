/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Bit masks of named items (spec fields, publish fields, posture items): bit i
 * is table[i]. */

#include <stddef.h>

#include "macro.h"

/* The name of a mask with exactly one bit set, or NULL. */
const char *sbx_bit_name(const char *const *table, size_t n, unsigned bit) _pure_;

/* Fills names[] (n + 1 slots) with the names of the bits set, in table order,
 * NULL-terminated; returns how many. */
size_t sbx_bits_to_names(const char *const *table, size_t n, unsigned mask, const char **names);

/* Defines a mask's two name functions over table (n names): to_string(bit), the
 * name of one bit, and to_names(mask, names), as the two functions above. */
#define SBX_DEFINE_BIT_NAMES(Type, to_string, to_names, table, n)                       \
        const char *to_string(Type bit) {                                               \
                return sbx_bit_name(table, n, (unsigned) bit);                          \
        }                                                                               \
        size_t to_names(unsigned mask, const char *names[static n + 1]) {               \
                return sbx_bits_to_names(table, n, mask, names);                        \
        }
