/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The rows of detached processes (schema 5): few and rarely written, so prepared
 * per call rather than kept with the store's statements. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

void sbx_detached_row_done(SbxDetachedRow *row) {
        free(row->id);
        free(row->sandbox);
        free(row->container_id);
        free(row->argv0);
        free(row->token);
        *row = (SbxDetachedRow) {};
}

void sbx_detached_rows_free(SbxDetachedRow *rows, size_t n) {
        for (size_t i = 0; i < n; i++)
                sbx_detached_row_done(&rows[i]);
        free(rows);
}

static void finalizep(sqlite3_stmt **st) {
        sqlite3_finalize(*st);
}

static int prepare(SbxStore *s, const char *sql, sqlite3_stmt **ret, SbxError *error) {
        return sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) == SQLITE_OK ? 0 : store_fail(s, error, "cannot prepare");
}

int sbx_store_put_detached(SbxStore *s, const SbxDetachedRow *row, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if (isempty(row->id) || isempty(row->sandbox) || isempty(row->container_id) || !row->argv0 ||
            isempty(row->token))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "detached exec: a field is missing");
        if ((r = prepare(s, "INSERT OR REPLACE INTO detached_execs (id, sandbox, container_id, owner_uid, "
                            "caller_uid, argv0, token, started_us) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", &st, error)) < 0)
                return r;
        if (sqlite3_bind_text(st, 1, row->id, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_text(st, 2, row->sandbox, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_text(st, 3, row->container_id, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 4, (sqlite3_int64) row->owner) != SQLITE_OK ||
            sqlite3_bind_int64(st, 5, (sqlite3_int64) row->caller) != SQLITE_OK ||
            sqlite3_bind_text(st, 6, row->argv0, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_text(st, 7, row->token, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 8, (sqlite3_int64) row->started_us) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, error, "cannot write a detached exec");
}

int sbx_store_delete_detached(SbxStore *s, const char *id, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if ((r = prepare(s, "DELETE FROM detached_execs WHERE id = ?", &st, error)) < 0)
                return r;
        if (sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, error, "cannot delete a detached exec");
}

static int column_dup(sqlite3_stmt *st, int i, char **ret) {
        const unsigned char *v = sqlite3_column_text(st, i);

        *ret = strdup(v ? (const char *) v : "");
        return *ret ? 0 : -ENOMEM;
}

static int read_row(sqlite3_stmt *st, SbxDetachedRow *row) {
        int64_t owner = sqlite3_column_int64(st, 3), caller = sqlite3_column_int64(st, 4);

        if (owner < 0 || owner > UINT32_MAX - 1 || caller < 0 || caller > UINT32_MAX - 1)
                return -EBADMSG;
        row->owner = (uid_t) owner;
        row->caller = (uid_t) caller;
        row->started_us = (uint64_t) sqlite3_column_int64(st, 7);
        if (column_dup(st, 0, &row->id) < 0 || column_dup(st, 1, &row->sandbox) < 0 ||
            column_dup(st, 2, &row->container_id) < 0 || column_dup(st, 5, &row->argv0) < 0 ||
            column_dup(st, 6, &row->token) < 0)
                return -ENOMEM;
        return 0;
}

int sbx_store_list_detached(SbxStore *s, size_t max, SbxDetachedRow **ret, size_t *ret_n, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        SbxDetachedRow *rows = NULL;
        size_t n = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if ((r = prepare(s, "SELECT id, sandbox, container_id, owner_uid, caller_uid, argv0, token, started_us "
                            "FROM detached_execs ORDER BY started_us", &st, error)) < 0)
                return r;
        rows = calloc(max ?: 1, sizeof(SbxDetachedRow));
        if (!rows)
                return -ENOMEM;
        while (n < max && sqlite3_step(st) == SQLITE_ROW) {
                r = read_row(st, &rows[n]);
                if (r == -ENOMEM) {
                        sbx_detached_rows_free(rows, n + 1);
                        return r;
                }
                if (r < 0)
                        sbx_detached_row_done(&rows[n]);        /* a garbage row is skipped */
                else
                        n++;
        }
        *ret = rows;
        *ret_n = n;
        return 0;
}
