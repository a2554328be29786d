/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Idle stop and expiry (docs/lifecycle.md): every DEADLINES_TICK_S (the Manager's
 * deadline_tick_usec: tests' shorter) the sandboxes' lifetimes (registry.h) are looked
 * at on the service's clock (manager_now_us()), whether or not anyone calls: one past
 * expire_at is deleted, a running one idle for idle_timeout (no lease, no running exec
 * or detached process, no operation using it) is stopped or paused, each on a worker
 * and only if it is still the sandbox that fell due (its container and creation) and,
 * for an idle one, still unused (sbx_lifecycle_deadline()), audited as the service's
 * (uid 0). Their activity is written back to the store at
 * most every tick, so a restart does not reset an idle clock. Started with the daemon:
 * the stored lifetimes are read at once, and what is overdue is acted on at the first
 * tick after the first reconciliation has applied. */

#include "manager-state.h"

#define DEADLINES_TICK_S 5U

void deadlines_start(Manager *m);
void deadlines_stop(Manager *m);
