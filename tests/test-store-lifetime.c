/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The lifetimes of schema 7 (store-lifetime.c), and the migration from a real schema-6
 * database (tests/data/store-schema6.db, written by the schema-6 store of main: one
 * running sandbox '~1001:kept' with labels). */

#include "sbx-test.h"
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <unistd.h>

#include "store.h"

#define STORE_DIR_TEMPLATE "/tmp/sbx-test-store-lifetime-XXXXXX"
#include "store-fixture.h"

static void copy_schema6(void) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        char buf[65536];
        ssize_t n;
        int in, out;

        ck_assert_msg(root, "SBX_SOURCE_ROOT is not set");
        ck_assert_int_gt(asprintf(&path, "%s/tests/data/store-schema6.db", root), 0);
        in = open(path, O_RDONLY | O_CLOEXEC);
        ck_assert_msg(in >= 0, "cannot open %s", path);
        out = open(db_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        ck_assert_int_ge(out, 0);
        while ((n = read(in, buf, sizeof buf)) > 0)
                ck_assert_int_eq(write(out, buf, (size_t) n), n);
        ck_assert_int_eq(n, 0);
        close(in);
        close(out);
}

static char *raw_query(const char *sql) {
        sqlite3 *db;
        sqlite3_stmt *st;
        char *v = NULL;

        ck_assert_int_eq(sqlite3_open(db_path, &db), SQLITE_OK);
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
        if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
                v = strdup((const char *) sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

START_TEST(test_migration_from_schema6) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *got = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL;
        SbxLifetimeRow *rows = NULL;
        size_t n = 99;
        SbxStore *s;

        copy_schema6();
        before = raw_query("PRAGMA user_version");
        ck_assert_str_eq(before, "6");
        s = open_ok();
        after = raw_query("PRAGMA user_version");
        ck_assert_str_eq(after, "9");
        /* The row is kept, every field of it. */
        ck_assert_int_eq(sbx_store_get_sandbox(s, "~1001:kept", &got, NULL), 1);
        ck_assert_str_eq(got->container_id, "c0ffee");
        ck_assert_str_eq(got->fingerprint, "f6");
        ck_assert_int_eq(got->owner_uid, 1001);
        ck_assert_int_eq(got->state, SBX_SANDBOX_RUNNING);
        ck_assert_int_eq(got->created_us, 1700000000000000);
        ck_assert_str_eq(got->labels_json, "{\"task\":\"6\"}");
        /* It has no lifetime: no deadline. */
        ck_assert_int_eq(sbx_store_list_lifetimes(s, &rows, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        sbx_lifetime_rows_free(rows, n);
        sbx_store_close(s);
}
END_TEST

/* Written, touched (never backwards), listed, and gone with the sandbox's row. */
START_TEST(test_lifetime_rows) {
        SbxSandboxRow row = {
                .name = (char *) "~7:box", .owner_uid = 7, .owner_gid = 7, .container_id = (char *) "c",
                .spec_json = (char *) "{}", .fingerprint = (char *) "f", .contract_version = 1,
                .state = SBX_SANDBOX_RUNNING, .created_us = 5,
        };
        SbxLifetimeRow lt = { .name = (char *) "~7:box", .idle_timeout_s = 30, .expire_at_us = 9000000,
                              .on_idle_pause = true, .counts_processes = true, .last_activity_us = 100 },
                       orphan = { .name = (char *) "~7:gone", .idle_timeout_s = 30 }, got, *rows = NULL;
        SbxStore *s = open_ok();
        size_t n = 0;

        ck_assert_int_eq(sbx_store_put_sandbox(s, &row, NULL), 0);
        ck_assert_int_eq(sbx_store_put_lifetime(s, &lt, NULL), 0);
        /* No row for a sandbox that has none. */
        ck_assert_int_eq(sbx_store_put_lifetime(s, &orphan, NULL), -ENXIO);
        ck_assert_int_eq(sbx_store_get_lifetime(s, "~7:gone", &got, NULL), 0);
        ck_assert_ptr_null(got.name);
        ck_assert_int_eq(sbx_store_touch_lifetime(s, "~7:box", 200, NULL), 0);
        ck_assert_int_eq(sbx_store_touch_lifetime(s, "~7:box", 150, NULL), 0);
        ck_assert_int_eq(sbx_store_touch_lifetime(s, "~7:none", 150, NULL), 0);
        ck_assert_int_eq(sbx_store_list_lifetimes(s, &rows, &n, NULL), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(rows[0].name, "~7:box");
        ck_assert_uint_eq(rows[0].idle_timeout_s, 30);
        ck_assert_uint_eq(rows[0].expire_at_us, 9000000);
        ck_assert(rows[0].on_idle_pause);
        ck_assert_uint_eq(rows[0].last_activity_us, 200);
        ck_assert(rows[0].counts_processes);
        sbx_lifetime_rows_free(rows, n);
        ck_assert_int_eq(sbx_store_get_lifetime(s, "~7:box", &got, NULL), 1);
        ck_assert_str_eq(got.name, "~7:box");
        ck_assert_uint_eq(got.idle_timeout_s, 30);
        ck_assert(got.counts_processes && got.on_idle_pause);
        free(got.name);

        ck_assert_int_eq(sbx_store_delete_sandbox(s, "~7:box", NULL), 1);
        ck_assert_int_eq(sbx_store_list_lifetimes(s, &rows, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        sbx_lifetime_rows_free(rows, n);
        sbx_store_close(s);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("store-lifetime");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_migration_from_schema6);
        tcase_add_test(tc, test_lifetime_rows);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
