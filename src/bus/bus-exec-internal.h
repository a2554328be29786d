/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What bus-exec.c (the exec objects) and bus-detached.c (those of detached
 * processes: no relay, no descriptor; polled, read, restored) share. Main thread. */

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "exec.h"
#include "operation.h"

/* A running exec keeps the daemon from its idle exit, counted under root's share,
 * which has no cap: it is the exec limits (max_execs…) that bound execs, not the
 * caller's operations in flight. A detached one does not: it outlives the daemon. */
#define BUSY_UID ((uid_t) 0)

typedef struct ExecObject ExecObject;
typedef struct DetachedGroup DetachedGroup;

/* What a detached object does differently (bus-detached.c sets them; bus-exec.c calls
 * them without knowing that file). */
typedef struct ExecOps {
        int (*read_output)(sd_bus_message *msg, ExecObject *e, sd_bus_error *error);
        int (*stream_output)(sd_bus_message *msg, ExecObject *e, sd_bus_error *error);
        int (*attach)(sd_bus_message *msg, ExecObject *e, sd_bus_error *error);
        void (*discard)(ExecObject *e);         /* going for good: its row too */
        /* what its sandbox's poll found about a detached process (detached-poll.c): r < 0
         * with error when the channel failed; st its state otherwise (st->unknown: not
         * this time) */
        void (*polled)(ExecObject *e, int r, const SbxDetachState *st, const SbxError *error);
        void (*free)(ExecObject *e);            /* its own fields */
} ExecOps;
struct ExecObject {
        ExecLink link;                  /* in m->execs.objects */
        Manager *m;
        char id[33];
        char *path;
        char *sandbox;
        char *caller_name;              /* the caller's unique bus name */
        uid_t owner, caller;
        SbxExecProcess *process;
        unsigned timeout_s;
        char *docker_host;
        int fds[3];
        int done_fd, wake_fd;
        pthread_t thread;
        bool thread_started;
        bool running;
        int exit_status;
        sd_bus_slot *owner_check;       /* GetNameOwner of the caller, in flight */
        bool caller_gone;
        sd_event_source *done_source, *linger;
        unsigned n_jobs;                /* Kill/Resize/detached jobs in flight: they use process */
        bool doomed;                    /* freed once they are done */

        /* detached processes (bus-detached.c) */
        const ExecOps *ops;
        bool detached;
        char *name;                     /* the sandbox's Docker-level name */
        char *argv0;
        DetachedGroup *group;           /* its sandbox's poll (detached-poll.c) */
        bool polling;                   /* a poll job is in flight */
        bool unpolled;                  /* given back from the store at start-up, not yet polled */
        bool discarded;                 /* its row and directory are being removed */
        unsigned n_attached;            /* its Attach sessions (and those being started) */

        /* an Attach session (exec_attach_new()): not listed, no slot, no lingering */
        char attach_of[33];             /* the detached object's id; empty: not one */
        sd_event_source *hangup[2];     /* the caller's stdout, stderr closed */
};

static inline ExecObject *exec_of(ExecLink *l) {
        return l ? (ExecObject *) ((char *) l - offsetof(ExecObject, link)) : NULL;
}

/* Each exec object of m, the newest first; e may be freed in the body. */
#define FOREACH_EXEC(e, m)                                                                                  \
        for (ExecObject *e = exec_of((m)->execs.objects), *e##_next = e ? exec_of(e->link.next) : NULL; e; \
             e = e##_next, e##_next = e ? exec_of(e->link.next) : NULL)


/* The poll of a sandbox's detached processes (detached-poll.c): e joins its
 * sandbox's group (one timer, one channel request per tick for all), leaves it when
 * freed; _soon: the next tick at once. */
int detached_poll_join(ExecObject *e);
void detached_poll_leave(ExecObject *e);
void detached_poll_soon(ExecObject *e);

/* Frees e (later, when jobs are in flight). */
ExecObject *exec_free(ExecObject *e);

/* The end of a running exec: slot released, audited, PropertiesChanged and Exited. */
void exec_ended(ExecObject *e);

/* At most so many finished objects per caller and for all; the oldest go. */
void exec_trim_finished(Manager *m, uid_t uid);

/* Registers the objects' fallback vtable (once). */
int exec_register(Manager *m);

/* Only who started it (and root), and only while it runs: Kill's, Resize's and
 * Attach's check. */
int exec_check_caller(ExecObject *e, uid_t uid, sd_bus_error *error);

/* An audit record of a call on e by uid (error unset: "ok"). */
void exec_audit(const ExecObject *e, uid_t uid, const char *verb, const sd_bus_error *error);

/* An Attach session of the detached object attach_of: the relay of process (the
 * init's --attach, detached.c) to the caller's fds, as bus_exec_new() makes for a
 * StartExec but without a path anyone finds, an exec slot or a minute's linger. It
 * ends with the process, when the caller's stdout or stderr is closed, or when its
 * connection closes. Takes over process and the fds (also on failure). */
int exec_attach_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char *attach_of);

