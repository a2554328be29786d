/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One method call from receipt to reply: who is calling (bus credentials), whose
 * object it touches, polkit's answer, the lifecycle work on a worker thread, and
 * the reply, signals and audit record back on the main thread. The Manager's
 * by-name methods (the caller's own namespace) and the per-sandbox objects'
 * methods (the object's owner) both come here; each verb is one row of a table
 * (operation-verbs.h) with its arguments one small type of its family
 * (operation-args.h), and the states follow operation-state.h. */

#include <systemd/sd-bus.h>

#include "operation-args.h"

/* Starts the operation; the reply is sent later. Returns 1 (reply pending) or a
 * negative errno with ret_error set, for the method handler to return. */
int operation_start(Manager *m, sd_bus_message *call, Verb verb, OperationArgs *args, sd_bus_error *ret_error);

/* Refuses a call before it becomes an operation (bad arguments): fills ret_error
 * from e (or r), writes the audit record for a state change, returns the errno. */
int operation_refuse(Manager *m, sd_bus_message *msg, Verb verb, const char *target, const SbxError *e, int r,
                     sd_bus_error *ret_error);

/* SIGTERM: every operation waiting for a worker is answered BackendUnavailable and
 * never started; running ones finish. */
void operation_cancel_queued(Manager *m);

/* A unique name lost its owner: its calls waiting for an exec slot (option wait)
 * leave the queue. */
void operation_waiters_caller_gone(Manager *m, const char *name);
