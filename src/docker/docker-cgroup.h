/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The limits the kernel enforces on a local container's first process: its
 * cgroups' memory, memory+swap, pids and CPU quota, read from /proc/PID/cgroup and
 * the cgroup files (v1 or v2) under /sys/fs/cgroup, and whether it holds any
 * capability (/proc/PID/status). For an engine whose inspect
 * answer keeps the limits it was created with after they were changed (Podman
 * 4.3.1's `podman update`), or that dropped them without a word. */

#include <sys/types.h>

#include "dialect.h"

/* 1 and *ret when pid's cgroups were found and are the container's (the path of
 * each names container_id); 0 when not (gone, another process's, unreadable). */
int sbx_cgroup_limits(pid_t pid, const char *container_id, SbxKernelLimits *ret);

/* How many processes the kernel's OOM killer killed in the container's memory cgroup
 * (v1 memory.oom_control, v2 memory.events "oom_kill"), pid its first process; 0 also
 * when that cannot be told. Docker's State.OOMKilled says so only once the container
 * ended (20.10), not when another of its processes was killed. */
int sbx_cgroup_oom_kills(pid_t pid, const char *container_id);
