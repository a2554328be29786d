/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker's events while the daemon runs (docs/lifecycle.md): a thread follows the
 * stream of the service's containers with a Docker client of its own and
 * reconnects when Docker comes back; the main thread applies each event to the
 * objects (State, Status, SandboxRemoved) and, on every (re)connection, has store
 * and Docker reconciled — what was missed while the stream was down included. */

#include "manager-state.h"

typedef struct ManagerEvents ManagerEvents;

int manager_events_start(Manager *m);
/* Stops the thread (within about a second) and frees it; NULL is fine. */
void manager_events_stop(Manager *m);
