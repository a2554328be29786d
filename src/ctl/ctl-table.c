/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-table.h"

struct CtlTable {
        size_t n_columns;
        char **cells;           /* row-major, the header first */
        size_t n_cells;
};

CtlTable *ctl_table_new(size_t n_columns, const char *const *titles) {
        _cleanup_(ctl_table_freep) CtlTable *t = calloc(1, sizeof(CtlTable));

        if (!t)
                return NULL;
        t->n_columns = n_columns;
        if (ctl_table_add_row(t, titles) < 0)
                return NULL;
        return TAKE_PTR(t);
}

CtlTable *ctl_table_free(CtlTable *t) {
        if (!t)
                return NULL;
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->cells);
        free(t);
        return NULL;
}

int ctl_table_add_row(CtlTable *t, const char *const *cells) {
        char **n = reallocarray(t->cells, t->n_cells + t->n_columns, sizeof(char *));

        if (!n)
                return -ENOMEM;
        t->cells = n;
        for (size_t i = 0; i < t->n_columns; i++) {
                char *c = strdup(cells[i] ?: "");

                if (!c)
                        return -ENOMEM;
                t->cells[t->n_cells++] = c;
        }
        return 0;
}

size_t ctl_table_rows(const CtlTable *t) {
        return t->n_cells / t->n_columns - 1;
}

/* Display width, as the number of code points: the table's text is names and ids. */
static size_t width(const char *s) {
        size_t w = 0;

        for (; *s; s++)
                if (((unsigned char) *s & 0xC0) != 0x80)
                        w++;
        return w;
}

void ctl_table_print(const CtlTable *t, FILE *f, bool header) {
        _cleanup_free_ size_t *widths = calloc(t->n_columns, sizeof(size_t));

        if (!widths)
                return;
        for (size_t i = 0; i < t->n_cells; i++) {
                size_t w = width(t->cells[i]);
                if (w > widths[i % t->n_columns])
                        widths[i % t->n_columns] = w;
        }
        for (size_t i = header ? 0 : t->n_columns; i < t->n_cells; i++) {
                size_t col = i % t->n_columns;

                fputs(t->cells[i], f);
                if (col + 1 == t->n_columns)
                        fputc('\n', f);
                else
                        fprintf(f, "%*s", (int) (widths[col] - width(t->cells[i]) + 1), "");
        }
}
