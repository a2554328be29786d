/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The verbs that use a sandbox: processes in it, copies, the file calls — their rows,
 * arguments and results (operation-verbs.h). */

#include "bus-polkit.h"
#include "operation-verbs.h"

/* The families -------------------------------------------------------------- */

static void close_fds(int fds[static 3]) {
        for (size_t i = 0; i < 3; i++)
                fds[i] = safe_close(fds[i]);
}

static void exec_args_free(ExecArgs *a) {
        a->argv = strv_free(a->argv);
        sbx_exec_options_done(&a->options);
        close_fds(a->fds);
}

static void exec_args_done(OperationArgs *args) {
        exec_args_free(&args->exec);
}

static int exec_take(Operation *o, OperationArgs *args) {
        o->exec = (ExecJob) { .args = args->exec };
        args->exec = (ExecArgs) { .fds = { -1, -1, -1 } };
        o->resume = o->exec.args.options.resume;
        if (o->verb == VERB_START_EXEC && !o->exec.args.publish)
                return -EINVAL;         /* the interface makes the exec object */
        return 0;
}

static void exec_done(Operation *o) {
        exec_args_free(&o->exec.args);
        sbx_exec_result_done(&o->exec.result);
        sbx_exec_process_free(o->exec.process);
}

const VerbFamily verb_family_exec = { .take = exec_take, .args_done = exec_args_done, .done = exec_done };

static void copy_args_done(OperationArgs *args) {
        args->copy.fd = safe_close(args->copy.fd);
}

static int copy_take(Operation *o, OperationArgs *args) {
        o->copy = (CopyJob) { .fd = TAKE_FD(args->copy.fd) };
        o->resume = args->copy.resume;
        if (args->copy.guest_path && !(o->copy.guest_path = strdup(args->copy.guest_path)))
                return -ENOMEM;
        return 0;
}

static void copy_done(Operation *o) {
        free(o->copy.guest_path);
        safe_close(o->copy.fd);
}

const VerbFamily verb_family_copy = { .take = copy_take, .args_done = copy_args_done, .done = copy_done };

static void file_args_done(OperationArgs *args) {
        args->file.fd = safe_close(args->file.fd);
}

static int file_take(Operation *o, OperationArgs *args) {
        o->file = (FileJob) { .args = args->file };
        o->file.args.guest_path = NULL;
        args->file.fd = -1;
        o->resume = o->file.args.options.resume;
        if (args->file.guest_path && !(o->file.guest_path = strdup(args->file.guest_path)))
                return -ENOMEM;
        return 0;
}

static void file_done(Operation *o) {
        free(o->file.guest_path);
        safe_close(o->file.args.fd);
        sbx_file_data_done(&o->file.data);
        sbx_file_entries_free(o->file.entries, o->file.n_entries);
}

const VerbFamily verb_family_file = { .take = file_take, .args_done = file_args_done, .done = file_done };

/* Worker side ------------------------------------------------------------- */

/* Processes run as the sandbox's owner: a sandbox nobody owns runs nothing. */
static int check_owned(Operation *o) {
        if (!o->owner_valid)
                return sbx_error_set(&o->error, SBX_ERROR_ACCESS_DENIED,
                                     "Sandbox '%s' has no valid owner label; nothing can run in it", o->display);
        return 0;
}

/* Before using a sandbox: its owner is valid, and with the option resume a paused
 * one is resumed first (a stopped one stays NotRunning). */
static int check_usable(Operation *o, SbxLifecycle *l) {
        int r = check_owned(o);

        if (r < 0 || !o->resume)
                return r;
        r = sbx_lifecycle_pause(l, o->name, false, &o->error);
        if (r > 0)
                o->resumed = true;
        return r < 0 ? r : 0;
}

static SbxExecRequest exec_request(const ExecArgs *a) {
        return (SbxExecRequest) {
                .argv = a->argv, .env = a->options.env, .working_dir = a->options.working_dir,
                .tty = a->options.tty, .rows = a->options.rows, .cols = a->options.cols,
        };
}

static int run_exec(Operation *o, SbxLifecycle *l) {
        const SbxExecOptions *x = &o->exec.args.options;
        SbxExecRequest req = exec_request(&o->exec.args);
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_exec_capture(l, o->name, &req, x->stdin_data, x->stdin_size, x->timeout_s,
                                                      x->output_limit, x->timeout_result, &o->exec.result,
                                                      &o->error);
}

static int run_start_exec(Operation *o, SbxLifecycle *l) {
        SbxExecRequest req = exec_request(&o->exec.args);
        int r = check_usable(o, l);

        req.check_start = true;
        if (r >= 0 && o->exec.args.options.detach)
                return sbx_lifecycle_detach_start(l, o->name, &req, o->uid, &o->exec.process, &o->error);
        return r < 0 ? r : sbx_lifecycle_exec_start(l, o->name, &req, &o->exec.process, &o->error);
}

static int run_copy_to(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_copy_to(l, o->name, o->copy.guest_path, o->copy.fd, &o->error);
}

static int run_copy_from(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_copy_from(l, o->name, o->copy.guest_path, o->copy.fd, &o->error);
}

/* The file calls go over the sandbox's kept channel (channel.h), as its owner. */
static int run_read_file(Operation *o, SbxLifecycle *l) {
        uint64_t cap = (uint64_t) l->policy->max_file_bytes;
        FileJob *j = &o->file;
        const SbxFileOptions *f = &j->args.options;
        int r = check_usable(o, l);

        if (r >= 0 && j->args.fd >= 0)       /* option fd: no cap but the file's end */
                return sbx_lifecycle_read_file_fd(l, o->name, j->guest_path, f->offset,
                                                  f->has_length ? f->length : UINT64_MAX, j->args.fd, &j->data,
                                                  &o->error);
        /* A length past the cap (4 GiB, say) is capped, not refused: the reply says eof. */
        return r < 0 ? r : sbx_lifecycle_read_file(l, o->name, j->guest_path, f->offset,
                                                   f->has_length ? MIN(f->length, cap) : cap, &j->data, &o->error);
}

static int run_write_file(Operation *o, SbxLifecycle *l) {
        FileJob *j = &o->file;
        const SbxFileOptions *f = &j->args.options;
        unsigned flags = (f->append ? SBX_WRITE_APPEND : 0) | (f->make_parents ? SBX_WRITE_MAKE_PARENTS : 0);
        int r = check_usable(o, l);

        if (r >= 0 && j->args.fd >= 0)
                return sbx_lifecycle_write_file_fd(l, o->name, j->guest_path, j->args.fd, f->mode, flags, &o->error);
        return r < 0 ? r : sbx_lifecycle_write_file(l, o->name, j->guest_path, j->args.data, j->args.data_size,
                                                    f->mode, flags, &o->error);
}

static int run_list_files(Operation *o, SbxLifecycle *l) {
        FileJob *j = &o->file;
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_list_files(l, o->name, j->guest_path, j->args.options.depth,
                                                    j->args.options.limit, &j->entries, &j->n_entries,
                                                    &j->truncated, &o->error);
}

static int run_remove_file(Operation *o, SbxLifecycle *l) {
        int r = check_usable(o, l);

        return r < 0 ? r : sbx_lifecycle_remove_file(l, o->name, o->file.guest_path, o->file.args.options.recursive,
                                                     &o->error);
}

/* Main thread: replies ---------------------------------------------------- */

static int reply_exec(Operation *o, sd_bus_message *reply) {
        const SbxExecResult *x = &o->exec.result;
        int r = sd_bus_message_append(reply, "i", (int32_t) x->exit_status);

        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->out ?: "", x->out_size);
        if (r >= 0)
                r = sd_bus_message_append_array(reply, 'y', x->err ?: "", x->err_size);
        return r < 0 ? r : sd_bus_message_append(reply, "b", x->truncated);
}

/* The exec object (made by the interface that took the call: bus-exec.h) takes over
 * the process, the descriptors and the slot. */
static int reply_start_exec(Operation *o, sd_bus_message *reply) {
        ExecArgs *a = &o->exec.args;
        const char *path;
        int r;

        r = a->publish(o->m, TAKE_PTR(o->exec.process), &(ExecStartArgs) {
                .sandbox = o->display, .name = o->name, .argv0 = a->argv[0], .owner = o->owner, .caller = o->uid,
                .caller_name = sd_bus_message_get_sender(o->call), .timeout_s = a->options.timeout_s,
                .fds = { TAKE_FD(a->fds[0]), TAKE_FD(a->fds[1]), TAKE_FD(a->fds[2]) },
        }, &path);
        o->exec_slot = false;
        return r < 0 ? r : sd_bus_message_append(reply, "o", path);
}

static int reply_read_file(Operation *o, sd_bus_message *reply) {
        const SbxFileData *d = &o->file.data;
        int r = sd_bus_message_append_array(reply, 'y', d->data ? (const void *) d->data : "", d->size);

        return r < 0 ? r : sd_bus_message_append(reply, "a{sv}", 4, "size", "t", d->file_size, "mode", "u",
                                                 (uint32_t) d->mode, "mtime", "t", d->mtime_us, "eof", "b", d->eof);
}

static int reply_list_files(Operation *o, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssttu)");

        for (size_t i = 0; r >= 0 && i < o->file.n_entries; i++) {
                const SbxFileEntry *e = &o->file.entries[i];

                r = sd_bus_message_append(reply, "(ssttu)", e->name, e->kind, e->size, e->mtime_us, e->mode);
        }
        if (r >= 0)
                r = sd_bus_message_close_container(reply);
        return r < 0 ? r : sd_bus_message_append(reply, "b", o->file.truncated);
}

/* The rows ------------------------------------------------------------------ */

#define A_EXEC        SBX_POLKIT_ACTION_EXEC
#define A_EXEC_OTHERS SBX_POLKIT_ACTION_EXEC_OTHERS

const VerbInfo verb_exec = {
        .name = "exec", .work = &verb_work_change, .family = &verb_family_exec, .own_action = A_EXEC, .run = run_exec,
        .reply = reply_exec, .others_action = A_EXEC_OTHERS, .exec = true, .activity = true, .budget = verb_budget_none,
};

const VerbInfo verb_start_exec = {
        .name = "start-exec", .work = &verb_work_change, .family = &verb_family_exec, .own_action = A_EXEC,
        .run = run_start_exec, .reply = reply_start_exec, .others_action = A_EXEC_OTHERS, .exec = true,
        .activity = true, .budget = verb_budget_none,
};

const VerbInfo verb_copy_to = {
        .name = "copy-to", .work = &verb_work_change, .family = &verb_family_copy, .own_action = A_EXEC,
        .run = run_copy_to, .reply = verb_reply_none, .others_action = A_EXEC_OTHERS, .exec = true, .activity = true,
        .budget = verb_budget_none,
};

const VerbInfo verb_copy_from = {
        .name = "copy-from", .work = &verb_work_change, .family = &verb_family_copy, .own_action = A_EXEC,
        .run = run_copy_from, .reply = verb_reply_none, .others_action = A_EXEC_OTHERS, .exec = true, .activity = true,
        .budget = verb_budget_none,
};

/* The file calls start no process (the kept channel's exec holds no slot). The read
 * and the listing are reads (the read share, the read workers), audited all the
 * same, like the copies; the write and the removal are state changes. */
const VerbInfo verb_read_file = {
        .name = "read-file", .work = &verb_work_read, .family = &verb_family_file, .own_action = A_EXEC,
        .run = run_read_file, .reply = reply_read_file, .others_action = A_EXEC_OTHERS, .audited = true,
        .activity = true,
};

const VerbInfo verb_write_file = {
        .name = "write-file", .work = &verb_work_change, .family = &verb_family_file, .own_action = A_EXEC,
        .run = run_write_file, .reply = verb_reply_none, .others_action = A_EXEC_OTHERS, .activity = true,
};

const VerbInfo verb_list_files = {
        .name = "list-files", .work = &verb_work_read, .family = &verb_family_file, .own_action = A_EXEC,
        .run = run_list_files, .reply = reply_list_files, .others_action = A_EXEC_OTHERS, .audited = true,
        .activity = true,
};

const VerbInfo verb_remove_file = {
        .name = "remove-file", .work = &verb_work_change, .family = &verb_family_file, .own_action = A_EXEC,
        .run = run_remove_file, .reply = verb_reply_none, .others_action = A_EXEC_OTHERS, .activity = true,
};
