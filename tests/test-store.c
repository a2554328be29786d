/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store.h"

#define STORE_DIR_TEMPLATE "/tmp/sbx-test-store-XXXXXX"
#include "store-fixture.h"

/* Opening must fail with an IO error whose message holds the file name and needle. */
static void assert_open_refused(const char *needle) {
        SbxError e = SBX_ERROR_NULL;
        SbxStore *s = NULL;

        ck_assert_int_lt(sbx_store_open(dir, &s, &e), 0);
        ck_assert_ptr_null(s);
        ck_assert_int_eq(e.kind, SBX_ERROR_IO);
        ck_assert_msg(strstr(e.message, db_path), "message \"%s\" lacks the path", e.message);
        ck_assert_msg(strstr(e.message, needle), "message \"%s\" lacks \"%s\"", e.message, needle);
        sbx_error_free(&e);
}

/* Runs a one-value query on a separate raw connection. */
static char *raw_query(const char *sql) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        char *v;

        ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(st), SQLITE_ROW);
        v = strdup((const char *) sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
        return v;
}

static void raw_exec(const char *sql) {
        sqlite3 *db = NULL;

        ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
}

static void write_file(const char *path, const void *data, size_t size, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, data, size), (ssize_t) size);
        ck_assert_int_eq(close(fd), 0);
}

static SbxSandboxRow sandbox(const char *name, uid_t owner, SbxSandboxState state) {
        return (SbxSandboxRow) {
                .name = (char *) name,
                .owner_uid = owner,
                .owner_gid = owner + 100,
                .container_id = (char *) "c0ffee",
                .spec_json = (char *) "{\"image\":\"img\"}",
                .fingerprint = (char *) "fp1",
                .contract_version = 1,
                .state = state,
        };
}

static SbxSnapshotRow snapshot(const char *id, uid_t owner) {
        return (SbxSnapshotRow) {
                .id = (char *) id,
                .owner_uid = owner,
                .source_sandbox = (char *) "box",
                .image_id = (char *) "sha256:abc",
                .image_tag = (char *) "xagent-sandbox-snapshot:snap",
        };
}

START_TEST(test_state_strings) {
        ck_assert_str_eq(sbx_sandbox_state_to_string(SBX_SANDBOX_RUNNING), "running");
        ck_assert_str_eq(sbx_sandbox_state_to_string(SBX_SANDBOX_STOPPED), "stopped");
        ck_assert_str_eq(sbx_sandbox_state_to_string(SBX_SANDBOX_UNKNOWN), "unknown");
        ck_assert_ptr_null(sbx_sandbox_state_to_string(_SBX_SANDBOX_STATE_MAX));
        ck_assert_int_eq(sbx_sandbox_state_from_string("stopped"), SBX_SANDBOX_STOPPED);
        ck_assert_int_eq(sbx_sandbox_state_from_string("paused"), _SBX_SANDBOX_STATE_INVALID);
        ck_assert_int_eq(sbx_sandbox_state_from_string(NULL), _SBX_SANDBOX_STATE_INVALID);
}
END_TEST

/* A fresh database: file 0600 whatever the umask, WAL, schema version 1. */
START_TEST(test_open_fresh) {
        _cleanup_free_ char *version = NULL, *mode = NULL, *tables = NULL;
        SbxSandboxRow row = sandbox("box", 1000, SBX_SANDBOX_RUNNING);
        char wal[sizeof db_path + 4];
        struct stat st;

        umask(0);
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        ck_assert_str_eq(sbx_store_path(s), db_path);
        ck_assert_int_eq(stat(db_path, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0600);

        /* sqlite gives the WAL file the database's mode */
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        snprintf(wal, sizeof wal, "%s-wal", db_path);
        ck_assert_int_eq(stat(wal, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0600);

        ck_assert(sbx_store_created(s));
        version = raw_query("PRAGMA user_version");
        ck_assert_str_eq(version, "10");
        mode = raw_query("PRAGMA journal_mode");
        ck_assert_str_eq(mode, "wal");
        tables = raw_query("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('sandboxes', 'snapshots')");
        ck_assert_str_eq(tables, "2");
}
END_TEST

START_TEST(test_existing_mode_tightened) {
        struct stat st;

        write_file(db_path, "", 0, 0644);
        ck_assert_int_eq(chmod(db_path, 0644), 0);
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        ck_assert_int_eq(stat(db_path, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0600);
}
END_TEST

START_TEST(test_missing_dir) {
        SbxError e = SBX_ERROR_NULL;
        SbxStore *s = NULL;
        char missing[sizeof dir + 16];

        snprintf(missing, sizeof missing, "%s/nope", dir);
        ck_assert_int_lt(sbx_store_open(missing, &s, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_IO);
        ck_assert_ptr_nonnull(strstr(e.message, missing));
        ck_assert_ptr_nonnull(strstr(e.message, "No such file"));
        sbx_error_free(&e);
}
END_TEST

START_TEST(test_reopen_keeps_rows) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *got = NULL;
        SbxSandboxRow row = sandbox("box", 1000, SBX_SANDBOX_STOPPED);
        SbxStore *s = open_ok();

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        sbx_store_close(s);

        s = open_ok();
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 1);
        ck_assert_int_eq(got->state, SBX_SANDBOX_STOPPED);
        sbx_store_close(s);
}
END_TEST

/* A database of a schema before 5 made from the current one: without the labels. */
/* Schema 5's tables: no labels (6), no lifetimes (7, 8), no egress (9, 10). */
#define NO_LABELS_COLUMNS "ALTER TABLE sandboxes DROP COLUMN egress_json; ALTER TABLE sandboxes DROP COLUMN labels_json; ALTER TABLE intents DROP COLUMN labels_json; ALTER TABLE intents DROP COLUMN egress_json;" \
        "DROP TRIGGER lifetimes_follow_sandboxes; DROP TABLE lifetimes;"

/* Schema 1 → 2: rows of owners other than root are keyed by their Docker-level
 * name "~<uid>:<name>" (names belong to their owner); root's stay as they are, and
 * a row already in the new form is not prefixed twice. */
START_TEST(test_migration_to_owner_names) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *got = NULL;
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *snap = NULL;
        _cleanup_free_ char *names = NULL, *ids = NULL;
        SbxStore *s = open_ok();

        sbx_store_close(s);
        raw_exec(NO_LABELS_COLUMNS
                 "INSERT INTO sandboxes (name, owner_uid, container_id, spec_json, fingerprint, contract_version,"
                 " state, owner_gid) VALUES ('work', 1001, 'c1', '{}', 'f', 1, 'running', 1001),"
                 " ('work2', 0, 'c2', '{}', 'f', 1, 'running', 0), ('~1002:w', 1002, 'c3', '{}', 'f', 1, 'running', 1);"
                 "INSERT INTO snapshots (id, owner_uid, source_sandbox, image_id, image_tag, created_us)"
                 " VALUES ('snap', 1001, 'work', 'sha256:1', 'xagent-sandbox-snapshot:snap', 1);"
                 "PRAGMA user_version = 1");
        s = open_ok();
        names = raw_query("SELECT group_concat(name, ',') FROM (SELECT name FROM sandboxes ORDER BY name)");
        ck_assert_str_eq(names, "work2,~1001:work,~1002:w");
        ids = raw_query("SELECT group_concat(id) FROM snapshots");
        ck_assert_str_eq(ids, "~1001:snap");
        ck_assert_int_eq(sbx_store_get_sandbox(s, "~1001:work", &got, NULL), 1);
        ck_assert_uint_eq(got->owner_uid, 1001);
        ck_assert_int_eq(sbx_store_get_snapshot(s, "~1001:snap", &snap, NULL), 1);
        ck_assert_str_eq(snap->image_id, "sha256:1");
        sbx_store_close(s);
}
END_TEST

/* A create's intent: recorded before the container exists, ended by the row of its
 * name in the same statement; kept by a state update. */
START_TEST(test_intents) {
        _cleanup_(sbx_intent_row_list_freep) SbxIntentRow **list = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *got = NULL;
        SbxSandboxRow row = sandbox("~1001:box", 1001, SBX_SANDBOX_RUNNING);
        SbxIntentRow in = {
                .name = (char *) "~1001:box", .owner_uid = 1001, .owner_gid = 1002,
                .container_name = (char *) "xagent_sandbox_x.pending", .fingerprint = (char *) "fp",
                .spec_json = (char *) "{}", .egress_json = (char *) "{\"mode\":\"none\",\"allow\":[]}",
        };
        SbxError e = SBX_ERROR_NULL;
        SbxStore *s = open_ok();

        ck_assert_int_eq(sbx_store_get_intent(s, in.name, &got, NULL), 0);
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 0, NULL), 0);
        in.name = (char *) "other";
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 0, NULL), 1);     /* the first counts */
        ck_assert_int_eq(sbx_store_list_intents(s, &list, NULL), 2);
        ck_assert_str_eq(list[0]->name, "other");
        ck_assert_str_eq(list[1]->name, "~1001:box");
        ck_assert_int_eq(sbx_store_get_intent(s, "~1001:box", &got, NULL), 1);
        ck_assert_uint_eq(got->owner_uid, 1001);
        ck_assert_uint_eq(got->owner_gid, 1002);
        ck_assert_str_eq(got->container_name, "xagent_sandbox_x.pending");
        ck_assert_str_eq(got->spec_json, "{}");
        /* the egress asked, for the row an interrupted create settles into */
        ck_assert_str_eq(got->egress_json, "{\"mode\":\"none\",\"allow\":[]}");
        ck_assert_int_gt(got->created_us, 0);
        got = sbx_intent_row_free(got);

        /* the row ends it, in the same statement; a state update does not */
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_intent(s, "~1001:box", &got, NULL), 0);
        ck_assert_int_eq(sbx_store_put_intent(s, &(SbxIntentRow) { .name = (char *) "~1001:box",
                .container_name = (char *) "c", .fingerprint = (char *) "", .spec_json = (char *) "{}" }, 0, NULL), 0);
        ck_assert_int_eq(sbx_store_update_sandbox_state(s, "~1001:box", SBX_SANDBOX_STOPPED, NULL), 1);
        ck_assert_int_eq(sbx_store_get_intent(s, "~1001:box", &got, NULL), 1);
        got = sbx_intent_row_free(got);
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);       /* an upsert ends it too */
        ck_assert_int_eq(sbx_store_get_intent(s, "~1001:box", &got, NULL), 0);

        ck_assert_int_eq(sbx_store_delete_intent(s, "other", NULL), 1);
        ck_assert_int_eq(sbx_store_delete_intent(s, "other", NULL), 0);
        ck_assert_int_lt(sbx_store_put_intent(s, &(SbxIntentRow) { .name = (char *) "x" }, 0, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        sbx_error_free(&e);
        sbx_store_close(s);

        /* opened again: not made just now */
        s = open_ok();
        ck_assert(!sbx_store_created(s));
        sbx_store_close(s);
}
END_TEST

/* A snapshot's intent: recorded before the commit, marked abandoned when its caller
 * was told it failed, ended by the snapshot row of its id in the same statement. */
START_TEST(test_snapshot_intents) {
        _cleanup_(sbx_snapshot_intent_row_list_freep) SbxSnapshotIntentRow **list = NULL;
        _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *got = NULL;
        SbxSnapshotRow row = snapshot("~1001:snap", 1001);
        SbxSnapshotIntentRow in = {
                .id = (char *) "~1001:snap", .owner_uid = 1001, .source_sandbox = (char *) "~1001:box",
                .image_tag = (char *) "xagent-sandbox-snapshot:snap-x", .token = (char *) "0123abcd",
        };
        SbxError e = SBX_ERROR_NULL;
        SbxStore *s = open_ok();

        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, in.id, &got, NULL), 0);
        ck_assert_int_eq(sbx_store_put_snapshot_intent(s, &in, NULL), 0);
        in.id = (char *) "other";
        ck_assert_int_eq(sbx_store_put_snapshot_intent(s, &in, NULL), 0);
        ck_assert_int_eq(sbx_store_list_snapshot_intents(s, &list, NULL), 2);
        ck_assert_str_eq(list[0]->id, "other");
        ck_assert_str_eq(list[1]->id, "~1001:snap");
        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, "~1001:snap", &got, NULL), 1);
        ck_assert_uint_eq(got->owner_uid, 1001);
        ck_assert_str_eq(got->source_sandbox, "~1001:box");
        ck_assert_str_eq(got->image_tag, "xagent-sandbox-snapshot:snap-x");
        ck_assert_str_eq(got->token, "0123abcd");
        ck_assert(!got->abandoned);
        ck_assert_int_gt(got->created_us, 0);
        got = sbx_snapshot_intent_row_free(got);

        ck_assert_int_eq(sbx_store_abandon_snapshot_intent(s, "~1001:snap", NULL), 1);
        ck_assert_int_eq(sbx_store_abandon_snapshot_intent(s, "none", NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, "~1001:snap", &got, NULL), 1);
        ck_assert(got->abandoned);
        got = sbx_snapshot_intent_row_free(got);

        /* the row ends it, in the same statement; another id's stays */
        ck_assert_int_eq(sbx_store_add_snapshot(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, "~1001:snap", &got, NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, "other", &got, NULL), 1);
        got = sbx_snapshot_intent_row_free(got);
        ck_assert_int_eq(sbx_store_delete_snapshot_intent(s, "other", NULL), 1);
        ck_assert_int_eq(sbx_store_delete_snapshot_intent(s, "other", NULL), 0);
        ck_assert_int_lt(sbx_store_put_snapshot_intent(s, &(SbxSnapshotIntentRow) { .id = (char *) "x" }, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        sbx_error_free(&e);
        sbx_store_close(s);
}
END_TEST

/* A schema-3 database (intents, no snapshot intents) is migrated on, its rows kept. */
START_TEST(test_migration_to_snapshot_intents) {
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *snap = NULL;
        _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *got = NULL;
        _cleanup_free_ char *version = NULL;
        SbxStore *s = open_ok();

        sbx_store_close(s);
        raw_exec(NO_LABELS_COLUMNS "DROP TRIGGER snapshot_intents_end_on_insert; DROP TABLE snapshot_intents;"
                 "INSERT INTO snapshots (id, owner_uid, source_sandbox, image_id, image_tag, created_us)"
                 " VALUES ('s3', 0, 'work', 'sha256:3', 'xagent-sandbox-snapshot:s3', 1);"
                 "PRAGMA user_version = 3");
        s = open_ok();
        version = raw_query("PRAGMA user_version");
        ck_assert_str_eq(version, "10");
        ck_assert_int_eq(sbx_store_get_snapshot(s, "s3", &snap, NULL), 1);
        ck_assert_int_eq(sbx_store_put_snapshot_intent(s, &(SbxSnapshotIntentRow) {
                .id = (char *) "s4", .source_sandbox = (char *) "work", .image_tag = (char *) "t",
                .token = (char *) "k" }, NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot_intent(s, "s4", &got, NULL), 1);
        sbx_store_close(s);
}
END_TEST

/* Detached execs: written, listed the oldest first (bounded by max), deleted; a
 * store of schema 4 gains the table (and the labels). */
START_TEST(test_detached_rows) {
        _cleanup_free_ char *version = NULL;
        SbxDetachedRow *rows = NULL;
        size_t n = 0;
        SbxStore *s = open_ok();

        sbx_store_close(s);
        raw_exec(NO_LABELS_COLUMNS "DROP TABLE detached_execs; PRAGMA user_version = 4");
        s = open_ok();
        version = raw_query("PRAGMA user_version");
        ck_assert_str_eq(version, "10");
        for (int i = 0; i < 3; i++) {
                char id[8];

                snprintf(id, sizeof id, "id%d", i);
                ck_assert_int_eq(sbx_store_put_detached(s, &(SbxDetachedRow) {
                        .id = id, .sandbox = (char *) "~1000:work", .container_id = (char *) "c1", .owner = 1000,
                        .caller = 1001, .argv0 = (char *) "sleep", .token = (char *) "t.x",
                        .started_us = 30 - (uint64_t) i }, NULL), 0);
        }
        ck_assert_int_lt(sbx_store_put_detached(s, &(SbxDetachedRow) { .id = (char *) "bad" }, NULL), 0);
        ck_assert_int_eq(sbx_store_list_detached(s, 2, &rows, &n, NULL), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(rows[0].id, "id2");
        ck_assert_uint_eq(rows[0].owner, 1000);
        ck_assert_uint_eq(rows[0].caller, 1001);
        ck_assert_str_eq(rows[1].argv0, "sleep");
        sbx_detached_rows_free(rows, n);
        ck_assert_int_eq(sbx_store_delete_detached(s, "id2", NULL), 0);
        ck_assert_int_eq(sbx_store_list_detached(s, 10, &rows, &n, NULL), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(rows[0].id, "id1");
        sbx_detached_rows_free(rows, n);
        sbx_store_close(s);
}
END_TEST

/* A schema-4 database (no labels, no detached execs) is migrated to 6: its rows and intents kept, with
 * no labels; labels written then are read back. */
START_TEST(test_migration_to_labels) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *got = NULL, *again = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        _cleanup_free_ char *version = NULL;
        SbxSandboxRow row;
        SbxStore *s = open_ok();

        sbx_store_close(s);
        raw_exec(NO_LABELS_COLUMNS "DROP TABLE detached_execs;"
                 "INSERT INTO sandboxes (name, owner_uid, container_id, spec_json, fingerprint, contract_version,"
                 " state, created_us, updated_us, owner_gid) VALUES ('~7:old', 7, 'c7', '{}', 'f7', 1, 'stopped', 5, 6, 8);"
                 "INSERT INTO intents (name, owner_uid, owner_gid, container_name, fingerprint, spec_json, created_us)"
                 " VALUES ('~7:half', 7, 8, 'c.pending', 'f8', '{}', 9);"
                 "PRAGMA user_version = 4");
        s = open_ok();
        version = raw_query("PRAGMA user_version");
        ck_assert_str_eq(version, "10");
        ck_assert_int_eq(sbx_store_get_sandbox(s, "~7:old", &got, NULL), 1);
        ck_assert_str_eq(got->container_id, "c7");
        ck_assert_str_eq(got->fingerprint, "f7");
        ck_assert_int_eq(got->state, SBX_SANDBOX_STOPPED);
        ck_assert_int_eq(got->created_us, 5);
        ck_assert_uint_eq(got->owner_gid, 8);
        ck_assert_str_eq(got->labels_json, "{}");
        ck_assert_int_eq(sbx_store_get_intent(s, "~7:half", &in, NULL), 1);
        ck_assert_str_eq(in->labels_json, "{}");
        row = sandbox("~7:new", 7, SBX_SANDBOX_RUNNING);
        row.labels_json = (char *) "{\"task\":\"42\"}";
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "~7:new", &again, NULL), 1);
        ck_assert_str_eq(again->labels_json, "{\"task\":\"42\"}");
        sbx_store_close(s);
}
END_TEST

/* The owner's limit: its sandboxes and its other unfinished creates count, the
 * name's own intent does not; over the limit nothing is recorded. */
START_TEST(test_intent_limit) {
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *got = NULL;
        SbxSandboxRow row = sandbox("~7:a", 7, SBX_SANDBOX_RUNNING);
        SbxIntentRow in = {
                .owner_uid = 7, .container_name = (char *) "c.pending", .fingerprint = (char *) "f",
                .spec_json = (char *) "{}",
        };
        SbxStore *s = open_ok();

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        in.name = (char *) "~7:b";
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 2, NULL), 1);
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 2, NULL), 1);      /* again: its own does not count */
        in.name = (char *) "~7:c";
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 2, NULL), 2);      /* full */
        ck_assert_int_eq(sbx_store_get_intent(s, "~7:c", &got, NULL), 0);
        in.owner_uid = 8;                                                   /* another owner's */
        ck_assert_int_eq(sbx_store_put_intent(s, &in, 2, NULL), 0);
        ck_assert_int_eq(sbx_store_get_intent(s, "~7:c", &got, NULL), 1);
        sbx_store_close(s);
}
END_TEST

/* A truncated file is a new store: its opener can tell (the daemon then looks for
 * containers whose rows were lost). */
START_TEST(test_truncated_is_created) {
        SbxStore *s = open_ok();
        int fd;

        ck_assert_int_eq(sbx_store_put_sandbox(s, &(SbxSandboxRow) { .name = (char *) "a",
                .container_id = (char *) "c", .spec_json = (char *) "{}", .fingerprint = (char *) "f" }, NULL), 0);
        sbx_store_close(s);
        fd = open(db_path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        close(fd);
        for (const char *suffix = "-wal"; suffix; suffix = streq(suffix, "-wal") ? "-shm" : NULL) {
                char p[sizeof db_path + 4];

                snprintf(p, sizeof p, "%s%s", db_path, suffix);
                (void) unlink(p);
        }
        s = open_ok();
        ck_assert(sbx_store_created(s));
        ck_assert_int_eq(sbx_store_count_sandboxes(s, SBX_STORE_ANY_OWNER, NULL), 0);
        sbx_store_close(s);
}
END_TEST

START_TEST(test_newer_version_refused) {
        _cleanup_free_ char *version = NULL;

        raw_exec("PRAGMA user_version = 99");
        assert_open_refused("schema version 99 is newer");
        version = raw_query("PRAGMA user_version");
        ck_assert_str_eq(version, "99");
}
END_TEST

/* Garbage is refused and left as it was: never silent loss. */
START_TEST(test_garbage_refused) {
        char garbage[8192], back[sizeof garbage];
        int fd;

        for (size_t i = 0; i < sizeof garbage; i++)
                garbage[i] = (char) (i * 131 + 7);
        write_file(db_path, garbage, sizeof garbage, 0600);
        assert_open_refused("file is not a database");

        fd = open(db_path, O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(read(fd, back, sizeof back), (ssize_t) sizeof back);
        ck_assert_int_eq(close(fd), 0);
        ck_assert_int_eq(memcmp(garbage, back, sizeof garbage), 0);
}
END_TEST

/* A valid header over damaged pages: quick_check reports it at open. */
START_TEST(test_corrupt_pages_refused) {
        SbxStore *s = open_ok();
        char junk[4096];
        struct stat st;
        int fd;

        for (int i = 0; i < 200; i++) {
                char name[32];
                SbxSandboxRow row = sandbox(name, 1000, SBX_SANDBOX_RUNNING);

                snprintf(name, sizeof name, "box-%03d", i);
                ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        }
        sbx_store_close(s);     /* the last connection checkpoints the WAL into the file */

        ck_assert_int_eq(stat(db_path, &st), 0);
        ck_assert_int_ge(st.st_size, 4 * 4096);
        memset(junk, 0xa5, sizeof junk);
        fd = open(db_path, O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(pwrite(fd, junk, sizeof junk, 2 * 4096), (ssize_t) sizeof junk);
        ck_assert_int_eq(close(fd), 0);

        assert_open_refused("database is corrupt");
}
END_TEST

START_TEST(test_sandbox_crud) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        SbxSandboxRow row = sandbox("box", 1000, SBX_SANDBOX_RUNNING);
        SbxSandboxRow *got = NULL;
        int64_t created;

        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 0);
        ck_assert_ptr_null(got);

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 1);
        ck_assert_str_eq(got->name, "box");
        ck_assert_int_eq(got->owner_uid, 1000);
        ck_assert_int_eq(got->owner_gid, 1100);
        ck_assert_str_eq(got->container_id, "c0ffee");
        ck_assert_str_eq(got->spec_json, "{\"image\":\"img\"}");
        ck_assert_str_eq(got->fingerprint, "fp1");
        ck_assert_int_eq(got->contract_version, 1);
        ck_assert_int_eq(got->state, SBX_SANDBOX_RUNNING);
        ck_assert_int_gt(got->created_us, 1600000000LL * 1000000);      /* 0 meant "now" */
        ck_assert_int_ge(got->updated_us, got->created_us);
        created = got->created_us;
        got = sbx_sandbox_row_free(got);

        /* upsert: every column replaced, created_us 0 keeps the original */
        row.container_id = (char *) "deadbeef";
        row.fingerprint = (char *) "fp2";
        row.spec_json = (char *) "{}";
        row.contract_version = 2;
        row.state = SBX_SANDBOX_STOPPED;
        row.owner_uid = 1001;
        row.owner_gid = 1234;
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, SBX_STORE_ANY_OWNER, NULL), 1);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 1);
        ck_assert_str_eq(got->container_id, "deadbeef");
        ck_assert_str_eq(got->fingerprint, "fp2");
        ck_assert_str_eq(got->spec_json, "{}");
        ck_assert_int_eq(got->contract_version, 2);
        ck_assert_int_eq(got->state, SBX_SANDBOX_STOPPED);
        ck_assert_int_eq(got->owner_uid, 1001);
        ck_assert_int_eq(got->owner_gid, 1234);
        ck_assert_int_eq(got->created_us, created);
        got = sbx_sandbox_row_free(got);

        /* an explicit created_us is stored */
        row.created_us = 1234567;
        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 1);
        ck_assert_int_eq(got->created_us, 1234567);
        got = sbx_sandbox_row_free(got);

        ck_assert_int_eq(sbx_store_update_sandbox_state(s, "box", SBX_SANDBOX_UNKNOWN, NULL), 1);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 1);
        ck_assert_int_eq(got->state, SBX_SANDBOX_UNKNOWN);
        got = sbx_sandbox_row_free(got);
        /* no row: a no-op, as xagent's update_info_state */
        ck_assert_int_eq(sbx_store_update_sandbox_state(s, "other", SBX_SANDBOX_RUNNING, NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "other", &got, NULL), 0);

        ck_assert_int_eq(sbx_store_delete_sandbox(s, "box", NULL), 1);
        ck_assert_int_eq(sbx_store_delete_sandbox(s, "box", NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, "box", &got, NULL), 0);
        ck_assert_ptr_null(got);
}
END_TEST

/* Names are bound, never spliced into SQL. */
START_TEST(test_sandbox_hostile_name) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *got = NULL;
        const char *name = "x'); DROP TABLE sandboxes; --";
        SbxSandboxRow row = sandbox(name, 1000, SBX_SANDBOX_RUNNING);

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_sandbox(s, name, &got, NULL), 1);
        ck_assert_str_eq(got->name, name);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, 1000, NULL), 1);
}
END_TEST

START_TEST(test_sandbox_invalid_rows) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        SbxSandboxRow row = sandbox("box", 1000, SBX_SANDBOX_RUNNING);
        SbxError e = SBX_ERROR_NULL;

        row.container_id = NULL;
        ck_assert_int_lt(sbx_store_put_sandbox(s, &row, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_str_eq(e.message, "container_id: missing");
        sbx_error_free(&e);

        row = sandbox("box", 1000, (SbxSandboxState) 7);
        ck_assert_int_lt(sbx_store_put_sandbox(s, &row, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_ptr_nonnull(strstr(e.message, "state"));
        sbx_error_free(&e);

        row = sandbox("", 1000, SBX_SANDBOX_RUNNING);
        ck_assert_int_lt(sbx_store_put_sandbox(s, &row, &e), 0);
        ck_assert_str_eq(e.message, "name: missing");
        sbx_error_free(&e);

        ck_assert_int_lt(sbx_store_update_sandbox_state(s, "box", _SBX_SANDBOX_STATE_INVALID, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_store_count_sandboxes(s, SBX_STORE_ANY_OWNER, NULL), 0);
}
END_TEST

/* A row the reader cannot hold (a state no longer known) is an IO error naming the
 * file, for one row and for a list, and nothing is handed out. */
START_TEST(test_sandbox_malformed_row) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        SbxSandboxRow row = sandbox("box", 1000, SBX_SANDBOX_RUNNING), *got = NULL, **list = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        raw_exec("PRAGMA ignore_check_constraints = 1; UPDATE sandboxes SET state = 'paused' WHERE name = 'box'");
        ck_assert_int_lt(sbx_store_get_sandbox(s, "box", &got, &e), 0);
        ck_assert_ptr_null(got);
        ck_assert_int_eq(e.kind, SBX_ERROR_IO);
        ck_assert_msg(strstr(e.message, db_path) && strstr(e.message, "malformed sandbox row"), "%s", e.message);
        sbx_error_free(&e);
        ck_assert_int_lt(sbx_store_list_sandboxes(s, SBX_STORE_ANY_OWNER, &list, &e), 0);
        ck_assert_ptr_null(list);
        ck_assert_msg(strstr(e.message, "malformed sandbox row"), "%s", e.message);
        sbx_error_free(&e);
}
END_TEST

START_TEST(test_sandbox_list_count) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        _cleanup_(sbx_sandbox_row_list_freep) SbxSandboxRow **all = NULL, **mine = NULL, **none = NULL;
        static const struct { const char *name; uid_t owner; } rows[] = {
                { "c", 1000 }, { "a", 1001 }, { "b", 1000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                SbxSandboxRow row = sandbox(rows[i].name, rows[i].owner, SBX_SANDBOX_RUNNING);
                ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        }

        ck_assert_int_eq(sbx_store_list_sandboxes(s, SBX_STORE_ANY_OWNER, &all, NULL), 3);
        ck_assert_str_eq(all[0]->name, "a");
        ck_assert_str_eq(all[1]->name, "b");
        ck_assert_str_eq(all[2]->name, "c");
        ck_assert_ptr_null(all[3]);

        ck_assert_int_eq(sbx_store_list_sandboxes(s, 1000, &mine, NULL), 2);
        ck_assert_str_eq(mine[0]->name, "b");
        ck_assert_str_eq(mine[1]->name, "c");
        ck_assert_int_eq(mine[1]->owner_uid, 1000);
        ck_assert_ptr_null(mine[2]);

        ck_assert_int_eq(sbx_store_list_sandboxes(s, 42, &none, NULL), 0);
        ck_assert_ptr_nonnull(none);
        ck_assert_ptr_null(none[0]);

        ck_assert_int_eq(sbx_store_count_sandboxes(s, 1000, NULL), 2);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, 1001, NULL), 1);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, 42, NULL), 0);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, 0, NULL), 0);
        ck_assert_int_eq(sbx_store_count_sandboxes(s, SBX_STORE_ANY_OWNER, NULL), 3);
}
END_TEST

START_TEST(test_snapshot_crud) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        SbxSnapshotRow row = snapshot("snap", 1000);
        SbxSnapshotRow *got = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_store_get_snapshot(s, "snap", &got, NULL), 0);
        ck_assert_ptr_null(got);

        row.created_us = 42;
        ck_assert_int_eq(sbx_store_add_snapshot(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot(s, "snap", &got, NULL), 1);
        ck_assert_str_eq(got->id, "snap");
        ck_assert_int_eq(got->owner_uid, 1000);
        ck_assert_str_eq(got->source_sandbox, "box");
        ck_assert_str_eq(got->image_id, "sha256:abc");
        ck_assert_str_eq(got->image_tag, "xagent-sandbox-snapshot:snap");
        ck_assert_int_eq(got->created_us, 42);
        got = sbx_snapshot_row_free(got);

        /* a reused id is SnapshotExists and leaves the first row alone */
        row.owner_uid = 2000;
        row.image_id = (char *) "sha256:other";
        ck_assert_int_lt(sbx_store_add_snapshot(s, &row, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_SNAPSHOT_EXISTS);
        ck_assert_ptr_nonnull(strstr(e.message, "snap"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_store_get_snapshot(s, "snap", &got, NULL), 1);
        ck_assert_int_eq(got->owner_uid, 1000);
        ck_assert_str_eq(got->image_id, "sha256:abc");
        got = sbx_snapshot_row_free(got);

        /* created_us 0 means now */
        row = snapshot("snap2", 1000);
        ck_assert_int_eq(sbx_store_add_snapshot(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot(s, "snap2", &got, NULL), 1);
        ck_assert_int_gt(got->created_us, 1600000000LL * 1000000);
        got = sbx_snapshot_row_free(got);

        row.image_tag = NULL;
        ck_assert_int_lt(sbx_store_add_snapshot(s, &row, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_str_eq(e.message, "image_tag: missing");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_store_delete_snapshot(s, "snap", NULL), 1);
        ck_assert_int_eq(sbx_store_delete_snapshot(s, "snap", NULL), 0);
        ck_assert_int_eq(sbx_store_get_snapshot(s, "snap", &got, NULL), 0);
        /* the id is free again */
        row = snapshot("snap", 1000);
        ck_assert_int_eq(sbx_store_add_snapshot(s, &row, NULL), 0);
}
END_TEST

START_TEST(test_snapshot_list) {
        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        _cleanup_(sbx_snapshot_row_list_freep) SbxSnapshotRow **all = NULL, **mine = NULL, **none = NULL;
        static const struct { const char *id; uid_t owner; } rows[] = {
                { "s3", 1000 }, { "s1", 1001 }, { "s2", 1000 },
        };

        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                SbxSnapshotRow row = snapshot(rows[i].id, rows[i].owner);
                ck_assert_int_eq(sbx_store_add_snapshot(s, &row, NULL), 0);
        }
        ck_assert_int_eq(sbx_store_list_snapshots(s, SBX_STORE_ANY_OWNER, &all, NULL), 3);
        ck_assert_str_eq(all[0]->id, "s1");
        ck_assert_str_eq(all[2]->id, "s3");
        ck_assert_ptr_null(all[3]);
        ck_assert_int_eq(sbx_store_list_snapshots(s, 1000, &mine, NULL), 2);
        ck_assert_str_eq(mine[0]->id, "s2");
        ck_assert_str_eq(mine[1]->id, "s3");
        ck_assert_int_eq(sbx_store_list_snapshots(s, 7, &none, NULL), 0);
        ck_assert_ptr_null(none[0]);
}
END_TEST

/* Another process (a backup or monitoring script) opening the database read-write:
 * "read" counts the rows, "exclusive" holds BEGIN EXCLUSIVE a while first. Returns
 * the count it read. */
static long outside_connection(const char *mode) {
        static const char script[] =
                "import sqlite3, sys, time\n"
                "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
                "if sys.argv[2] == 'exclusive':\n"
                "    c.execute('BEGIN EXCLUSIVE'); time.sleep(0.3); c.execute('COMMIT')\n"
                "print(c.execute('SELECT COUNT(*) FROM sandboxes').fetchone()[0])\n"
                "c.close()\n";
        char cmd[sizeof script + sizeof db_path + 64], out[32] = "";
        FILE *f;
        long n;

        snprintf(cmd, sizeof cmd, "/usr/bin/python3 -c \"%s\" '%s' %s", script, db_path, mode);
        f = popen(cmd, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(out, sizeof out, f));
        ck_assert_int_eq(pclose(f), 0);
        n = strtol(out, NULL, 10);
        return n;
}

static ino_t wal_inode(void) {
        char wal[sizeof db_path + 4];
        struct stat st;

        snprintf(wal, sizeof wal, "%s-wal", db_path);
        ck_assert_msg(stat(wal, &st) == 0, "%s: %m", wal);
        return st.st_ino;
}

static void put_ok(SbxStore *s, const char *name) {
        SbxSandboxRow row = sandbox(name, 1000, SBX_SANDBOX_RUNNING);
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_store_put_sandbox(s, &row, &e);

        ck_assert_msg(r == 0, "put %s: %d %s", name, r, e.message);
}

static void get_ok(SbxStore *s, const char *name) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_store_get_sandbox(s, name, &row, &e);

        ck_assert_msg(r == 1, "get %s: %d %s", name, r, e.message);
}

/* Two workers' connections (the second open must not drop the first's locks): an
 * outside reader, then an outside exclusive writer, leave the live WAL in place, and
 * both connections keep reading and writing. */
START_TEST(test_outside_connection_keeps_wal) {
        _cleanup_(sbx_store_closep) SbxStore *s1 = open_ok();
        ino_t ino;

        put_ok(s1, "a");
        ino = wal_inode();
        _cleanup_(sbx_store_closep) SbxStore *s2 = open_ok();

        ck_assert_int_eq(outside_connection("read"), 1);
        ck_assert_msg(wal_inode() == ino, "the live WAL was replaced");
        ck_assert_int_eq(outside_connection("exclusive"), 1);
        ck_assert_msg(wal_inode() == ino, "the live WAL was replaced");

        put_ok(s1, "b");
        put_ok(s2, "c");
        get_ok(s1, "c");
        get_ok(s2, "b");
        ck_assert_int_eq(sbx_store_count_sandboxes(s1, SBX_STORE_ANY_OWNER, NULL), 3);
        ck_assert_int_eq(outside_connection("read"), 3);
}
END_TEST

static char read_byte(int fd) {
        char c = 0;

        ck_assert_int_eq(read(fd, &c, 1), 1);
        return c;
}

static void send_byte(int fd, char c) {
        ck_assert_int_eq(write(fd, &c, 1), 1);
}

/* The writer of the daemon's rows (two connections) in a child: 'r' once each row is
 * written, 'x' on a failure. */
__attribute__((noreturn)) static void killed_writer(int to_parent, int from_parent) {
        SbxStore *s1 = NULL, *s2 = NULL;
        SbxSandboxRow a = sandbox("a", 1000, SBX_SANDBOX_RUNNING), b = sandbox("b", 1000, SBX_SANDBOX_RUNNING);

        if (sbx_store_open(dir, &s1, NULL) < 0 || sbx_store_put_sandbox(s1, &a, NULL) < 0 ||
            sbx_store_open(dir, &s2, NULL) < 0) {
                send_byte(to_parent, 'x');
                _exit(EXIT_FAILURE);
        }
        send_byte(to_parent, 'r');
        (void) read_byte(from_parent);
        send_byte(to_parent, sbx_store_put_sandbox(s1, &b, NULL) == 0 ? 'r' : 'x');
        for (;;)
                pause();
}

/* Rows written after an outside connection came and went survive a SIGKILL of the
 * process that wrote them (they went to the live WAL, not to an unlinked one). */
START_TEST(test_outside_connection_then_kill_keeps_rows) {
        int up[2], down[2], status;
        pid_t pid;

        ck_assert_int_eq(pipe(up), 0);
        ck_assert_int_eq(pipe(down), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                killed_writer(up[1], down[0]);

        ck_assert_int_eq(read_byte(up[0]), 'r');
        ck_assert_int_eq(outside_connection("read"), 1);
        ck_assert_int_eq(outside_connection("exclusive"), 1);
        send_byte(down[1], 'g');
        ck_assert_int_eq(read_byte(up[0]), 'r');
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);

        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        get_ok(s, "a");
        get_ok(s, "b");
        for (int i = 0; i < 2; i++) {
                close(up[i]);
                close(down[i]);
        }
}
END_TEST

#define N_WRITERS 4
#define ROWS_PER_WRITER 50

static pthread_barrier_t writers_start;

/* A worker: its own connection, its own rows. */
static void *writer(void *arg) {
        SbxStore *s = NULL;
        intptr_t id = (intptr_t) arg;
        intptr_t failures = 0;

        SbxError e = SBX_ERROR_NULL;

        pthread_barrier_wait(&writers_start);
        if (sbx_store_open(dir, &s, &e) < 0) {
                fprintf(stderr, "open: %s\n", e.message);
                sbx_error_free(&e);
                return (void *) (intptr_t) -1;
        }
        for (int i = 0; i < ROWS_PER_WRITER; i++) {
                char name[32];
                SbxSandboxRow row = sandbox(name, (uid_t) id, SBX_SANDBOX_RUNNING);

                snprintf(name, sizeof name, "w%d-%02d", (int) id, i);
                if (sbx_store_put_sandbox(s, &row, &e) < 0 ||
                    sbx_store_update_sandbox_state(s, name, SBX_SANDBOX_STOPPED, &e) != 1) {
                        fprintf(stderr, "writer %d, row %d: %s\n", (int) id, i, e.message ?: "not updated");
                        sbx_error_free(&e);
                        failures++;
                }
        }
        sbx_store_close(s);
        return (void *) failures;
}

/* Connections of concurrent workers, including their first open of a fresh file
 * (concurrent migration), never lose a write. */
START_TEST(test_concurrent_connections) {
        pthread_t threads[N_WRITERS];

        ck_assert_int_eq(pthread_barrier_init(&writers_start, NULL, N_WRITERS), 0);
        for (intptr_t i = 0; i < N_WRITERS; i++)
                ck_assert_int_eq(pthread_create(&threads[i], NULL, writer, (void *) i), 0);
        for (int i = 0; i < N_WRITERS; i++) {
                void *failures;

                ck_assert_int_eq(pthread_join(threads[i], &failures), 0);
                ck_assert_int_eq((intptr_t) failures, 0);
        }
        pthread_barrier_destroy(&writers_start);

        _cleanup_(sbx_store_closep) SbxStore *s = open_ok();
        ck_assert_int_eq(sbx_store_count_sandboxes(s, SBX_STORE_ANY_OWNER, NULL), N_WRITERS * ROWS_PER_WRITER);
        for (int i = 0; i < N_WRITERS; i++)
                ck_assert_int_eq(sbx_store_count_sandboxes(s, (uid_t) i, NULL), ROWS_PER_WRITER);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("store");
        TCase *tc = tcase_create("store");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_state_strings);
        tcase_add_test(tc, test_open_fresh);
        tcase_add_test(tc, test_detached_rows);
        tcase_add_test(tc, test_existing_mode_tightened);
        tcase_add_test(tc, test_missing_dir);
        tcase_add_test(tc, test_reopen_keeps_rows);
        tcase_add_test(tc, test_newer_version_refused);
        tcase_add_test(tc, test_migration_to_owner_names);
        tcase_add_test(tc, test_garbage_refused);
        tcase_add_test(tc, test_corrupt_pages_refused);
        tcase_add_test(tc, test_sandbox_crud);
        tcase_add_test(tc, test_sandbox_hostile_name);
        tcase_add_test(tc, test_sandbox_invalid_rows);
        tcase_add_test(tc, test_sandbox_malformed_row);
        tcase_add_test(tc, test_sandbox_list_count);
        tcase_add_test(tc, test_snapshot_crud);
        tcase_add_test(tc, test_snapshot_list);
        tcase_add_test(tc, test_concurrent_connections);
        tcase_add_test(tc, test_intents);
        tcase_add_test(tc, test_intent_limit);
        tcase_add_test(tc, test_snapshot_intents);
        tcase_add_test(tc, test_migration_to_snapshot_intents);
        tcase_add_test(tc, test_migration_to_labels);
        tcase_add_test(tc, test_truncated_is_created);
        tcase_add_test(tc, test_outside_connection_keeps_wal);
        tcase_add_test(tc, test_outside_connection_then_kill_keeps_rows);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
