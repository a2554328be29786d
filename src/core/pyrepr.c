/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "macro.h"
#include "pyrepr.h"
#include "unicode.h"
#include "utf8.h"

/* CPython's unicode_repr(): ' unless the string holds ' but no ". */
static char choose_quote(const char *s) {
        return strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';
}

/* Writes the escape Python's repr() uses for cp, or returns false if cp stands
 * for itself (printable ASCII, printable non-ASCII). Hex digits are lowercase. */
static bool write_escape(FILE *f, SbxPythonVersion v, uint32_t cp, char quote) {
        if (cp == (uint32_t) quote || cp == '\\')
                fprintf(f, "\\%c", (char) cp);
        else if (cp == '\t')
                fputs("\\t", f);
        else if (cp == '\n')
                fputs("\\n", f);
        else if (cp == '\r')
                fputs("\\r", f);
        else if (cp < 0x20 || cp == 0x7f)
                fprintf(f, "\\x%02" PRIx32, cp);
        else if (cp < 0x7f || sbx_unicode_is_printable(v, cp))
                return false;
        else if (cp <= 0xff)
                fprintf(f, "\\x%02" PRIx32, cp);
        else if (cp <= 0xffff)
                fprintf(f, "\\u%04" PRIx32, cp);
        else
                fprintf(f, "\\U%08" PRIx32, cp);
        return true;
}

int sbx_pyrepr_str(FILE *f, SbxPythonVersion v, const char *s) {
        size_t len = strlen(s);
        char quote;

        if (!sbx_utf8_is_valid(s))
                return -EILSEQ;

        quote = choose_quote(s);
        fputc(quote, f);
        while (len > 0) {
                uint32_t cp;
                int n = sbx_utf8_decode(s, len, &cp);

                if (n < 0)
                        return n;  /* not reached: validated above */
                if (!write_escape(f, v, cp, quote))
                        fwrite(s, 1, (size_t) n, f);
                s += n;
                len -= (size_t) n;
        }
        fputc(quote, f);
        return 0;
}

int sbx_pyrepr_to_string(SbxPyreprWriter write, void *value, char **ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0;
        FILE *f;
        int r;

        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        r = write(f, value);
        if (fclose(f) != 0)
                return -ENOMEM;
        if (r < 0)
                return r;
        *ret = TAKE_PTR(buf);
        return 0;
}

typedef struct VersionedStr {
        SbxPythonVersion version;
        const char *s;
} VersionedStr;

static int write_str(FILE *f, void *value) {
        const VersionedStr *vs = value;
        return sbx_pyrepr_str(f, vs->version, vs->s);
}

int sbx_pyrepr_str_to_string(SbxPythonVersion v, const char *s, char **ret) {
        return sbx_pyrepr_to_string(write_str, &(VersionedStr) { .version = v, .s = s }, ret);
}

void sbx_pyrepr_none(FILE *f) {
        fputs("None", f);
}

void sbx_pyrepr_bool(FILE *f, bool b) {
        fputs(b ? "True" : "False", f);
}

void sbx_pyrepr_int(FILE *f, int64_t i) {
        fprintf(f, "%" PRIi64, i);
}

void sbx_pyrepr_tuple_begin(FILE *f) {
        fputc('(', f);
}

void sbx_pyrepr_tuple_item(FILE *f, size_t i) {
        if (i > 0)
                fputs(", ", f);
}

void sbx_pyrepr_tuple_end(FILE *f, size_t n) {
        fputs(n == 1 ? ",)" : ")", f);
}
