/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What store-open.c (opening, schema, migrations) and store-rows.c (the rows) share. */

#include <sqlite3.h>

#include "store.h"

typedef enum StoreStatement {
        STMT_PUT_SANDBOX,
        STMT_GET_SANDBOX,
        STMT_UPDATE_SANDBOX_STATE,
        STMT_DELETE_SANDBOX,
        STMT_LIST_SANDBOXES,
        STMT_COUNT_SANDBOXES,
        STMT_ADD_SNAPSHOT,
        STMT_GET_SNAPSHOT,
        STMT_DELETE_SNAPSHOT,
        STMT_LIST_SNAPSHOTS,
        STMT_PUT_INTENT,
        STMT_GET_INTENT,
        STMT_DELETE_INTENT,
        STMT_LIST_INTENTS,
        STMT_COUNT_OWNED,
        STMT_PUT_SNAPSHOT_INTENT,
        STMT_GET_SNAPSHOT_INTENT,
        STMT_ABANDON_SNAPSHOT_INTENT,
        STMT_DELETE_SNAPSHOT_INTENT,
        STMT_LIST_SNAPSHOT_INTENTS,
        _STMT_MAX,
} StoreStatement;

struct SbxStore {
        sqlite3 *db;
        char *path;
        bool created;           /* the file held no schema when opened: made just now */
        sqlite3_stmt *statements[_STMT_MAX];
};

/* Records sqlite's current error for the store's file: "PATH: what: message". */
int store_fail(SbxStore *s, SbxError *error, const char *what);
void statement_resetp(sqlite3_stmt **st);
int store_exec(SbxStore *s, const char *sql, const char *what, SbxError *error);
