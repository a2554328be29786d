/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdlib.h>

#include "unicode-tables.h"
#include "unicode.h"

/* The tables hold sorted, disjoint ranges: bsearch() finds the one holding cp. */
static int range_cmp(const void *key, const void *elem) {
        uint32_t cp = *(const uint32_t *) key;
        const SbxUnicodeRange *r = elem;

        if (cp < r->first)
                return -1;
        return cp > r->last;
}

static bool in_ranges(uint32_t cp, const SbxUnicodeRange *table, size_t n) {
        return bsearch(&cp, table, n, sizeof(table[0]), range_cmp);
}

bool sbx_unicode_is_printable(uint32_t cp) {
        return !in_ranges(cp, sbx_unicode_nonprintable, sbx_unicode_nonprintable_len);
}

bool sbx_unicode_is_space(uint32_t cp) {
        return in_ranges(cp, sbx_unicode_space, sbx_unicode_space_len);
}

static int digit_run_cmp(const void *key, const void *elem) {
        uint32_t cp = *(const uint32_t *) key;
        const SbxUnicodeDigitRun *r = elem;

        if (cp < r->first)
                return -1;
        return cp > r->last;
}

int sbx_unicode_decimal_value(uint32_t cp) {
        const SbxUnicodeDigitRun *r = bsearch(&cp, sbx_unicode_decimal, sbx_unicode_decimal_len,
                                              sizeof(sbx_unicode_decimal[0]), digit_run_cmp);

        return r ? (int) (r->value + (cp - r->first)) : -1;
}
