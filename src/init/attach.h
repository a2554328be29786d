/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* `xagent-sandbox-init --attach DIR` (attach.c): a detached process's output to
 * stdout and stderr, stdin to the process. With `CURSOR FOLLOW` (StreamOutput): no
 * input; the output from the positions ReadOutput's cursor names on (0: the oldest
 * kept), until the process ended (FOLLOW 1) or through what was kept at the start (0). */

int sbx_init_attach(const char *dir, const char *cursor, const char *follow);
