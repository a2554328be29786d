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
 * (shutdown).
 *
 * Threads come and go with the work: none at creation; one more when a job is
 * queued and no thread is idle (up to n_workers); a thread with nothing to do for
 * idle_usec runs fini and ends (the main thread joins it). An idle service holds no
 * worker, and no worker's connections. */

#include <stdint.h>
#include <systemd/sd-event.h>

#include "macro.h"

/* How long a worker waits for a job before it retires, unless the config says. */
#define SBX_WORKER_IDLE_USEC_DEFAULT (10ULL * 1000000ULL)
/* idle_usec: never retire. */
#define SBX_WORKER_IDLE_NEVER UINT64_MAX

typedef struct SbxWorkerPool SbxWorkerPool;

/* In the worker thread, at start. NULL means it failed: the thread runs the one job it
 * was started for with a NULL context (the job reports it) and ends; the next job gets a
 * new thread that tries again. */
typedef void *(*SbxWorkerInit)(void *userdata);
typedef void (*SbxWorkerFini)(void *ctx);                 /* in the worker thread, when it retires */
typedef void (*SbxJobRun)(void *job, void *ctx);          /* in a worker thread */
typedef void (*SbxJobDone)(void *job);                    /* on the main thread */

typedef struct SbxWorkerPoolConfig {
        unsigned n_workers;             /* threads at most */
        unsigned max_queued;            /* jobs waiting for a busy worker; more → -EBUSY */
        uint64_t idle_usec;             /* a worker idle this long retires; 0 = SBX_WORKER_IDLE_USEC_DEFAULT */
        SbxWorkerInit init;
        SbxWorkerFini fini;
        void *init_userdata;
} SbxWorkerPoolConfig;

int sbx_worker_pool_new(sd_event *event, const SbxWorkerPoolConfig *config, SbxWorkerPool **ret);

/* Stops taking jobs, lets the running and queued ones finish, delivers their
 * completions, joins the threads. */
SbxWorkerPool *sbx_worker_pool_free(SbxWorkerPool *pool);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxWorkerPool *, sbx_worker_pool_free);

/* Queues a job, starting a thread for it if none is idle. -EBUSY when every thread
 * there may be is busy and max_queued jobs are already waiting (the caller answers
 * LimitsExceeded); -ESHUTDOWN once the pool is being freed. */
int sbx_worker_pool_submit(SbxWorkerPool *pool, SbxJobRun run, SbxJobDone done, void *job);

/* Shutting down: every queued job submitted with this done callback that no worker
 * has started is taken off the queue and handed to cancel (on the calling, main
 * thread) instead of run and done, in queue order. Jobs already running, and other
 * jobs, complete as usual; later submits are taken as usual. Returns the number of
 * jobs cancelled. */
unsigned sbx_worker_pool_cancel_queued(SbxWorkerPool *pool, SbxJobDone done, SbxJobDone cancel);

/* Jobs submitted whose completion has not yet been delivered (nor cancelled). */
unsigned sbx_worker_pool_pending(SbxWorkerPool *pool);

/* Worker threads alive now (started, not retired). */
unsigned sbx_worker_pool_threads(SbxWorkerPool *pool);
