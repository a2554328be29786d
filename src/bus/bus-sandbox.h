/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.xagent.Sandbox1.Sandbox: one object per sandbox. */

#include <systemd/sd-bus.h>

#include "lifecycle.h"
#include "manager.h"

/* Registers the fallback vtable and the node enumerator under SBX_BUS_SANDBOX_PREFIX. */
int bus_sandbox_register(Manager *m);

/* The InspectSandbox / Inspect() answer: a{sv}. */
int bus_append_inspection(sd_bus_message *reply, const SbxSandbox *s);

/* GetSandboxUsage's a{sv}: net_* only where Docker reports networks. */
int bus_append_usage(sd_bus_message *reply, const SbxUsage *u);

/* The object path of a sandbox name. */
int bus_sandbox_path(const char *name, char **ret);
