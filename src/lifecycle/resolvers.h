/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The service's resolver for sandboxes with name entries (docs/security.md, "Egress",
 * names): one UDP socket per sandbox, opened on the loopback of the sandbox's own
 * network namespace (where its ruleset redirects every DNS query), served by one
 * thread of the daemon. A listed name is looked up at the policy's resolvers and its
 * addresses are opened in the sandbox's rules (timed set elements) before the answer
 * is sent; an unlisted one is answered REFUSED, counted, and never forwarded. Shared by
 * all workers. */

#include <stdbool.h>
#include <stdint.h>

#include "egress.h"
#include "error.h"

typedef struct SbxResolvers SbxResolvers;

int sbx_resolvers_new(SbxResolvers **ret);
SbxResolvers *sbx_resolvers_free(SbxResolvers *r);

/* How many sandboxes are served now (the daemon stays while any is). */
size_t sbx_resolvers_serving(SbxResolvers *r);
/* The names refused to the sandbox in container_id since it was last armed; 0 if not served. */
uint64_t sbx_resolvers_refused(SbxResolvers *r, const char *container_id);
/* Whether container_id is served in the namespace netns (compared by inode). */
bool sbx_resolvers_serves(SbxResolvers *r, const char *container_id, int netns);

typedef struct SbxResolverArgs {
        const char *container_id;
        int netns;                      /* the sandbox's network namespace (duplicated) */
        int64_t pid;                    /* its first process: served until it ends */
        const SbxEgress *egress;        /* its name entries */
        const SbxPolicyEgress *policy;  /* always_deny, allowed, resolvers, max_name_ttl */
        const SbxCidr *engine;          /* the engine's own networks: never opened */
        size_t n_engine;
} SbxResolverArgs;

/* Serves the sandbox (in place of whatever served it before). RuntimeConflict naming
 * egress when the socket cannot be had there. */
int sbx_resolvers_serve(SbxResolvers *r, const SbxResolverArgs *a, SbxError *error);
/* Stops serving container_id (no name entries any more). */
void sbx_resolvers_forget(SbxResolvers *r, const char *container_id);
