/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Unpacks the filtered tar stream on standard input below target (unpack.c);
 * the process's exit status. */
int sbx_init_unpack(const char *target);
