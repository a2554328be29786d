/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>

#include "audit.h"
#include "bus-error.h"
#include "bus-exec.h"
#include "bus-polkit.h"
#include "bus-sandbox.h"
#include "fingerprint.h"
#include "operation.h"
#include "owner-info.h"
#include "verdict.h"

static const struct {
        const char *name;
        const char *own_action;         /* for the caller's own objects; others' need manage-others */
        bool by_name;                   /* acts on an existing sandbox named in the call */
        bool changes;                   /* a state change: audited */
        const char *others_action;      /* for another uid's objects (NULL: manage-others) */
} verbs[_VERB_MAX] = {
        [VERB_CREATE]          = { "create",          SBX_POLKIT_ACTION_CREATE,  false, true  },
        [VERB_GET]             = { "get",             SBX_POLKIT_ACTION_INSPECT, true,  false },
        [VERB_INSPECT]         = { "inspect",         SBX_POLKIT_ACTION_INSPECT, true,  false },
        [VERB_VERIFY]          = { "verify",          SBX_POLKIT_ACTION_INSPECT, true,  false },
        [VERB_START]           = { "start",           SBX_POLKIT_ACTION_MANAGE,  true,  true  },
        [VERB_STOP]            = { "stop",            SBX_POLKIT_ACTION_MANAGE,  true,  true  },
        [VERB_DELETE]          = { "delete",          SBX_POLKIT_ACTION_MANAGE,  true,  true  },
        [VERB_SNAPSHOT]        = { "snapshot",        SBX_POLKIT_ACTION_MANAGE,  true,  true  },
        [VERB_DELETE_SNAPSHOT] = { "delete-snapshot", SBX_POLKIT_ACTION_MANAGE,  false, true  },
        [VERB_LIST]            = { "list",            SBX_POLKIT_ACTION_INSPECT, false, false },
        [VERB_LIST_SNAPSHOTS]  = { "list-snapshots",  SBX_POLKIT_ACTION_INSPECT, false, false },
        [VERB_EXEC]            = { "exec",            SBX_POLKIT_ACTION_EXEC,    true,  true,  SBX_POLKIT_ACTION_EXEC_OTHERS },
        [VERB_START_EXEC]      = { "start-exec",      SBX_POLKIT_ACTION_EXEC,    true,  true,  SBX_POLKIT_ACTION_EXEC_OTHERS },
        [VERB_USAGE]           = { "usage",           SBX_POLKIT_ACTION_EXEC,    true,  false, SBX_POLKIT_ACTION_EXEC_OTHERS },
        [VERB_COPY_TO]         = { "copy-to",         SBX_POLKIT_ACTION_EXEC,    true,  true,  SBX_POLKIT_ACTION_EXEC_OTHERS },
        [VERB_COPY_FROM]       = { "copy-from",       SBX_POLKIT_ACTION_EXEC,    true,  true,  SBX_POLKIT_ACTION_EXEC_OTHERS },
};

/* What runs a process in the sandbox, holding an exec slot. */
static bool is_exec(Verb v) {
        return v == VERB_EXEC || v == VERB_START_EXEC || v == VERB_COPY_TO || v == VERB_COPY_FROM;
}

static bool takes_fds(Verb v) {
        return v == VERB_START_EXEC || v == VERB_COPY_TO || v == VERB_COPY_FROM;
}

typedef struct Operation {
        Manager *m;
        sd_bus_message *call;
        Verb verb;
        char *name;
        char *snapshot_id;
        SbxSpec *spec;
        unsigned timeout_s;
        uid_t uid;                      /* the caller */
        char **argv;
        char *guest_path;
        SbxExecOptions exec;
        int fds[3];
        bool exec_slot;                 /* holds one of the policy's exec slots */

        bool target_known;              /* whose object: known once looked up */
        bool target_valid;
        uid_t target;
        bool all;                       /* lists: everyone's objects */
        bool lookup;                    /* the worker job is the look-up, not the operation */
        const char *action;             /* the polkit action asked about */
        sd_bus_slot *polkit_slot;

        /* filled in by the worker */
        int r;
        SbxError error;
        SbxSandbox *sandbox;
        SbxSandbox **list;
        size_t n_list;
        SbxSnapshotRow **snapshots;
        char *image_id;
        SbxVerdict verdict;
        unsigned fields;
        int changed;
        SbxExecResult exec_result;
        SbxExecProcess *exec_process;
        SbxUsage usage;
} Operation;

static void strv_free(char **v) {
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

static Operation *operation_free(Operation *o) {
        if (!o)
                return NULL;
        manager_idle(o->m);
        sd_bus_message_unref(o->call);
        sd_bus_slot_unref(o->polkit_slot);
        free(o->name);
        free(o->snapshot_id);
        sbx_spec_free(o->spec);
        sbx_error_free(&o->error);
        sbx_sandbox_free(o->sandbox);
        sbx_sandbox_list_free(o->list, o->n_list);
        sbx_snapshot_row_list_free(o->snapshots);
        free(o->image_id);
        strv_free(o->argv);
        free(o->guest_path);
        sbx_exec_options_done(&o->exec);
        for (size_t i = 0; i < 3; i++)
                safe_close(o->fds[i]);
        sbx_exec_result_done(&o->exec_result);
        sbx_exec_process_free(o->exec_process);
        if (o->exec_slot)
                manager_exec_release(o->m, o->uid);
        free(o);
        return NULL;
}

int bus_caller_uid(sd_bus_message *m, uid_t *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uint64_t augmented;
        int r;

        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        /* Only what the bus itself vouches for: a value read from /proc after the
         * fact could belong to another process by now. */
        augmented = sd_bus_creds_get_augmented_mask(creds);
        if (augmented & SD_BUS_CREDS_EUID)
                return -EPERM;
        return sd_bus_creds_get_euid(creds, ret);
}

static const char *target_text(const Operation *o) {
        return o->name ?: o->snapshot_id ?: "-";
}

static void audit(const Operation *o, const char *outcome, const char *reason) {
        char owner[32];

        if (o->target_known && o->target_valid)
                snprintf(owner, sizeof owner, "%u", (unsigned) o->target);
        audit_record(&(AuditRecord) {
                .uid = o->uid,
                .verb = verbs[o->verb].name,
                .target = target_text(o),
                .owner = o->target_known && o->target_valid ? owner : NULL,
                .outcome = outcome,
                .reason = reason,
        });
}

static void reply_error(Operation *o, int r, const SbxError *e) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        sbx_bus_error_from(&error, e, r);
        if (verbs[o->verb].changes || sbx_error_is_set(e))
                audit(o, error.name, error.message);
        (void) sd_bus_reply_method_error(o->call, &error);
        operation_free(o);
}

int operation_refuse(sd_bus_message *msg, Verb verb, const char *target, const SbxError *e, int r,
                     sd_bus_error *ret_error) {
        uid_t uid;

        r = sbx_bus_error_from(ret_error, e, r);
        if (verbs[verb].changes && bus_caller_uid(msg, &uid) >= 0)
                audit_record(&(AuditRecord) {
                        .uid = uid,
                        .verb = verbs[verb].name,
                        .target = target ?: "-",
                        .outcome = ret_error->name,
                        .reason = ret_error->message,
                });
        return r;
}

/* Worker side ------------------------------------------------------------- */

static int run_create(Operation *o, SbxLifecycle *l) {
        SbxOwnerInfo info;
        int r = sbx_owner_info_lookup(o->uid, &info, &o->error);

        if (r < 0)
                return r;
        return sbx_lifecycle_create(l, o->name, o->spec, &info.owner, &o->sandbox, &o->error);
}

static int run_lookup(Operation *o, SbxLifecycle *l) {
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *row = NULL;
        int r;

        if (o->verb != VERB_DELETE_SNAPSHOT)
                return sbx_lifecycle_inspect(l, o->name, &o->sandbox, &o->error);
        r = sbx_store_get_snapshot(l->store, o->snapshot_id, &row, &o->error);
        if (r > 0) {
                o->target_valid = true;
                o->target = row->owner_uid;
        }
        return r;
}

static SbxExecRequest exec_request(Operation *o) {
        return (SbxExecRequest) {
                .argv = o->argv, .env = o->exec.env, .working_dir = o->exec.working_dir, .tty = o->exec.tty,
                .rows = o->exec.rows, .cols = o->exec.cols,
        };
}

/* Processes run as the sandbox's owner: a sandbox nobody owns runs nothing. */
static int run_exec(Operation *o, SbxLifecycle *l) {
        SbxExecRequest req = exec_request(o);

        if (!o->target_valid)
                return sbx_error_set(&o->error, SBX_ERROR_ACCESS_DENIED,
                                     "Sandbox '%s' has no valid owner label; nothing can run in it", o->name);
        if (o->verb == VERB_START_EXEC)
                return sbx_lifecycle_exec_start(l, o->name, o->target, &req, &o->exec_process, &o->error);
        return sbx_lifecycle_exec_capture(l, o->name, o->target, &req, o->exec.stdin_data, o->exec.stdin_size,
                                          o->exec.timeout_s, o->exec.output_limit, &o->exec_result, &o->error);
}

static int run_copy(Operation *o, SbxLifecycle *l) {
        if (!o->target_valid)
                return sbx_error_set(&o->error, SBX_ERROR_ACCESS_DENIED,
                                     "Sandbox '%s' has no valid owner label; nothing can run in it", o->name);
        if (o->verb == VERB_COPY_TO)
                return sbx_lifecycle_copy_to(l, o->name, o->target, o->guest_path, o->fds[0], &o->error);
        return sbx_lifecycle_copy_from(l, o->name, o->target, o->guest_path, o->fds[0], &o->error);
}

static int run_operation(Operation *o, SbxLifecycle *l) {
        uid_t owner = o->target_valid ? o->target : SBX_ANY_OWNER;

        switch (o->verb) {
        case VERB_CREATE:
                return run_create(o, l);
        case VERB_INSPECT:
                return sbx_lifecycle_inspect(l, o->name, &o->sandbox, &o->error);
        case VERB_VERIFY:
                return sbx_lifecycle_verify(l, o->name, o->spec, &o->verdict, &o->fields, &o->error);
        case VERB_START:
                return sbx_lifecycle_start(l, o->name, owner, &o->error);
        case VERB_STOP:
                return sbx_lifecycle_stop(l, o->name, owner, o->timeout_s, &o->error);
        case VERB_DELETE:
                return sbx_lifecycle_delete(l, o->name, owner, &o->error);
        case VERB_SNAPSHOT:
                return sbx_lifecycle_snapshot(l, o->name, owner, o->snapshot_id, o->uid, &o->image_id, &o->error);
        case VERB_DELETE_SNAPSHOT:
                return sbx_lifecycle_delete_snapshot(l, o->snapshot_id, owner, &o->error);
        case VERB_LIST:
                return sbx_lifecycle_list(l, &o->list, &o->n_list, &o->error);
        case VERB_EXEC:
        case VERB_START_EXEC:
                return run_exec(o, l);
        case VERB_USAGE:
                return sbx_lifecycle_usage(l, o->name, owner, &o->usage, &o->error);
        case VERB_COPY_TO:
        case VERB_COPY_FROM:
                return run_copy(o, l);
        case VERB_LIST_SNAPSHOTS:
                return sbx_store_list_snapshots(l->store, o->all ? SBX_STORE_ANY_OWNER : o->uid, &o->snapshots,
                                                &o->error);
        default:
                return -EINVAL;
        }
}

static void job_run(void *job, void *ctx) {
        Operation *o = job;
        SbxLifecycle *l = ctx;

        if (!l)
                o->r = sbx_error_set(&o->error, SBX_ERROR_IO, "The worker could not open the store or Docker client");
        else
                o->r = o->lookup ? run_lookup(o, l) : run_operation(o, l);
}

/* Main thread ------------------------------------------------------------- */

static void job_done(void *job);
static void authorize(Operation *o);

static void submit(Operation *o, bool lookup) {
        SbxError e = SBX_ERROR_NULL;
        int r;

        o->lookup = lookup;
        r = sbx_worker_pool_submit(o->m->pool, job_run, job_done, o);
        if (r == -EBUSY)
                r = sbx_error_set(&e, SBX_ERROR_LIMITS_EXCEEDED, "Too many operations in progress; try again later");
        if (r < 0) {
                reply_error(o, r, &e);
                sbx_error_free(&e);
        }
}

static int append_sandbox_list(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssuso)");

        for (size_t i = 0; r >= 0 && i < o->n_list; i++) {
                const SbxSandbox *s = o->list[i];
                const SandboxEntry *e = manager_get_sandbox(o->m, s->name);

                if (!e || !(o->all || (s->owner_valid && s->owner == o->uid)))
                        continue;
                r = sd_bus_message_append(reply, "(ssuso)", s->name, sbx_state_to_string(s->state), (uint32_t) s->owner,
                                          sbx_verdict_to_string(s->verdict), e->path);
        }
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int append_snapshot_list(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(sssut)");

        for (SbxSnapshotRow **s = o->snapshots; r >= 0 && s && *s; s++)
                r = sd_bus_message_append(reply, "(sssut)", (*s)->id, (*s)->source_sandbox, (*s)->image_id,
                                          (uint32_t) (*s)->owner_uid, (uint64_t) (*s)->created_us);
        return r < 0 ? r : sd_bus_message_close_container(reply);
}

static int append_fields(sd_bus_message *reply, unsigned fields) {
        const char *names[SBX_SPEC_FIELD_COUNT + 1];

        sbx_spec_fields_to_names(fields, names);
        return sd_bus_message_append_strv(reply, (char **) names);
}

static int append_exec_result(sd_bus_message *reply, const SbxExecResult *x) {
        int r = sd_bus_message_append(reply, "i", (int32_t) x->exit_status);

        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->out ?: "", x->out_size);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->err ?: "", x->err_size);
        return r < 0 ? r : sd_bus_message_append(reply, "b", x->truncated);
}

/* The exec object takes over the process, the descriptors and the slot. */
static int publish_exec(Operation *o, sd_bus_message *reply) {
        const char *path;
        int r;

        r = bus_exec_new(o->m, TAKE_PTR(o->exec_process), &(ExecStartArgs) {
                .sandbox = o->name, .owner = o->target, .caller = o->uid,
                .caller_name = sd_bus_message_get_sender(o->call), .timeout_s = o->exec.timeout_s,
                .fds = { TAKE_FD(o->fds[0]), TAKE_FD(o->fds[1]), TAKE_FD(o->fds[2]) },
        }, &path);
        o->exec_slot = false;
        if (r < 0)
                return r;
        return sd_bus_message_append(reply, "o", path);
}

/* The registry follows what the worker saw; then the reply. */
static int build_reply(Operation *o, sd_bus_message **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        const SandboxEntry *e;
        int r;

        r = sd_bus_message_new_method_return(o->call, &reply);
        if (r < 0)
                return r;

        switch (o->verb) {
        case VERB_CREATE:
                if ((r = manager_put_sandbox(o->m, o->sandbox)) < 0)
                        return r;
                e = manager_get_sandbox(o->m, o->name);
                r = sd_bus_message_append(reply, "os", e->path, o->sandbox->fingerprint);
                break;
        case VERB_INSPECT:
                if ((r = manager_put_sandbox(o->m, o->sandbox)) < 0)
                        return r;
                r = bus_append_inspection(reply, o->sandbox);
                break;
        case VERB_VERIFY:
                if ((r = sd_bus_message_append(reply, "s", sbx_verdict_to_string(o->verdict))) >= 0)
                        r = append_fields(reply, o->fields);
                break;
        case VERB_START:
        case VERB_STOP:
                manager_set_sandbox_state(o->m, o->name, o->verb == VERB_START ? SBX_STATE_RUNNING : SBX_STATE_STOPPED,
                                          o->verb == VERB_START ? "running" : "exited");
                break;
        case VERB_DELETE:
                manager_drop_sandbox(o->m, o->name);
                break;
        case VERB_SNAPSHOT:
                r = sd_bus_message_append(reply, "s", o->image_id);
                break;
        case VERB_LIST:
                for (size_t i = 0; r >= 0 && i < o->n_list; i++)
                        r = manager_put_sandbox(o->m, o->list[i]);
                if (r >= 0)
                        r = append_sandbox_list(o, reply);
                break;
        case VERB_LIST_SNAPSHOTS:
                r = append_snapshot_list(o, reply);
                break;
        case VERB_EXEC:
                r = append_exec_result(reply, &o->exec_result);
                break;
        case VERB_START_EXEC:
                r = publish_exec(o, reply);
                break;
        case VERB_USAGE:
                r = bus_append_usage(reply, &o->usage);
                break;
        default:
                break;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(reply);
        return 0;
}

static void finish(Operation *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        if (o->r < 0) {
                /* A sandbox found missing is gone from the objects too; one found
                 * with another owner than the registry said (deleted and re-created
                 * meanwhile) is forgotten, to be looked up afresh by the next call. */
                if (o->name && (o->error.kind == SBX_ERROR_NO_SUCH_SANDBOX ||
                                (o->error.kind == SBX_ERROR_ACCESS_DENIED && verbs[o->verb].by_name)))
                        manager_drop_sandbox(o->m, o->name);
                reply_error(o, o->r, &o->error);
                return;
        }
        r = build_reply(o, &reply);
        if (r < 0) {
                reply_error(o, r, NULL);
                return;
        }
        if (verbs[o->verb].changes)
                audit(o, "ok", NULL);
        (void) sd_bus_send(NULL, reply, NULL);
        operation_free(o);
}

static void lookup_done(Operation *o) {
        if (o->r < 0 && o->error.kind == SBX_ERROR_NO_SUCH_SANDBOX && o->verb == VERB_DELETE)
                o->r = 0;       /* deleting what is not there succeeds (idempotent) */
        if (o->r < 0 || (o->verb == VERB_DELETE && !o->sandbox) ||
            (o->verb == VERB_DELETE_SNAPSHOT && !o->target_valid)) {
                if (o->r >= 0)
                        sbx_error_free(&o->error);
                finish(o);
                return;
        }
        if (o->sandbox) {
                if (manager_put_sandbox(o->m, o->sandbox) < 0) {
                        reply_error(o, -ENOMEM, NULL);
                        return;
                }
                o->target_valid = o->sandbox->owner_valid;
                o->target = o->sandbox->owner;
                o->sandbox = sbx_sandbox_free(o->sandbox);
        }
        o->target_known = true;
        authorize(o);
}

static void job_done(void *job) {
        Operation *o = job;

        if (o->lookup)
                lookup_done(o);
        else
                finish(o);
}

static void authorized(Operation *o) {
        /* GET needs no worker: the object is known. */
        if (o->verb == VERB_GET) {
                const SandboxEntry *e = manager_get_sandbox(o->m, o->name);
                SbxError err = SBX_ERROR_NULL;

                if (!e) {
                        reply_error(o, sbx_error_set(&err, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s",
                                                     o->name), &err);
                        sbx_error_free(&err);
                        return;
                }
                (void) sd_bus_reply_method_return(o->call, "o", e->path);
                operation_free(o);
                return;
        }
        submit(o, false);
}

static void on_others_checked(int r, SbxError *error, void *userdata) {
        Operation *o = userdata;

        o->polkit_slot = sd_bus_slot_unref(o->polkit_slot);
        o->all = r >= 0;
        authorized(o);
}

static uint64_t now_monotonic(Manager *m) {
        uint64_t t = 0;
        (void) sd_event_now(m->event, CLOCK_MONOTONIC, &t);
        return t;
}

static void on_polkit(int r, SbxError *error, void *userdata) {
        Operation *o = userdata;

        o->polkit_slot = sd_bus_slot_unref(o->polkit_slot);
        if (r < 0) {
                reply_error(o, r, error);
                return;
        }
        if (streq(o->action, SBX_POLKIT_ACTION_INSPECT))
                auth_cache_remember(o->m->auth_cache, sd_bus_message_get_sender(o->call), o->action,
                                    now_monotonic(o->m));
        /* Lists: one's own objects, or everyone's for whoever holds
         * manage-others, asked without a prompt (it is no refusal to see less). */
        if (o->verb == VERB_LIST || o->verb == VERB_LIST_SNAPSHOTS) {
                r = sbx_polkit_check_async(o->m->bus, o->call, SBX_POLKIT_ACTION_MANAGE_OTHERS,
                                           (const char *const[]) { "verb", verbs[o->verb].name, NULL }, false,
                                           on_others_checked, o, &o->polkit_slot);
                if (r < 0)
                        authorized(o);
                return;
        }
        authorized(o);
}

static void authorize(Operation *o) {
        char owner[32] = "";
        const char *action, *image = NULL;
        bool own;
        int r;

        if (o->uid == 0) {
                o->all = true;
                authorized(o);
                return;
        }

        own = !o->target_known || (o->target_valid && o->target == o->uid);
        action = o->action = own ? verbs[o->verb].own_action
                                 : verbs[o->verb].others_action ?: SBX_POLKIT_ACTION_MANAGE_OTHERS;
        /* Reads of one's own objects: polkit's recent "yes" for this connection
         * stands (auth-cache.h). Lists still ask about manage-others below. */
        if (streq(action, SBX_POLKIT_ACTION_INSPECT) && o->verb != VERB_LIST && o->verb != VERB_LIST_SNAPSHOTS &&
            auth_cache_allowed(o->m->auth_cache, sd_bus_message_get_sender(o->call), action, now_monotonic(o->m))) {
                authorized(o);
                return;
        }
        if (o->target_known && o->target_valid)
                snprintf(owner, sizeof owner, "%u", (unsigned) o->target);
        else if (!o->target_known)
                snprintf(owner, sizeof owner, "%u", (unsigned) o->uid);
        if (o->verb == VERB_CREATE)
                image = o->spec->template_type == SBX_TEMPLATE_IMAGE ? o->spec->image : o->spec->snapshot_id;

        const char *details[] = {
                "verb", verbs[o->verb].name,
                "sandbox", o->name ?: "",
                "owner", owner,
                image ? "image" : NULL, image,
                NULL,
        };
        r = sbx_polkit_check_async(o->m->bus, o->call, action, details,
                                   sd_bus_message_get_allow_interactive_authorization(o->call) > 0,
                                   on_polkit, o, &o->polkit_slot);
        if (r < 0)
                reply_error(o, r, NULL);
}

void operation_args_done(OperationArgs *args, Verb verb) {
        args->spec = sbx_spec_free(args->spec);
        strv_free(TAKE_PTR(args->argv));
        if (args->exec)
                sbx_exec_options_done(args->exec);
        if (takes_fds(verb))
                for (size_t i = 0; i < 3; i++)
                        args->fds[i] = safe_close(args->fds[i]);
}

/* Execs hold a slot from the call to the end of the process. */
static int take_exec_slot(Operation *o) {
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (!is_exec(o->verb))
                return 0;
        r = manager_exec_acquire(o->m, o->uid, &e);
        if (r < 0) {
                reply_error(o, r, &e);
                sbx_error_free(&e);
                return r;
        }
        o->exec_slot = true;
        return 0;
}

int operation_start(Manager *m, sd_bus_message *call, Verb verb, OperationArgs *args, sd_bus_error *ret_error) {
        Operation *o;
        uid_t uid;
        int r;

        r = bus_caller_uid(call, &uid);
        if (r < 0) {
                operation_args_done(args, verb);
                return sd_bus_error_set(ret_error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "Cannot tell who is calling from the bus credentials");
        }

        o = calloc(1, sizeof(Operation));
        if (!o) {
                operation_args_done(args, verb);
                return -ENOMEM;
        }
        manager_busy(m);
        *o = (Operation) {
                .m = m,
                .call = sd_bus_message_ref(call),
                .verb = verb,
                .uid = uid,
                .spec = TAKE_PTR(args->spec),
                .timeout_s = args->timeout_s,
                .name = args->name ? strdup(args->name) : NULL,
                .snapshot_id = args->snapshot_id ? strdup(args->snapshot_id) : NULL,
                .argv = TAKE_PTR(args->argv),
                .fds = { -1, -1, -1 },
        };
        /* Only these pass descriptors (other callers leave them zeroed). */
        if (takes_fds(verb))
                for (size_t i = 0; i < 3; i++)
                        o->fds[i] = TAKE_FD(args->fds[i]);
        if (args->exec) {
                o->exec = *args->exec;
                *args->exec = (SbxExecOptions) {};
        }
        if (args->guest_path)
                o->guest_path = strdup(args->guest_path);
        if ((args->name && !o->name) || (args->snapshot_id && !o->snapshot_id) ||
            (args->guest_path && !o->guest_path)) {
                operation_free(o);
                return -ENOMEM;
        }
        if (take_exec_slot(o) < 0)
                return 1;       /* answered */

        if (verbs[verb].by_name) {
                const SandboxEntry *e = manager_get_sandbox(m, o->name);
                if (!e) {
                        submit(o, true);        /* not known yet: look it up first */
                        return 1;
                }
                o->target_known = true;
                o->target_valid = e->owner_valid;
                o->target = e->owner;
        } else if (verb == VERB_DELETE_SNAPSHOT) {
                submit(o, true);
                return 1;
        } else if (verb == VERB_CREATE) {
                o->target_known = true;
                o->target_valid = true;
                o->target = uid;
        }
        authorize(o);
        return 1;
}
