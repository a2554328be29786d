/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Python's repr() of the values in xagent's fingerprint tuple (xagent-contract.md §2),
 * byte for byte, as a given Python version writes it (string escapes depend on
 * its Unicode database). The writers append to a stdio stream (open_memstream);
 * the caller checks the stream for errors once at the end. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "unicode.h"

/* repr() of a str given as UTF-8 under Python version v: quoted with "…" only if
 * it contains ' and no ", escapes as Python writes them. -EILSEQ (and nothing
 * written) if s is not well-formed UTF-8. */
int sbx_pyrepr_str(FILE *f, SbxPythonVersion v, const char *s);

/* Runs write(f, value) on a memory stream and hands out what it wrote (write may
 * note what it saw in value). */
typedef int (*SbxPyreprWriter)(FILE *f, void *value);
int sbx_pyrepr_to_string(SbxPyreprWriter write, void *value, char **ret);

/* The same into a new string. -EILSEQ or -ENOMEM. */
int sbx_pyrepr_str_to_string(SbxPythonVersion v, const char *s, char **ret);

/* repr(None), repr(True/False), repr(int). */
void sbx_pyrepr_none(FILE *f);
void sbx_pyrepr_bool(FILE *f, bool b);
void sbx_pyrepr_int(FILE *f, int64_t i);

/* A tuple: begin writes "(", item(i) the ", " before every item but the first,
 * end(n) closes a tuple of n items: "(x,)" for one item, "()" for none. */
void sbx_pyrepr_tuple_begin(FILE *f);
void sbx_pyrepr_tuple_item(FILE *f, size_t i);
void sbx_pyrepr_tuple_end(FILE *f, size_t n);
