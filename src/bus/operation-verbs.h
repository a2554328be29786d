/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* For operation.c and the verbs' files alone: the operation as it goes from call to
 * reply, and the table of what each verb is (operation-verbs.c): how it is
 * authorized, what it does on a worker and how its reply is made on the main thread.
 * An operation holds what every verb has (the call, the caller, whose object, the
 * state, polkit's asking, the error, the queue links) and one small job of its verb's
 * family — its arguments and its results — in a union the verb tags; a verb's row
 * reads only its own family's member. Adding a D-Bus method: docs/architecture.md,
 * "Adding a D-Bus method". */

#include <stdatomic.h>
#include <systemd/sd-bus.h>

#include "channel.h"
#include "operation-args.h"
#include "operation-state.h"
#include "work.h"

typedef struct Operation Operation;

/* CreateSandbox, EnsureSandbox, ClaimSandbox. */
typedef struct CreateJob {
        CreateArgs args;                /* args.runtime: NULL (runtime holds it) */
        char runtime[SBX_RUNTIME_NAME_MAX + 1];         /* "": the default */
        unsigned busy_leases;           /* ensure: other connections' leases (a replacement is
                                         * SandboxBusy) */
        SbxSandbox *sandbox;
        SbxEnsureOutcome outcome;       /* ensure */
        bool warm;                      /* claim: a member was handed out */
        SbxLifetimeRow lifetime_row;    /* ensure of one found, lifetimes given: as stored */
} CreateJob;

/* GetSandbox, InspectSandbox, RefreshSandbox, AcquireSandbox. */
typedef struct InspectJob {
        SbxSandbox *sandbox;
        int lease_fd;                   /* acquire: the caller's end, made by apply */
} InspectJob;

typedef struct VerifyJob {
        VerifyArgs args;
        SbxSandbox *sandbox;
        SbxVerdict verdict;
        unsigned fields;
} VerifyJob;

typedef struct StopJob {
        StopArgs args;
} StopJob;

typedef struct LifetimesJob {
        LifetimesArgs args;
        SbxSandbox *sandbox;
        SbxLifetimeRow row;             /* as stored, for the registry */
} LifetimesJob;

typedef struct EgressJob {
        EgressArgs args;
} EgressJob;

/* SnapshotSandbox. */
typedef struct SnapshotJob {
        char *image_id;
} SnapshotJob;

/* PullImage (bus-pull.h). */
typedef struct PullJob {
        char *reference;
        char *image_id;
        _Atomic uint64_t done, total;   /* the worker's progress */
        uint64_t sent_done, sent_total; /* … as last signalled */
        sd_event_source *timer;
} PullJob;

typedef struct UsageJob {
        SbxUsage usage;
} UsageJob;

/* ExecSandbox, StartExec. */
typedef struct ExecJob {
        ExecArgs args;
        SbxExecResult result;
        SbxExecProcess *process;
} ExecJob;

typedef struct CopyJob {
        char *guest_path;
        int fd;
} CopyJob;

/* The file calls. */
typedef struct FileJob {
        FileArgs args;                  /* args.guest_path: NULL (guest_path holds it) */
        char *guest_path;
        SbxFileData data;
        SbxFileEntry *entries;
        size_t n_entries;
        bool truncated;
} FileJob;

/* ListSandboxes, FindSandboxes, ListSnapshots. */
typedef struct ListJob {
        FindArgs filter;                /* find */
        SbxSandbox **list;
        size_t n_list;
        SbxSnapshotRow **snapshots;
} ListJob;

/* GetPoolStatus (bus-pool.h). */
typedef struct PoolJob {
        unsigned *ready;                /* per pool of the policy the job ran under */
        SbxPolicy *policy;              /* … that policy (a reference) */
} PoolJob;

struct Operation {
        Manager *m;
        sd_bus_message *call;
        Verb verb;
        bool read;                      /* counted in the caller's read share, run by a read worker */
        bool answered_here;             /* by VerbInfo.answer, from the registry's kept description */
        OperationState state;
        uid_t uid;                      /* the caller */
        uid_t owner;                    /* whose object: the caller's namespace, or the object's owner */
        bool owner_valid;
        char *name;                     /* the Docker-level sandbox name (naming.h) */
        char *snapshot_id;              /* the Docker-level snapshot id (the caller's) */
        const char *display;            /* name as its owner calls it (points into it), or NULL */
        const char *snapshot_display;   /* … snapshot_id's */
        bool resume;                    /* using a sandbox: resume it first if paused */
        bool resumed;                   /* … the worker did */
        bool active;                    /* counted in its sandbox's entry's active */
        bool widened;                   /* lists: manage-others was asked about */
        bool all;                       /* lists: everyone's objects */
        const char *action;             /* the polkit action asked about */
        const char *then_action;        /* asked next, once action is allowed (or NULL) */
        const char *last_action;        /* … and after it (or NULL) */
        char *cache_key;                /* the action and its details, for the remembered yes */
        sd_bus_slot *polkit_slot;

        /* filled in by the worker */
        int r;
        SbxError error;

        /* a process in the sandbox */
        bool exec_slot;                 /* holds one of the policy's exec slots */
        bool share_pending;             /* option wait: its max_operations_per_user share is waited for too */
        struct Operation *next_waiting; /* option wait: in the manager's queue for a slot */
        sd_event_source *wait_timer;    /* … until then */
        uint64_t exec_capture;          /* … and this much of the capture budget */

        /* the verb's own (VerbInfo.family): its arguments and results */
        union {
                CreateJob create;
                InspectJob inspect;
                VerifyJob verify;
                StopJob stop;
                LifetimesJob lifetimes;
                EgressJob egress;
                SnapshotJob snapshot;
                PullJob pull;
                UsageJob usage;
                ExecJob exec;
                CopyJob copy;
                FileJob file;
                ListJob list;
                PoolJob pool;
        };
};

/* A family of verbs: one member of the operation's union and of OperationArgs'. */
typedef struct VerbFamily {
        /* Takes over the family's arguments into o's member (also on failure); NULL:
         * it takes none (the member starts zeroed). */
        int (*take)(Operation *o, OperationArgs *args);
        /* Frees what take would have taken over (a refusal before it); NULL: nothing. */
        void (*args_done)(OperationArgs *args);
        /* Frees o's member: its arguments and results; NULL: nothing to free. */
        void (*done)(Operation *o);
} VerbFamily;

/* One row per verb: how it is authorized, where it runs, what it does on a worker
 * and how its reply is made on the main thread. Each row's functions read and write
 * only the operation's common part and their family's member. */
typedef struct VerbInfo {
        const char *name;               /* in audit records and polkit's details */
        const VerbFamily *family;       /* its arguments and results; NULL: none */
        const char *own_action;         /* on the caller's own objects; others' need manage-others */
        /* Its row of work (work.h): verb_work_change for a state change (audited, the
         * change pool, the caller's max_operations_per_user share) or verb_work_read (a
         * read: the read pool, max_reads_per_user); both authorized by polkit. */
        const WorkKind *work;
        bool lists;                     /* everyone's objects for holders of manage-others */
        int (*run)(Operation *o, SbxLifecycle *l);
        /* Main thread, once the work succeeded: its effect on the registry (the objects,
         * their properties and signals, the leases), apart from the reply; NULL: none.
         * May refuse (the errno, with o->error set): a lease over a cap. */
        int (*apply)(Operation *o);
        int (*reply)(Operation *o, sd_bus_message *reply);
        const char *others_action;      /* for another uid's objects, if not manage-others */
        bool exec;                      /* runs a process in the sandbox: holds an exec slot */
        bool audited;                   /* a read that is audited all the same (the file reads) */
        /* On the main thread once authorized, before a worker: refuses (the errno, with
         * o->error set) what the leases forbid (SandboxBusy), or NULL. */
        int (*admit)(Operation *o);
        bool activity;                  /* uses the sandbox: its LastActivity moves */
        /* A read answered on the main thread when it can be without blocking; 0:
         * it goes to a read worker as any other. */
        int (*answer)(Operation *o);
        /* The seconds its Docker calls may take in all (docs/lifecycle.md), from the
         * policy's docker_timeout; NULL: docker_timeout. 0: no deadline. */
        unsigned (*budget)(const Operation *o, unsigned docker_timeout);
        /* The actions asked after own_action/others_action (NULL each: none). */
        void (*more_actions)(const Operation *o, const char **ret_then, const char **ret_last);
        /* polkit's "template" detail and its value (a create's, a pull's), or NULL. */
        const char *(*template)(const Operation *o, const char **ret_source);
        /* Main thread, once on a worker (a pull's progress timer), or NULL. */
        void (*submitted)(Operation *o);
        /* The audit record's reason for a success (claim: "warm", "cold"), or NULL. */
        const char *(*ok_reason)(const Operation *o);
} VerbInfo;

/* The rows and families, each defined in the file of its family and gathered into
 * the one verb table, operation_verbs (operation-verbs.c). */

/* operation-create.c: the sandboxes made, and their lifetimes and egress */
extern const VerbFamily verb_family_create, verb_family_lifetimes, verb_family_egress;
extern const VerbInfo verb_create, verb_ensure, verb_claim, verb_set_lifetimes, verb_set_egress;

/* operation-sandbox.c: one sandbox's reads and state changes, snapshots, pulls */
extern const VerbFamily verb_family_inspect, verb_family_verify, verb_family_stop, verb_family_snapshot,
        verb_family_pull, verb_family_usage;
extern const VerbInfo verb_get, verb_inspect, verb_refresh, verb_verify, verb_start, verb_stop, verb_delete,
        verb_pause, verb_resume, verb_acquire, verb_snapshot, verb_delete_snapshot, verb_usage, verb_pull;

/* operation-use.c: processes in the sandbox, copies, the file calls */
extern const VerbFamily verb_family_exec, verb_family_copy, verb_family_file;
extern const VerbInfo verb_exec, verb_start_exec, verb_copy_to, verb_copy_from, verb_read_file, verb_write_file,
        verb_list_files, verb_remove_file;

/* operation-list.c: the lists, and the warm pools' status */
extern const VerbFamily verb_family_list, verb_family_pool;
extern const VerbInfo verb_list, verb_find, verb_list_snapshots, verb_pool_status;

/* operation.c: the two rows of work of the bus methods' operations */
extern const WorkKind verb_work_change, verb_work_read;

extern const VerbInfo *const operation_verbs[_VERB_MAX];

static inline const VerbInfo *verb_info(Verb verb) {
        return operation_verbs[verb];
}

/* Whether verb is a state change (else a read). */
static inline bool verb_changes(Verb verb) {
        return verb_info(verb)->work->pool == WORK_POOL_CHANGE;
}

/* Whether an outcome of verb goes into the audit log. */
static inline bool verb_audited(Verb verb) {
        return verb_changes(verb) || verb_info(verb)->audited;
}

/* The target of o as its owner calls it, for logs and audit records ("-": none). */
const char *operation_target(const Operation *o);

/* o's family's member: arguments taken over from args (also on failure), freed. */
int operation_job_take(Operation *o, OperationArgs *args);
void operation_job_done(Operation *o);

/* Option wait of an exec (0: none), from its arguments or its operation; what an
 * ExecSandbox may make the daemon hold (its stdin, its output). */
unsigned operation_args_wait_s(Verb verb, const OperationArgs *args);
unsigned operation_wait_s(const Operation *o);
uint64_t operation_exec_capture_of(const Operation *o);

/* For the rows (operation-verbs.c) ----------------------------------------- */

int verb_reply_none(Operation *o, sd_bus_message *reply);
/* No Docker deadline for the whole job (each call its own limit): a process in the
 * sandbox and a copy run under limits of their own, a pull is as long as the image. */
unsigned verb_budget_none(const Operation *o, unsigned docker_timeout);
/* Other connections' leases on the sandbox refuse (SandboxBusy, hint appended). */
int verb_busy(Operation *o, const char *hint);
/* Option force: every lease on the sandbox ends (LeaseRevoked), audited. */
void verb_revoke_leases(Operation *o);
