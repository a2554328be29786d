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

/* The signals about a sandbox (bus-signal.h: unicast to its owner's and root's
 * connections); their property values, like a property read without a call, carry
 * no spec contents (Image, Fingerprint: empty, invalidated on change).
 * InterfacesAdded's a{sa{sv}}: */
int bus_sandbox_append_interfaces(sd_bus_message *m, const SandboxEntry *e);
/* PropertiesChanged's s a{sv} as, for the properties named (NULL-terminated). */
int bus_sandbox_append_changed(sd_bus_message *m, const SandboxEntry *e, const char *const *names);

/* The object path of a sandbox name. */
int bus_sandbox_path(const char *name, char **ret);
