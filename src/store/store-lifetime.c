/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The sandboxes' lifetimes (schema 7; idle_counts_processes since 8): one row each for those with a deadline,
 * written at create and when their activity moves (at most every few seconds: the
 * daemon's flush), read once at start-up. Prepared per call, as the detached rows. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store-internal.h"

#define SBX_LIFETIMES_MAX 65536U
#define COLUMNS "name, idle_timeout_s, expire_at_us, on_idle_pause, last_activity_us, counts_processes"

void sbx_lifetime_rows_free(SbxLifetimeRow *rows, size_t n) {
        for (size_t i = 0; rows && i < n; i++)
                free(rows[i].name);
        free(rows);
}

static void finalizep(sqlite3_stmt **st) {
        sqlite3_finalize(*st);
}

static int prepare(SbxStore *s, const char *sql, sqlite3_stmt **ret, SbxError *error) {
        return sqlite3_prepare_v2(s->db, sql, -1, ret, NULL) == SQLITE_OK ? 0 : store_fail(s, error, "cannot prepare");
}

int sbx_store_put_lifetime(SbxStore *s, const SbxLifetimeRow *row, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if (isempty(row->name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "lifetime: no sandbox name");
        if ((r = prepare(s, "INSERT OR REPLACE INTO lifetimes (" COLUMNS ") SELECT ?1, ?2, ?3, ?4, ?5, ?6 "
                            "WHERE EXISTS (SELECT 1 FROM sandboxes WHERE name = ?1)", &st, error)) < 0)
                return r;
        if (sqlite3_bind_text(st, 1, row->name, -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, (sqlite3_int64) row->idle_timeout_s) != SQLITE_OK ||
            sqlite3_bind_int64(st, 3, (sqlite3_int64) row->expire_at_us) != SQLITE_OK ||
            sqlite3_bind_int(st, 4, row->on_idle_pause) != SQLITE_OK ||
            sqlite3_bind_int64(st, 5, (sqlite3_int64) row->last_activity_us) != SQLITE_OK ||
            sqlite3_bind_int(st, 6, row->counts_processes) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        if (sqlite3_step(st) != SQLITE_DONE)
                return store_fail(s, error, "cannot write a lifetime");
        /* Never a row without its sandbox's (it would outlive it: the trigger is gone). */
        if (sqlite3_changes(s->db) == 0)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "No sandbox '%s' in the store", row->name);
        return 0;
}

static int delete_lifetime(SbxStore *s, const char *name, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if ((r = prepare(s, "DELETE FROM lifetimes WHERE name = ?", &st, error)) < 0)
                return r;
        if (sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, error, "cannot delete a lifetime");
}

int sbx_store_put_sandbox_with_lifetime(SbxStore *s, const SbxSandboxRow *row, const SbxLifetimeRow *lifetime,
                                        SbxError *error) {
        int r;

        if ((r = store_exec(s, "BEGIN IMMEDIATE", "cannot begin", error)) < 0)
                return r;
        r = sbx_store_put_sandbox(s, row, error);
        if (r >= 0)
                r = lifetime ? sbx_store_put_lifetime(s, lifetime, error) : delete_lifetime(s, row->name, error);
        if (r >= 0)
                r = store_exec(s, "COMMIT", "cannot commit", error);
        if (r < 0)
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

int sbx_store_rebase_lifetime(SbxStore *s, const char *name, uint64_t last_activity_us, uint64_t expire_at_us,
                              SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if ((r = prepare(s, "UPDATE lifetimes SET last_activity_us = ?, expire_at_us = ? WHERE name = ?", &st,
                         error)) < 0)
                return r;
        if (sqlite3_bind_int64(st, 1, (sqlite3_int64) last_activity_us) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, (sqlite3_int64) expire_at_us) != SQLITE_OK ||
            sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, error, "cannot write a sandbox's lifetime");
}

int sbx_store_touch_lifetime(SbxStore *s, const char *name, uint64_t last_activity_us, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        if ((r = prepare(s, "UPDATE lifetimes SET last_activity_us = MAX(last_activity_us, ?) WHERE name = ?", &st,
                         error)) < 0)
                return r;
        if (sqlite3_bind_int64(st, 1, (sqlite3_int64) last_activity_us) != SQLITE_OK ||
            sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        return sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, error, "cannot write a sandbox's activity");
}

/* A row read back; a garbage one (negative numbers) is skipped. */
static int read_row(sqlite3_stmt *st, SbxLifetimeRow *row) {
        const unsigned char *name = sqlite3_column_text(st, 0);
        int64_t idle = sqlite3_column_int64(st, 1), expire = sqlite3_column_int64(st, 2),
                last = sqlite3_column_int64(st, 4);

        if (!name || idle < 0 || idle > UINT32_MAX || expire < 0 || last < 0)
                return -EBADMSG;
        *row = (SbxLifetimeRow) { .idle_timeout_s = (uint32_t) idle, .expire_at_us = (uint64_t) expire,
                                  .on_idle_pause = sqlite3_column_int(st, 3) != 0,
                                  .counts_processes = sqlite3_column_int(st, 5) != 0,
                                  .last_activity_us = (uint64_t) last };
        row->name = strdup((const char *) name);
        return row->name ? 0 : -ENOMEM;
}

int sbx_store_list_lifetimes(SbxStore *s, SbxLifetimeRow **ret, size_t *ret_n, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        SbxLifetimeRow *rows = NULL;
        size_t n = 0, allocated = 0;
        int r;

        *ret = NULL;
        *ret_n = 0;
        if ((r = prepare(s, "SELECT " COLUMNS " FROM lifetimes ORDER BY name", &st, error)) < 0)
                return r;
        while (n < SBX_LIFETIMES_MAX && (r = sqlite3_step(st)) == SQLITE_ROW) {
                if (n == allocated) {
                        SbxLifetimeRow *bigger = reallocarray(rows, allocated * 2 + 16, sizeof(SbxLifetimeRow));

                        if (!bigger) {
                                sbx_lifetime_rows_free(rows, n);
                                return -ENOMEM;
                        }
                        rows = bigger;
                        allocated = allocated * 2 + 16;
                }
                r = read_row(st, &rows[n]);
                if (r == -ENOMEM) {
                        sbx_lifetime_rows_free(rows, n);
                        return r;
                }
                if (r >= 0)
                        n++;
        }
        *ret = rows;
        *ret_n = n;
        return 0;
}

int sbx_store_get_lifetime(SbxStore *s, const char *name, SbxLifetimeRow *ret, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;
        int r;

        *ret = (SbxLifetimeRow) {};
        if ((r = prepare(s, "SELECT " COLUMNS " FROM lifetimes WHERE name = ?", &st, error)) < 0)
                return r;
        if (sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        r = sqlite3_step(st);
        if (r == SQLITE_DONE)
                return 0;
        if (r != SQLITE_ROW)
                return store_fail(s, error, "cannot read a lifetime");
        r = read_row(st, ret);
        if (r == -EBADMSG) {
                *ret = (SbxLifetimeRow) {};
                return 0;       /* garbage: as none */
        }
        return r < 0 ? r : 1;
}
