/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* org.xagent.Sandbox1.Manager at /org/xagent/Sandbox1: create, ensure, the lists and
 * the policy here; the by-name methods read the name and delegate to the per-sandbox
 * object's method (bus-sandbox.h). */

#include "manager-state.h"

int bus_manager_register(Manager *m);

extern const sd_bus_vtable bus_manager_vtable[];
