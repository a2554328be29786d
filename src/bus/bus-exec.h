/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Streaming execs (StartExec): one object /org/xagent/Sandbox1/exec/<id> with
 * org.xagent.Sandbox1.Exec per process, and one relay thread per exec between
 * the caller's descriptors and Docker's stream (docker-relay.h), so that a slow
 * or stuck peer holds up nothing but its own exec. The thread posts its end to
 * the main loop through an eventfd; the object then says Running=false,
 * ExitStatus and emits Exited, and goes away a minute later (or when its
 * caller's connection closes, or earlier when its caller has many finished ones).
 * A caller whose connection closes while its exec runs has it killed. */

#include "operation.h"

/* Publishes the exec and starts its relay; takes over process and the fds (also
 * on failure). The object's path in *ret_path (owned by the object). */
int bus_exec_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path);
/* (An OperationPublishExec, operation.h: StartExec's handlers pass it.) */

/* Daemon exit: kills every running process (through the worker pool, which is
 * freed afterwards and runs what was queued), stops the relays. */
void bus_exec_shutdown_all(Manager *m);

/* A unique name lost its owner (the manager's NameOwnerChanged match): that
 * caller's running execs are killed, its finished ones go. */
void bus_exec_caller_gone(Manager *m, const char *name);

/* StartExec's publisher (bus-detached.c): a detached process's object, else
 * bus_exec_new(). */
int bus_exec_publish(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path);

/* After the start-up sweep: the store's detached processes whose sandbox still runs
 * get their exec objects back (bus-detached.c); once per daemon. */
void bus_detached_restore(Manager *m);
/* At start-up, from the store alone (bus-detached.c): the objects of the detached
 * processes whose sandbox's row says running, before anything is answered. */
void bus_detached_load(Manager *m, SbxStore *store);

/* ListExecs: the exec objects in the sandbox of Docker-level name the caller may
 * read (its own, those in its sandboxes; root: all) as a(osbi): object, argv[0],
 * running, exit status (−1 while running). Sends the reply. With owner (a sandbox
 * object's), a caller other than that owner and root is AccessDenied. */
int bus_exec_list(Manager *m, sd_bus_message *msg, const char *name, const uid_t *owner, sd_bus_error *error);
