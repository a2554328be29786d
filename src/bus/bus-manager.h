/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.xagent.Sandbox1.Manager at /org/xagent/Sandbox1. */

#include "manager.h"

int bus_manager_register(Manager *m);

extern const sd_bus_vtable bus_manager_vtable[];

/* The by-name methods that the per-sandbox objects share: the rest of the
 * arguments are read from msg. */
int bus_method_verify(sd_bus_message *msg, Manager *m, const char *name, sd_bus_error *error);
int bus_method_stop(sd_bus_message *msg, Manager *m, const char *name, sd_bus_error *error);
int bus_method_snapshot(sd_bus_message *msg, Manager *m, const char *name, sd_bus_error *error);

/* ExecSandbox / StartExec on the sandbox `name` (the Manager's and the object's). */
int bus_method_exec(sd_bus_message *msg, Manager *m, const char *name, bool streaming, sd_bus_error *error);

/* CopyToSandbox / CopyFromSandbox after the name (the Manager's and the object's). */
int bus_method_copy(sd_bus_message *msg, Manager *m, const char *name, bool to, sd_bus_error *error);
