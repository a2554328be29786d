/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "audit.h"
#include "operation-verbs.h"

/* The one verb table: each row in the file of its family. */
const VerbInfo *const operation_verbs[_VERB_MAX] = {
        [VERB_CREATE] = &verb_create,
        [VERB_GET] = &verb_get,
        [VERB_INSPECT] = &verb_inspect,
        [VERB_VERIFY] = &verb_verify,
        [VERB_START] = &verb_start,
        [VERB_STOP] = &verb_stop,
        [VERB_DELETE] = &verb_delete,
        [VERB_SNAPSHOT] = &verb_snapshot,
        [VERB_DELETE_SNAPSHOT] = &verb_delete_snapshot,
        [VERB_LIST] = &verb_list,
        [VERB_LIST_SNAPSHOTS] = &verb_list_snapshots,
        [VERB_EXEC] = &verb_exec,
        [VERB_START_EXEC] = &verb_start_exec,
        [VERB_USAGE] = &verb_usage,
        [VERB_COPY_TO] = &verb_copy_to,
        [VERB_COPY_FROM] = &verb_copy_from,
        [VERB_ENSURE] = &verb_ensure,
        [VERB_READ_FILE] = &verb_read_file,
        [VERB_WRITE_FILE] = &verb_write_file,
        [VERB_LIST_FILES] = &verb_list_files,
        [VERB_REMOVE_FILE] = &verb_remove_file,
        [VERB_REFRESH] = &verb_refresh,
        [VERB_FIND] = &verb_find,
        [VERB_PAUSE] = &verb_pause,
        [VERB_RESUME] = &verb_resume,
        [VERB_ACQUIRE] = &verb_acquire,
        [VERB_SET_LIFETIMES] = &verb_set_lifetimes,
        [VERB_SET_EGRESS] = &verb_set_egress,
        [VERB_PULL] = &verb_pull,
        [VERB_CLAIM] = &verb_claim,
        [VERB_POOL_STATUS] = &verb_pool_status,
};

const char *operation_target(const Operation *o) {
        const char *reference = verb_info(o->verb)->family == &verb_family_pull ? o->pull.reference : NULL;

        return o->display ?: o->snapshot_display ?: reference ?: "-";
}

int operation_job_take(Operation *o, OperationArgs *args) {
        const VerbFamily *f = verb_info(o->verb)->family;

        return f && f->take ? f->take(o, args) : 0;
}

void operation_job_done(Operation *o) {
        const VerbFamily *f = verb_info(o->verb)->family;

        if (f && f->done)
                f->done(o);
}

void operation_args_done(OperationArgs *args, Verb verb) {
        const VerbFamily *f = verb_info(verb)->family;

        if (f && f->args_done)
                f->args_done(args);
}

static bool takes_exec_args(Verb verb) {
        return verb_info(verb)->family == &verb_family_exec;
}

unsigned operation_args_wait_s(Verb verb, const OperationArgs *args) {
        return takes_exec_args(verb) ? args->exec.options.wait_s : 0;
}

unsigned operation_wait_s(const Operation *o) {
        return takes_exec_args(o->verb) ? o->exec.args.options.wait_s : 0;
}

uint64_t operation_exec_capture_of(const Operation *o) {
        const SbxExecOptions *x = &o->exec.args.options;

        if (o->verb != VERB_EXEC)
                return 0;
        return MIN(2 * x->output_limit, SBX_EXEC_CAPTURE_MAX) + x->stdin_size;
}

/* For the rows ------------------------------------------------------------ */

int verb_reply_none(Operation *o, sd_bus_message *reply) {
        return 0;
}

unsigned verb_budget_none(const Operation *o, unsigned docker_timeout) {
        return 0;
}

int verb_busy(Operation *o, const char *hint) {
        unsigned n = leases_count(&o->m->leases, o->name, sd_bus_message_get_sender(o->call));

        if (n == 0)
                return 0;
        return sbx_error_set(&o->error, SBX_ERROR_SANDBOX_BUSY, "Sandbox '%s' is busy: %u lease%s held by %s%s",
                             o->display, n, n == 1 ? "" : "s", n == 1 ? "another connection" : "other connections",
                             hint);
}

void verb_revoke_leases(Operation *o) {
        char reason[128], owner[32];
        unsigned n;

        snprintf(reason, sizeof reason, "revoked by uid %u (%s with option force)", (unsigned) o->uid,
                 verb_info(o->verb)->name);
        n = leases_revoke(&o->m->leases, o->name, reason);
        if (n == 0)
                return;
        snprintf(reason, sizeof reason, "%u lease%s revoked (%s with option force)", n, n == 1 ? "" : "s",
                 verb_info(o->verb)->name);
        snprintf(owner, sizeof owner, "%u", (unsigned) o->owner);
        audit_record(&(AuditRecord) { .uid = o->uid, .verb = "revoke-leases", .target = operation_target(o),
                                      .owner = o->owner_valid ? owner : NULL, .outcome = "ok", .reason = reason });
}
