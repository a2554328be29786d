/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The service's bus name, object paths and interfaces (docs/api.md). */

#define SBX_BUS_NAME "org.xagent.Sandbox1"
#define SBX_BUS_PATH "/org/xagent/Sandbox1"
#define SBX_BUS_SANDBOX_PREFIX "/org/xagent/Sandbox1/sandbox"
#define SBX_BUS_MANAGER_INTERFACE "org.xagent.Sandbox1.Manager"
#define SBX_BUS_SANDBOX_INTERFACE "org.xagent.Sandbox1.Sandbox"
#define SBX_BUS_EXEC_PREFIX "/org/xagent/Sandbox1/exec"
#define SBX_BUS_EXEC_INTERFACE "org.xagent.Sandbox1.Exec"
