/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What runs in sandboxes through the service, owned by the Manager: the exec slots
 * (policy max_execs_per_user, max_execs) that capture execs, streaming execs and
 * copies hold while they run, the capture budget (the bytes a capture may make the
 * daemon hold: its stdin and both streams' output_limit, SBX_EXEC_CAPTURE_MAX at
 * most, bounded per caller and for all), and the list of exec objects (bus-exec.h),
 * which embed an ExecLink. Main thread only. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "policy.h"

#define EXEC_CAPTURE_PER_USER_MAX ((uint64_t) 48 << 20)
#define EXEC_CAPTURE_TOTAL_MAX ((uint64_t) 128 << 20)

typedef struct ExecLink ExecLink;
struct ExecLink {
        ExecLink *next, *prev;
};

typedef struct ExecSlots {
        struct {
                uid_t uid;
                unsigned n;
                uint64_t capture;
        } users[SBX_POLICY_MAX_EXECS_LIMIT];
        size_t n_users;
        unsigned n_total;
        uint64_t capture_total;

        ExecLink *objects;              /* the exec objects, the newest first */
        struct DetachedGroup *groups;   /* the sandboxes running detached processes, polled (detached-poll.c) */
        bool objects_registered;        /* their fallback vtable is on the bus */
        bool detached_restored;         /* the store's detached processes are back (bus-detached.c) */
        void (*released)(void *userdata);       /* after each release (operation.c's waiters) */
        void *released_userdata;
} ExecSlots;

/* A slot for uid and capture bytes of the budget (0: not a capture), or
 * LimitsExceeded naming the limit. Released with the same. */
int exec_slots_acquire(ExecSlots *s, const SbxPolicy *p, uid_t uid, uint64_t capture, SbxError *error);
void exec_slots_release(ExecSlots *s, uid_t uid, uint64_t capture);
/* A slot without a check: a detached process found running after a restart. */
void exec_slots_force(ExecSlots *s, uid_t uid);

void exec_link_push(ExecSlots *s, ExecLink *l);
void exec_link_remove(ExecSlots *s, ExecLink *l);
