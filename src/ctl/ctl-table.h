/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A table for people: a header row, then rows, columns aligned, as machinectl prints. */

#include <stdbool.h>
#include <stdio.h>

#include "macro.h"

typedef struct CtlTable CtlTable;

/* A table with n_columns columns headed by the given titles. */
CtlTable *ctl_table_new(size_t n_columns, const char *const *titles);
CtlTable *ctl_table_free(CtlTable *t);
DEFINE_TRIVIAL_CLEANUP_FUNC(CtlTable *, ctl_table_free);

/* Appends a row of n_columns cells (copied). */
int ctl_table_add_row(CtlTable *t, const char *const *cells);

/* Number of rows, not counting the header. */
size_t ctl_table_rows(const CtlTable *t);

/* Prints the header (unless !header) and the rows, each column as wide as its widest
 * cell (the header's included, so that columns line up the same either way). */
void ctl_table_print(const CtlTable *t, FILE *f, bool header);
