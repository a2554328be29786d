/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <search.h>
#include <stdio.h>

#include "audit.h"
#include "bus-error.h"
#include "bus-polkit.h"
#include "log.h"
#include "naming.h"
#include "operation-state.h"
#include "operation-verbs.h"
#include "operation.h"
#include "reconcile.h"
#include "time-util.h"
#include "work.h"

static void operation_free_unstarted(Operation *o);
static void cancel_waiters(Manager *m);

static Operation *operation_free(Operation *o) {
        SandboxEntry *e;

        if (!o)
                return NULL;
        if (o->active && (e = registry_get(&o->m->registry, o->name)) && e->active > 0)
                e->active--;
        if (!o->share_pending)
                manager_idle_as(o->m, o->uid, o->read);
        operation_free_unstarted(o);
        return NULL;
}

/* Everything but the manager's bookkeeping. */
static void operation_free_unstarted(Operation *o) {
        sd_event_source_disable_unref(o->wait_timer);
        sd_bus_message_unref(o->call);
        sd_bus_slot_unref(o->polkit_slot);
        free(o->name);
        free(o->snapshot_id);
        free(o->cache_key);
        sbx_error_free(&o->error);
        operation_job_done(o);
        if (o->exec_slot)
                exec_slots_release(&o->m->execs, o->uid, o->exec_capture);
        free(o);
}

/* The state machine ------------------------------------------------------- */

static void advance(Operation *o, OperationEvent event) {
        OperationState next = operation_next_state(o->state, event, verb_info(o->verb)->lists, o->widened);

        assert(next != _OPERATION_STATE_MAX);
        log_debug("%s %s by uid %u: %s → %s", verb_info(o->verb)->name, operation_target(o), (unsigned) o->uid,
                  operation_state_to_string(o->state), operation_state_to_string(next));
        o->state = next;
}

static void audit(const Operation *o, const char *outcome, const char *reason) {
        char owner[32];

        if (o->owner_valid)
                snprintf(owner, sizeof owner, "%u", (unsigned) o->owner);
        audit_record(&(AuditRecord) {
                .uid = o->uid,
                .verb = verb_info(o->verb)->name,
                .target = operation_target(o),
                .owner = o->owner_valid ? owner : NULL,
                .outcome = outcome,
                .reason = reason,
        });
}

/* A reply that could not be sent (the caller's connection gone, the bus's queue
 * full): logged, and said in the audit record's reason. */
static void reply_failed(const Operation *o, int r, const char *reason, char **ret_reason) {
        log_warning_errno(r, "%s %s by uid %u: the reply could not be sent: %m", verb_info(o->verb)->name, operation_target(o),
                          (unsigned) o->uid);
        if (asprintf(ret_reason, "%s%sthe reply could not be sent: %s", reason ?: "", reason ? "; " : "",
                     strerror(-r)) < 0)
                *ret_reason = NULL;
}

static void fail(Operation *o, OperationEvent event, int r, const SbxError *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *reason = NULL;

        advance(o, event);
        sbx_bus_error_from(&error, e, r);
        r = sd_bus_reply_method_error(o->call, &error);
        if (r < 0)
                reply_failed(o, r, error.message, &reason);
        if (verb_audited(o->verb) || sbx_error_is_set(e))
                audit(o, error.name, reason ?: error.message);
        operation_free(o);
}

int operation_refuse(Manager *m, sd_bus_message *msg, Verb verb, const char *target, const SbxError *e, int r,
                     sd_bus_error *ret_error) {
        uid_t uid;

        r = sbx_bus_error_from(ret_error, e, r);
        if (verb_audited(verb) && caller_cache_uid(&m->callers, msg, &uid) >= 0)
                audit_record(&(AuditRecord) {
                        .uid = uid,
                        .verb = verb_info(verb)->name,
                        .target = target ?: "-",
                        .outcome = ret_error->name,
                        .reason = ret_error->message,
                });
        return r;
}

/* The seconds an operation's Docker calls may take in all (docs/lifecycle.md): the
 * policy's docker_timeout, or what the verb's row makes of it. */
static unsigned docker_budget(const Operation *o, const SbxPolicy *p) {
        const VerbInfo *v = verb_info(o->verb);

        return v->budget ? v->budget(o, (unsigned) p->docker_timeout) : (unsigned) p->docker_timeout;
}

static void job_run(void *job, SbxLifecycle *l) {
        Operation *o = job;

        o->r = verb_info(o->verb)->run(o, l);
}

static unsigned job_budget(const void *job, const SbxPolicy *p) {
        return docker_budget(job, p);
}

static void job_reply(Operation *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_free_ char *reason = NULL;
        int r;

        if (o->resumed)
                registry_started(&o->m->registry, o->name);
        if (o->r < 0) {
                /* A sandbox found missing is gone from the objects too. */
                if (o->name && o->error.kind == SBX_ERROR_NO_SUCH_SANDBOX)
                        registry_drop(&o->m->registry, o->name);
                /* Docker failed midway: what the operation left is settled once it answers. */
                if (verb_changes(o->verb) && o->error.kind == SBX_ERROR_BACKEND_UNAVAILABLE)
                        manager_reconcile_later(o->m);
                fail(o, OPERATION_ERRED, o->r, &o->error);
                return;
        }
        /* The effect on the registry first (it may refuse: a lease over a cap), then the
         * reply built from it. */
        if ((verb_info(o->verb)->apply && (r = verb_info(o->verb)->apply(o)) < 0) ||
            (r = sd_bus_message_new_method_return(o->call, &reply)) < 0 ||
            (r = verb_info(o->verb)->reply(o, reply)) < 0) {
                fail(o, OPERATION_ERRED, r, &o->error);
                return;
        }
        if (verb_info(o->verb)->activity)
                registry_touch(&o->m->registry, o->name, manager_now_us(o->m));
        /* The work is done either way: the outcome is "ok", and the reason says
         * whether its caller was told. */
        advance(o, OPERATION_SUCCEEDED);
        r = sd_bus_send(NULL, reply, NULL);
        if (r < 0)
                reply_failed(o, r, NULL, &reason);
        if (verb_audited(o->verb))
                audit(o, "ok", reason ?: verb_info(o->verb)->ok_reason ? verb_info(o->verb)->ok_reason(o) : NULL);
        operation_free(o);
}

static void job_done(void *job) {
        job_reply(job);
}

/* It never ran (the pool full, no worker, SIGTERM): its caller learns why now. */
static void job_refused(void *job, int r, const SbxError *e) {
        fail(job, OPERATION_REFUSED, r, e);
}

/* Shutting down: an operation that has not started never will. */
static void job_cancel(Operation *o) {
        SbxError e = SBX_ERROR_NULL;

        fail(o, OPERATION_ERRED, work_error_shutting_down(&e), &e);
        sbx_error_free(&e);
}

/* Reads and state changes have pools of their own (work.h): a read never waits
 * behind another caller's slow state change, nor behind more than its share of
 * another caller's slow reads. */
const WorkKind verb_work_change = {
        .name = "operation", .auth = WORK_AUTH_POLKIT, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_NONE,
        .cancellable = true, .budget = job_budget, .run = job_run, .done = job_done, .refused = job_refused,
};

const WorkKind verb_work_read = {
        .name = "read", .auth = WORK_AUTH_POLKIT, .pool = WORK_POOL_READ, .share = WORK_SHARE_NONE,
        .cancellable = true, .budget = job_budget, .run = job_run, .done = job_done, .refused = job_refused,
};

void operation_cancel_queued(Manager *m) {
        work_cancel_queued(m);
        cancel_waiters(m);
}

static void submit_acquired(Operation *o);
static int wait_for_slot(Operation *o);

/* What a process in the sandbox holds while it runs: the caller's share of state
 * changes (when it came with option wait, it may still be to take) and an exec slot
 * (policy max_execs_per_user, max_execs) — both, or none of what was taken here. */
static int take_slots(Operation *o, SbxError *e) {
        bool took_share = false;
        int r;

        if (o->share_pending) {
                if ((r = work_share_take(o->m, o->uid, o->read, e)) < 0)
                        return r;
                o->share_pending = false;
                took_share = true;
        }
        r = exec_slots_acquire(&o->m->execs, o->m->policy, o->uid, operation_exec_capture_of(o), e);
        if (r < 0) {
                if (took_share) {
                        o->share_pending = true;
                        manager_idle_as(o->m, o->uid, o->read);
                }
                return r;
        }
        o->exec_slot = true;
        o->exec_capture = operation_exec_capture_of(o);
        return 0;
}

static void submit(Operation *o) {
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (o->m->terminating) {
                job_cancel(o);
                return;
        }
        /* What the leases forbid (SandboxBusy), known only once authorized. */
        if (verb_info(o->verb)->admit && (r = verb_info(o->verb)->admit(o)) < 0) {
                fail(o, OPERATION_REFUSED, r, &o->error);
                return;
        }
        /* Using the sandbox holds off its idle stop until the reply (deadlines.h). */
        if (verb_info(o->verb)->activity && o->name) {
                SandboxEntry *entry = registry_get(&o->m->registry, o->name);

                if (entry) {
                        entry->active++;
                        o->active = true;
                        registry_mark_used(entry);
                }
        }
        /* A process in the sandbox holds an exec slot until it ends; with option
         * wait, a full share — any of them — is waited for. */
        if (verb_info(o->verb)->exec) {
                r = take_slots(o, &e);
                if (r < 0 && operation_wait_s(o) > 0 && sbx_error_is(&e, SBX_ERROR_LIMITS_EXCEEDED) &&
                    wait_for_slot(o) >= 0) {
                        sbx_error_free(&e);
                        return;
                }
                if (r < 0) {
                        fail(o, OPERATION_REFUSED, r, &e);
                        sbx_error_free(&e);
                        return;
                }
        }
        submit_acquired(o);
}

static void submit_acquired(Operation *o) {
        if (o->read && verb_info(o->verb)->answer && verb_info(o->verb)->answer(o) > 0) {
                job_reply(o);
                return;
        }
        advance(o, OPERATION_SUBMITTED);
        /* Once handed over, o lives until its reply (a refusal has freed it). */
        if (work_submit(o->m, verb_info(o->verb)->work, o->uid, o) >= 0 && verb_info(o->verb)->submitted)
                verb_info(o->verb)->submitted(o);
}

/* Option wait ------------------------------------------------------------ */

static void unlink_waiting(Operation *o) {
        for (Operation **p = &o->m->execs_waiting; *p; p = &(*p)->next_waiting)
                if (*p == o) {
                        *p = o->next_waiting;
                        o->next_waiting = NULL;
                        o->m->n_execs_waiting--;
                        break;
                }
        o->wait_timer = sd_event_source_disable_unref(o->wait_timer);
}

static int on_wait_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        Operation *o = userdata;
        SbxError e = SBX_ERROR_NULL;
        int r;

        unlink_waiting(o);
        /* One last try names the limit that is still full. */
        r = take_slots(o, &e);
        if (r >= 0) {
                submit_acquired(o);
                return 0;
        }
        {
                SbxError w = SBX_ERROR_NULL;

                r = sbx_error_set(&w, SBX_ERROR_LIMITS_EXCEEDED, "wait: no slot within %u s: %s", operation_wait_s(o),
                                  e.message ?: "");
                fail(o, OPERATION_REFUSED, r, &w);
                sbx_error_free(&w);
        }
        sbx_error_free(&e);
        return 0;
}

/* The waiters in arrival order, each given a slot if its share has one now (a
 * waiter whose share is still full does not hold up another user's). */
static int on_kick(sd_event_source *s, void *userdata) {
        Manager *m = userdata;
        Operation *next;

        for (Operation *o = m->execs_waiting; o; o = next) {
                next = o->next_waiting;
                if (take_slots(o, NULL) < 0)
                        continue;
                unlink_waiting(o);
                submit_acquired(o);
        }
        return 0;
}

static void on_released(void *userdata) {
        Manager *m = userdata;

        if (m->execs_waiting && !m->execs_kick)
                (void) sd_event_add_defer(m->event, &m->execs_kick, on_kick, m);
        else if (m->execs_waiting)
                (void) sd_event_source_set_enabled(m->execs_kick, SD_EVENT_ONESHOT);
}

static int wait_for_slot(Operation *o) {
        Manager *m = o->m;
        Operation **tail;
        int r;

        if (m->n_execs_waiting >= SBX_MAX_QUEUED)
                return -EBUSY;
        r = sd_event_add_time_relative(m->event, &o->wait_timer, CLOCK_MONOTONIC,
                                       (uint64_t) operation_wait_s(o) * 1000000U, 0, on_wait_timeout, o);
        if (r < 0)
                return r;
        m->execs.released = on_released;
        m->execs.released_userdata = m;
        for (tail = &m->execs_waiting; *tail; tail = &(*tail)->next_waiting)
                ;
        *tail = o;
        m->n_execs_waiting++;
        return 0;
}

void operation_waiters_caller_gone(Manager *m, const char *name) {
        SbxError e = SBX_ERROR_NULL;
        Operation *next;

        for (Operation *o = m->execs_waiting; o; o = next) {
                next = o->next_waiting;
                if (!streq_ptr(sd_bus_message_get_sender(o->call), name))
                        continue;
                unlink_waiting(o);
                fail(o, OPERATION_REFUSED, sbx_error_set(&e, SBX_ERROR_LIMITS_EXCEEDED,
                                                         "wait: the caller went away"), &e);
                sbx_error_free(&e);
        }
}

static void cancel_waiters(Manager *m) {
        while (m->execs_waiting) {
                Operation *o = m->execs_waiting;

                unlink_waiting(o);
                job_cancel(o);
        }
        m->execs_kick = sd_event_source_disable_unref(m->execs_kick);
}

static void widen(Operation *o);

static void allowed(Operation *o) {
        advance(o, OPERATION_ALLOWED);
        if (o->state == OPERATION_WIDENING)
                widen(o);
        else
                submit(o);
}

static uint64_t now_monotonic(Manager *m) {
        uint64_t t = 0;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &t);
        return t;
}

static void widened(Operation *o, bool all) {
        o->widened = true;
        o->all = all;
        advance(o, all ? OPERATION_ALLOWED : OPERATION_DENIED);
        submit(o);
}

static void on_widened(int r, SbxError *error, void *userdata) {
        Operation *o = userdata;

        o->polkit_slot = sd_bus_slot_unref(o->polkit_slot);
        /* polkit's answers, not its failures: a yes, or the challenge (auth_admin)
         * that a caller without manage-others meets. */
        if (o->cache_key && (r >= 0 || sbx_error_is(error, SBX_ERROR_INTERACTIVE_AUTH_REQUIRED)))
                auth_cache_remember_answer(o->m->auth_cache, sd_bus_message_get_sender(o->call), o->cache_key,
                                           r >= 0, now_monotonic(o->m));
        widened(o, r >= 0);
}

/* Lists: one's own objects, or everyone's for whoever holds manage-others, asked
 * without a prompt (it is no refusal to see less). polkit's recent answer for this
 * connection and verb stands, yes or no (auth-cache.h), like a read's yes. */
static void widen(Operation *o) {
        const char *sender = sd_bus_message_get_sender(o->call);
        int r;

        o->cache_key = mfree(o->cache_key);
        if (asprintf(&o->cache_key, "%s\n%s", SBX_POLKIT_ACTION_MANAGE_OTHERS, verb_info(o->verb)->name) < 0)
                o->cache_key = NULL;
        else if ((r = auth_cache_answer(o->m->auth_cache, sender, o->cache_key, now_monotonic(o->m))) >= 0) {
                widened(o, r > 0);
                return;
        }
        r = sbx_polkit_check_async(o->m->bus, sender, SBX_POLKIT_ACTION_MANAGE_OTHERS,
                                   (const char *const[]) { "verb", verb_info(o->verb)->name, NULL }, false, 0,
                                   on_widened, o, &o->polkit_slot);
        if (r < 0)
                on_widened(r, NULL, o);
}

static void ask(Operation *o);

static void on_polkit(int r, SbxError *error, void *userdata) {
        Operation *o = userdata;

        o->polkit_slot = sd_bus_slot_unref(o->polkit_slot);
        if (r < 0) {
                fail(o, OPERATION_DENIED, r, error);
                return;
        }
        if (streq(o->action, SBX_POLKIT_ACTION_INSPECT))
                auth_cache_remember(o->m->auth_cache, sd_bus_message_get_sender(o->call), o->cache_key,
                                    now_monotonic(o->m));
        if (o->then_action) {
                o->action = o->then_action;
                o->then_action = TAKE_PTR(o->last_action);
                ask(o);
                return;
        }
        allowed(o);
}

/* Asks polkit about o->action, with the operation's details; on_polkit() goes on. */
static void ask(Operation *o) {
        char owner[32];
        const char *source = NULL;
        const char *template = verb_info(o->verb)->template ? verb_info(o->verb)->template(o, &source) : NULL;
        int r;

        if (o->owner_valid)
                snprintf(owner, sizeof owner, "%u", (unsigned) o->owner);
        const char *details[] = {
                "verb", verb_info(o->verb)->name,
                "sandbox", o->display ?: o->snapshot_display ?: "",
                "owner", o->owner_valid ? owner : "",
                template ? "template" : NULL, template,
                template, source,
                NULL,
        };

        /* polkit's recent yes for reads of one's own objects, for this connection
         * and exactly these details, stands (auth-cache.h). */
        o->cache_key = mfree(o->cache_key);
        if (asprintf(&o->cache_key, "%s\n%s\n%s\n%s", o->action, details[1], details[3], details[5]) < 0) {
                fail(o, OPERATION_DENIED, -ENOMEM, NULL);
                return;
        }
        if (streq(o->action, SBX_POLKIT_ACTION_INSPECT) &&
            auth_cache_allowed(o->m->auth_cache, sd_bus_message_get_sender(o->call), o->cache_key,
                               now_monotonic(o->m))) {
                allowed(o);
                return;
        }
        r = sbx_polkit_check_async(o->m->bus, sd_bus_message_get_sender(o->call), o->action, details,
                                   sd_bus_message_get_allow_interactive_authorization(o->call) > 0, 0,
                                   on_polkit, o, &o->polkit_slot);
        if (r < 0)
                fail(o, OPERATION_DENIED, r, NULL);
}

static void authorize(Operation *o) {
        const VerbInfo *v = verb_info(o->verb);

        if (o->uid == 0) {
                o->widened = o->all = true;
                allowed(o);
                return;
        }
        o->action = o->owner_valid && o->owner == o->uid ? v->own_action
                                                          : v->others_action ?: SBX_POLKIT_ACTION_MANAGE_OTHERS;
        /* What else the verb's arguments ask for (a replacement, a pull first). */
        if (v->more_actions)
                v->more_actions(o, &o->then_action, &o->last_action);
        /* Resuming first is a resume: what manage (others': manage-others) allows. */
        if (o->resume)
                o->then_action = o->owner_valid && o->owner == o->uid ? SBX_POLKIT_ACTION_MANAGE
                                                                      : SBX_POLKIT_ACTION_MANAGE_OTHERS;
        ask(o);
}

/* The common part, and the verb's own arguments taken over (first: whatever fails
 * after, operation_free_unstarted() frees them). */
static int operation_new(Manager *m, sd_bus_message *call, Verb verb, uid_t uid, OperationArgs *args,
                         Operation **ret) {
        _cleanup_free_ Operation *o = calloc(1, sizeof(Operation));
        int r;

        if (!o)
                return -ENOMEM;
        *o = (Operation) {
                .m = m,
                .call = sd_bus_message_ref(call),
                .verb = verb,
                .read = !verb_changes(verb),
                .state = OPERATION_AUTHORIZING,
                .uid = uid,
                .owner = uid,
                .owner_valid = true,
        };
        r = operation_job_take(o, args);
        if (r >= 0 && args->object) {
                o->owner = args->object->owner;
                o->owner_valid = args->object->owner_valid;
                o->name = strdup(args->object->name);
                r = o->name ? 0 : -ENOMEM;
        } else if (r >= 0 && args->name)
                r = sbx_name_qualify(uid, args->name, &o->name);
        if (r >= 0 && args->snapshot_id)
                r = sbx_name_qualify(uid, args->snapshot_id, &o->snapshot_id);
        if (r < 0) {
                operation_free_unstarted(TAKE_PTR(o));
                return r;
        }
        if (o->name)
                (void) sbx_name_unqualify(o->name, &o->display);
        if (o->snapshot_id)
                (void) sbx_name_unqualify(o->snapshot_id, &o->snapshot_display);
        *ret = TAKE_PTR(o);
        return 0;
}

int operation_start(Manager *m, sd_bus_message *call, Verb verb, OperationArgs *args, sd_bus_error *ret_error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        bool read = !verb_changes(verb), pending;
        Operation *o;
        uid_t uid;
        int r;

        r = caller_cache_uid(&m->callers, call, &uid);
        if (r < 0) {
                operation_args_done(args, verb);
                return sd_bus_error_set(ret_error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Cannot tell who is calling from the bus credentials");
        }
        /* The caller's share of state changes (policy max_operations_per_user) or of
         * reads (max_reads_per_user) in flight: a full share is LimitsExceeded for that
         * caller's calls of that kind only. */
        r = work_share_take(m, uid, read, &e);
        /* With option wait, a process in the sandbox waits for it (take_slots()). */
        pending = r < 0 && verb_info(verb)->exec && operation_args_wait_s(verb, args) > 0 &&
                  sbx_error_is(&e, SBX_ERROR_LIMITS_EXCEEDED);
        if (r < 0 && !pending) {
                operation_args_done(args, verb);
                return operation_refuse(m, call, verb, args->name, &e, r, ret_error);
        }
        r = operation_new(m, call, verb, uid, args, &o);
        if (r < 0) {
                operation_args_done(args, verb);
                if (!pending)
                        manager_idle_as(m, uid, read);
                return r;
        }
        o->share_pending = pending;
        authorize(o);
        return 1;
}
