/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.xagent.Sandbox1.Sandbox: one object per sandbox, behind the registry's entries
 * (registry.h). Its handlers hold the method bodies; the Manager's by-name methods
 * (bus-manager.c) read the name and call them with it instead of an object, as
 * machined's do (bus_machine_method_kill(message, machine, error)). */

#include <systemd/sd-bus.h>

#include "operation.h"

/* Registers the fallback vtable and the node enumerator under SBX_BUS_SANDBOX_PREFIX. */
int bus_sandbox_register(Manager *m);

/* The bodies: exactly one of name (in the caller's own namespace) and object (that
 * sandbox, its owner's) is set; the rest of the arguments are read from msg. */
/* Start, Delete, Inspect, GetUsage: no more arguments. */
int bus_sandbox_method_simple(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, Verb verb,
                              sd_bus_error *error);
int bus_sandbox_method_verify(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                              sd_bus_error *error);
int bus_sandbox_method_set_egress(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                  sd_bus_error *error);
int bus_sandbox_method_stop(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                            sd_bus_error *error);
int bus_sandbox_method_acquire(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                               sd_bus_error *error);
int bus_sandbox_method_set_lifetimes(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                     sd_bus_error *error);
int bus_sandbox_method_snapshot(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                                sd_bus_error *error);
/* Exec / StartExec. */
int bus_sandbox_method_exec(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object,
                            bool streaming, sd_bus_error *error);
/* CopyTo / CopyFrom. */
int bus_sandbox_method_copy(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, bool to,
                            sd_bus_error *error);
/* ReadFile / WriteFile / ListFiles / RemoveFile (verb is one of those). */
int bus_sandbox_method_file(sd_bus_message *msg, Manager *m, const char *name, const SandboxEntry *object, Verb verb,
                            sd_bus_error *error);
