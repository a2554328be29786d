/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The one path from the main thread to the worker threads (docs/architecture.md,
 * "One path to the workers"). Every piece of blocking work — a bus method's
 * operation (operation.h), an exec's Kill or Resize, a detached process's poll,
 * read, attach, forget and restore, a deadline, a reconciliation, an observation
 * job — is described by a WorkKind row and handed over by work_submit(), which
 *
 *  - counts it in its user's share for as long as it runs, when the row says so
 *    (a full share: LimitsExceeded for that user only, one text per limit);
 *  - queues it on its pool: a state change on the change pool; a read on the read
 *    pool, in arrival order, but never more than SBX_READ_WORKERS_PER_USER read
 *    workers for one user at once, so one user's slow reads (a stuck channel) leave
 *    the others' alone;
 *  - runs it on a worker under the policy in force when it began and Docker's
 *    deadline its row gives (the policy is handed to the lifecycle here alone);
 *  - then calls its done on the main thread, where its effect on the registry is
 *    applied and its reply (if any) is sent; or, when it never ran (the pool full,
 *    the worker could not open its clients, SIGTERM), its refused.
 *
 * Main thread only (but run). */

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "manager-state.h"

typedef enum WorkAuth {
        WORK_AUTH_POLKIT,               /* a bus method: polkit was asked (operation.c) */
        WORK_AUTH_CALLER,               /* a call on an object only its caller (or owner, root) may use */
        WORK_AUTH_INTERNAL,             /* the service's own: nobody calls it */
} WorkAuth;

typedef enum WorkPool {
        WORK_POOL_CHANGE,               /* state changes: never behind a read */
        WORK_POOL_READ,                 /* reads: per-user fairness among the read workers */
} WorkPool;

typedef enum WorkShare {
        WORK_SHARE_NONE,                /* counted by whoever submits it (an operation, from call to reply) */
        WORK_SHARE_USER,                /* counted in its user's share (pool's kind) while it runs */
        WORK_SHARE_SERVICE,             /* the service's own: holds off the idle exit, never refused */
} WorkShare;

typedef struct WorkKind {
        const char *name;               /* for logs */
        WorkAuth auth;
        WorkPool pool;
        WorkShare share;
        bool cancellable;               /* SIGTERM: refused while still queued */
        /* Docker's deadline for the whole job in seconds (sbx_docker_set_deadline());
         * NULL: none (each call its own limit). */
        unsigned (*budget)(const void *job, const SbxPolicy *p);
        void (*run)(void *job, SbxLifecycle *l);        /* on a worker */
        void (*done)(void *job);                        /* main thread: effect, then reply; frees job */
        /* Main thread, instead of run and done: it never ran (r, e: why). Frees job. */
        void (*refused)(void *job, int r, const SbxError *e);
} WorkKind;

/* Hands job over (always: on a refusal, k->refused(job) has run when this returns
 * the negative errno). uid: whose work it is (its share and its read fairness; the
 * service's: 0). */
int work_submit(Manager *m, const WorkKind *k, uid_t uid, void *job);

/* The caller's share (manager_busy_as()) with the one refusal text of that limit. */
int work_share_take(Manager *m, uid_t uid, bool read, SbxError *error);

/* The one text of these refusals: every pool's queue full (LimitsExceeded); the
 * service shutting down before the work started (BackendUnavailable). Return the
 * negative errno. */
int work_error_pool_full(SbxError *e);
int work_error_shutting_down(SbxError *e);

/* SIGTERM: every cancellable job still queued is refused (BackendUnavailable). */
void work_cancel_queued(Manager *m);
