/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The verbs of the bus API and their arguments (operation.h takes them), and, for
 * operation.c alone, the operation as it goes from call to reply and the table of
 * what each verb is: how it is authorized, what it does on a worker and how its
 * reply is made on the main thread (operation-verbs.c). */

#include <systemd/sd-bus.h>

#include "bus-spec.h"
#include "channel.h"
#include "exec.h"
#include "manager-state.h"
#include "operation-state.h"
#include "spec.h"

typedef enum Verb {
        VERB_CREATE,
        VERB_GET,
        VERB_INSPECT,
        VERB_VERIFY,
        VERB_START,
        VERB_STOP,
        VERB_DELETE,
        VERB_SNAPSHOT,
        VERB_DELETE_SNAPSHOT,
        VERB_LIST,
        VERB_LIST_SNAPSHOTS,
        VERB_EXEC,
        VERB_START_EXEC,
        VERB_USAGE,
        VERB_COPY_TO,
        VERB_COPY_FROM,
        VERB_ENSURE,
        VERB_READ_FILE,
        VERB_WRITE_FILE,
        VERB_LIST_FILES,
        VERB_REMOVE_FILE,
        VERB_REFRESH,
        VERB_FIND,
        VERB_PAUSE,
        VERB_RESUME,
        VERB_ACQUIRE,
        VERB_SET_LIFETIMES,
        VERB_SET_EGRESS,
        VERB_PULL,
        VERB_CLAIM,
        VERB_POOL_STATUS,
        _VERB_MAX,
} Verb;

/* A streaming exec's object (bus-exec.h): made by the interface that took the call,
 * once the process runs. */
typedef struct ExecStartArgs {
        const char *sandbox;
        const char *name;               /* Docker-level (naming.h) */
        const char *argv0;
        uid_t owner;                    /* the sandbox's */
        uid_t caller;
        const char *caller_name;        /* unique bus name */
        unsigned timeout_s;             /* 0 = none */
        int fds[3];                     /* taken over */
} ExecStartArgs;

/* Publishes the exec; takes over process, the fds and the exec slot (also on
 * failure). The object's path in *ret_path (owned by the object). */
typedef int (*OperationPublishExec)(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path);

typedef struct OperationArgs {
        const char *name;               /* a sandbox name in the caller's own namespace, or */
        const SandboxEntry *object;     /* the sandbox of a per-sandbox object (its owner's) */
        const char *snapshot_id;        /* in the caller's own namespace */
        SbxSpec *spec;                  /* taken over, also on failure; finalized */
        char **argv;                    /* exec: taken over, also on failure */
        SbxExecOptions *exec;           /* exec: its contents taken over, also on failure */
        int fds[3];                     /* StartExec (stdin, stdout, stderr), copies (the tar in
                                         * fds[0]): taken over, also on failure */
        const char *guest_path;         /* copies; the file calls' path */
        SbxFileOptions *file;           /* the file calls */
        const void *data;               /* WriteFile: in the call's message (which the operation keeps) */
        size_t data_size;
        unsigned timeout_s;             /* stop; ensure: the stop before a recreate */
        bool recreate;                  /* ensure: on a mismatch, replace it */
        bool force;                     /* stop, ensure: other connections' leases are revoked */
        SbxLifetime lifetime;           /* create, ensure: a sandbox it makes (policy applied);
                                         * set-lifetimes, ensure of one found: what is given */
        SbxEgress egress;               /* create, ensure, set-egress (admitted by the policy):
                                         * taken over, also on failure */
        json_object *labels;            /* create, ensure: the sandbox's; find: those to match (taken
                                         * over, also on failure) */
        char *state;                    /* find: the state to match, or NULL (taken over) */
        bool resume;                    /* copies: a paused sandbox is resumed first (exec and
                                         * file calls: their options' resume) */
        OperationPublishExec publish_exec; /* StartExec */
        const char *reference;          /* PullImage: the image reference */
        bool pull_missing;              /* create, ensure: option pull "missing" */
        char *name_prefix;              /* claim: the option's, or NULL (taken over) */
        const char *runtime;            /* create, ensure, claim: option runtime (admitted), "" or NULL: default */
} OperationArgs;

/* Arguments with no descriptors (the other verbs leave fds alone, zeroed or not). */
#define OPERATION_ARGS_INIT(...) ((OperationArgs) { .fds = { -1, -1, -1 }, __VA_ARGS__ })

typedef struct Operation Operation;

/* One row per verb: how it is authorized, where it runs, what it does on a worker
 * and how its reply is made on the main thread. */
typedef struct VerbInfo {
        const char *name;               /* in audit records and polkit's details */
        const char *own_action;         /* on the caller's own objects; others' need manage-others */
        bool changes;                   /* a state change: audited */
        bool lists;                     /* everyone's objects for holders of manage-others */
        int (*run)(Operation *o, SbxLifecycle *l);
        /* Main thread, once the work succeeded: its effect on the registry (the objects,
         * their properties and signals, the leases), apart from the reply; NULL: none.
         * May refuse (the errno, with o->error set): a lease over a cap. */
        int (*apply)(Operation *o);
        int (*reply)(Operation *o, sd_bus_message *reply);
        const char *others_action;      /* for another uid's objects, if not manage-others */
        bool exec;                      /* runs a process in the sandbox: holds an exec slot */
        bool fds;                       /* takes descriptors */
        bool audited;                   /* a read that is audited all the same (the file reads) */
        /* On the main thread once authorized, before a worker: refuses (the errno, with
         * o->error set) what the leases forbid (SandboxBusy), or NULL. */
        int (*admit)(Operation *o);
        bool activity;                  /* uses the sandbox: its LastActivity moves */
        /* A read answered on the main thread when it can be without blocking; 0:
         * it goes to a read worker as any other. */
        int (*answer)(Operation *o);
} VerbInfo;

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
        SbxSpec *spec;
        unsigned timeout_s;
        bool recreate;
        bool force;                     /* stop, ensure: revoke the leases that block it */
        SbxLifetime lifetime;           /* create, ensure: a new sandbox's */
        SbxLifetimeRow lifetime_row;    /* set-lifetimes, ensure of one found: as stored, for the registry */
        SbxEgress egress;               /* create, ensure: a new sandbox's; set-egress: the new one */
        unsigned busy_leases;           /* ensure: other connections' leases (a replacement is
                                         * SandboxBusy) */
        int lease_fd;                   /* acquire: the caller's end, made by apply */
        json_object *labels;            /* create, ensure; find: the filter's */
        char *find_state;               /* find: the filter's, or NULL */
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
        SbxSandbox *sandbox;
        SbxSandbox **list;
        size_t n_list;
        SbxSnapshotRow **snapshots;
        char *image_id;
        SbxVerdict verdict;
        unsigned fields;

        /* using a sandbox */
        char **argv;
        char *guest_path;
        SbxExecOptions exec;
        int fds[3];
        bool exec_slot;                 /* holds one of the policy's exec slots */
        bool share_pending;             /* option wait: its max_operations_per_user share is waited for too */
        struct Operation *next_waiting; /* option wait: in the manager's queue for a slot */
        sd_event_source *wait_timer;    /* … until then */
        uint64_t exec_capture;          /* … and this much of the capture budget */
        SbxExecResult exec_result;
        SbxExecProcess *exec_process;
        OperationPublishExec publish_exec;
        SbxUsage usage;
        SbxEnsureOutcome outcome;
        char *name_prefix;              /* claim */
        bool warm;                      /* … a member was handed out */
        unsigned *pool_ready;           /* pool status: per pool of the policy the job ran under */
        SbxPolicy *pool_policy;         /* … that policy (a reference) */

        /* the file calls */
        SbxFileOptions file;
        const void *data;               /* points into call */
        size_t data_size;
        SbxFileData file_data;
        SbxFileEntry *entries;
        size_t n_entries;
        bool truncated;

        /* PullImage (bus-pull.h); create and ensure with option pull "missing" */
        char *reference;
        bool pull_missing;
        char runtime[SBX_RUNTIME_NAME_MAX + 1]; /* create, ensure, claim: option runtime, "": the default */
        _Atomic uint64_t pull_done, pull_total;     /* the worker's progress */
        uint64_t pull_sent_done, pull_sent_total;   /* … as last signalled */
        sd_event_source *pull_timer;
};

extern const VerbInfo operation_verbs[_VERB_MAX];

/* Whether an outcome of verb goes into the audit log. */
static inline bool verb_audited(Verb verb) {
        return operation_verbs[verb].changes || operation_verbs[verb].audited;
}

/* The target of o as its owner calls it, for logs and audit records ("-": none). */
const char *operation_target(const Operation *o);
