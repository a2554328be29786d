/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Store and Docker reconciled in the background, on a worker (docs/lifecycle.md):
 * the registry refreshed from what Docker has, the rows of removed containers
 * dropped, and after the first one the execs a dead instance left running killed. */

#include "manager-state.h"

/* Has store and Docker reconciled (sbx_lifecycle_reconcile) and the objects
 * refreshed from Docker: on every connection to Docker's events. */
void manager_reconcile(Manager *m);
/* The same, but the first reconciliation of the daemon's life (none has been
 * applied yet) waits for the calls in flight — those that activated it — to be
 * answered, at most SBX_FIRST_RECONCILE_WAIT_MS: its list and inspects of every
 * container compete with their Docker calls for dockerd and the CPU. */
void manager_reconcile_after_calls(Manager *m);
#define SBX_FIRST_RECONCILE_WAIT_MS 200U

/* The same a little later (SBX_RECONCILE_RETRY_S), once: after Docker failed an
 * operation, whatever it left (an intent) is settled when Docker answers again. */
void manager_reconcile_later(Manager *m);
#define SBX_RECONCILE_RETRY_S 5U

/* A sandbox's container was removed: its row is dropped if still about it. */
void manager_forget(Manager *m, const char *name, const char *container_id);
/* A start the service did not make (Docker's start event): the sandbox's egress is
 * read back on a worker and loaded again at once if it is not in force (failing: the
 * sandbox is stopped). Audited when it had to be loaded. */
void manager_rearm_egress(Manager *m, const char *name, const char *container_id);

/* A sandbox's container changed behind the service's back (docker update, rename):
 * inspected again on a worker, and the object's properties refreshed from it
 * (PropertiesChanged for those that differ). */
void manager_redescribe(Manager *m, const char *name, const char *container_id);

/* A read of the object's State, Status or Verdict: when what they show is older than
 * observation_max_age (no read, list or event has set them since), the sandbox is
 * looked at again, as manager_redescribe() does, and what differs announced
 * (docs/api.md, "Reads from observations"). */
void manager_relook(Manager *m, SandboxEntry *e);
