/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `xagent-sandbox-init --detach` and `--supervise` (detach.c): detached processes,
 * their output kept in a bounded ring file (proto.h, SBX_RING_*). */

#define SBX_DETACH_ARGV_MAX 4096

int sbx_init_detach(const char *dir, const char *cap, char **argv, int argc);
int sbx_init_supervise(const char *dir, const char *report_fd, const char *token, char **argv);
