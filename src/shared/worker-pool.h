/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A bounded pool of worker threads for blocking work (Docker calls, SQLite), with
 * completions delivered back on the sd-event main thread through an eventfd.
 *
 * The main thread submits a job (run + done callbacks). A worker runs `run` with
 * its own per-thread context (made by the pool's init callback: one Docker
 * connection and one SQLite connection per worker); then `done` is called on the
 * main thread, where replies are sent. A job that started always runs to completion,
 * even if the caller who asked for it has gone; only a queued one can be cancelled
 * (shutdown). */

#include <systemd/sd-event.h>

#include "macro.h"

typedef struct SbxWorkerPool SbxWorkerPool;

typedef void *(*SbxWorkerInit)(void *userdata);          /* in the worker thread, at start */
typedef void (*SbxWorkerFini)(void *ctx);                 /* in the worker thread, at exit */
typedef void (*SbxJobRun)(void *job, void *ctx);          /* in a worker thread */
typedef void (*SbxJobDone)(void *job);                    /* on the main thread */

typedef struct SbxWorkerPoolConfig {
        unsigned n_workers;
        unsigned max_queued;            /* jobs waiting for a worker; more → -EBUSY */
        SbxWorkerInit init;
        SbxWorkerFini fini;
        void *init_userdata;
} SbxWorkerPoolConfig;

int sbx_worker_pool_new(sd_event *event, const SbxWorkerPoolConfig *config, SbxWorkerPool **ret);

/* Stops taking jobs, lets the running and queued ones finish, delivers their
 * completions, joins the threads. */
SbxWorkerPool *sbx_worker_pool_free(SbxWorkerPool *pool);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxWorkerPool *, sbx_worker_pool_free);

/* Queues a job. -EBUSY when max_queued jobs are already waiting (the caller
 * answers LimitsExceeded). */
int sbx_worker_pool_submit(SbxWorkerPool *pool, SbxJobRun run, SbxJobDone done, void *job);

/* Shutting down: every queued job submitted with this done callback that no worker
 * has started is taken off the queue and handed to cancel (on the calling, main
 * thread) instead of run and done. Jobs already running, and other jobs, complete
 * as usual. */
void sbx_worker_pool_cancel_queued(SbxWorkerPool *pool, SbxJobDone done, SbxJobDone cancel);

/* Jobs submitted whose completion has not yet been delivered. */
unsigned sbx_worker_pool_pending(SbxWorkerPool *pool);
