/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "bitmask.h"

const char *sbx_bit_name(const char *const *table, size_t n, unsigned bit) {
        for (size_t i = 0; i < n; i++)
                if (bit == 1u << i)
                        return table[i];
        return NULL;
}

size_t sbx_bits_to_names(const char *const *table, size_t n, unsigned mask, const char **names) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++)
                if (mask & (1u << i))
                        names[k++] = table[i];
        names[k] = NULL;
        return k;
}
