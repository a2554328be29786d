/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The exec objects of detached processes (docs/architecture.md, "Detached
 * processes"): no relay thread, no descriptor, no bus match, and they do not keep
 * the daemon from its idle exit. Each is polled every second (Manager's
 * detached_poll_usec: SBX_DETACHED_POLL_USEC, tests' shorter) over the sandbox's
 * kept channel (its ring file's header), with all of its sandbox's in one request
 * (detached-poll.c), until its process ended; it holds an exec
 * slot of its caller's until then. It goes when its output was read to the end after
 * that, when it is trimmed with the finished ones, or when its sandbox stopped; its
 * store row and directory go with it. A restarted daemon gives back the objects of
 * the rows whose sandbox still runs in the same container. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus-args.h"
#include "bus-error.h"
#include "bus-exec.h"
#include "bus-exec-internal.h"
#include "bus-read.h"
#include "log.h"
#include "naming.h"
#include "time-util.h"
#include "work.h"

/* Rows given back at a restart: the running ones are bounded by max_execs, the
 * finished ones by the trim. */
#define RESTORE_MAX (SBX_POLICY_MAX_EXECS_LIMIT + 256U)
/* Attach sessions of one process at once: each is a relay thread and a Docker exec. */
#define ATTACH_MAX 4U

typedef enum DetachJobKind {
        JOB_READ,
        JOB_FORGET,
        JOB_RESTORE,
        JOB_ATTACH,
} DetachJobKind;

typedef struct DetachJob {
        DetachJobKind kind;
        Manager *m;
        ExecObject *e;                  /* READ, ATTACH: counted in its n_jobs */
        sd_bus_message *call;           /* READ, ATTACH */
        char *name, *id;                /* a copy of the object's */
        uint64_t offset;
        SbxDetachState state;
        SbxDetachOutput output;
        SbxDetachedRow *rows;           /* RESTORE: the rows to give back, with users */
        char **users;
        SbxDetachState *states;         /* RESTORE: each row's process, as its ring says */
        size_t n_rows;
        int fds[3];                     /* ATTACH: the caller's, for the session */
        uid_t uid;                      /* ATTACH: who called */
        bool stream;                    /* ATTACH: a StreamOutput's (its output alone) */
        SbxDetachStream stream_options;
        SbxExecProcess *process;        /* ATTACH: the init's --attach, started */
        int r;
        SbxError error;
} DetachJob;

static void job_free(DetachJob *j) {
        sd_bus_message_unref(j->call);
        free(j->name);
        free(j->id);
        sbx_detach_output_done(&j->output);
        sbx_exec_process_free(j->process);
        for (size_t i = 0; i < 3; i++)
                safe_close(j->fds[i]);
        sbx_detached_rows_free(j->rows, j->n_rows);
        for (size_t i = 0; j->users && i < j->n_rows; i++)
                free(j->users[i]);
        free(j->users);
        free(j->states);
        sbx_error_free(&j->error);
        free(j);
}

/* The rows of earlier instances whose sandbox runs in the recorded container, each
 * with its "uid:gid"; the others' rows are deleted (their processes ended with the
 * container). */
static int restore_rows(DetachJob *j, SbxLifecycle *l) {
        SbxDetachedRow *rows = NULL;
        size_t n = 0, kept = 0;
        int r;

        if ((r = sbx_store_list_detached(l->store, RESTORE_MAX, &rows, &n, &j->error)) < 0)
                return r;
        j->users = calloc(n ?: 1, sizeof(char *));
        if (!j->users) {
                sbx_detached_rows_free(rows, n);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *sb = NULL;

                /* This instance's own (a start in flight, whose row comes first): its
                 * object is the start's to make, or nobody's when it failed. */
                if (rows[i].token && strncmp(rows[i].token, sbx_exec_instance_id(), SBX_EXEC_INSTANCE_LEN) == 0)
                        continue;
                r = sbx_store_get_sandbox(l->store, rows[i].sandbox, &sb, NULL);
                if (r > 0 && sb->state == SBX_SANDBOX_RUNNING && streq(sb->container_id, rows[i].container_id) &&
                    asprintf(&j->users[kept], "%u:%u", (unsigned) rows[i].owner, (unsigned) sb->owner_gid) >= 0) {
                        SbxDetachedRow tmp = rows[kept];

                        rows[kept++] = rows[i];
                        if (kept - 1 != i)
                                rows[i] = tmp;
                        continue;
                }
                if (r >= 0)
                        (void) sbx_store_delete_detached(l->store, rows[i].id, NULL);
        }
        j->rows = rows;
        for (size_t i = kept; i < n; i++)
                sbx_detached_row_done(&rows[i]);
        j->n_rows = kept;
        /* Which ended meanwhile: their objects come back ended, holding no slot. */
        j->states = calloc(kept ?: 1, sizeof(SbxDetachState));
        if (!j->states)
                return -ENOMEM;
        for (size_t i = 0; i < kept; i++)
                if (sbx_lifecycle_detach_poll(l, rows[i].sandbox, rows[i].id, &j->states[i], NULL) < 0)
                        j->states[i] = (SbxDetachState) {};     /* unknown: the polls tell */
        return 0;
}

/* A StreamOutput's offset is checked as ReadOutput checks it (one OUTPUT request):
 * past a stream's end is InvalidArgs naming offset, before any session starts. */
static int stream_check_offset(DetachJob *j, SbxLifecycle *l) {
        SbxDetachOutput o = {};
        int r;

        if (!j->stream || j->stream_options.offset == 0)
                return 0;
        r = sbx_lifecycle_detach_read(l, j->name, j->id, j->stream_options.offset, &o, &j->error);
        sbx_detach_output_done(&o);
        return r;
}

static void job_run(void *job, SbxLifecycle *l) {
        DetachJob *j = job;

        switch (j->kind) {
        case JOB_READ:
                j->r = sbx_lifecycle_detach_read(l, j->name, j->id, j->offset, &j->output, &j->error);
                break;
        case JOB_FORGET:
                (void) sbx_lifecycle_detach_forget(l, j->name, j->id, NULL);
                j->r = sbx_store_delete_detached(l->store, j->id, &j->error);
                if (j->r < 0)
                        log_warning("The store's row of detached exec %s could not be deleted: %s", j->id,
                                    j->error.message ?: strerror(-j->r));
                break;
        case JOB_RESTORE:
                j->r = restore_rows(j, l);
                break;
        case JOB_ATTACH:
                j->r = stream_check_offset(j, l);
                if (j->r >= 0)
                        j->r = sbx_lifecycle_detach_attach(l, j->name, j->id, j->stream ? &j->stream_options : NULL,
                                                           &j->process, &j->error);
                break;
        }
}

static void discard(ExecObject *e);

/* Its sandbox stopped or went (a paused one's processes are only frozen). */
static bool gone_with_sandbox(int r, bool paused, const SbxError *error) {
        return !paused && r < 0 && (sbx_error_is(error, SBX_ERROR_NOT_RUNNING) ||
                                    sbx_error_is(error, SBX_ERROR_NO_SUCH_SANDBOX));
}

static bool sandbox_gone(const DetachJob *j) {
        return gone_with_sandbox(j->r, j->output.paused, &j->error);
}

static void end(ExecObject *e, int status) {
        if (!e->running)
                return;
        e->exit_status = status;
        exec_ended(e);
}

static void detached_polled(ExecObject *e, int r, const SbxDetachState *st, const SbxError *error) {
        if (gone_with_sandbox(r, st->paused, error)) {
                end(e, 128 + 9);        /* killed with its sandbox */
                discard(e);
                return;
        }
        if (r < 0 || st->unknown)
                return;                 /* again at the next poll */
        e->unpolled = false;
        if (st->exited) {
                if (st->oom_killed && e->running)
                        log_warning("exec %s in sandbox '%s': killed, the sandbox ran out of memory (the kernel's "
                                    "OOM killer killed its supervisor)", e->id, e->sandbox);
                end(e, st->exit_status);
                if (st->gone)
                        discard(e);
                else
                        exec_trim_finished(e->m, e->caller);
        }
}

/* The last stderr of a process whose supervisor died with no end written (137):
 * what it left, then what happened to it (docs/api.md, "Detached processes"). */
static int append_stderr(sd_bus_message *reply, const SbxDetachOutput *o, bool last) {
        const char *note = !last || !o->lost ? NULL :
                o->oom_killed ? "\nxagent-sandboxd: killed (exit status 137): the sandbox ran out of memory (the "
                                "kernel's OOM killer killed the process's supervisor)\n"
                              : "\nxagent-sandboxd: killed (exit status 137): the process's supervisor was killed\n";
        _cleanup_free_ uint8_t *buf = NULL;
        size_t n;

        if (!note)
                return sd_bus_message_append_array(reply, 'y', o->err, o->err_size);
        n = strlen(note);
        if (!(buf = malloc(o->err_size + n)))
                return -ENOMEM;
        if (o->err_size > 0)
                memcpy(buf, o->err, o->err_size);
        memcpy(buf + o->err_size, note, n);
        return sd_bus_message_append_array(reply, 'y', buf, o->err_size + n);
}

static void read_done(DetachJob *j) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const SbxDetachOutput *o = &j->output;
        ExecObject *e = j->e;
        bool last = j->r >= 0 && !(o->running && e->running) && !o->more;
        int r;

        if (j->r < 0) {
                sbx_bus_error_from(&error, &j->error, j->r);
                r = sd_bus_reply_method_error(j->call, &error);
        } else if ((r = sd_bus_message_new_method_return(j->call, &reply)) >= 0 &&
                   (r = sd_bus_message_append_array(reply, 'y', o->out, o->out_size)) >= 0 &&
                   (r = append_stderr(reply, o, last)) >= 0 &&
                   (r = sd_bus_message_append(reply, "tb", o->next_offset, o->more || (o->running && e->running))) >= 0)
                r = sd_bus_send(NULL, reply, NULL);
        if (r < 0)
                log_warning_errno(r, "exec %s: the reply to ReadOutput could not be sent: %m", e->id);
        if (sandbox_gone(j)) {
                end(e, 128 + 9);
                discard(e);
        } else if (last) {
                /* It ended, and what it left was read to its end: the object goes. Also
                 * one whose supervisor died with it (a docker restart, the OOM killer),
                 * which wrote no end into its ring: the poll ended it (killed). */
                end(e, o->running ? e->exit_status : o->exit_status);
                discard(e);
        }
}

static void restored(Manager *m, DetachJob *j);

/* The init's --attach runs: its relay to the caller's fds is the session. */
static const char *attach_verb(const DetachJob *j) {
        return j->stream ? "exec-stream-output" : "exec-attach";
}

static void attach_done(DetachJob *j) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        ExecObject *e = j->e;
        int r = j->r;

        if (r >= 0)
                r = exec_attach_new(e->m, TAKE_PTR(j->process), &(ExecStartArgs) {
                        .sandbox = e->sandbox, .name = e->name, .argv0 = e->argv0, .owner = e->owner,
                        .caller = j->uid, .caller_name = sd_bus_message_get_sender(j->call),
                        .fds = { TAKE_FD(j->fds[0]), TAKE_FD(j->fds[1]), TAKE_FD(j->fds[2]) } }, e->id);
        else if (e->n_attached > 0)
                e->n_attached--;        /* no session was made */
        if (r < 0) {
                sbx_bus_error_from(&error, &j->error, r);
                r = sd_bus_reply_method_error(j->call, &error);
        } else
                r = sd_bus_reply_method_return(j->call, NULL);
        if (r < 0)
                log_warning_errno(r, "exec %s: the reply to %s could not be sent: %m", e->id,
                                  j->stream ? "StreamOutput" : "Attach");
        exec_audit(e, j->uid, attach_verb(j), &error);
}

static void job_done(void *job) {
        DetachJob *j = job;
        ExecObject *e = j->e;

        if (e && --e->n_jobs == 0 && e->doomed) {
                e->polling = false;
                if (j->call)
                        (void) sd_bus_reply_method_errorf(j->call, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                                          "The exec object went away");
                exec_free(e);
        } else if (j->kind == JOB_READ)
                read_done(j);
        else if (j->kind == JOB_RESTORE)
                restored(j->m, j);
        else if (j->kind == JOB_ATTACH)
                attach_done(j);
        job_free(j);
}

/* It never ran: a caller waiting is told why; a poll comes again at the next tick. */
static void job_refused(void *job, int r, const SbxError *e) {
        DetachJob *j = job;

        j->r = r < 0 ? r : -EIO;
        if (e && e->message)
                (void) sbx_error_set(&j->error, e->kind, "%s", e->message);
        if (j->kind == JOB_ATTACH && j->e && j->e->n_attached > 0)
                j->e->n_attached--;     /* no session was made */
        if (j->call) {
                _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

                sbx_bus_error_from(&error, &j->error, j->r);
                if (sd_bus_reply_method_error(j->call, &error) < 0)
                        log_warning("exec %s: the refusal of %s could not be sent", j->id ?: "-",
                                    sd_bus_message_get_member(j->call) ?: "?");
                if (j->kind == JOB_ATTACH)
                        exec_audit(j->e, j->uid, attach_verb(j), &error);
        }
        if (j->kind == JOB_RESTORE)
                j->m->execs.detached_restored = false;
        if (j->e && --j->e->n_jobs == 0 && j->e->doomed)
                exec_free(j->e);
        job_free(j);
}

/* What reads a sandbox's channel runs on the read workers, at most
 * SBX_READ_WORKERS_PER_USER of them for one user (work.h): a stuck channel holds up
 * its owner alone. A ReadOutput counts in its caller's read share for as long as it
 * runs; an Attach's start in its operations. */
static const WorkKind job_kinds[] = {
        [JOB_READ]    = { .name = "read-output", .auth = WORK_AUTH_CALLER, .pool = WORK_POOL_READ,
                          .share = WORK_SHARE_USER, .cancellable = true,
                          .run = job_run, .done = job_done, .refused = job_refused },
        [JOB_FORGET]  = { .name = "detached-forget", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE,
                          .share = WORK_SHARE_NONE, .run = job_run, .done = job_done, .refused = job_refused },
        [JOB_RESTORE] = { .name = "detached-restore", .auth = WORK_AUTH_INTERNAL, .pool = WORK_POOL_CHANGE,
                          .share = WORK_SHARE_NONE, .run = job_run, .done = job_done, .refused = job_refused },
        [JOB_ATTACH]  = { .name = "attach", .auth = WORK_AUTH_CALLER, .pool = WORK_POOL_CHANGE,
                          .share = WORK_SHARE_USER, .cancellable = true,
                          .run = job_run, .done = job_done, .refused = job_refused },
};

/* fds (ATTACH's; else NULL) are taken over, also on failure; stream: a StreamOutput's
 * (ATTACH; else NULL). uid: whose work it is (a poll's: the sandbox's owner, whose
 * channel it reads). Handed over: a refusal is answered by job_refused(). */
static int submit_with(Manager *m, ExecObject *e, DetachJobKind kind, const char *name, const char *id,
                       sd_bus_message *call, uint64_t offset, int *fds, uid_t uid, const SbxDetachStream *stream) {
        DetachJob *j = calloc(1, sizeof(DetachJob));

        if (!j) {
                for (size_t i = 0; fds && i < 3; i++)
                        fds[i] = safe_close(fds[i]);
                return -ENOMEM;
        }
        *j = (DetachJob) { .kind = kind, .m = m, .e = e, .name = name ? strdup(name) : NULL,
                           .id = id ? strdup(id) : NULL, .call = sd_bus_message_ref(call), .offset = offset,
                           .fds = { -1, -1, -1 }, .uid = uid, .stream = stream != NULL };
        if (stream)
                j->stream_options = *stream;
        for (size_t i = 0; fds && i < 3; i++)
                j->fds[i] = TAKE_FD(fds[i]);
        if ((name && !j->name) || (id && !j->id)) {
                job_free(j);
                return -ENOMEM;
        }
        if (e)
                e->n_jobs++;
        (void) work_submit(m, &job_kinds[kind], uid, j);
        return 0;
}

static int submit(Manager *m, ExecObject *e, DetachJobKind kind, const char *name, const char *id,
                  sd_bus_message *call, uint64_t offset, uid_t uid) {
        return submit_with(m, e, kind, name, id, call, offset, NULL, uid, NULL);
}

/* Its sandbox paused (Docker's freezer, by the service or behind its back): the
 * ring file can only be read over the channel, which a frozen sandbox does not
 * answer. */
static bool sandbox_paused(const ExecObject *e) {
        const SandboxEntry *s = registry_get(&e->m->registry, e->name);

        return s && s->state == SBX_STATE_PAUSED;
}

static void discard(ExecObject *e) {
        if (e->discarded)
                return;
        e->discarded = true;
        if (submit(e->m, NULL, JOB_FORGET, e->name, e->id, NULL, 0, 0) < 0)
                log_warning("exec %s: its row and directory are left for the next restart", e->id);
        exec_free(e);
}

static void detached_free(ExecObject *e) {
        detached_poll_leave(e);
}

static int read_output(sd_bus_message *msg, ExecObject *e, sd_bus_error *error) {
        uint64_t offset;
        uid_t uid;
        int r;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = sd_bus_message_read(msg, "t", &offset)) < 0)
                return r;
        if (uid != 0 && uid != e->caller && uid != e->owner)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
        if (e->discarded)
                return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "The exec object is going away");
        if (sandbox_paused(e))
                return sd_bus_error_setf(error, SBX_BUS_ERROR_PREFIX "NotRunning",
                                         "Sandbox '%s' is paused: its processes are frozen and their output is "
                                         "read after ResumeSandbox", e->sandbox);
        r = submit(e->m, e, JOB_READ, e->name, e->id, msg, offset, uid);
        if (r < 0)
                return r;
        registry_touch(&e->m->registry, e->name, manager_now_us(e->m));   /* reading a process's output is a use */
        return 1;
}

static int attach_refused(ExecObject *e, uid_t uid, int r, sd_bus_error *error) {
        if (!sd_bus_error_is_set(error))
                r = sd_bus_error_set_errno(error, r);
        exec_audit(e, uid, "exec-attach", error);
        return r;
}

/* Attach: the checks Kill has, a bounded number at once; the session is started on
 * a worker (a Docker exec) and the call answered once it runs (attach_done()). */
static int attach(sd_bus_message *msg, ExecObject *e, sd_bus_error *error) {
        SbxError err = SBX_ERROR_NULL;
        int fds[3] = { -1, -1, -1 }, r;
        uid_t uid;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if ((r = exec_check_caller(e, uid, error)) < 0)
                return attach_refused(e, uid, r, error);
        if (e->discarded)
                return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "The exec object is going away");
        if (e->n_attached >= ATTACH_MAX)
                return attach_refused(e, uid, sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                      "Attach: %u sessions are attached to this process already (at most %u "
                                      "at once)", e->n_attached, ATTACH_MAX), error);
        if ((r = bus_read_fds(msg, fds, &err)) < 0) {
                for (size_t i = 0; i < 3; i++)
                        safe_close(fds[i]);
                r = sbx_bus_error_from(error, &err, r);
                sbx_error_free(&err);
                return attach_refused(e, uid, r, error);
        }
        /* Its start counts in the caller's operations; the session holds a relay
         * thread, not the caller's share. */
        e->n_attached++;
        r = submit_with(e->m, e, JOB_ATTACH, e->name, e->id, msg, 0, fds, uid, NULL);
        if (r < 0)
                e->n_attached--;
        return r < 0 ? r : 1;
}

/* StreamOutput(h stdout, h stderr, a{sv} options): ReadOutput's sibling (its
 * callers, its offset), the output written to the descriptors by a session as
 * Attach's, without input (docs/api.md). Options: offset t, follow b (default true). */
static int stream_option(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        SbxDetachStream *o = userdata;

        if (streq(key, "offset"))
                return sbx_bus_read_u64(m, key, &o->offset, error);
        if (streq(key, "follow"))
                return sbx_bus_read_bool(m, key, &o->follow, error);
        return sbx_bus_unknown_option(m, userdata, key, error);
}

static int read_stream_options(sd_bus_message *msg, SbxDetachStream *ret, SbxError *err) {
        static const char *const keys[] = { "offset", "follow" };

        *ret = (SbxDetachStream) { .follow = true };
        return sbx_bus_read_dict(msg, keys, ELEMENTSOF(keys), stream_option, ret, err);
}

static int stream_output(sd_bus_message *msg, ExecObject *e, sd_bus_error *error) {
        static const char *const fields[2] = { "stdout", "stderr" };
        _cleanup_(sbx_error_free) SbxError err = SBX_ERROR_NULL;
        SbxDetachStream options;
        int fds[3] = { -1, -1, -1 }, in[2], r = 0;
        uid_t uid;

        if (caller_cache_uid(&e->m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if (uid != 0 && uid != e->caller && uid != e->owner) {
                r = sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "This exec was started by another user");
                exec_audit(e, uid, "exec-stream-output", error);
                return r;
        }
        if (e->discarded)
                return sd_bus_error_set(error, SD_BUS_ERROR_UNKNOWN_OBJECT, "The exec object is going away");
        if (sandbox_paused(e))
                return sd_bus_error_setf(error, SBX_BUS_ERROR_PREFIX "NotRunning", "Sandbox '%s' is paused: its "
                                         "processes are frozen and their output is read after ResumeSandbox",
                                         e->sandbox);
        if (e->n_attached >= ATTACH_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED, "StreamOutput: %u sessions are "
                                         "attached to this process already (at most %u at once)", e->n_attached,
                                         ATTACH_MAX);
        if (sd_bus_message_read(msg, "hh", &in[0], &in[1]) < 0)
                r = sbx_error_set(&err, SBX_ERROR_INVALID_ARGS, "stdout, stderr: malformed");
        for (size_t i = 0; r >= 0 && i < 2; i++)
                r = bus_take_caller_fd(in[i], fields[i], &fds[1 + i], &err);
        if (r >= 0)
                r = read_stream_options(msg, &options, &err);
        if (r < 0) {
                for (size_t i = 0; i < 3; i++)
                        safe_close(fds[i]);
                return sbx_bus_error_from(error, &err, r);
        }
        e->n_attached++;
        r = submit_with(e->m, e, JOB_ATTACH, e->name, e->id, msg, 0, fds, uid, &options);
        if (r < 0)
                e->n_attached--;
        if (r >= 0)
                registry_touch(&e->m->registry, e->name, manager_now_us(e->m));
        return r < 0 ? r : 1;
}

static const ExecOps detached_ops = {
        .read_output = read_output,
        .stream_output = stream_output,
        .attach = attach,
        .discard = discard,
        .polled = detached_polled,
        .free = detached_free,
};

static ExecObject *detached_object(Manager *m, const char *id, const char *sandbox, const char *name,
                                   const char *argv0, uid_t owner, uid_t caller, SbxExecProcess *process) {
        ExecObject *e = calloc(1, sizeof(ExecObject));

        if (!e) {
                exec_slots_release(&m->execs, caller, 0);       /* the slot and the process were the object's */
                sbx_exec_process_free(process);
                return NULL;
        }
        *e = (ExecObject) {
                .m = m, .process = process, .owner = owner, .caller = caller, .done_fd = -1, .wake_fd = -1,
                .fds = { -1, -1, -1 }, .running = true, .detached = true, .ops = &detached_ops, .sandbox = strdup(sandbox),
                .name = strdup(name), .argv0 = strdup(argv0), .caller_name = strdup(""),
        };
        memcpy(e->id, id, SBX_DETACH_ID_LEN);
        exec_link_push(&m->execs, &e->link);
        if (!e->sandbox || !e->name || !e->argv0 || !e->caller_name ||
            asprintf(&e->path, SBX_BUS_EXEC_PREFIX "/%s", e->id) < 0 || exec_register(m) < 0 ||
            detached_poll_join(e) < 0) {
                exec_free(e);           /* the slot goes with it */
                return NULL;
        }
        return e;
}

static int detached_new(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path) {
        ExecObject *e;

        for (size_t i = 0; i < 3; i++)
                args->fds[i] = safe_close(args->fds[i]);        /* its output is kept in the sandbox */
        e = detached_object(m, process->detach_id, args->sandbox, args->name, args->argv0 ?: "", args->owner,
                            args->caller, process);
        if (!e)
                return -ENOMEM;         /* the process runs on: its row gives it back at the next start */
        *ret_path = e->path;
        return 0;
}

static ExecObject *find(Manager *m, const char *id) {
        FOREACH_EXEC(e, m)
                if (streq(e->id, id))
                        return e;
        return NULL;
}

/* The object of a stored row (its "uid:gid" taken), as st says its process is (NULL:
 * not known yet, polled first). One there already stays as it is. */
static void give_back(Manager *m, const SbxDetachedRow *row, char **user, const SbxDetachState *st) {
        SbxExecProcess *p;
        ExecObject *e;
        const char *plain;

        if (strlen(row->id) != SBX_DETACH_ID_LEN || strlen(row->token) != SBX_EXEC_TOKEN_LEN || find(m, row->id) ||
            !(p = calloc(1, sizeof(SbxExecProcess))))
                return;
        p->relay = SBX_RELAY_INIT;
        memcpy(p->token, row->token, SBX_EXEC_TOKEN_LEN + 1);
        memcpy(p->detach_id, row->id, SBX_DETACH_ID_LEN + 1);
        p->container_id = strdup(row->container_id);
        p->user = TAKE_PTR(*user);
        if (!p->container_id || !p->user) {
                sbx_exec_process_free(p);
                return;
        }
        (void) sbx_name_unqualify(row->sandbox, &plain);
        exec_slots_force(&m->execs, row->caller);
        if (!(e = detached_object(m, row->id, plain, row->sandbox, row->argv0, row->owner, row->caller, p)))
                return;
        e->unpolled = !st;
        if (e->unpolled)
                detached_poll_soon(e);  /* polled first thing */
        if (st && st->exited && !st->gone) {
                e->running = false;
                e->exit_status = st->exit_status;
                exec_slots_release(&m->execs, row->caller, 0);
        }
        log_info("Detached exec %s in sandbox '%s' is back%s", row->id, row->sandbox,
                 !st ? " (as the store has it; polled next)" : e->running ? "" : " (ended)");
}

static void restored(Manager *m, DetachJob *j) {
        if (j->r < 0) {
                log_warning("The detached processes of the store could not be given back (at the next "
                            "reconciliation): %s", j->error.message ?: strerror(-j->r));
                m->execs.detached_restored = false;
                return;
        }
        for (size_t i = 0; i < j->n_rows; i++)
                give_back(m, &j->rows[i], &j->users[i], &j->states[i]);
}

/* The start-up's look at the store: before the daemon answers anything, the objects
 * of the rows whose sandbox's row says running in the same container are back —
 * never a false absence (ListExecs' [] and ReadOutput's UnknownObject are what an
 * ended and read process gets). How each process is is not known before its first
 * poll: until then ListExecs waits for it (defer_list()). The restore after the
 * sweep then settles the other rows. */
void bus_detached_load(Manager *m, SbxStore *store) {
        SbxDetachedRow *rows = NULL;
        size_t n = 0;

        if (sbx_store_list_detached(store, RESTORE_MAX, &rows, &n, NULL) < 0)
                return;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *sb = NULL;
                _cleanup_free_ char *user = NULL;

                if (sbx_store_get_sandbox(store, rows[i].sandbox, &sb, NULL) > 0 && sb->state == SBX_SANDBOX_RUNNING &&
                    streq(sb->container_id, rows[i].container_id) &&
                    asprintf(&user, "%u:%u", (unsigned) rows[i].owner, (unsigned) sb->owner_gid) >= 0)
                        give_back(m, &rows[i], &user, NULL);
        }
        sbx_detached_rows_free(rows, n);
}

void bus_detached_restore(Manager *m) {
        if (m->execs.detached_restored)
                return;
        m->execs.detached_restored = true;
        if (submit(m, NULL, JOB_RESTORE, NULL, NULL, NULL, 0, 0) < 0)
                m->execs.detached_restored = false;
}

/* A ListExecs right after a start, while a process given back from the store is not
 * polled yet: answered once it is (a poll takes a channel's round trip), at most
 * DEFER_MAX_USEC later; then, with it still unknown (Docker slow or gone), a typed
 * transient error — never a list that leaves it out. */
#define DEFER_STEP_USEC (50U * 1000U)
#define DEFER_MAX_USEC (5U * 1000000U)

typedef struct DeferredList {
        Manager *m;
        sd_bus_message *call;
        char *name;
        bool has_owner;
        uid_t owner;
        uint64_t deadline_us;
} DeferredList;

static const char *unpolled_in(Manager *m, const char *name) {
        FOREACH_EXEC(e, m)
                if (e->unpolled && streq_ptr(e->name, name) && !e->discarded && !sandbox_paused(e))
                        return e->sandbox;
        return NULL;
}

static void deferred_free(void *userdata) {
        DeferredList *d = userdata;

        sd_bus_message_unref(d->call);
        free(d->name);
        free(d);
}

static int on_deferred(sd_event_source *s, uint64_t usec, void *userdata) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        DeferredList *d = userdata;
        const char *shown = unpolled_in(d->m, d->name);
        int r;

        if (shown && sbx_now_monotonic_us() < d->deadline_us) {
                (void) sd_event_source_set_time_relative(s, DEFER_STEP_USEC);
                return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        }
        if (shown)
                r = sd_bus_error_setf(&error, SBX_BUS_ERROR_PREFIX "BackendUnavailable",
                                      "Whether the detached processes of sandbox '%s' still run is not known yet: "
                                      "the service started just now and Docker has not told (ask again)", shown);
        else
                r = bus_exec_list(d->m, d->call, d->name, d->has_owner ? &d->owner : NULL, &error);
        if (r < 0 && (r = sd_bus_reply_method_error(d->call, &error)) < 0)
                log_warning_errno(r, "The reply to ListExecs could not be sent: %m");
        sd_event_source_disable_unref(s);     /* its only reference: d goes with it */
        return 0;
}

static int defer_list(Manager *m, sd_bus_message *msg, const char *name, const uid_t *owner) {
        DeferredList *d = calloc(1, sizeof(DeferredList));
        sd_event_source *s = NULL;
        int r;

        if (!d || !(d->name = strdup(name))) {
                free(d);
                return -ENOMEM;
        }
        *d = (DeferredList) { .m = m, .call = sd_bus_message_ref(msg), .name = d->name, .has_owner = !!owner,
                              .owner = owner ? *owner : 0, .deadline_us = sbx_now_monotonic_us() + DEFER_MAX_USEC };
        if ((r = sd_event_add_time_relative(m->event, &s, CLOCK_MONOTONIC, DEFER_STEP_USEC, 0, on_deferred, d)) < 0) {
                deferred_free(d);
                return r;
        }
        if ((r = sd_event_source_set_destroy_callback(s, deferred_free)) < 0) {
                sd_event_source_disable_unref(s);
                deferred_free(d);
                return r;
        }
        return 1;                       /* s is its own: on_deferred() ends it */
}

int bus_exec_list(Manager *m, sd_bus_message *msg, const char *name, const uid_t *owner, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        uid_t uid;
        int r;

        if (caller_cache_uid(&m->callers, msg, &uid) < 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED, "Cannot tell who is calling");
        if (owner && uid != 0 && uid != *owner)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "ListExecs: the sandbox is another user's; only its owner and root list it");
        if (unpolled_in(m, name))
                return defer_list(m, msg, name, owner);
        if ((r = sd_bus_message_new_method_return(msg, &reply)) < 0 ||
            (r = sd_bus_message_open_container(reply, 'a', "(osbi)")) < 0)
                return r;
        FOREACH_EXEC(e, m) {
                if (!streq_ptr(e->name, name) || e->discarded || e->attach_of[0] || (uid != 0 && uid != e->caller && uid != e->owner))
                        continue;
                if ((r = sd_bus_message_append(reply, "(osbi)", e->path, e->argv0 ?: "", e->running,
                                               (int32_t) (e->running ? -1 : e->exit_status))) < 0)
                        return r;
        }
        if ((r = sd_bus_message_close_container(reply)) < 0)
                return r;
        return sd_bus_send(NULL, reply, NULL);
}

int bus_exec_publish(Manager *m, SbxExecProcess *process, ExecStartArgs *args, const char **ret_path) {
        if (process && process->detach_id[0])
                return detached_new(m, process, args, ret_path);
        return bus_exec_new(m, process, args, ret_path);
}
