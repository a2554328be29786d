/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* polkit's text agent for the duration of one call, as systemctl runs it: when the
 * caller may be asked for a password, pkttyagent answers polkit's challenge on this
 * terminal. */

#include <sys/types.h>

#define CTL_PKTTYAGENT "/usr/bin/pkttyagent"

/* Starts the agent and waits until it has registered with polkit (or given up).
 * *ret_pid is 0 when no agent runs (none installed). */
int ctl_agent_open(pid_t *ret_pid);

/* Stops the agent started by ctl_agent_open() (nothing for pid 0). */
void ctl_agent_close(pid_t pid);
