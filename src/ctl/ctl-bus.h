/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The client's side of the bus: connecting, calling the Manager with polkit's agent
 * when a password may be asked, errors by their D-Bus names, replies as JSON. */

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "bus-json.h"
#include "ctl-util.h"

#define CTL_BUS_SERVICE "org.xagent.Sandbox1"
#define CTL_BUS_MANAGER_PATH "/org/xagent/Sandbox1"
#define CTL_BUS_MANAGER_INTERFACE "org.xagent.Sandbox1.Manager"
#define CTL_BUS_SANDBOX_PREFIX "/org/xagent/Sandbox1/sandbox"
#define CTL_BUS_SANDBOX_INTERFACE "org.xagent.Sandbox1.Sandbox"

/* Long enough for Docker's slower operations and for a person typing a password. */
#define CTL_BUS_CALL_TIMEOUT_USEC (120ULL * 1000 * 1000)

/* Connects to the system bus (DBUS_SYSTEM_BUS_ADDRESS when set) and allows interactive
 * authorization when o->ask_password. Prints why on failure. */
int ctl_bus_connect(const CtlOptions *o, sd_bus **ret);

/* A new call of a Manager method; the caller appends the arguments. */
int ctl_bus_new_call(sd_bus *bus, const char *method, sd_bus_message **ret);

/* A call about the sandbox name: the Manager's by-name method ("…Sandbox", with the
 * name appended: the caller's own namespace), or with o->owner the same method of
 * that user's sandbox object (the names belong to their owner). The caller appends
 * the rest. Prints why and returns a negative errno on failure. */
int ctl_bus_new_sandbox_call(sd_bus *bus, const CtlOptions *o, const char *method, const char *name,
                             sd_bus_message **ret);

/* Sends m and waits for the reply (timeout_usec 0 = CTL_BUS_CALL_TIMEOUT_USEC), running
 * polkit's text agent around it when o->ask_password. On failure prints
 * "xagent-sandboxctl: <error name>: <message>" and returns a negative errno. */
int ctl_bus_call(sd_bus *bus, sd_bus_message *m, uint64_t timeout_usec, const CtlOptions *o,
                 sd_bus_message **ret);

/* Prints a failure to build or read a message and returns 1. */
int ctl_bus_fail(const char *what, int r);

/* --label K=V (repeatable): adds K=V to *labels (made on first use); a K=V without
 * "=" is a usage error of verb. The service checks the rest (docs/api.md). */
int ctl_label_parse(const char *verb, const char *arg, json_object **labels);

/* Appends the entry {"labels": a{ss}} of an a{sv} being built, if labels is non-NULL. */
int ctl_bus_append_labels_entry(sd_bus_message *m, json_object *labels);
