/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Signalling an exec's processes by their token (kill.c). */

/* Signals every process carrying XAGENT_SANDBOX_EXEC=token; how many. */
int sbx_init_kill_token(int sig, const char *token);

/* --kill SIGNAL TOKEN: exit 0 when something was signalled, 1 when nothing carried
 * the token, 2 on a usage error. */
int sbx_init_kill(const char *signal_number, const char *token);

/* --kill-leftovers SIGNAL INSTANCE: the execs an earlier service instance left
 * running; exit 0 when something was signalled, 1 when none runs, 2 on a usage
 * error. */
int sbx_init_kill_leftovers(const char *signal_number, const char *instance);
