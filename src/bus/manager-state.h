/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's state on the main thread, owned by the Manager: the bus, the worker
 * pools, the host policy, the state-only parts (registry.h, callers.h, exec-slots.h,
 * auth-cache.h) and the bookkeeping of operations in flight for each caller's share
 * and the idle exit. Every file of src/bus above it takes the Manager from here;
 * manager.h builds and runs it. sd-bus objects and this state are touched only on
 * the main thread. */

#include <pthread.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "auth-cache.h"
#include "bus-names.h"
#include "callers.h"
#include "exec-slots.h"
#include "keyed-lock.h"
#include "leases.h"
#include "lifecycle.h"
#include "policy.h"
#include "registry.h"
#include "worker-pool.h"

/* Started on demand, retired when idle (worker-pool.h). */
#define SBX_WORKERS 48U
#define SBX_READ_WORKERS 8U
/* Read workers one caller may hold at once: half of them, so that another caller's
 * read never waits behind one user's slow ones (usage: about 1 s each in Docker). */
#define SBX_READ_WORKERS_PER_USER (SBX_READ_WORKERS / 2U)
#define SBX_MAX_QUEUED 128U
/* A detached process is polled this often (bus-detached.c). */
#define SBX_DETACHED_POLL_USEC (UINT64_C(1) * 1000000U)

typedef struct Manager {
        sd_event *event;
        sd_bus *bus;
        SbxWorkerPool *pool;            /* state changes */
        SbxWorkerPool *read_pool;       /* reads: never behind another caller's slow change */
        SbxKeyedLockRegistry *locks;
        SbxPolicy *policy;              /* main thread; workers take a reference per job */
        pthread_mutex_t policy_lock;    /* guards swapping it (SIGHUP) against workers' refs */
        char *config_path;
        char *state_dir;
        char *docker_host;
        char *init_dir;
        char *docker_socket;
        SbxStore *startup_store;        /* opened (and checked) by manager_new(), closed once read */
        SbxError store_error;           /* the store could not be opened: every call gets this
                                         * (StoreUnavailable), nothing touches Docker */
        char *service_id;               /* sbx_lifecycle_service_id() of the state directory */
        char *docker_api_version;

        Registry registry;              /* the sandboxes behind the objects (registry.h) */
        Leases leases;                  /* the leases on them (leases.h): hold off the idle exit */
        CallerCache callers;            /* who called, by connection (callers.h) */
        ExecSlots execs;                /* exec slots, capture budget, exec objects (exec-slots.h) */
        uint64_t reconcile_mark;        /* counts reconciliations applied to the objects */
        struct ManagerEvents *events;   /* Docker's event stream (events.h) */
        SbxVerdictCache *judgements;    /* what inspects told, for lists (verdict-cache.h) */
        atomic_bool lists_judged;       /* the first reconciliation looked at every container: lists
                                         * judge each (before: unjudged, sbx_lifecycle_list()) */
        SbxObservationCache *observations; /* what inspects told, for reads (observation-cache.h) */
        struct SbxChannels *channels;   /* the kept channels into the sandboxes, for all workers (channel.h) */
        struct SbxResolvers *resolvers; /* the resolver of sandboxes with name entries, for all workers */
        bool reconciling;               /* a reconciliation job is queued or running */
        sd_event_source *retry_source;  /* the next reconciliation while Docker failed */
        sd_event_source *first_source;  /* the first one, waiting for the calls in flight (reconcile.c) */
        unsigned reconcile_again;       /* … and another was asked for meanwhile */
        bool execs_swept;               /* a dead instance's execs killed (exec.h), or on the way */
        void (*after_sweep)(struct Manager *m); /* then: the detached processes back (bus-exec.h), set by manager.c */
        AuthCache *auth_cache;          /* polkit's recent answers (auth-cache.h) */
        sd_event_source *described_sweep; /* drops the registry's descriptions past their observation */

        /* Reads wait here for a read worker, in arrival order; one user holds at most
         * SBX_READ_WORKERS_PER_USER of them (work.c). */
        struct Work *reads_waiting, **reads_waiting_tail;
        unsigned n_reads_waiting, n_reads_running;
        /* Execs with option wait whose share was full, in arrival order (operation.c);
         * at most SBX_MAX_QUEUED, each also counted in its caller's operations. */
        struct Operation *execs_waiting;
        unsigned n_execs_waiting;
        sd_event_source *execs_kick;    /* a slot was released: the waiters try again */
        struct { uid_t uid; unsigned n; } reads_running_by[SBX_READ_WORKERS];

        sd_event_source *deadline_timer; /* idle stop and expiry (deadlines.h) */
        uint64_t deadline_tick_usec;    /* its period (DEADLINES_TICK_S; tests: shorter) */
        uint64_t detached_poll_usec;    /* a detached process's poll period (bus-detached.c) */
        uint64_t clock_real_base_us;    /* the service's clock (manager_now_us()): the wall clock */
        uint64_t clock_boot_base_us;    /* … at this boot-clock time, and boot-clock time since */
        bool deadlines_loaded;          /* the stored lifetimes are in the registry */
        bool deadlines_flushing;        /* activities are being written back */
        bool deadlines_held;            /* a deadline held off the idle exit at the last tick */

        sd_event_source *pool_timer;    /* warm pools' refill (bus-pool.h) */
        uint64_t pool_tick_usec;
        bool pool_refilling;            /* a refill job is queued or running */
        bool pool_again;                /* … and another was asked for meanwhile */

        unsigned n_busy;                /* operations between their call and their reply */
        void *busy_by_uid;              /* tsearch() tree: operations in flight per caller */
        unsigned idle_timeout_s;
        sd_event_source *idle_source;
        bool releasing;                 /* idle exit: the name is being given up */
        bool name_released;             /* … and is gone: exit once nothing is busy */
        bool terminating;               /* SIGTERM: nothing starts, exit once nothing is busy */
} Manager;

/* A reference to the policy in force, for a worker's job. */
SbxPolicy *manager_policy_ref(Manager *m);

/* Operation bookkeeping, for the idle exit and each caller's shares: busy refuses
 * (-EBUSY) a caller with max_operations_per_user state changes (read: with
 * max_reads_per_user reads) in flight already (root excepted); every successful busy
 * is paired with one idle of the same kind. The shares are apart: a caller's read
 * storm never refuses its own state changes. The last idle ends the loop once the
 * name is released or SIGTERM came, and re-arms the idle exit otherwise. */
int manager_busy_as(Manager *m, uid_t uid, bool read);
void manager_idle_as(Manager *m, uid_t uid, bool read);
/* A state change's (manager_busy_as(m, uid, false)). */
int manager_busy(Manager *m, uid_t uid);
void manager_idle(Manager *m, uid_t uid);

/* The service's clock for idle time and expiry (realtime µs, as stored and shown):
 * the wall clock when the daemon began, plus the boot clock's time since. A
 * wall-clock step (more than MANAGER_CLOCK_STEP_US between the two) is detected
 * here: the clock is re-based on the wall clock and every sandbox's activity and
 * expiry move with it (registry_rebase()), so a step never stops, pauses or deletes
 * anything, nor postpones it. */
#define MANAGER_CLOCK_STEP_US (UINT64_C(2) * 1000000U)
uint64_t manager_now_us(Manager *m);

/* observation_max_age of the policy in force, in µs (0: observations are off). */
uint64_t manager_observation_max_age_us(Manager *m);
/* A description was kept (registry_describe()): it goes with its observation, at
 * the latest observation_max_age after, checked by a timer while any is kept. */
void manager_sweep_described_later(Manager *m);

/* Counts the idle exit's timeout from now (manager.c made its source with the name;
 * while a lease is held or a deadline is to come it stays off, and the last lease's
 * end, or the last deadline's, arms it):
 * a source that cannot be armed is logged and left off, so it never fires at a
 * stale time; the next call that ends tries again. Returns 0 or the errno. */
int manager_arm_idle(Manager *m);
