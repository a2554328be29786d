/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Lifecycle values as the bus carries them (docs/api.md). */

#include <systemd/sd-bus.h>

#include "lifecycle.h"

/* The InspectSandbox / Inspect() answer: a{sv}. */
int bus_append_inspection(sd_bus_message *reply, const SbxSandbox *s);

/* GetSandboxUsage's a{sv}: net_* only where Docker reports networks. */
int bus_append_usage(sd_bus_message *reply, const SbxUsage *u);
