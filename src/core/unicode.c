/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unicode-tables.h"
#include "unicode.h"

static_assert(SBX_UNICODE_N_VERSIONS == _SBX_PYTHON_VERSION_MAX, "one printability table per Python version");

static bool version_valid(SbxPythonVersion v) {
        return v >= 0 && v < _SBX_PYTHON_VERSION_MAX;
}

const char *sbx_python_version_to_string(SbxPythonVersion v) {
        return version_valid(v) ? sbx_unicode_nonprintable[v].python : NULL;
}

const char *sbx_python_unicode_version(SbxPythonVersion v) {
        return version_valid(v) ? sbx_unicode_nonprintable[v].unicode : NULL;
}

int sbx_python_version_from_string(const char *s, SbxPythonVersion *ret) {
        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++)
                if (s && strcmp(s, sbx_unicode_nonprintable[v].python) == 0) {
                        *ret = v;
                        return 0;
                }
        return -EINVAL;
}

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

bool sbx_unicode_is_printable(SbxPythonVersion v, uint32_t cp) {
        const SbxUnicodeNonprintable *t;

        assert(version_valid(v));
        t = &sbx_unicode_nonprintable[v];
        return !in_ranges(cp, t->ranges, t->n_ranges);
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

bool sbx_unicode_is_noncharacter(uint32_t cp) {
        return (cp >= 0xfdd0 && cp <= 0xfdef) || ((cp & 0xfffe) == 0xfffe && cp <= 0x10ffff);
}
