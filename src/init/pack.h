/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Writes a tar stream of dir/name to standard output (pack.c); the process's
 * exit status. */
int sbx_init_pack(const char *dir, const char *name);
