/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Leases on sandboxes (docs/api.md, "Leases"), owned by the Manager: each is the read
 * end of a pipe whose write end went to the caller, watched by sd-event, so the lease
 * lasts until every copy of the caller's descriptor is closed (EOF, EPOLLHUP), as
 * logind's inhibitors do. Keyed by the sandbox's Docker-level name; the count and the
 * activity are shown on the sandbox's object (registry.h). Main thread only. Leases
 * end with the process: a restarted service holds none. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "error.h"
#include "registry.h"

typedef struct Lease Lease;

typedef struct Leases {
        sd_event *event;
        sd_bus *bus;                    /* LeaseRevoked is sent here */
        Registry *registry;             /* Leases and LastActivity are shown here */
        Lease *list;
        unsigned n;
        void (*ended)(void *userdata);  /* a lease ended (its holder closed it, or revoked) */
        void *userdata;
} Leases;

/* A new lease on sandbox for the connection holder (a unique name) of uid: the
 * caller's end of the pipe in *ret_fd (O_CLOEXEC; the caller's to close).
 * LimitsExceeded naming max_leases_per_user or max_leases_per_sandbox past them. */
int leases_acquire(Leases *ls, const char *sandbox, uid_t uid, const char *holder, unsigned max_per_user,
                   unsigned max_per_sandbox, int *ret_fd, SbxError *error);

/* The leases on sandbox (not held by connection except, if given). */
unsigned leases_count(const Leases *ls, const char *sandbox, const char *except);
unsigned leases_of_user(const Leases *ls, uid_t uid);

/* Ends every lease on sandbox: the service's end is closed (the holder's descriptor
 * sees the pipe close) and its holder is sent LeaseRevoked(reason) on the sandbox's
 * object. Returns how many. */
unsigned leases_revoke(Leases *ls, const char *sandbox, const char *reason);

/* Ends them all, telling nobody (shutdown). */
void leases_clear(Leases *ls);
