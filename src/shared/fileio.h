/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

#include "error.h"

/* Reads a whole text file (path NULL or "-": standard input) of at most max bytes
 * into a NUL-terminated string. A larger file, or one holding a NUL byte, is
 * InvalidArgs naming it: text is never silently cut. A file that cannot be opened
 * returns its -errno (IOError recorded), so a caller can tell -ENOENT apart. */
int sbx_read_text_file(const char *path, size_t max, char **ret, SbxError *error);

/* Reads fd (a file or a pipe) to its end, at most max bytes of any content, into a
 * buffer of *ret_size bytes (NULL for none): -EFBIG beyond max, else its -errno. */
int sbx_read_fd(int fd, size_t max, char **ret, size_t *ret_size);
