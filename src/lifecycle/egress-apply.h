/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Egress enforced in a running sandbox's network namespace (egress-apply.c; the rules
 * are src/core/egress-rules.c's). Private to src/lifecycle. */

#include <stdbool.h>

#include "egress.h"
#include "lifecycle.h"
#include "observed.h"
#include "store.h"

/* nftables' command-line tool (Debian's package nftables). */

/* The container's network namespace (its SandboxKey, or its first process's while that
 * is still the container's), opened. */
int lc_egress_open_netns(const SbxObserved *o, int *ret_fd, SbxError *error);

/* The sandbox's egress as its row stores it (no row, or an old one: the default). */
int lc_egress_of_row(const SbxSandboxRow *row, SbxEgress *ret, SbxError *error);

/* The rules in force in o's namespace are e's: 1, or 0 with *ret_why; RuntimeConflict
 * when they cannot be read. 1 at once when e needs no rules (open, isolated). */
int lc_egress_check(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, const char **ret_why,
                    SbxError *error);
/* Loads e's rules (an atomic reload) and reads them back. */
int lc_egress_apply(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, SbxError *error);

/* The sandbox's names served by the resolver in its namespace (resolvers.h);
 * only_missing: unless it is served there already (the rules were in force: a daemon
 * restarted). */
int lc_egress_serve_names(SbxLifecycle *l, const SbxObserved *o, const SbxEgress *e, bool only_missing,
                          SbxError *error);

/* What is in force for a sandbox whose row stores json (egress.h's names). */
const char *lc_egress_effective(SbxLifecycle *l, const char *json, bool network_isolated);
/* A sandbox described: its egress read back when it runs (s->egress_enforced). */
void lc_egress_describe(SbxLifecycle *l, SbxSandbox *s);
/* Whether the egress row stores is in force in o (true for one that is not up, or
 * needs no rules). */
bool lc_egress_in_force(SbxLifecycle *l, const SbxObserved *o, const SbxSandboxRow *row);
