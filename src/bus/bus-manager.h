/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.xagent.Sandbox1.Manager at /org/xagent/Sandbox1. */

#include "manager.h"

int bus_manager_register(Manager *m);

extern const sd_bus_vtable bus_manager_vtable[];

/* The by-name methods that the per-sandbox objects share: the rest of the
 * arguments are read from msg. */
/* Shared by the Manager's by-name methods (name: in the caller's namespace) and the
 * per-sandbox objects' methods (object: that sandbox): exactly one is non-NULL. */
int bus_method_verify(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                      sd_bus_error *error);
int bus_method_stop(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                    sd_bus_error *error);
int bus_method_snapshot(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                        sd_bus_error *error);
/* ExecSandbox / StartExec after the name. */
int bus_method_exec(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool streaming,
                    sd_bus_error *error);
/* CopyToSandbox / CopyFromSandbox after the name. */
int bus_method_copy(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool to,
                    sd_bus_error *error);
