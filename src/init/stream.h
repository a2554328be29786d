/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The descriptor transfers of ReadFile and WriteFile (option fd; stream.c): the
 * process's exit status. */
int sbx_init_cat(const char *path, const char *offset, const char *length);
int sbx_init_put(const char *path, const char *mode, const char *flags, const char *max_bytes);
