/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The one verb table (src/bus/operation-verbs.h): a row for every verb, each with its
 * row of work, and each family's arguments owned by exactly one side — the call's
 * OperationArgs until taken, then the operation's member until its done. */

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "operation-verbs.h"
#include "sbx-test.h"

static char **argv_of(const char *arg) {
        char **v = calloc(2, sizeof(char *));

        ck_assert_ptr_nonnull(v);
        ck_assert_ptr_nonnull(v[0] = strdup(arg));
        return v;
}

static bool fd_open(int fd) {
        return fcntl(fd, F_GETFD) >= 0;
}

START_TEST(test_rows) {
        for (Verb v = 0; v < _VERB_MAX; v++) {
                const VerbInfo *row = verb_info(v);

                ck_assert_ptr_nonnull(row);
                ck_assert_msg(row->name && row->name[0], "verb %d: no name", v);
                ck_assert_msg(row->work == &verb_work_change || row->work == &verb_work_read, "%s: work", row->name);
                ck_assert_msg(row->work->auth == WORK_AUTH_POLKIT, "%s: polkit", row->name);
                ck_assert_msg(row->run && row->reply && row->own_action, "%s: run, reply, action", row->name);
                /* a process in the sandbox is a state change; the lists and answered reads are reads */
                ck_assert_msg(!row->exec || verb_changes(v), "%s: exec read", row->name);
                ck_assert_msg(!row->lists || !verb_changes(v), "%s: a list that changes", row->name);
                ck_assert_msg(!row->answer || !verb_changes(v), "%s: answered change", row->name);
                for (Verb w = 0; w < v; w++)
                        ck_assert_msg(!streq(row->name, verb_info(w)->name), "%s: twice", row->name);
        }
        ck_assert(verb_changes(VERB_CREATE) && verb_audited(VERB_READ_FILE) && !verb_audited(VERB_INSPECT));
        ck_assert_ptr_eq(verb_info(VERB_FIND)->family, verb_info(VERB_LIST)->family);
}
END_TEST

/* A refusal before the operation: the family's owned arguments freed, its descriptors
 * closed; a verb of another family leaves them alone. */
START_TEST(test_args_done) {
        int p[2];
        OperationArgs args;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        args = (OperationArgs) { .name = "x", .exec = { .argv = argv_of("true"), .fds = { p[0], p[1], -1 } } };
        operation_args_done(&args, VERB_START_EXEC);
        ck_assert(!fd_open(p[0]) && !fd_open(p[1]));
        ck_assert_ptr_null(args.exec.argv);
        ck_assert_int_eq(args.exec.fds[0], -1);

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        args = (OperationArgs) { .file = { .guest_path = "/f", .fd = p[0] } };
        operation_args_done(&args, VERB_INSPECT);       /* no arguments of its own */
        ck_assert(fd_open(p[0]));
        operation_args_done(&args, VERB_WRITE_FILE);
        ck_assert(!fd_open(p[0]));
        safe_close(p[1]);
}
END_TEST

/* Taken over: the call's side is empty (its done frees nothing twice), the operation's
 * member holds them until operation_job_done(). */
START_TEST(test_take) {
        _cleanup_free_ Operation *o = calloc(1, sizeof(Operation));
        int p[2];
        OperationArgs args;

        ck_assert_ptr_nonnull(o);
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        o->verb = VERB_READ_FILE;
        args = (OperationArgs) { .file = { .guest_path = "/etc/hostname", .fd = p[0],
                                           .options = { .resume = true, .fd = 3 } } };
        ck_assert_int_eq(operation_job_take(o, &args), 0);
        ck_assert_int_eq(args.file.fd, -1);
        operation_args_done(&args, VERB_READ_FILE);
        ck_assert(fd_open(p[0]));
        ck_assert_str_eq(o->file.guest_path, "/etc/hostname");
        ck_assert_int_eq(o->file.args.fd, p[0]);
        ck_assert(o->resume);
        operation_job_done(o);
        ck_assert(!fd_open(p[0]));
        safe_close(p[1]);

        /* a StartExec without the interface's publish is no operation (its args freed all the same) */
        *o = (Operation) { .verb = VERB_START_EXEC };
        args = (OperationArgs) { .exec = { .argv = argv_of("sh"), .fds = { -1, -1, -1 } } };
        ck_assert_int_eq(operation_job_take(o, &args), -EINVAL);
        ck_assert_ptr_null(args.exec.argv);
        operation_job_done(o);

        /* the acquire's lease descriptor starts closed (-1), never 0 */
        *o = (Operation) { .verb = VERB_ACQUIRE };
        ck_assert_int_eq(operation_job_take(o, &(OperationArgs) {}), 0);
        ck_assert_int_eq(o->inspect.lease_fd, -1);
        operation_job_done(o);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("operation-verbs");
        TCase *tc = tcase_create("bus");

        tcase_add_test(tc, test_rows);
        tcase_add_test(tc, test_args_done);
        tcase_add_test(tc, test_take);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
