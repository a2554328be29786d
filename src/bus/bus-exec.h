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

#include "exec.h"
#include "manager.h"

#define SBX_BUS_EXEC_PREFIX "/org/xagent/Sandbox1/exec"
#define SBX_BUS_EXEC_INTERFACE "org.xagent.Sandbox1.Exec"

typedef struct ExecStartArgs {
        const char *sandbox;
        uid_t owner;                    /* the sandbox's */
        uid_t caller;
        const char *caller_name;        /* unique bus name */
        unsigned timeout_s;             /* 0 = none */
        int fds[3];                     /* taken over */
} ExecStartArgs;

/* Publishes the exec and starts its relay; takes over process and the fds (also
 * on failure). The object's path in *ret_path (owned by the object). */
int bus_exec_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path);

/* Daemon exit: kills every running process (through the worker pool, which is
 * freed afterwards and runs what was queued), stops the relays. */
void bus_exec_shutdown_all(Manager *m);

/* A unique name lost its owner (the manager's NameOwnerChanged match): that
 * caller's running execs are killed, its finished ones go. */
void bus_exec_caller_gone(Manager *m, const char *name);

/* Exec slots (policy max_execs_per_user, max_execs): capture execs, streaming
 * ones, copies. capture: the bytes a capture may hold (its stdin and both streams'
 * output_limit, SBX_EXEC_CAPTURE_MAX at most), bounded per caller and for all while
 * it runs (LimitsExceeded beyond); 0 for the others. Released with the same. */
int manager_exec_acquire(Manager *m, uid_t uid, uint64_t capture, SbxError *error);
void manager_exec_release(Manager *m, uid_t uid, uint64_t capture);
