/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One method call from receipt to reply: who is calling (bus credentials), whose
 * object it touches, polkit's answer, the lifecycle work on a worker thread, and
 * the reply, signals and audit record back on the main thread. The Manager's
 * by-name methods (the caller's own namespace) and the per-sandbox objects'
 * methods (the object's owner) both come here; each verb is one row of a table
 * (operation.c), and the states follow operation-state.h. */

#include <systemd/sd-bus.h>

#include "manager.h"
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
        VERB_ENSURE,
        _VERB_MAX,
} Verb;

typedef struct OperationArgs {
        const char *name;               /* a sandbox name in the caller's own namespace, or */
        const SandboxEntry *object;     /* the sandbox of a per-sandbox object (its owner's) */
        const char *snapshot_id;        /* in the caller's own namespace */
        SbxSpec *spec;                  /* taken over, also on failure; finalized */
        unsigned timeout_s;             /* stop; ensure: the stop before a recreate */
        bool recreate;                  /* ensure: on a mismatch, replace it */
} OperationArgs;

/* Starts the operation; the reply is sent later. Returns 1 (reply pending) or a
 * negative errno with ret_error set, for the method handler to return. */
int operation_start(Manager *m, sd_bus_message *call, Verb verb, OperationArgs *args, sd_bus_error *ret_error);

/* Refuses a call before it becomes an operation (bad arguments): fills ret_error
 * from e (or r), writes the audit record for a state change, returns the errno. */
int operation_refuse(sd_bus_message *msg, Verb verb, const char *target, const SbxError *e, int r,
                     sd_bus_error *ret_error);

/* The caller's uid from non-augmented bus credentials. */
int bus_caller_uid(sd_bus_message *m, uid_t *ret);
