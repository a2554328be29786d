/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>

#include "audit.h"
#include "bus-error.h"
#include "bus-exec.h"
#include "bus-exec-internal.h"
#include "bus-signal.h"
#include "log.h"
#include "operation.h"
#include "work.h"


/* A finished exec's object stays this long for its ExitStatus to be read, unless
 * its caller's connection closes first or its caller (uid) has more finished ones than
 * FINISHED_PER_USER_MAX, or all have more than FINISHED_MAX: the oldest go first. A
 * finished object holds no descriptor and no bus match. */
#define LINGER_USEC (60U * 1000000U)
#define FINISHED_PER_USER_MAX 32U      /* twice the default max_execs_per_user */
#define FINISHED_MAX 256U

static void close_fds(ExecObject *e) {
        for (size_t i = 0; i < 3; i++)
                if (e->fds[i] >= 0)
                        e->fds[i] = safe_close(e->fds[i]);
}

/* An Attach session went: its detached object has one fewer. */
static void attach_gone(Manager *m, const char *attach_of) {
        FOREACH_EXEC(d, m)
                if (streq(d->id, attach_of) && d->n_attached > 0)
                        d->n_attached--;
}

ExecObject *exec_free(ExecObject *e) {
        if (!e)
                return NULL;
        if (e->n_jobs > 0) {
                e->doomed = true;
                return NULL;
        }
        for (size_t i = 0; i < 2; i++)
                e->hangup[i] = sd_event_source_disable_unref(e->hangup[i]);
        if (e->thread_started) {
                (void) eventfd_write(e->wake_fd, 1);
                (void) pthread_join(e->thread, NULL);
        }
        exec_link_remove(&e->m->execs, &e->link);
        if (e->attach_of[0])
                attach_gone(e->m, e->attach_of);
        else if (e->running)
                exec_slots_release(&e->m->execs, e->caller, 0);
        if ((e->running || e->thread_started) && !e->detached)
                manager_idle(e->m, BUSY_UID);
        if (e->ops)
                e->ops->free(e);
        sd_bus_slot_unref(e->owner_check);
        sd_event_source_disable_unref(e->done_source);
        sd_event_source_disable_unref(e->linger);
        sbx_exec_process_free(e->process);
        close_fds(e);
        safe_close(e->done_fd);
        safe_close(e->wake_fd);
        free(e->path);
        free(e->sandbox);
        free(e->caller_name);
        free(e->docker_host);
        free(e->name);
        free(e->argv0);
        free(e);
        return NULL;
}

/* Relay thread ------------------------------------------------------------- */

static int relay_status(ExecObject *e, SbxDocker *d) {
        SbxRelay *r = &e->process->relay;
        int q, status = -1;

        r->in_fd = e->fds[0];
        r->out[0].fd = e->fds[1];
        r->out[1].fd = e->process->relay.tty ? e->fds[1] : e->fds[2];
        r->wake_fd = e->wake_fd;
        r->deadline_us = e->timeout_s > 0 ? sbx_now_monotonic_us() + (uint64_t) e->timeout_s * 1000000U : 0;
        q = sbx_relay_run(r);
        if (q == -ETIME || q == -ECANCELED) {
                /* Past its timeout, or woken: its caller or the service went away. It
                 * is killed with this thread's own client (no worker to wait for, no
                 * queue to be full), then drained. */
                (void) sbx_exec_kill(d, e->process, SIGKILL, NULL);
                r->wake_fd = -EBADF;
                r->deadline_us = sbx_now_monotonic_us() + 5U * 1000000U;
                q = sbx_relay_run(r);
        }
        if (q < 0)
                return -1;
        return sbx_exec_wait(d, e->process, &status, NULL) < 0 ? -1 : status;
}

static void *relay_thread(void *userdata) {
        ExecObject *e = userdata;
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        int status = -1;

        if (sbx_docker_new(e->docker_host, &d, NULL) >= 0)
                status = relay_status(e, d);
        e->exit_status = status < 0 ? 255 : status;
        (void) eventfd_write(e->done_fd, 1);
        return NULL;
}

/* Main thread -------------------------------------------------------------- */

/* The exec's audit records: its end, and each Kill a caller sends or is refused.
 * reason: instead of the error's message (or NULL). */
static void audit_exec_as(const ExecObject *e, uid_t uid, const char *verb, const sd_bus_error *error,
                          const char *reason) {
        char owner[32];

        snprintf(owner, sizeof owner, "%u", (unsigned) e->owner);
        audit_record(&(AuditRecord) { .uid = uid, .verb = verb, .target = e->sandbox, .owner = owner,
                                      .outcome = sd_bus_error_is_set(error) ? error->name : "ok",
                                      .reason = reason ?: sd_bus_error_is_set(error) ? error->message : NULL });
}

static void audit_exec(const ExecObject *e, uid_t uid, const char *verb, const sd_bus_error *error) {
        audit_exec_as(e, uid, verb, error, NULL);
}

void exec_audit(const ExecObject *e, uid_t uid, const char *verb, const sd_bus_error *error) {
        audit_exec(e, uid, verb, error);
}

static int on_linger(sd_event_source *s, uint64_t usec, void *userdata) {
        exec_free(userdata);
        return 0;
}

static int append_exec_changed(sd_bus_message *msg, void *userdata) {
        const ExecObject *e = userdata;
        return sd_bus_message_append(msg, "sa{sv}as", SBX_BUS_EXEC_INTERFACE, 2, "Running", "b", (int) e->running,
                                     "ExitStatus", "i", (int32_t) e->exit_status, 0);
}

static int append_exited(sd_bus_message *msg, void *userdata) {
        const ExecObject *e = userdata;
        return sd_bus_message_append(msg, "i", (int32_t) e->exit_status);
}

/* At most FINISHED_PER_USER_MAX finished objects of uid, FINISHED_MAX of all: the
 * oldest (last in the list) go. */
void exec_trim_finished(Manager *m, uid_t uid) {
        unsigned mine = 0, all = 0;
        ExecObject *last = NULL, *prev;

        FOREACH_EXEC(e, m) {
                last = e;
                if (!e->running && !e->doomed && !e->discarded && !e->attach_of[0]) {
                        all++;
                        mine += e->caller == uid;
                }
        }
        for (ExecObject *e = last; e && (mine > FINISHED_PER_USER_MAX || all > FINISHED_MAX); e = prev) {
                prev = exec_of(e->link.prev);
                if (e->running || e->doomed || e->discarded || e->attach_of[0] ||
                    (e->caller != uid && all <= FINISHED_MAX))
                        continue;
                all--;
                mine -= e->caller == uid;
                if (e->ops)
                        e->ops->discard(e);
                else
                        exec_free(e);
        }
}

void exec_ended(ExecObject *e) {
        e->running = false;
        if (e->attach_of[0]) {
                /* Nobody knows its path: no signal, no slot. */
                manager_idle(e->m, BUSY_UID);
                audit_exec(e, e->caller, "exec-attach-ended", NULL);
                return;
        }
        exec_slots_release(&e->m->execs, e->caller, 0);
        if (!e->detached)
                manager_idle(e->m, BUSY_UID);
        audit_exec(e, e->caller, "exec-exited", NULL);
        /* For who may read the object only (bus-signal.h): its caller, the sandbox's
         * owner, root. */
        bus_signal_send(e->m->bus, &e->m->callers, e->owner, e->caller, e->path, "org.freedesktop.DBus.Properties",
                        "PropertiesChanged", append_exec_changed, e);
        bus_signal_send(e->m->bus, &e->m->callers, e->owner, e->caller, e->path, SBX_BUS_EXEC_INTERFACE, "Exited",
                        append_exited, e);
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ExecObject *e = userdata;
        eventfd_t v;

        (void) eventfd_read(fd, &v);
        e->done_source = sd_event_source_disable_unref(e->done_source);
        (void) pthread_join(e->thread, NULL);
        e->thread_started = false;
        close_fds(e);
        e->done_fd = safe_close(e->done_fd);
        e->wake_fd = safe_close(e->wake_fd);
        exec_ended(e);
        if (e->caller_gone || e->attach_of[0] ||
            sd_event_add_time_relative(e->m->event, &e->linger, CLOCK_MONOTONIC, LINGER_USEC, 0, on_linger, e) < 0) {
                exec_free(e);
                return 0;
        }
        exec_trim_finished(e->m, e->caller);
        return 0;
}

/* Kill and Resize run on a worker: they are Docker calls. */
typedef struct ExecJob {
        ExecObject *e;
        sd_bus_message *call;           /* NULL: nobody waits (a vanished caller's kill) */
        uid_t uid;                      /* who called */
        SbxExecProcess *process;        /* borrowed: immutable fields only */
        int sig;
        unsigned rows, cols;
        bool refused;                   /* never ran */
        int r;
        SbxError error;
} ExecJob;

static void job_run(void *job, SbxLifecycle *l) {
        ExecJob *j = job;

        if (j->sig > 0)
                j->r = sbx_exec_kill(l->docker, j->process, j->sig, &j->error);
        else
                j->r = sbx_exec_resize(l->docker, j->process, j->rows, j->cols, &j->error);
}

/* The reply to a Kill or Resize; one that cannot be sent is logged, and a Kill's
 * audit record says so. */
static void job_reply(ExecJob *j) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_free_ char *reason = NULL;
        int r;

        if (j->r < 0) {
                sbx_bus_error_from(&error, &j->error, j->r);
                r = sd_bus_reply_method_error(j->call, &error);
        } else
                r = sd_bus_reply_method_return(j->call, NULL);
        if (r < 0) {
                log_warning_errno(r, "exec %s: the reply to %s could not be sent: %m", j->e->id,
                                  sd_bus_message_get_member(j->call) ?: "?");
                if (asprintf(&reason, "%s%sthe reply could not be sent: %s", error.message ?: "",
                             error.message ? "; " : "", strerror(-r)) < 0)
                        reason = NULL;
        }
        if (j->sig > 0 || j->refused)
                audit_exec_as(j->e, j->uid, j->sig > 0 ? "exec-kill" : "exec-resize", &error, reason);
}

static void job_done(void *job) {
        ExecJob *j = job;

        if (j->call)
                job_reply(j);
        sd_bus_message_unref(j->call);
        sbx_error_free(&j->error);
        if (--j->e->n_jobs == 0 && j->e->doomed)
                exec_free(j->e);
        free(j);
}

/* Not run (the caller's share full, no worker): answered and audited as a failure. */
static void job_refused(void *job, int r, const SbxError *e) {
        ExecJob *j = job;

        j->r = r;
        j->refused = true;
        if (e && e->message)
                (void) sbx_error_set(&j->error, e->kind, "%s", e->message);
        job_done(j);
}

/* A caller's Kill or Resize counts against its share like any operation; the
 * service's own kill (a process that must not outlive a failure) against nobody's. */
static const WorkKind signal_work = {
        .name = "exec-signal", .auth = WORK_AUTH_CALLER, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_USER,
        .run = job_run, .done = job_done, .refused = job_refused,
};

static const WorkKind kill_work = {
        .name = "exec-kill", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE, .share = WORK_SHARE_NONE,
        .run = job_run, .done = job_done, .refused = job_refused,
};

/* Returns 1: the job answers the call (also a refusal). */
static int submit(ExecObject *e, sd_bus_message *call, uid_t uid, int sig, unsigned rows, unsigned cols) {
        ExecJob *j = calloc(1, sizeof(ExecJob));

        if (!j)
                return -ENOMEM;
        *j = (ExecJob) { .e = e, .call = sd_bus_message_ref(call), .uid = uid, .process = e->process, .sig = sig,
                         .rows = rows, .cols = cols };
        e->n_jobs++;
        (void) work_submit(e->m, call ? &signal_work : &kill_work, uid, j);
        return 1;
}

/* Only who started it (and root) may signal, resize or attach to it. */
int exec_check_caller(ExecObject *e, uid_t uid, sd_bus_error *error) {
        if (uid != 0 && uid != e->caller)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
        if (!e->running)
                return sd_bus_error_set(error, sbx_error_bus_name(SBX_ERROR_NOT_RUNNING), "The process has exited");
        return 0;
}

/* A refused Kill or Resize is audited here (an accepted Kill once it is done). */
static int audit_refusal(ExecObject *e, uid_t uid, const char *verb, int r, sd_bus_error *error) {
        if (r >= 0)
                return r;
        if (!sd_bus_error_is_set(error))
                r = sd_bus_error_set_errno(error, r);
        audit_exec(e, uid, verb, error);
        return r;
}

static int parse_signal(const char *s) {
        char *end;
        long n;

        if (strncmp(s, "SIG", 3) == 0)
                s += 3;
        n = strtol(s, &end, 10);
        if (*s && !*end)
                return n > 0 && n < 65 ? (int) n : -EINVAL;
        for (int i = 1; i < 32; i++) {
                const char *name = sigabbrev_np(i);

                if (name && streq(name, s))
                        return i;
        }
        return -EINVAL;
}

static int method_kill(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;
        const char *name;
        uid_t uid;
        int sig, r;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sd_bus_message_read(msg, "s", &name)) < 0)
                return r;
        if ((sig = parse_signal(name)) < 0)
                r = sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                      "signal: '%.32s' is not a signal name (TERM, SIGKILL) or number", name);
        else if ((r = exec_check_caller(e, uid, error)) >= 0)
                r = submit(e, msg, uid, sig, 0, 0);
        return audit_refusal(e, uid, "exec-kill", r, error);
}

static int method_resize(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;
        uint16_t rows, cols;
        uid_t uid;
        int r;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sd_bus_message_read(msg, "qq", &rows, &cols)) < 0)
                return r;
        if (rows == 0 || cols == 0)
                r = sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "rows, cols: must be at least 1");
        else if ((r = exec_check_caller(e, uid, error)) >= 0)
                r = e->process->relay.tty ? submit(e, msg, uid, 0, rows, cols)
                                          : sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS, "This exec has no terminal");
        return audit_refusal(e, uid, "exec-resize", r, error);
}

/* ReadOutput and StreamOutput on an exec that is not detached: who may read it is
 * told it has no output kept. */
static int output_not_kept(sd_bus_message *msg, ExecObject *e, sd_bus_error *error) {
        uid_t uid;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0 || (uid != 0 && uid != e->caller && uid != e->owner))
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                "This exec is not detached: its output goes to its descriptors");
}

static int method_read_output(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;

        return e->ops ? e->ops->read_output(msg, e, error) : output_not_kept(msg, e, error);
}

static int method_stream_output(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;

        return e->ops ? e->ops->stream_output(msg, e, error) : output_not_kept(msg, e, error);
}

static int method_attach(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;
        uid_t uid;

        if (e->ops)
                return e->ops->attach(msg, e, error);
        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0 || (uid != 0 && uid != e->caller))
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
        return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                "This exec is not detached: its output goes to the descriptors it was started with");
}

static int property_get(sd_bus *bus, const char *path, const char *interface, const char *property,
                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;
        sd_bus_message *call = sd_bus_get_current_message(bus);
        uid_t uid;

        /* Its path is in broadcast signals: what it is about is for its caller, the
         * sandbox's owner and root only. */
        if (call && (caller_cache_uid(&e->m->callers, call, &uid) < 0 || (uid != 0 && uid != e->caller && uid != e->owner)))
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
        if (streq(property, "Sandbox"))
                return sd_bus_message_append(reply, "s", e->sandbox);
        if (streq(property, "Owner"))
                return sd_bus_message_append(reply, "u", (uint32_t) e->owner);
        if (streq(property, "Running"))
                return sd_bus_message_append(reply, "b", e->running);
        if (streq(property, "ExitStatus"))
                return sd_bus_message_append(reply, "i", (int32_t) (e->running ? -1 : e->exit_status));
        return -ENOENT;
}

static const sd_bus_vtable exec_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Sandbox", "s", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Owner", "u", property_get, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Running", "b", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ExitStatus", "i", property_get, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_METHOD_WITH_ARGS("Kill", SD_BUS_ARGS("s", signal), SD_BUS_NO_RESULT, method_kill,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Resize", SD_BUS_ARGS("q", rows, "q", cols), SD_BUS_NO_RESULT, method_resize,
                                SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("ReadOutput", SD_BUS_ARGS("t", offset),
                                SD_BUS_RESULT("ay", stdout, "ay", stderr, "t", next_offset, "b", running),
                                method_read_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("StreamOutput", SD_BUS_ARGS("h", stdout, "h", stderr, "a{sv}", options),
                                SD_BUS_NO_RESULT, method_stream_output, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_ARGS("Attach", SD_BUS_ARGS("h", stdin, "h", stdout, "h", stderr), SD_BUS_NO_RESULT,
                                method_attach, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_SIGNAL_WITH_ARGS("Exited", SD_BUS_ARGS("i", exit_status), 0),
        SD_BUS_VTABLE_END
};

/* The caller's connection closed: its running exec is killed (by its relay thread,
 * relay_status()), and goes once it has ended; a finished one has nobody left to
 * read it. */
static void caller_gone(ExecObject *e) {
        e->owner_check = sd_bus_slot_unref(e->owner_check);
        if (e->caller_gone || e->detached)
                return;         /* a detached process outlives its caller */
        e->caller_gone = true;
        if (!e->running) {
                exec_free(e);
                return;
        }
        log_info("the caller of exec %s in sandbox '%s' went away: killing it", e->id, e->sandbox);
        (void) eventfd_write(e->wake_fd, 1);
}

void bus_exec_caller_gone(Manager *m, const char *name) {
        operation_waiters_caller_gone(m, name);
        FOREACH_EXEC(e, m) {
                if (streq(e->caller_name, name))
                        caller_gone(e);
        }
}

/* Callers are followed by the manager's one NameOwnerChanged match (a name that lost
 * its owner: bus_exec_caller_gone()), never by a match per exec: dbus-daemon allows a
 * connection 512 match rules, and a failed AddMatch would drop the service's
 * connection. A caller gone before its exec was published is told by the bus's answer
 * to GetNameOwner, asked once the object exists: the disconnection came before that
 * answer, or its signal comes after. */
static int on_owner_checked(sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        ExecObject *e = userdata;

        e->owner_check = sd_bus_slot_unref(e->owner_check);
        if (sd_bus_message_is_method_error(reply, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                caller_gone(e);
        return 0;
}

static int exec_find(sd_bus *bus, const char *path, const char *interface, void *userdata, void **found,
                     sd_bus_error *error) {
        const char *id = startswith(path, SBX_BUS_EXEC_PREFIX "/");
        Manager *m = userdata;

        if (!id)
                return 0;
        FOREACH_EXEC(e, m)
                if (streq(e->id, id) && !e->attach_of[0]) {
                        *found = e;
                        return 1;
                }
        return 0;
}

/* Introspection and the ObjectManager list a caller's own execs only (its own, those
 * in its sandboxes; root: all): their ids are for who may read them (property_get()). */
static int exec_enumerate(sd_bus *bus, const char *path, void *userdata, char ***ret_nodes, sd_bus_error *error) {
        sd_bus_message *call = sd_bus_get_current_message(bus);
        Manager *m = userdata;
        size_t n = 0, total = 0;
        char **paths;
        uid_t uid;

        *ret_nodes = NULL;
        if (!call || caller_cache_uid(&m->callers, call, &uid) < 0)
                return 0;
        FOREACH_EXEC(e, m)
                total++;
        paths = calloc(total + 1, sizeof(char *));
        if (!paths)
                return -ENOMEM;
        FOREACH_EXEC(e, m) {
                if (e->attach_of[0] || (uid != 0 && uid != e->caller && uid != e->owner))
                        continue;
                if (!(paths[n++] = strdup(e->path))) {
                        strv_free(paths);
                        return -ENOMEM;
                }
        }
        *ret_nodes = paths;
        return 0;
}

/* One fallback vtable and enumerator for every exec object, registered with the
 * first: objects of their own would each be listed to every caller. */
int exec_register(Manager *m) {
        int r;

        if (m->execs.objects_registered)
                return 0;
        if ((r = sd_bus_add_fallback_vtable(m->bus, NULL, SBX_BUS_EXEC_PREFIX, SBX_BUS_EXEC_INTERFACE, exec_vtable,
                                            exec_find, m)) < 0 ||
            (r = sd_bus_add_node_enumerator(m->bus, NULL, SBX_BUS_EXEC_PREFIX, exec_enumerate, m)) < 0)
                return r;
        m->execs.objects_registered = true;
        return 0;
}

static int exec_publish(ExecObject *e) {
        uint8_t b[16];
        int r;

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        for (size_t i = 0; i < sizeof b; i++)
                snprintf(e->id + 2 * i, 3, "%02x", b[i]);
        if (asprintf(&e->path, SBX_BUS_EXEC_PREFIX "/%s", e->id) < 0)
                return -ENOMEM;
        if ((r = exec_register(e->m)) < 0)
                return r;
        return sd_bus_call_method_async(e->m->bus, &e->owner_check, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus", "GetNameOwner", on_owner_checked, e, "s",
                                        e->caller_name);
}

static int exec_start_thread(ExecObject *e) {
        int r;

        e->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        e->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (e->done_fd < 0 || e->wake_fd < 0)
                return -errno;
        r = sd_event_add_io(e->m->event, &e->done_source, e->done_fd, EPOLLIN, on_done, e);
        if (r < 0)
                return r;
        r = -pthread_create(&e->thread, NULL, relay_thread, e);
        if (r < 0)
                return r;
        e->thread_started = true;
        return 0;
}


/* The caller closed its stdout or stderr (its pipe's reader, its socket's peer): the
 * Attach session ends, its relay killing the init's --attach. */
static int on_hangup(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ExecObject *e = userdata;

        for (size_t i = 0; i < 2; i++)
                if (e->hangup[i] == s)
                        e->hangup[i] = sd_event_source_disable_unref(e->hangup[i]);
        if (e->thread_started)
                (void) eventfd_write(e->wake_fd, 1);
        return 0;
}

/* A regular file or /dev/null cannot be watched (EPERM): it never hangs up. */
static void watch_hangups(ExecObject *e) {
        for (size_t i = 0; i < 2; i++)
                if (sd_event_add_io(e->m->event, &e->hangup[i], e->fds[1 + i], 0, on_hangup, e) < 0)
                        e->hangup[i] = NULL;
}

static int exec_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char *attach_of,
                    const char **ret_path) {
        ExecObject *e;
        int r;

        e = calloc(1, sizeof(ExecObject));

        if (!e) {
                if (attach_of)
                        attach_gone(m, attach_of);
                else
                        exec_slots_release(&m->execs, args->caller, 0);        /* the slot is ours (see below) */
                sbx_exec_process_free(process);
                for (size_t i = 0; i < 3; i++)
                        safe_close(args->fds[i]);
                return -ENOMEM;
        }
        *e = (ExecObject) {
                .m = m, .process = process, .owner = args->owner, .caller = args->caller,
                .timeout_s = args->timeout_s, .done_fd = -1, .wake_fd = -1, .running = true,
                .fds = { args->fds[0], args->fds[1], args->fds[2] },
                .sandbox = strdup(args->sandbox), .docker_host = strdup(m->docker_host),
                .caller_name = strdup(args->caller_name ?: ""), .name = strdup(args->name ?: ""),
                .argv0 = strdup(args->argv0 ?: ""),
        };
        if (attach_of)
                snprintf(e->attach_of, sizeof e->attach_of, "%s", attach_of);
        args->fds[0] = args->fds[1] = args->fds[2] = -1;
        /* The slot the operation acquired is the object's now (an Attach session has none). */
        (void) manager_busy(m, BUSY_UID);
        exec_link_push(&m->execs, &e->link);
        if (!e->sandbox || !e->docker_host || !e->caller_name || !e->name || !e->argv0)
                r = -ENOMEM;
        else if ((r = exec_publish(e)) >= 0)
                r = exec_start_thread(e);
        if (r < 0) {
                /* The process runs already: it must not outlive the failure. */
                (void) submit(e, NULL, 0, SIGKILL, 0, 0);
                exec_free(e);
                return r;
        }
        if (attach_of)
                watch_hangups(e);
        if (ret_path)
                *ret_path = e->path;
        return 0;
}

int bus_exec_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path) {
        return exec_new(m, process, args, NULL, ret_path);
}

int exec_attach_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char *attach_of) {
        return exec_new(m, process, args, attach_of, NULL);
}

void bus_exec_shutdown_all(Manager *m) {
        /* Nothing the service started outlives it: each relay thread is woken, kills
         * its process and drains (all at once), then exec_free() joins it. An object
         * with a Kill or Resize in flight goes once the worker pool, freed next, is
         * done. */
        FOREACH_EXEC(e, m)
                if (e->thread_started)
                        (void) eventfd_write(e->wake_fd, 1);
        FOREACH_EXEC(e, m)
                exec_free(e);
}
