/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What exec (ctl-exec.c) and the detached processes' commands (ctl-detached.c) share. */

#include <signal.h>
#include <stdbool.h>
#include <systemd/sd-bus.h>

#define CTL_EXEC_INTERFACE "org.xagent.Sandbox1.Exec"
#define CTL_EXEC_PREFIX "/org/xagent/Sandbox1/exec/"

/* Waits for the exec object's Exited (or its ExitStatus, when it ended already); the
 * signals of mask (blocked) go to the process meanwhile (Kill). Its exit status
 * (0–255), or 1 on a failure, printed. */
int ctl_exec_wait_exited(sd_bus *bus, const char *path, const sigset_t *mask);

/* Prints an exec object for people (its id, the last part of path) or as JSON
 * {"exec": path, "id": id}; 0, or 1 on a failure, printed. */
/* The id of an exec object (the last element of its path), and the line or JSON that names it. */
const char *ctl_exec_id(const char *path);
int ctl_print_exec(const char *path, bool json);
