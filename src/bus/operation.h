/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One method call from receipt to reply: who is calling (bus credentials), whose
 * object it touches, polkit's answer, the lifecycle work on a worker thread, and
 * the reply, signals and audit record back on the main thread. The Manager's
 * by-name methods (the caller's own namespace) and the per-sandbox objects'
 * methods (the object's owner) both come here; each verb is one row of a table
 * (operation.c), and the states follow operation-state.h. */

#include <systemd/sd-bus.h>

#include "exec.h"
#include "manager-state.h"
#include "bus-spec.h"
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
        _VERB_MAX,
} Verb;

/* A streaming exec's object (bus-exec.h): made by the interface that took the call,
 * once the process runs. */
typedef struct ExecStartArgs {
        const char *sandbox;
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
        const char *guest_path;         /* copies */
        unsigned timeout_s;             /* stop; ensure: the stop before a recreate */
        bool recreate;                  /* ensure: on a mismatch, replace it */
        OperationPublishExec publish_exec; /* StartExec */
} OperationArgs;

/* Arguments with no descriptors (the other verbs leave fds alone, zeroed or not). */
#define OPERATION_ARGS_INIT(...) ((OperationArgs) { .fds = { -1, -1, -1 }, __VA_ARGS__ })

/* Starts the operation; the reply is sent later. Returns 1 (reply pending) or a
 * negative errno with ret_error set, for the method handler to return. */
int operation_start(Manager *m, sd_bus_message *call, Verb verb, OperationArgs *args, sd_bus_error *ret_error);

/* Frees what operation_start() would have taken over (for refusals before it). */
void operation_args_done(OperationArgs *args, Verb verb);

/* Refuses a call before it becomes an operation (bad arguments): fills ret_error
 * from e (or r), writes the audit record for a state change, returns the errno. */
int operation_refuse(Manager *m, sd_bus_message *msg, Verb verb, const char *target, const SbxError *e, int r,
                     sd_bus_error *ret_error);

/* SIGTERM: every operation waiting for a worker is answered BackendUnavailable and
 * never started; running ones finish. */
void operation_cancel_queued(Manager *m);
