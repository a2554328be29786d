/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's persistent state: sandbox rows and snapshot rows in one SQLite
 * database, <state-dir>/sandboxd.db (WAL, busy timeout, foreign keys on, schema
 * versioned by PRAGMA user_version with forward migrations).
 *
 * Threads: an SbxStore wraps one sqlite3 connection, opened in SQLite's
 * multi-thread mode. A connection is never shared between threads: each worker
 * opens its own SbxStore (WAL lets the connections read concurrently; writers
 * wait up to the busy timeout for each other).
 *
 * Intents: before a create asks Docker for a container, it records what it is about to
 * make (the name, the owner, the container's provisional name, the spec and its
 * fingerprint); writing that name's sandbox row ends the intent in the same
 * statement. An intent left over (a crash, Docker gone) is finished or undone by the
 * lifecycle layer (docs/lifecycle.md). Snapshot intents are the same for a snapshot:
 * recorded before the commit (the id, the owner, the tag and the token label the commit
 * writes into the image), ended by writing that id's snapshot row.
 *
 * Results: functions return a negative errno on failure and fill the optional
 * SbxError; lookups return 1 (found, *ret set) or 0 (absent, *ret = NULL). */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "macro.h"

#define SBX_STORE_FILENAME "sandboxd.db"
/* The newest schema this code knows; a database with a larger user_version is refused. */
#define SBX_STORE_SCHEMA_VERSION 10
/* The owner filter that matches every row. */
#define SBX_STORE_ANY_OWNER ((uid_t) -1)

typedef struct SbxStore SbxStore;

typedef enum SbxSandboxState {
        SBX_SANDBOX_RUNNING,
        SBX_SANDBOX_STOPPED,
        SBX_SANDBOX_UNKNOWN,
        _SBX_SANDBOX_STATE_MAX,
        _SBX_SANDBOX_STATE_INVALID = -1,
} SbxSandboxState;

/* "running", "stopped", "unknown"; NULL for an invalid value. */
const char *sbx_sandbox_state_to_string(SbxSandboxState s) _pure_;
/* The state named by s, or _SBX_SANDBOX_STATE_INVALID. */
SbxSandboxState sbx_sandbox_state_from_string(const char *s) _pure_;

typedef struct SbxSandboxRow {
        char *name;
        uid_t owner_uid;
        gid_t owner_gid;        /* the group the container runs as (Config.User) */
        char *container_id;
        char *spec_json;        /* canonical spec JSON; opaque to the store */
        char *fingerprint;
        int64_t contract_version;
        SbxSandboxState state;
        int64_t created_us;     /* µs since the epoch; 0 = unset */
        int64_t updated_us;     /* set by the store on every write */
        char *labels_json;      /* user-labels.h's stored form; NULL on put = none */
        char *egress_json;      /* egress.h's stored form; NULL on put = "" (the default) */
} SbxSandboxRow;

typedef struct SbxSnapshotRow {
        char *id;
        uid_t owner_uid;
        char *source_sandbox;
        char *image_id;
        char *image_tag;
        int64_t created_us;
} SbxSnapshotRow;

typedef struct SbxIntentRow {
        char *name;             /* the Docker-level sandbox name */
        uid_t owner_uid;
        gid_t owner_gid;
        char *container_name;   /* the container's provisional Docker name */
        char *fingerprint;
        char *spec_json;        /* the canonical spec, as the sandbox row will hold it */
        int64_t created_us;     /* 0 = now, on put */
        char *labels_json;      /* … and its labels; NULL on put = none */
        char *egress_json;      /* … and its egress (egress.h's stored form); NULL on put = "" */
} SbxIntentRow;

typedef struct SbxSnapshotIntentRow {
        char *id;               /* the Docker-level snapshot id */
        uid_t owner_uid;
        char *source_sandbox;
        char *image_tag;        /* the reference the commit tags */
        char *token;            /* the commit's SBX_LABEL_SNAPSHOT_INTENT value */
        bool abandoned;         /* its caller was told it failed: whatever the commit made goes */
        int64_t created_us;     /* 0 = now, on put */
} SbxSnapshotIntentRow;

SbxSandboxRow *sbx_sandbox_row_free(SbxSandboxRow *row);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSandboxRow *, sbx_sandbox_row_free);
/* Frees a NULL-terminated array of rows and the rows in it. */
SbxSandboxRow **sbx_sandbox_row_list_free(SbxSandboxRow **rows);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSandboxRow **, sbx_sandbox_row_list_free);

SbxSnapshotRow *sbx_snapshot_row_free(SbxSnapshotRow *row);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSnapshotRow *, sbx_snapshot_row_free);
SbxSnapshotRow **sbx_snapshot_row_list_free(SbxSnapshotRow **rows);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSnapshotRow **, sbx_snapshot_row_list_free);

/* Opens (creating it with mode 0600 if missing) state_dir/sandboxd.db. state_dir
 * must exist. Checks integrity (PRAGMA quick_check) and migrates the schema to
 * SBX_STORE_SCHEMA_VERSION; a corrupt, unreadable or too-new database fails with
 * SBX_ERROR_IO naming the file and the reason. */
int sbx_store_open(const char *state_dir, SbxStore **ret, SbxError *error);
/* Another connection to a store this process has opened with sbx_store_open(): the
 * same, without the integrity check (which reads the whole file: a worker's
 * connection, made while the first answers wait, need not read it again). */
int sbx_store_reopen(const char *state_dir, SbxStore **ret, SbxError *error);
SbxStore *sbx_store_close(SbxStore *store);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxStore *, sbx_store_close);

/* The database file's path (owned by the store). */
const char *sbx_store_path(const SbxStore *store) _pure_;

/* Whether this open found no schema (a new, empty or truncated file) and made it. */
bool sbx_store_created(const SbxStore *store) _pure_;

/* Inserts the row, or replaces every column of the row with that name (upsert).
 * created_us 0 means "now" for a new row and "keep" for an existing one;
 * updated_us is ignored and set to now. */
int sbx_store_put_sandbox(SbxStore *store, const SbxSandboxRow *row, SbxError *error);
/* 1 and *ret = the row, or 0 and *ret = NULL when there is no row of that name. */
int sbx_store_get_sandbox(SbxStore *store, const char *name, SbxSandboxRow **ret, SbxError *error);
/* Sets the state of an existing row; 1 if a row changed, 0 (no-op) if there is none. */
/* The sandbox's egress (egress.h's stored form); 1 if the row was there. */
int sbx_store_set_sandbox_egress(SbxStore *s, const char *name, const char *egress_json, SbxError *error);
int sbx_store_update_sandbox_state(SbxStore *store, const char *name, SbxSandboxState state, SbxError *error);
/* Idempotent: 1 if a row was deleted, 0 if there was none. */
int sbx_store_delete_sandbox(SbxStore *store, const char *name, SbxError *error);
/* Rows of owner (or of everyone for SBX_STORE_ANY_OWNER), ordered by name, as a
 * NULL-terminated array; returns the number of rows. */
int sbx_store_list_sandboxes(SbxStore *store, uid_t owner, SbxSandboxRow ***ret, SbxError *error);
/* The number of rows owned by owner. */
int sbx_store_count_sandboxes(SbxStore *store, uid_t owner, SbxError *error);

/* Adds a snapshot row; a duplicate id fails with SBX_ERROR_SNAPSHOT_EXISTS.
 * created_us 0 means "now". */
int sbx_store_add_snapshot(SbxStore *store, const SbxSnapshotRow *row, SbxError *error);
int sbx_store_get_snapshot(SbxStore *store, const char *id, SbxSnapshotRow **ret, SbxError *error);
/* Idempotent: 1 if a row was deleted, 0 if there was none. */
int sbx_store_delete_snapshot(SbxStore *store, const char *id, SbxError *error);
/* Like sbx_store_list_sandboxes(), ordered by id. */
int sbx_store_list_snapshots(SbxStore *store, uid_t owner, SbxSnapshotRow ***ret, SbxError *error);

SbxIntentRow *sbx_intent_row_free(SbxIntentRow *row);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxIntentRow *, sbx_intent_row_free);
SbxIntentRow **sbx_intent_row_list_free(SbxIntentRow **rows);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxIntentRow **, sbx_intent_row_list_free);

/* Records an intent (replacing one of the same name), unless the owner already has
 * max_per_owner sandboxes and unfinished creates of other names (0 = no limit):
 * counted and recorded in one transaction. Returns that number (≥ 0); the intent was
 * recorded if it is below max_per_owner. */
int sbx_store_put_intent(SbxStore *store, const SbxIntentRow *row, unsigned max_per_owner, SbxError *error);
int sbx_store_get_intent(SbxStore *store, const char *name, SbxIntentRow **ret, SbxError *error);
/* Idempotent: 1 if an intent was deleted, 0 if there was none. */
int sbx_store_delete_intent(SbxStore *store, const char *name, SbxError *error);
/* Every intent, ordered by name, as a NULL-terminated array; returns the count. */
int sbx_store_list_intents(SbxStore *store, SbxIntentRow ***ret, SbxError *error);

SbxSnapshotIntentRow *sbx_snapshot_intent_row_free(SbxSnapshotIntentRow *row);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSnapshotIntentRow *, sbx_snapshot_intent_row_free);
SbxSnapshotIntentRow **sbx_snapshot_intent_row_list_free(SbxSnapshotIntentRow **rows);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSnapshotIntentRow **, sbx_snapshot_intent_row_list_free);

/* Records a snapshot intent, replacing one of the same id. */
int sbx_store_put_snapshot_intent(SbxStore *store, const SbxSnapshotIntentRow *row, SbxError *error);
int sbx_store_get_snapshot_intent(SbxStore *store, const char *id, SbxSnapshotIntentRow **ret, SbxError *error);
/* Marks it abandoned; 1 if there was one. */
int sbx_store_abandon_snapshot_intent(SbxStore *store, const char *id, SbxError *error);
/* Idempotent: 1 if an intent was deleted, 0 if there was none. */
int sbx_store_delete_snapshot_intent(SbxStore *store, const char *id, SbxError *error);
/* Every snapshot intent, ordered by id, as a NULL-terminated array; returns the count. */
int sbx_store_list_snapshot_intents(SbxStore *store, SbxSnapshotIntentRow ***ret, SbxError *error);

/* Detached processes (store-detached.c): one row per exec object of a detached
 * process, written before the process starts and deleted when the object goes. */
typedef struct SbxDetachedRow {
        char *id;                       /* the exec object's id: 32 hex digits */
        char *sandbox;                  /* the Docker-level name */
        char *container_id;
        uid_t owner, caller;
        char *argv0;
        char *token;                    /* its XAGENT_SANDBOX_EXEC value */
        uint64_t started_us;
} SbxDetachedRow;

void sbx_detached_row_done(SbxDetachedRow *row);
void sbx_detached_rows_free(SbxDetachedRow *rows, size_t n);

int sbx_store_put_detached(SbxStore *store, const SbxDetachedRow *row, SbxError *error);
int sbx_store_delete_detached(SbxStore *store, const char *id, SbxError *error);
/* Every row, the oldest first (at most max; more are left out). */
int sbx_store_list_detached(SbxStore *store, size_t max, SbxDetachedRow **ret, size_t *ret_n, SbxError *error);

/* A sandbox's lifetime (schema 7, docs/lifecycle.md): its idle timeout, when it
 * expires, what idling does, and its last activity (written at most every few
 * seconds). Gone with the sandbox's row. */
typedef struct SbxLifetimeRow {
        char *name;
        uint32_t idle_timeout_s;        /* 0: never */
        uint64_t expire_at_us;          /* realtime; 0: never */
        bool on_idle_pause;
        bool counts_processes;          /* idle_counts_processes (schema 8) */
        uint64_t last_activity_us;      /* realtime */
} SbxLifetimeRow;

void sbx_lifetime_rows_free(SbxLifetimeRow *rows, size_t n);
/* Written only for a sandbox that has its row: else NoSuchSandbox, nothing written. */
int sbx_store_put_lifetime(SbxStore *store, const SbxLifetimeRow *row, SbxError *error);
/* A new sandbox's row and its lifetime (NULL: none, and none left of an earlier one of
 * the name) in one transaction. */
int sbx_store_put_sandbox_with_lifetime(SbxStore *store, const SbxSandboxRow *row, const SbxLifetimeRow *lifetime,
                                        SbxError *error);
/* Both times of a row, moved with a wall-clock step (none: nothing to do). */
int sbx_store_rebase_lifetime(SbxStore *store, const char *name, uint64_t last_activity_us, uint64_t expire_at_us,
                              SbxError *error);
/* The last activity of a sandbox that has a row (none: nothing to do). */
int sbx_store_touch_lifetime(SbxStore *store, const char *name, uint64_t last_activity_us, SbxError *error);
int sbx_store_list_lifetimes(SbxStore *store, SbxLifetimeRow **ret, size_t *ret_n, SbxError *error);
/* The row of one sandbox: 1 and *ret filled (its name a copy), or 0 (none: ret all 0). */
int sbx_store_get_lifetime(SbxStore *store, const char *name, SbxLifetimeRow *ret, SbxError *error);
