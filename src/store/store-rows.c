/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-internal.h"
#include "time-util.h"

#define SANDBOX_COLUMNS \
        "name, owner_uid, container_id, spec_json, fingerprint, contract_version, state, created_us, updated_us, " \
        "owner_gid, labels_json, egress_json"
#define SNAPSHOT_COLUMNS \
        "id, owner_uid, source_sandbox, image_id, image_tag, created_us"
#define INTENT_COLUMNS \
        "name, owner_uid, owner_gid, container_name, fingerprint, spec_json, created_us, labels_json, egress_json"
#define SNAPSHOT_INTENT_COLUMNS \
        "id, owner_uid, source_sandbox, image_tag, token, abandoned, created_us"

/* Owner filters bind -1 for "any owner". */
static const char *const statement_sql[_STMT_MAX] = {
        [STMT_PUT_SANDBOX] =
                "INSERT INTO sandboxes(" SANDBOX_COLUMNS ") "
                "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, COALESCE(?8, ?9), ?9, ?10, ?11, ?12) "
                "ON CONFLICT(name) DO UPDATE SET "
                "owner_uid = excluded.owner_uid, owner_gid = excluded.owner_gid, container_id = excluded.container_id, "
                "spec_json = excluded.spec_json, fingerprint = excluded.fingerprint, "
                "contract_version = excluded.contract_version, state = excluded.state, labels_json = excluded.labels_json, "
                "egress_json = excluded.egress_json, created_us = COALESCE(?8, sandboxes.created_us), updated_us = excluded.updated_us",
        [STMT_GET_SANDBOX] =
                "SELECT " SANDBOX_COLUMNS " FROM sandboxes WHERE name = ?1",
        [STMT_UPDATE_SANDBOX_STATE] =
                "UPDATE sandboxes SET state = ?2, updated_us = ?3 WHERE name = ?1",
        [STMT_DELETE_SANDBOX] =
                "DELETE FROM sandboxes WHERE name = ?1",
        [STMT_LIST_SANDBOXES] =
                "SELECT " SANDBOX_COLUMNS " FROM sandboxes WHERE ?1 < 0 OR owner_uid = ?1 ORDER BY name",
        [STMT_COUNT_SANDBOXES] =
                "SELECT COUNT(*) FROM sandboxes WHERE ?1 < 0 OR owner_uid = ?1",
        [STMT_ADD_SNAPSHOT] =
                "INSERT INTO snapshots(" SNAPSHOT_COLUMNS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
        [STMT_GET_SNAPSHOT] =
                "SELECT " SNAPSHOT_COLUMNS " FROM snapshots WHERE id = ?1",
        [STMT_DELETE_SNAPSHOT] =
                "DELETE FROM snapshots WHERE id = ?1",
        [STMT_LIST_SNAPSHOTS] =
                "SELECT " SNAPSHOT_COLUMNS " FROM snapshots WHERE ?1 < 0 OR owner_uid = ?1 ORDER BY id",
        [STMT_PUT_INTENT] =
                "INSERT OR REPLACE INTO intents(" INTENT_COLUMNS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        [STMT_GET_INTENT] =
                "SELECT " INTENT_COLUMNS " FROM intents WHERE name = ?1",
        [STMT_DELETE_INTENT] =
                "DELETE FROM intents WHERE name = ?1",
        [STMT_COUNT_OWNED] =
                "SELECT (SELECT COUNT(*) FROM sandboxes WHERE owner_uid = ?1 AND name != ?2) + "
                "       (SELECT COUNT(*) FROM intents WHERE owner_uid = ?1 AND name != ?2)",
        [STMT_LIST_INTENTS] =
                "SELECT " INTENT_COLUMNS " FROM intents WHERE ?1 < 0 OR owner_uid = ?1 ORDER BY name",
        [STMT_PUT_SNAPSHOT_INTENT] =
                "INSERT OR REPLACE INTO snapshot_intents(" SNAPSHOT_INTENT_COLUMNS ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        [STMT_GET_SNAPSHOT_INTENT] =
                "SELECT " SNAPSHOT_INTENT_COLUMNS " FROM snapshot_intents WHERE id = ?1",
        [STMT_ABANDON_SNAPSHOT_INTENT] =
                "UPDATE snapshot_intents SET abandoned = 1 WHERE id = ?1",
        [STMT_DELETE_SNAPSHOT_INTENT] =
                "DELETE FROM snapshot_intents WHERE id = ?1",
        [STMT_LIST_SNAPSHOT_INTENTS] =
                "SELECT " SNAPSHOT_INTENT_COLUMNS " FROM snapshot_intents WHERE ?1 < 0 OR owner_uid = ?1 ORDER BY id",
};

static const char *const state_names[_SBX_SANDBOX_STATE_MAX] = {
        [SBX_SANDBOX_RUNNING] = "running",
        [SBX_SANDBOX_STOPPED] = "stopped",
        [SBX_SANDBOX_UNKNOWN] = "unknown",
};

const char *sbx_sandbox_state_to_string(SbxSandboxState s) {
        if (s < 0 || s >= _SBX_SANDBOX_STATE_MAX)
                return NULL;
        return state_names[s];
}

SbxSandboxState sbx_sandbox_state_from_string(const char *s) {
        if (!s)
                return _SBX_SANDBOX_STATE_INVALID;
        for (SbxSandboxState i = 0; i < _SBX_SANDBOX_STATE_MAX; i++)
                if (streq(state_names[i], s))
                        return i;
        return _SBX_SANDBOX_STATE_INVALID;
}

/* A NULL-terminated array of rows and every row in it. */
#define DEFINE_ROW_LIST_FREE(type, prefix)                       \
        type **prefix##_list_free(type **rows) {                 \
                if (!rows)                                       \
                        return NULL;                             \
                for (type **r = rows; *r; r++)                   \
                        prefix##_free(*r);                       \
                free(rows);                                      \
                return NULL;                                     \
        }

SbxSandboxRow *sbx_sandbox_row_free(SbxSandboxRow *row) {
        if (!row)
                return NULL;
        free(row->name);
        free(row->container_id);
        free(row->spec_json);
        free(row->fingerprint);
        free(row->labels_json);
        free(row->egress_json);
        free(row);
        return NULL;
}

DEFINE_ROW_LIST_FREE(SbxSandboxRow, sbx_sandbox_row);

SbxSnapshotRow *sbx_snapshot_row_free(SbxSnapshotRow *row) {
        if (!row)
                return NULL;
        free(row->id);
        free(row->source_sandbox);
        free(row->image_id);
        free(row->image_tag);
        free(row);
        return NULL;
}

DEFINE_ROW_LIST_FREE(SbxSnapshotRow, sbx_snapshot_row);

/* ---- row types -------------------------------------------------------------------- */

/* How a column's value is read into its field. */
typedef enum ColumnKind {
        COLUMN_TEXT,            /* char *; NULL is a malformed row */
        COLUMN_INT64,
        COLUMN_UID,
        COLUMN_GID,
        COLUMN_BOOL,
        COLUMN_SANDBOX_STATE,   /* SbxSandboxState, stored by its name */
} ColumnKind;

/* A column of a row type: its name in the SELECT, how it is read, and its field. The
 * table's order is the SELECT's (*_COLUMNS above): a column's index is its place in
 * the table, and store_statement() holds every row statement to it by name. */
typedef struct Column {
        const char *name;
        ColumnKind kind;
        size_t offset;
} Column;

typedef void *(*RowFree)(void *row);

typedef struct RowType {
        const char *what;       /* in "malformed <what> row" */
        size_t size;
        const Column *columns;
        size_t n_columns;
        RowFree free;
} RowType;

/* The field and the column have the same name. */
#define COLUMN(R, field, kind) { #field, COLUMN_##kind, offsetof(R, field) }
#define ROW_TYPE(R, w, cols, free_row) \
        { .what = w, .size = sizeof(R), .columns = cols, .n_columns = ELEMENTSOF(cols), .free = free_row }

static const Column sandbox_columns[] = {
        COLUMN(SbxSandboxRow, name,             TEXT),
        COLUMN(SbxSandboxRow, owner_uid,        UID),
        COLUMN(SbxSandboxRow, container_id,     TEXT),
        COLUMN(SbxSandboxRow, spec_json,        TEXT),
        COLUMN(SbxSandboxRow, fingerprint,      TEXT),
        COLUMN(SbxSandboxRow, contract_version, INT64),
        COLUMN(SbxSandboxRow, state,            SANDBOX_STATE),
        COLUMN(SbxSandboxRow, created_us,       INT64),
        COLUMN(SbxSandboxRow, updated_us,       INT64),
        COLUMN(SbxSandboxRow, owner_gid,        GID),
        COLUMN(SbxSandboxRow, labels_json,      TEXT),
        COLUMN(SbxSandboxRow, egress_json,      TEXT),
};

static const Column snapshot_columns[] = {
        COLUMN(SbxSnapshotRow, id,             TEXT),
        COLUMN(SbxSnapshotRow, owner_uid,      UID),
        COLUMN(SbxSnapshotRow, source_sandbox, TEXT),
        COLUMN(SbxSnapshotRow, image_id,       TEXT),
        COLUMN(SbxSnapshotRow, image_tag,      TEXT),
        COLUMN(SbxSnapshotRow, created_us,     INT64),
};

static const Column intent_columns[] = {
        COLUMN(SbxIntentRow, name,           TEXT),
        COLUMN(SbxIntentRow, owner_uid,      UID),
        COLUMN(SbxIntentRow, owner_gid,      GID),
        COLUMN(SbxIntentRow, container_name, TEXT),
        COLUMN(SbxIntentRow, fingerprint,    TEXT),
        COLUMN(SbxIntentRow, spec_json,      TEXT),
        COLUMN(SbxIntentRow, created_us,     INT64),
        COLUMN(SbxIntentRow, labels_json,    TEXT),
        COLUMN(SbxIntentRow, egress_json,    TEXT),
};

static const Column snapshot_intent_columns[] = {
        COLUMN(SbxSnapshotIntentRow, id,             TEXT),
        COLUMN(SbxSnapshotIntentRow, owner_uid,      UID),
        COLUMN(SbxSnapshotIntentRow, source_sandbox, TEXT),
        COLUMN(SbxSnapshotIntentRow, image_tag,      TEXT),
        COLUMN(SbxSnapshotIntentRow, token,          TEXT),
        COLUMN(SbxSnapshotIntentRow, abandoned,      BOOL),
        COLUMN(SbxSnapshotIntentRow, created_us,     INT64),
};

static void *sandbox_row_free_any(void *row) {
        return sbx_sandbox_row_free(row);
}

static void *snapshot_row_free_any(void *row) {
        return sbx_snapshot_row_free(row);
}

static void *intent_row_free_any(void *row) {
        return sbx_intent_row_free(row);
}

static void *snapshot_intent_row_free_any(void *row) {
        return sbx_snapshot_intent_row_free(row);
}

static const RowType sandbox_row = ROW_TYPE(SbxSandboxRow, "sandbox", sandbox_columns, sandbox_row_free_any);
static const RowType snapshot_row = ROW_TYPE(SbxSnapshotRow, "snapshot", snapshot_columns, snapshot_row_free_any);
static const RowType intent_row = ROW_TYPE(SbxIntentRow, "intent", intent_columns, intent_row_free_any);
static const RowType snapshot_intent_row =
        ROW_TYPE(SbxSnapshotIntentRow, "snapshot intent", snapshot_intent_columns, snapshot_intent_row_free_any);

/* The row type each row statement reads. */
static const RowType *const statement_rows[_STMT_MAX] = {
        [STMT_GET_SANDBOX] = &sandbox_row,
        [STMT_LIST_SANDBOXES] = &sandbox_row,
        [STMT_GET_SNAPSHOT] = &snapshot_row,
        [STMT_LIST_SNAPSHOTS] = &snapshot_row,
        [STMT_GET_INTENT] = &intent_row,
        [STMT_LIST_INTENTS] = &intent_row,
        [STMT_GET_SNAPSHOT_INTENT] = &snapshot_intent_row,
        [STMT_LIST_SNAPSHOT_INTENTS] = &snapshot_intent_row,
};

/* Whether a prepared statement's result columns are t's, by name and in order. */
static bool columns_are(sqlite3_stmt *st, const RowType *t) {
        if (sqlite3_column_count(st) != (int) t->n_columns)
                return false;
        for (size_t i = 0; i < t->n_columns; i++)
                if (!streq_ptr(sqlite3_column_name(st, (int) i), t->columns[i].name))
                        return false;
        return true;
}

static int column_strdup(sqlite3_stmt *st, int i, char **ret) {
        const unsigned char *t = sqlite3_column_text(st, i);

        if (!t)
                return sqlite3_column_type(st, i) == SQLITE_NULL ? -EBADMSG : -ENOMEM;
        *ret = strdup((const char *) t);
        return *ret ? 0 : -ENOMEM;
}

/* -EBADMSG for a value the field cannot hold. */
static int column_read(sqlite3_stmt *st, int i, const Column *c, void *row) {
        void *field = (char *) row + c->offset;
        SbxSandboxState state;
        int r;

        switch (c->kind) {
        case COLUMN_TEXT:
                return column_strdup(st, i, field);
        case COLUMN_INT64:
                *(int64_t *) field = sqlite3_column_int64(st, i);
                return 0;
        case COLUMN_UID:
                *(uid_t *) field = (uid_t) sqlite3_column_int64(st, i);
                return 0;
        case COLUMN_GID:
                *(gid_t *) field = (gid_t) sqlite3_column_int64(st, i);
                return 0;
        case COLUMN_BOOL:
                *(bool *) field = sqlite3_column_int(st, i) != 0;
                return 0;
        case COLUMN_SANDBOX_STATE: {
                _cleanup_free_ char *name = NULL;

                if ((r = column_strdup(st, i, &name)) < 0)
                        return r;
                state = sbx_sandbox_state_from_string(name);
                if (state < 0)
                        return -EBADMSG;
                *(SbxSandboxState *) field = state;
                return 0;
        }
        }
        return -EBADMSG;
}

/* Reads the statement's current row as a row of type t. */
static int row_read(SbxStore *s, sqlite3_stmt *st, const RowType *t, void **ret, SbxError *error) {
        void *row = calloc(1, t->size);
        int r;

        if (!row)
                return -ENOMEM;
        for (size_t i = 0; i < t->n_columns; i++) {
                r = column_read(st, (int) i, &t->columns[i], row);
                if (r < 0) {
                        t->free(row);
                        return r == -ENOMEM ? r
                                            : sbx_error_set(error, SBX_ERROR_IO, "%s: malformed %s row", s->path, t->what);
                }
        }
        *ret = row;
        return 0;
}

static int store_statement(SbxStore *s, StoreStatement id, sqlite3_stmt **ret, SbxError *error) {
        sqlite3_stmt *st = NULL;

        if (!s->statements[id]) {
                if (sqlite3_prepare_v3(s->db, statement_sql[id], -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK)
                        return store_fail(s, error, "cannot prepare statement");
                if (statement_rows[id] && !columns_are(st, statement_rows[id])) {
                        sqlite3_finalize(st);
                        return sbx_error_set(error, SBX_ERROR_IO, "%s: statement %d does not select the %s columns",
                                             s->path, (int) id, statement_rows[id]->what);
                }
                s->statements[id] = st;
        }
        *ret = s->statements[id];
        return 0;
}

/* Steps a statement: 1 for a row, 0 when done. */
static int store_step(SbxStore *s, sqlite3_stmt *st, SbxError *error) {
        int rc = sqlite3_step(st);

        if (rc == SQLITE_ROW)
                return 1;
        if (rc == SQLITE_DONE)
                return 0;
        return store_fail(s, error, "cannot access database");
}

static int bind_text(sqlite3_stmt *st, int i, const char *v) {
        return sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
}

static int bind_owner(sqlite3_stmt *st, int i, uid_t owner) {
        return sqlite3_bind_int64(st, i, owner == SBX_STORE_ANY_OWNER ? -1 : (int64_t) owner);
}

/* Binds a timestamp, 0 (unset) as NULL. */
static int bind_time(sqlite3_stmt *st, int i, int64_t us) {
        return us > 0 ? sqlite3_bind_int64(st, i, us) : sqlite3_bind_null(st, i);
}

/* ---- rows ------------------------------------------------------------------------- */


/* Runs a one-key SELECT: 1 and the row (of the statement's row type), or 0 and NULL. */
static int store_get(SbxStore *s, StoreStatement id, const char *key, void **ret, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);
        assert(key);
        assert(ret);

        *ret = NULL;
        r = store_statement(s, id, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, key) != SQLITE_OK)
                return store_fail(s, error, "cannot bind key");
        r = store_step(s, st, error);
        if (r <= 0)
                return r;
        r = row_read(s, st, statement_rows[id], ret, error);
        return r < 0 ? r : 1;
}

/* ---- sandboxes -------------------------------------------------------------------- */

static int sandbox_row_check(const SbxSandboxRow *row, SbxError *error) {
        if (isempty(row->name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "name: missing");
        if (!row->container_id)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "container_id: missing");
        if (!row->spec_json)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "spec_json: missing");
        if (!row->fingerprint)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "fingerprint: missing");
        if (!sbx_sandbox_state_to_string(row->state))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "state: invalid value %d", row->state);
        return 0;
}

int sbx_store_put_sandbox(SbxStore *s, const SbxSandboxRow *row, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);
        assert(row);

        r = sandbox_row_check(row, error);
        if (r < 0)
                return r;
        r = store_statement(s, STMT_PUT_SANDBOX, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, row->name) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, row->owner_uid) != SQLITE_OK ||
            bind_text(st, 3, row->container_id) != SQLITE_OK ||
            bind_text(st, 4, row->spec_json) != SQLITE_OK ||
            bind_text(st, 5, row->fingerprint) != SQLITE_OK ||
            sqlite3_bind_int64(st, 6, row->contract_version) != SQLITE_OK ||
            bind_text(st, 7, sbx_sandbox_state_to_string(row->state)) != SQLITE_OK ||
            bind_time(st, 8, row->created_us) != SQLITE_OK ||
            sqlite3_bind_int64(st, 9, (int64_t) sbx_now_realtime_us()) != SQLITE_OK ||
            sqlite3_bind_int64(st, 10, row->owner_gid) != SQLITE_OK ||
            bind_text(st, 11, row->labels_json ?: "{}") != SQLITE_OK ||
            bind_text(st, 12, row->egress_json ?: "") != SQLITE_OK)
                return store_fail(s, error, "cannot bind sandbox row");
        r = store_step(s, st, error);
        return r < 0 ? r : 0;
}

int sbx_store_get_sandbox(SbxStore *s, const char *name, SbxSandboxRow **ret, SbxError *error) {
        return store_get(s, STMT_GET_SANDBOX, name, (void **) ret, error);
}

int sbx_store_update_sandbox_state(SbxStore *s, const char *name, SbxSandboxState state, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);
        assert(name);

        if (!sbx_sandbox_state_to_string(state))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "state: invalid value %d", state);
        r = store_statement(s, STMT_UPDATE_SANDBOX_STATE, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, name) != SQLITE_OK ||
            bind_text(st, 2, sbx_sandbox_state_to_string(state)) != SQLITE_OK ||
            sqlite3_bind_int64(st, 3, (int64_t) sbx_now_realtime_us()) != SQLITE_OK)
                return store_fail(s, error, "cannot bind state");
        r = store_step(s, st, error);
        if (r < 0)
                return r;
        return sqlite3_changes(s->db) > 0;
}

/* Runs a one-key DELETE (or UPDATE); 1 if a row went away (or changed). */
static int store_delete(SbxStore *s, StoreStatement id, const char *key, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        r = store_statement(s, id, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, key) != SQLITE_OK)
                return store_fail(s, error, "cannot bind key");
        r = store_step(s, st, error);
        if (r < 0)
                return r;
        return sqlite3_changes(s->db) > 0;
}

int sbx_store_delete_sandbox(SbxStore *s, const char *name, SbxError *error) {
        assert(s);
        assert(name);
        return store_delete(s, STMT_DELETE_SANDBOX, name, error);
}

/* Appends item to the NULL-terminated array *list of *n items. */
static int list_append(void ***list, size_t *n, void *item) {
        void **l = reallocarray(*list, *n + 2, sizeof(void *));

        if (!l)
                return -ENOMEM;
        l[(*n)++] = item;
        l[*n] = NULL;
        *list = l;
        return 0;
}


/* Lists the rows of an owner-filtered SELECT (of its row type); returns the count. The
 * callers hand the void * array out as an array of their row pointer type. */
static int store_list(SbxStore *s, StoreStatement id, uid_t owner, void ***ret, SbxError *error) {
        const RowType *t = statement_rows[id];
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        void **list = NULL;
        size_t n = 0;
        int r;

        r = store_statement(s, id, &st, error);
        if (r < 0)
                return r;
        if (bind_owner(st, 1, owner) != SQLITE_OK)
                return store_fail(s, error, "cannot bind owner");
        list = calloc(1, sizeof(void *));
        if (!list)
                return -ENOMEM;
        while ((r = store_step(s, st, error)) > 0) {
                void *row = NULL;

                r = row_read(s, st, t, &row, error);
                if (r >= 0) {
                        r = list_append(&list, &n, row);
                        if (r < 0)
                                t->free(row);
                }
                if (r < 0)
                        break;
        }
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        t->free(list[i]);
                free(list);
                return r;
        }
        *ret = list;
        return (int) n;
}


int sbx_store_list_sandboxes(SbxStore *s, uid_t owner, SbxSandboxRow ***ret, SbxError *error) {
        assert(s);
        assert(ret);
        return store_list(s, STMT_LIST_SANDBOXES, owner, (void ***) ret, error);
}

int sbx_store_count_sandboxes(SbxStore *s, uid_t owner, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);

        r = store_statement(s, STMT_COUNT_SANDBOXES, &st, error);
        if (r < 0)
                return r;
        if (bind_owner(st, 1, owner) != SQLITE_OK)
                return store_fail(s, error, "cannot bind owner");
        r = store_step(s, st, error);
        if (r < 0)
                return r;
        if (r == 0)
                return store_fail(s, error, "cannot count sandboxes");
        return sqlite3_column_int(st, 0);
}

/* ---- snapshots -------------------------------------------------------------------- */

static int snapshot_row_check(const SbxSnapshotRow *row, SbxError *error) {
        if (isempty(row->id))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "snapshot_id: missing");
        if (!row->source_sandbox)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "source_sandbox: missing");
        if (!row->image_id)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "image_id: missing");
        if (!row->image_tag)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "image_tag: missing");
        return 0;
}

int sbx_store_add_snapshot(SbxStore *s, const SbxSnapshotRow *row, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);
        assert(row);

        r = snapshot_row_check(row, error);
        if (r < 0)
                return r;
        r = store_statement(s, STMT_ADD_SNAPSHOT, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, row->id) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, row->owner_uid) != SQLITE_OK ||
            bind_text(st, 3, row->source_sandbox) != SQLITE_OK ||
            bind_text(st, 4, row->image_id) != SQLITE_OK ||
            bind_text(st, 5, row->image_tag) != SQLITE_OK ||
            sqlite3_bind_int64(st, 6, row->created_us > 0 ? row->created_us : (int64_t) sbx_now_realtime_us()) != SQLITE_OK)
                return store_fail(s, error, "cannot bind snapshot row");
        if (sqlite3_step(st) == SQLITE_DONE)
                return 0;
        if (sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY)
                return sbx_error_set(error, SBX_ERROR_SNAPSHOT_EXISTS,
                                     "snapshot_id: a snapshot '%s' already exists", row->id);
        return store_fail(s, error, "cannot add snapshot");
}

int sbx_store_get_snapshot(SbxStore *s, const char *id, SbxSnapshotRow **ret, SbxError *error) {
        return store_get(s, STMT_GET_SNAPSHOT, id, (void **) ret, error);
}

int sbx_store_delete_snapshot(SbxStore *s, const char *id, SbxError *error) {
        assert(s);
        assert(id);
        return store_delete(s, STMT_DELETE_SNAPSHOT, id, error);
}


int sbx_store_list_snapshots(SbxStore *s, uid_t owner, SbxSnapshotRow ***ret, SbxError *error) {
        assert(s);
        assert(ret);
        return store_list(s, STMT_LIST_SNAPSHOTS, owner, (void ***) ret, error);
}

/* ---- intents ---------------------------------------------------------------------- */

SbxIntentRow *sbx_intent_row_free(SbxIntentRow *row) {
        if (!row)
                return NULL;
        free(row->name);
        free(row->container_name);
        free(row->fingerprint);
        free(row->spec_json);
        free(row->labels_json);
        free(row->egress_json);
        free(row);
        return NULL;
}

DEFINE_ROW_LIST_FREE(SbxIntentRow, sbx_intent_row);

/* The owner's sandboxes and unfinished creates, but for the name. */
static int count_owned(SbxStore *s, uid_t owner, const char *name, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        if ((r = store_statement(s, STMT_COUNT_OWNED, &st, error)) < 0)
                return r;
        if (sqlite3_bind_int64(st, 1, owner) != SQLITE_OK || bind_text(st, 2, name) != SQLITE_OK)
                return store_fail(s, error, "cannot bind owner");
        if ((r = store_step(s, st, error)) <= 0)
                return r < 0 ? r : store_fail(s, error, "cannot count sandboxes");
        return sqlite3_column_int(st, 0);
}

static int put_intent(SbxStore *s, const SbxIntentRow *row, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        r = store_statement(s, STMT_PUT_INTENT, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, row->name) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, row->owner_uid) != SQLITE_OK ||
            sqlite3_bind_int64(st, 3, row->owner_gid) != SQLITE_OK ||
            bind_text(st, 4, row->container_name) != SQLITE_OK ||
            bind_text(st, 5, row->fingerprint) != SQLITE_OK ||
            bind_text(st, 6, row->spec_json) != SQLITE_OK ||
            sqlite3_bind_int64(st, 7, row->created_us > 0 ? row->created_us : (int64_t) sbx_now_realtime_us()) != SQLITE_OK ||
            bind_text(st, 8, row->labels_json ?: "{}") != SQLITE_OK ||
            bind_text(st, 9, row->egress_json ?: "") != SQLITE_OK)
                return store_fail(s, error, "cannot bind intent row");
        r = store_step(s, st, error);
        return r < 0 ? r : 0;
}

int sbx_store_put_intent(SbxStore *s, const SbxIntentRow *row, unsigned max_per_owner, SbxError *error) {
        int r, n;

        assert(s);
        assert(row);

        if (isempty(row->name) || isempty(row->container_name) || !row->fingerprint || !row->spec_json)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "intent: a field is missing");
        /* Counted and recorded under the write lock: concurrent creates of one owner
         * (other names, other workers) cannot all pass the same count. */
        if ((r = store_exec(s, "BEGIN IMMEDIATE", "cannot begin", error)) < 0)
                return r;
        n = count_owned(s, row->owner_uid, row->name, error);
        r = n < 0 ? n : (max_per_owner > 0 && (unsigned) n >= max_per_owner) ? 0 : put_intent(s, row, error);
        if (r >= 0)
                r = store_exec(s, "COMMIT", "cannot commit", error);
        if (r < 0) {
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
                return r;
        }
        return n;
}

int sbx_store_get_intent(SbxStore *s, const char *name, SbxIntentRow **ret, SbxError *error) {
        return store_get(s, STMT_GET_INTENT, name, (void **) ret, error);
}

int sbx_store_delete_intent(SbxStore *s, const char *name, SbxError *error) {
        assert(s);
        assert(name);
        return store_delete(s, STMT_DELETE_INTENT, name, error);
}

int sbx_store_list_intents(SbxStore *s, SbxIntentRow ***ret, SbxError *error) {
        assert(s);
        assert(ret);
        return store_list(s, STMT_LIST_INTENTS, SBX_STORE_ANY_OWNER, (void ***) ret, error);
}

/* ---- snapshot intents ------------------------------------------------------------- */

SbxSnapshotIntentRow *sbx_snapshot_intent_row_free(SbxSnapshotIntentRow *row) {
        if (!row)
                return NULL;
        free(row->id);
        free(row->source_sandbox);
        free(row->image_tag);
        free(row->token);
        free(row);
        return NULL;
}

DEFINE_ROW_LIST_FREE(SbxSnapshotIntentRow, sbx_snapshot_intent_row);

int sbx_store_put_snapshot_intent(SbxStore *s, const SbxSnapshotIntentRow *row, SbxError *error) {
        _cleanup_(statement_resetp) sqlite3_stmt *st = NULL;
        int r;

        assert(s);
        assert(row);

        if (isempty(row->id) || !row->source_sandbox || isempty(row->image_tag) || isempty(row->token))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "snapshot intent: a field is missing");
        r = store_statement(s, STMT_PUT_SNAPSHOT_INTENT, &st, error);
        if (r < 0)
                return r;
        if (bind_text(st, 1, row->id) != SQLITE_OK ||
            sqlite3_bind_int64(st, 2, row->owner_uid) != SQLITE_OK ||
            bind_text(st, 3, row->source_sandbox) != SQLITE_OK ||
            bind_text(st, 4, row->image_tag) != SQLITE_OK ||
            bind_text(st, 5, row->token) != SQLITE_OK ||
            sqlite3_bind_int(st, 6, row->abandoned) != SQLITE_OK ||
            sqlite3_bind_int64(st, 7, row->created_us > 0 ? row->created_us : (int64_t) sbx_now_realtime_us()) != SQLITE_OK)
                return store_fail(s, error, "cannot bind snapshot intent row");
        r = store_step(s, st, error);
        return r < 0 ? r : 0;
}

int sbx_store_get_snapshot_intent(SbxStore *s, const char *id, SbxSnapshotIntentRow **ret, SbxError *error) {
        return store_get(s, STMT_GET_SNAPSHOT_INTENT, id, (void **) ret, error);
}

int sbx_store_abandon_snapshot_intent(SbxStore *s, const char *id, SbxError *error) {
        assert(s);
        assert(id);
        return store_delete(s, STMT_ABANDON_SNAPSHOT_INTENT, id, error);
}

int sbx_store_delete_snapshot_intent(SbxStore *s, const char *id, SbxError *error) {
        assert(s);
        assert(id);
        return store_delete(s, STMT_DELETE_SNAPSHOT_INTENT, id, error);
}

int sbx_store_list_snapshot_intents(SbxStore *s, SbxSnapshotIntentRow ***ret, SbxError *error) {
        assert(s);
        assert(ret);
        return store_list(s, STMT_LIST_SNAPSHOT_INTENTS, SBX_STORE_ANY_OWNER, (void ***) ret, error);
}
