/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `xagent-sandbox-init --attach DIR` (attach.c): a detached process's output to
 * stdout and stderr, stdin to the process. */

int sbx_init_attach(const char *dir);
