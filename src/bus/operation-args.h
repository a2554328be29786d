/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The verbs of the bus API and what each takes from its method call: the part every
 * verb has (whose object it is), and one small argument type per verb family, in a
 * union that the verb tags (operation.h takes them; operation-verbs.h lists which
 * family each verb's row reads). */

#include <systemd/sd-bus.h>

#include "bus-spec.h"
#include "exec.h"
#include "manager-state.h"
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

/* CreateSandbox, EnsureSandbox, ClaimSandbox. Owned members are taken over, also on
 * failure. */
typedef struct CreateArgs {
        SbxSpec *spec;                  /* owned; finalized */
        json_object *labels;            /* owned: the sandbox's */
        SbxLifetime lifetime;           /* a sandbox it makes (policy applied); ensure of one
                                         * found: what is given */
        SbxEgress egress;               /* owned; admitted by the policy */
        bool pull_missing;              /* option pull "missing" */
        const char *runtime;            /* option runtime (admitted, copied), "" or NULL: default */
        bool recreate;                  /* ensure: on a mismatch, replace it */
        bool force;                     /* ensure: other connections' leases are revoked */
        unsigned stop_timeout_s;        /* ensure: the stop before a recreate */
        char *name_prefix;              /* claim: the option's, or NULL (owned) */
} CreateArgs;

/* StopSandbox. */
typedef struct StopArgs {
        unsigned timeout_s;
        bool force;                     /* other connections' leases are revoked */
} StopArgs;

/* VerifySandbox. */
typedef struct VerifyArgs {
        SbxSpec *spec;                  /* owned; complete */
} VerifyArgs;

/* SetSandboxLifetimes: what is given (each bounded by the policy). */
typedef struct LifetimesArgs {
        SbxLifetime lifetime;
} LifetimesArgs;

/* SetSandboxEgress. */
typedef struct EgressArgs {
        SbxEgress egress;               /* owned; admitted by the policy */
} EgressArgs;

/* ExecSandbox, StartExec. */
typedef struct ExecArgs {
        char **argv;                    /* owned */
        SbxExecOptions options;         /* owned */
        int fds[3];                     /* StartExec: stdin, stdout, stderr (copies, owned); else -1 */
        OperationPublishExec publish;   /* StartExec: makes the exec object */
} ExecArgs;

/* CopyTo, CopyFrom. */
typedef struct CopyArgs {
        const char *guest_path;         /* copied */
        int fd;                         /* the tar (a copy, owned), or -1 */
        bool resume;                    /* a paused sandbox is resumed first */
} CopyArgs;

/* ReadFile, WriteFile, ListFiles, RemoveFile. */
typedef struct FileArgs {
        const char *guest_path;         /* copied */
        SbxFileOptions options;
        const void *data;               /* WriteFile: in the call's message (which the operation keeps) */
        size_t data_size;
        int fd;                         /* option fd (a copy, owned), or -1 */
} FileArgs;

/* FindSandboxes: the filter. */
typedef struct FindArgs {
        json_object *labels;            /* owned: those to match, or NULL */
        char *state;                    /* owned: the state to match, or NULL */
} FindArgs;

/* PullImage. */
typedef struct PullArgs {
        const char *reference;          /* copied */
} PullArgs;

/* Designated initializers only: the member named after the verb's family (the other
 * verbs take nothing but the common part). */
typedef struct OperationArgs {
        const char *name;               /* a sandbox name in the caller's own namespace, or */
        const SandboxEntry *object;     /* the sandbox of a per-sandbox object (its owner's) */
        const char *snapshot_id;        /* in the caller's own namespace */
        union {
                CreateArgs create;
                StopArgs stop;
                VerifyArgs verify;
                LifetimesArgs lifetimes;
                EgressArgs egress;
                ExecArgs exec;
                CopyArgs copy;
                FileArgs file;
                FindArgs find;
                PullArgs pull;
        };
} OperationArgs;

/* Frees what operation_start() would have taken over (for refusals before it): the
 * owned members of verb's family (operation-verbs.c). */
void operation_args_done(OperationArgs *args, Verb verb);
