/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's state on the main thread: the bus, the worker pool, the host
 * policy, and the registry of known sandboxes behind the per-sandbox objects.
 * sd-bus objects and this registry are touched only on the main thread. */

#include <pthread.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "auth-cache.h"
#include "keyed-lock.h"
#include "lifecycle.h"
#include "policy.h"
#include "worker-pool.h"

#define SBX_BUS_NAME "org.xagent.Sandbox1"
#define SBX_BUS_PATH "/org/xagent/Sandbox1"
#define SBX_BUS_SANDBOX_PREFIX "/org/xagent/Sandbox1/sandbox"
#define SBX_BUS_MANAGER_INTERFACE "org.xagent.Sandbox1.Manager"
#define SBX_BUS_SANDBOX_INTERFACE "org.xagent.Sandbox1.Sandbox"

#define SBX_WORKERS 16U
#define SBX_READ_WORKERS 8U
/* Read workers one caller may hold at once: half of them, so that another caller's
 * read never waits behind one user's slow ones (usage: about 1 s each in Docker). */
#define SBX_READ_WORKERS_PER_USER (SBX_READ_WORKERS / 2U)
#define SBX_MAX_QUEUED 128U

typedef struct ManagerConfig {
        const char *config_path;
        const char *state_dir;
        const char *docker_host;        /* unix:///… */
        const char *init_dir;           /* the directory of xagent-sandbox-init */
        unsigned idle_timeout_s;        /* 0 = never */
} ManagerConfig;

/* A sandbox as the objects show it (docs/api.md). */
typedef struct SandboxEntry {
        struct Manager *manager;
        char *name;                     /* Docker-level (naming.h): the key */
        const char *display;            /* as its owner calls it: points into name */
        char *path;
        bool owner_valid;
        uid_t owner;
        char *container_id;
        SbxState state;
        char *status;
        char *image;
        char *fingerprint;
        SbxVerdict verdict;
        uint64_t created_us;
        uint64_t listed;                /* the last reconciliation that listed it (reconcile_mark) */
} SandboxEntry;

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

        void *sandboxes;                /* tsearch() tree of SandboxEntry, by name */
        uint64_t registry_seq;          /* counts entries added and dropped */
        uint64_t reconcile_mark;        /* counts reconciliations applied to the objects */
        struct ManagerEvents *events;   /* Docker's event stream (events.h) */
        SbxVerdictCache *judgements;    /* what inspects told, for lists (verdict-cache.h) */
        bool reconciling;               /* a reconciliation job is queued or running */
        sd_event_source *retry_source;  /* the next reconciliation while Docker failed */
        unsigned reconcile_again;       /* … and another was asked for meanwhile */
        bool execs_swept;               /* a dead instance's execs killed (exec.h), or on the way */
        AuthCache *auth_cache;

        /* Reads wait here for a read worker, in arrival order; one caller holds at most
         * SBX_READ_WORKERS_PER_USER of them (operation.c). */
        struct Operation *reads_waiting, **reads_waiting_tail;
        unsigned n_reads_waiting, n_reads_running;
        struct { uid_t uid; unsigned n; } reads_running_by[SBX_READ_WORKERS];

        unsigned n_busy;                /* operations between their call and their reply */
        void *busy_by_uid;              /* tsearch() tree: operations in flight per caller */
        unsigned idle_timeout_s;
        sd_event_source *idle_source;
        bool releasing;                 /* idle exit: the name is being given up */
        bool name_released;             /* … and is gone: exit once nothing is busy */
        bool terminating;               /* SIGTERM: nothing starts, exit once nothing is busy */
} Manager;

int manager_new(const ManagerConfig *config, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Connects to the bus, registers the objects, reconciles store and Docker, takes
 * the name, then runs until SIGTERM or the idle exit. */
int manager_run(Manager *m);

/* Reads a host policy file: a missing file is the built-in defaults; a malformed
 * one is an error naming the key (also for --check-config). */
int manager_load_policy(const char *path, SbxPolicy **ret, SbxError *error);
/* A reference to the policy in force, for a worker's job. */
SbxPolicy *manager_policy_ref(Manager *m);

SandboxEntry *manager_get_sandbox(Manager *m, const char *name);
/* Adds or refreshes the entry of a sandbox, emitting SandboxNew and
 * InterfacesAdded for a new one, PropertiesChanged for a changed one. */
int manager_put_sandbox(Manager *m, const SbxSandbox *s);
/* Sets a known sandbox's state after start/stop, emitting PropertiesChanged. */
void manager_set_sandbox_state(Manager *m, const char *name, SbxState state, const char *status);
/* Removes an entry, emitting SandboxRemoved and InterfacesRemoved. */
void manager_drop_sandbox(Manager *m, const char *name);
/* Frees an entry (for tdestroy()). */
void manager_free_sandbox_entry(void *e);
/* Calls f for each entry. */
void manager_foreach_sandbox(Manager *m, void (*f)(SandboxEntry *e, void *userdata), void *userdata);

/* Has store and Docker reconciled in the background (sbx_lifecycle_reconcile) and
 * the objects refreshed from Docker: on every connection to Docker's events. */
void manager_reconcile(Manager *m);
/* The same a little later (SBX_RECONCILE_RETRY_S), once: after Docker failed an
 * operation, whatever it left (an intent) is settled when Docker answers again. */
void manager_reconcile_later(Manager *m);
#define SBX_RECONCILE_RETRY_S 5U

/* A sandbox's container was removed: its row is dropped if still about it. */
void manager_forget(Manager *m, const char *name, const char *container_id);

/* Operation bookkeeping, for the idle exit and each caller's shares: busy refuses
 * (-EBUSY) a caller with max_operations_per_user state changes (read: with
 * max_reads_per_user reads) in flight already (root excepted); every successful busy
 * is paired with one idle of the same kind. The shares are apart: a caller's read
 * storm never refuses its own state changes. */
int manager_busy_as(Manager *m, uid_t uid, bool read);
void manager_idle_as(Manager *m, uid_t uid, bool read);
/* A state change's (manager_busy_as(m, uid, false)). */
int manager_busy(Manager *m, uid_t uid);
void manager_idle(Manager *m, uid_t uid);

