/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Egress armed in a sandbox (egress-arm.c). Private to src/lifecycle. */

#include "egress.h"
#include "lifecycle.h"
#include "observed.h"

enum {
        LC_EGRESS_NEW = 1 << 0,                 /* the namespace was just made: load without reading first */
        LC_EGRESS_STOP_ON_FAILURE = 1 << 1,     /* fail closed: the container is stopped */
};
/* Whatever e needs in force in container id (o: its inspect after the last start, or
 * NULL to inspect it now); failing, RuntimeConflict naming egress (PolicyViolation
 * when it cannot be enforced at all). */
int lc_egress_arm(SbxLifecycle *l, const char *id, const SbxObserved *o, const SbxEgress *e, unsigned flags,
                  SbxError *error);
