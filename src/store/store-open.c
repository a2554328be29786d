/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The store opened and closed (store.h): its file made, checked and in WAL mode,
 * its schema migrated forward; closed with the statements the rows prepared
 * (store-rows.c, store-internal.h). */

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

#define BUSY_TIMEOUT_MS 5000
#define WAL_RETRY_MS 10

/* Forward migrations: migrations[v] takes the schema from user_version v to v + 1.
 * Append only; never edit a step that has shipped. */
static const char *const migrations[] = {
        /* 0 → 1: the initial schema */
        "CREATE TABLE sandboxes ("
        "        name TEXT PRIMARY KEY,"
        "        owner_uid INTEGER NOT NULL,"
        "        container_id TEXT NOT NULL,"
        "        spec_json TEXT NOT NULL,"
        "        fingerprint TEXT NOT NULL,"
        "        contract_version INTEGER NOT NULL,"
        "        state TEXT NOT NULL CHECK(state IN ('running','stopped','unknown')),"
        "        created_us INTEGER,"
        "        updated_us INTEGER,"
        "        owner_gid INTEGER NOT NULL);"
        "CREATE INDEX sandboxes_owner ON sandboxes(owner_uid);"
        "CREATE TABLE snapshots ("
        "        id TEXT PRIMARY KEY,"
        "        owner_uid INTEGER NOT NULL,"
        "        source_sandbox TEXT NOT NULL,"
        "        image_id TEXT NOT NULL,"
        "        image_tag TEXT NOT NULL,"
        "        created_us INTEGER NOT NULL);"
        "CREATE INDEX snapshots_owner ON snapshots(owner_uid);",
        /* 1 → 2: names belong to their owner (docs/security.md): rows are keyed by the
         * Docker-level name, "~<uid>:<name>" for an owner other than root */
        "UPDATE sandboxes SET name = '~' || owner_uid || ':' || name"
        "        WHERE owner_uid != 0 AND substr(name, 1, length(owner_uid) + 2) != '~' || owner_uid || ':';"
        "UPDATE snapshots SET id = '~' || owner_uid || ':' || id"
        "        WHERE owner_uid != 0 AND substr(id, 1, length(owner_uid) + 2) != '~' || owner_uid || ':';",
        /* 2 → 3: intents, a create's record before its container exists (docs/lifecycle.md);
         * the sandbox row of that name, once written, ends it in the same statement */
        "CREATE TABLE IF NOT EXISTS intents ("
        "        name TEXT PRIMARY KEY,"
        "        owner_uid INTEGER NOT NULL,"
        "        owner_gid INTEGER NOT NULL,"
        "        container_name TEXT NOT NULL,"
        "        fingerprint TEXT NOT NULL,"
        "        spec_json TEXT NOT NULL,"
        "        created_us INTEGER NOT NULL);"
        "CREATE TRIGGER IF NOT EXISTS intents_end_on_insert AFTER INSERT ON sandboxes BEGIN"
        "        DELETE FROM intents WHERE name = NEW.name; END;"
        "CREATE TRIGGER IF NOT EXISTS intents_end_on_update AFTER UPDATE OF container_id ON sandboxes BEGIN"
        "        DELETE FROM intents WHERE name = NEW.name; END;",
        /* 3 → 4: snapshot intents, a snapshot's record before its commit (docs/lifecycle.md);
         * the snapshot row of that id, once written, ends it in the same statement */
        "CREATE TABLE IF NOT EXISTS snapshot_intents ("
        "        id TEXT PRIMARY KEY,"
        "        owner_uid INTEGER NOT NULL,"
        "        source_sandbox TEXT NOT NULL,"
        "        image_tag TEXT NOT NULL,"
        "        token TEXT NOT NULL,"
        "        abandoned INTEGER NOT NULL DEFAULT 0,"
        "        created_us INTEGER NOT NULL);"
        "CREATE TRIGGER IF NOT EXISTS snapshot_intents_end_on_insert AFTER INSERT ON snapshots BEGIN"
        "        DELETE FROM snapshot_intents WHERE id = NEW.id; END;",
        /* 4 → 5: detached processes (StartExec's detach), so that a restarted service
         * gives their exec objects back and counts them (store-detached.c) */
        "CREATE TABLE IF NOT EXISTS detached_execs ("
        "        id TEXT PRIMARY KEY,"
        "        sandbox TEXT NOT NULL,"
        "        container_id TEXT NOT NULL,"
        "        owner_uid INTEGER NOT NULL,"
        "        caller_uid INTEGER NOT NULL,"
        "        argv0 TEXT NOT NULL,"
        "        token TEXT NOT NULL,"
        "        started_us INTEGER NOT NULL);",
        /* 5 → 6: a sandbox's labels (user-labels.h), and its intent's; rows already there
         * get none, and keep everything else */
        "ALTER TABLE sandboxes ADD COLUMN labels_json TEXT NOT NULL DEFAULT '{}';"
        "ALTER TABLE intents ADD COLUMN labels_json TEXT NOT NULL DEFAULT '{}';",
        /* 6 → 7: idle stop and expiry (store-lifetime.c): a row per sandbox that has a
         * deadline, gone with the sandbox's row; the rows there keep everything */
        "CREATE TABLE IF NOT EXISTS lifetimes ("
        "        name TEXT PRIMARY KEY,"
        "        idle_timeout_s INTEGER NOT NULL,"
        "        expire_at_us INTEGER NOT NULL,"
        "        on_idle_pause INTEGER NOT NULL,"
        "        last_activity_us INTEGER NOT NULL);"
        "CREATE TRIGGER IF NOT EXISTS lifetimes_follow_sandboxes AFTER DELETE ON sandboxes BEGIN"
        "        DELETE FROM lifetimes WHERE name = OLD.name; END;",
        /* 7 → 8: idle_counts_processes (docs/lifecycle.md): whether a running process
         * holds the sandbox from its idle stop; the rows there get the default, no */
        "ALTER TABLE lifetimes ADD COLUMN counts_processes INTEGER NOT NULL DEFAULT 0;",
        /* 8 → 9: a sandbox's egress (egress.h's stored form); rows already there get ""
         * (the policy's default, with no entries), and keep everything else */
        "ALTER TABLE sandboxes ADD COLUMN egress_json TEXT NOT NULL DEFAULT '';",
        /* 9 → 10: an interrupted create's egress, for the row it settles into; intents
         * already there get "" (the default) */
        "ALTER TABLE intents ADD COLUMN egress_json TEXT NOT NULL DEFAULT '';",
};

_Static_assert(ELEMENTSOF(migrations) == SBX_STORE_SCHEMA_VERSION,
               "one migration step per schema version");

/* Records sqlite's current error for the store's file: "PATH: what: message". */
int store_fail(SbxStore *s, SbxError *error, const char *what) {
        if (sqlite3_errcode(s->db) == SQLITE_NOMEM)
                return -ENOMEM;
        return sbx_error_set(error, SBX_ERROR_IO, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

void statement_resetp(sqlite3_stmt **st) {
        if (*st) {
                sqlite3_reset(*st);
                sqlite3_clear_bindings(*st);
        }
}

int store_exec(SbxStore *s, const char *sql, const char *what, SbxError *error) {
        if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
                return store_fail(s, error, what);
        return 0;
}

/* ---- opening ---------------------------------------------------------------------- */

/* Makes a missing database file under a temporary name and links it into place:
 * its only descriptor is closed before SQLite can reach it by its name. */
static int link_new_db_file(const char *path, SbxError *error) {
        _cleanup_free_ char *tmp = NULL;
        int fd, r = 0;

        if (asprintf(&tmp, "%s.new-XXXXXX", path) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot create: %s", tmp, strerror(errno));
        close(fd);
        if (link(tmp, path) < 0 && errno != EEXIST)
                r = sbx_error_set(error, SBX_ERROR_IO, "%s: cannot create: %s", path, strerror(errno));
        (void) unlink(tmp);
        return r;
}

/* Creates the file with mode 0600 (sqlite would use 0644) and tightens an existing
 * one: rows hold owners and specs, which may carry secrets in env values. SQLite
 * gives the -wal and -shm files the database file's mode.
 *
 * The file is never opened here, only by SQLite: close() of any descriptor of it
 * drops every POSIX lock this process holds on it, those of SQLite's connections
 * (other workers') included, and another process opening the database then
 * believes itself its last user and deletes the live WAL. */
static int create_db_file(const char *path, SbxError *error) {
        struct stat st;
        int r;

        if (lstat(path, &st) < 0) {
                if (errno != ENOENT)
                        return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot stat: %s", path, strerror(errno));
                r = link_new_db_file(path, error);
                if (r < 0)
                        return r;
                if (lstat(path, &st) < 0)
                        return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot stat: %s", path, strerror(errno));
        }
        if (!S_ISREG(st.st_mode))
                return sbx_error_set(error, SBX_ERROR_IO, "%s: not a regular file", path);
        /* By path: no descriptor (see above); SQLite opens it with O_NOFOLLOW. */
        if ((st.st_mode & 07777) != 0600 && chmod(path, 0600) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot set mode 0600: %s", path, strerror(errno));
        return 0;
}

static int check_integrity(SbxStore *s, SbxError *error) {
        sqlite3_stmt *raw = NULL;
        const char *result;
        int r;

        if (sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &raw, NULL) != SQLITE_OK)
                return store_fail(s, error, "cannot read database");
        r = sqlite3_step(raw);
        if (r != SQLITE_ROW) {
                r = store_fail(s, error, "cannot read database");
                sqlite3_finalize(raw);
                return r;
        }
        result = (const char *) sqlite3_column_text(raw, 0);
        if (!result || !streq(result, "ok"))
                r = sbx_error_set(error, SBX_ERROR_IO, "%s: database is corrupt: %s", s->path,
                                  result ?: "quick_check gave no result");
        else
                r = 0;
        sqlite3_finalize(raw);
        return r;
}

/* Steps "PRAGMA journal_mode=WAL" once: 1 on success, 0 if busy, < 0 on failure. */
static int try_enable_wal(SbxStore *s, SbxError *error) {
        sqlite3_stmt *st = NULL;
        const char *mode;
        int rc, r;

        if (sqlite3_prepare_v2(s->db, "PRAGMA journal_mode=WAL", -1, &st, NULL) != SQLITE_OK)
                return store_fail(s, error, "cannot set journal mode");
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                mode = (const char *) sqlite3_column_text(st, 0);
                r = mode && strcasecmp(mode, "wal") == 0 ? 1 :
                        sbx_error_set(error, SBX_ERROR_IO, "%s: cannot enable WAL journal mode (got '%s')",
                                      s->path, mode ?: "");
        } else if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
                r = 0;
        else
                r = store_fail(s, error, "cannot set journal mode");
        sqlite3_finalize(st);
        return r;
}

/* Switching to WAL takes an exclusive lock without consulting the busy handler,
 * so concurrent first opens of a fresh file (several workers) retry here. */
static int enable_wal(SbxStore *s, SbxError *error) {
        for (int waited = 0;; waited += WAL_RETRY_MS) {
                int r = try_enable_wal(s, error);

                if (r != 0)
                        return r < 0 ? r : 0;
                if (waited >= BUSY_TIMEOUT_MS)
                        return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot set journal mode: database is locked",
                                             s->path);
                sqlite3_sleep(WAL_RETRY_MS);
        }
}

static int read_user_version(SbxStore *s, int64_t *ret, SbxError *error) {
        sqlite3_stmt *st = NULL;
        int r = 0;

        if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
                return store_fail(s, error, "cannot read schema version");
        if (sqlite3_step(st) == SQLITE_ROW)
                *ret = sqlite3_column_int64(st, 0);
        else
                r = store_fail(s, error, "cannot read schema version");
        sqlite3_finalize(st);
        return r;
}

static int check_not_newer(SbxStore *s, int64_t version, SbxError *error) {
        if (version > SBX_STORE_SCHEMA_VERSION)
                return sbx_error_set(error, SBX_ERROR_IO,
                                     "%s: schema version %" PRId64 " is newer than this sandboxd supports (%d); "
                                     "refusing to open it", s->path, version, SBX_STORE_SCHEMA_VERSION);
        if (version < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: invalid schema version %" PRId64,
                                     s->path, version);
        return 0;
}

/* Applies the steps from version up, in the same transaction. */
static int apply_migrations(SbxStore *s, int64_t version, SbxError *error) {
        char sql[64];
        int r;

        for (int64_t v = version; v < SBX_STORE_SCHEMA_VERSION; v++) {
                r = store_exec(s, migrations[v], "cannot migrate schema", error);
                if (r < 0)
                        return r;
        }
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", SBX_STORE_SCHEMA_VERSION);
        return store_exec(s, sql, "cannot record schema version", error);
}

static int migrate(SbxStore *s, SbxError *error) {
        int64_t version;
        int r;

        r = read_user_version(s, &version, error);
        if (r < 0)
                return r;
        r = check_not_newer(s, version, error);
        if (r < 0 || version == SBX_STORE_SCHEMA_VERSION)
                return r;

        /* Another connection may migrate concurrently: re-read under the write lock. */
        r = store_exec(s, "BEGIN IMMEDIATE", "cannot begin migration", error);
        if (r < 0)
                return r;
        r = read_user_version(s, &version, error);
        if (r >= 0)
                r = check_not_newer(s, version, error);
        if (r >= 0 && version == 0)
                s->created = true;
        if (r >= 0)
                r = apply_migrations(s, version, error);
        if (r >= 0)
                r = store_exec(s, "COMMIT", "cannot commit migration", error);
        if (r < 0)
                sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

static int store_connect(SbxStore *s, SbxError *error) {
        int rc;

        rc = sqlite3_open_v2(s->path, &s->db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW |
                             SQLITE_OPEN_EXRESCODE, NULL);
        if (rc != SQLITE_OK) {
                if (!s->db)
                        return -ENOMEM;
                return store_fail(s, error, "cannot open database");
        }
        if (sqlite3_busy_timeout(s->db, BUSY_TIMEOUT_MS) != SQLITE_OK)
                return store_fail(s, error, "cannot set busy timeout");
        return 0;
}

static int open_store(const char *state_dir, bool check, SbxStore **ret, SbxError *error) {
        _cleanup_(sbx_store_closep) SbxStore *s = NULL;
        int r;

        assert(state_dir);
        assert(ret);

        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        if (asprintf(&s->path, "%s/%s", state_dir, SBX_STORE_FILENAME) < 0) {
                s->path = NULL;
                return -ENOMEM;
        }

        r = create_db_file(s->path, error);
        if (r < 0)
                return r;
        r = store_connect(s, error);
        if (r < 0)
                return r;
        /* Before anything writes: a damaged file is reported, never papered over. */
        r = check ? check_integrity(s, error) : 0;
        if (r < 0)
                return r;
        r = enable_wal(s, error);
        if (r < 0)
                return r;
        r = store_exec(s, "PRAGMA foreign_keys=ON", "cannot enable foreign keys", error);
        if (r < 0)
                return r;
        r = migrate(s, error);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(s);
        return 0;
}

int sbx_store_open(const char *state_dir, SbxStore **ret, SbxError *error) {
        return open_store(state_dir, true, ret, error);
}

int sbx_store_reopen(const char *state_dir, SbxStore **ret, SbxError *error) {
        return open_store(state_dir, false, ret, error);
}

SbxStore *sbx_store_close(SbxStore *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < _STMT_MAX; i++)
                sqlite3_finalize(s->statements[i]);
        sqlite3_close_v2(s->db);
        free(s->path);
        free(s);
        return NULL;
}

const char *sbx_store_path(const SbxStore *s) {
        return s->path;
}

bool sbx_store_created(const SbxStore *s) {
        return s->created;
}
