/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lifecycle values as the bus carries them (docs/api.md). */

#include <limits.h>
#include <systemd/sd-bus.h>

#include "lifecycle.h"

/* The InspectSandbox / Inspect() answer: a{sv}. */
int bus_append_inspection(sd_bus_message *reply, const SbxSandbox *s);
/* The same, the strings' checks (which keys must be sent escaped) done once for a
 * sandbox that does not change: *plan BUS_INSPECTION_UNPLANNED checks them and
 * notes the result in it; a noted plan is followed without checking. */
#define BUS_INSPECTION_UNPLANNED UINT_MAX
int bus_append_inspection_planned(sd_bus_message *reply, const SbxSandbox *s, unsigned *plan);

/* GetSandboxUsage's a{sv}: net_* only where Docker reports networks. */
int bus_append_usage(sd_bus_message *reply, const SbxUsage *u);
