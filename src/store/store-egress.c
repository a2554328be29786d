/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A sandbox's egress (schema 9: a column of its row, egress.h's stored form), changed by
 * SetSandboxEgress. Prepared per call, as the lifetimes. */

#include "store-internal.h"
#include "time-util.h"

static void finalizep(sqlite3_stmt **st) {
        sqlite3_finalize(*st);
}

int sbx_store_set_sandbox_egress(SbxStore *s, const char *name, const char *egress_json, SbxError *error) {
        _cleanup_(finalizep) sqlite3_stmt *st = NULL;

        if (sqlite3_prepare_v2(s->db, "UPDATE sandboxes SET egress_json = ?, updated_us = ? WHERE name = ?", -1, &st,
                               NULL) != SQLITE_OK)
                return store_fail(s, error, "cannot prepare");
        if (sqlite3_bind_text(st, 1, egress_json ?: "", -1, SQLITE_STATIC) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, (sqlite3_int64) sbx_now_realtime_us()) != SQLITE_OK ||
            sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC) != SQLITE_OK)
                return store_fail(s, error, "cannot bind");
        if (sqlite3_step(st) != SQLITE_DONE)
                return store_fail(s, error, "cannot write a sandbox's egress");
        return sqlite3_changes(s->db) > 0;
}
