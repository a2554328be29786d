/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Warm pools (docs/lifecycle.md, "Warm pools"): the background refill — a WorkKind row
 * of the service's own (work.h), on the change pool, holding off the idle exit while
 * it runs — every POOL_TICK_S (the Manager's pool_tick_usec: tests' shorter), at
 * start-up, after a policy reload and after every claim; one at a time (asked again
 * while one runs: once more after it). And what GetPolicy shows of the pools. */

#include <systemd/sd-bus.h>

#include "manager-state.h"

#define POOL_TICK_S 10U

void bus_pool_start(Manager *m);
void bus_pool_stop(Manager *m);
void bus_pool_refill(Manager *m);

/* GetPolicy's "warm_pools" (aa{sv}: user, spec, name_prefix, egress, size — the
 * caller's own pools; root's: all) and "max_pooled". */
int bus_pool_append_policy(sd_bus_message *reply, const SbxPolicy *p, const SbxOwner *caller);
