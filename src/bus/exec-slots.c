/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <inttypes.h>

#include "exec-slots.h"

int exec_slots_acquire(ExecSlots *s, const SbxPolicy *p, uid_t uid, uint64_t capture, SbxError *error) {
        uint64_t mine;
        size_t i;

        for (i = 0; i < s->n_users && s->users[i].uid != uid; i++)
                ;
        mine = i < s->n_users ? s->users[i].capture : 0;
        if (s->n_total >= (unsigned) p->max_execs)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "max_execs: %u processes run through the service already; try again later",
                                     s->n_total);
        if (i < s->n_users && s->users[i].n >= (unsigned) p->max_execs_per_user)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "max_execs_per_user: uid %u runs %u processes through the service already",
                                     (unsigned) uid, s->users[i].n);
        if (capture > 0 &&
            (mine + capture > EXEC_CAPTURE_PER_USER_MAX || s->capture_total + capture > EXEC_CAPTURE_TOTAL_MAX))
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "output_limit, stdin: captures in flight may hold %" PRIu64 " MiB for uid %u "
                                     "(%" PRIu64 " MiB for everyone); %" PRIu64 " MiB are held, this one needs %"
                                     PRIu64 " MiB; lower output_limit, or try again later",
                                     EXEC_CAPTURE_PER_USER_MAX >> 20, (unsigned) uid, EXEC_CAPTURE_TOTAL_MAX >> 20,
                                     mine >> 20, (capture + (1 << 20) - 1) >> 20);
        if (i == s->n_users) {
                s->users[s->n_users].uid = uid;
                s->users[s->n_users].n = 0;
                s->users[s->n_users++].capture = 0;
        }
        s->users[i].n++;
        s->users[i].capture += capture;
        s->n_total++;
        s->capture_total += capture;
        return 0;
}

void exec_slots_force(ExecSlots *s, uid_t uid) {
        size_t i;

        for (i = 0; i < s->n_users && s->users[i].uid != uid; i++)
                ;
        if (i == s->n_users) {
                if (s->n_users == ELEMENTSOF(s->users))
                        return;
                s->users[s->n_users++] = (typeof(s->users[0])) { .uid = uid };
        }
        s->users[i].n++;
        s->n_total++;
}

void exec_slots_release(ExecSlots *s, uid_t uid, uint64_t capture) {
        for (size_t i = 0; i < s->n_users; i++)
                if (s->users[i].uid == uid) {
                        s->n_total--;
                        s->users[i].capture -= capture;
                        s->capture_total -= capture;
                        if (--s->users[i].n == 0)
                                s->users[i] = s->users[--s->n_users];
                        if (s->released)
                                s->released(s->released_userdata);
                        return;
                }
}

void exec_link_push(ExecSlots *s, ExecLink *l) {
        l->prev = NULL;
        l->next = s->objects;
        if (s->objects)
                s->objects->prev = l;
        s->objects = l;
}

void exec_link_remove(ExecSlots *s, ExecLink *l) {
        if (l->prev)
                l->prev->next = l->next;
        else if (s->objects == l)
                s->objects = l->next;
        if (l->next)
                l->next->prev = l->prev;
        l->next = l->prev = NULL;
}
