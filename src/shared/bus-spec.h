/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec and options as a{sv} (docs/api.md), read at the contract level (see
 * spec.h): what the bus types can carry; create's admissibility rules come after
 * (sbx_spec_finalize). Every unknown key, wrong variant type, repeated key or bad
 * value is InvalidArgs naming the key. An integer value may come as any D-Bus
 * integer type (y n q i u x t; python3-dbus and GLib send 'i' or 'x' for a plain
 * int), and ports as a(XY) of any integer types, each range-checked. Lists hold
 * at most SBX_MAX_INPUT_ENTRIES entries; env names must be unique (a D-Bus dict
 * with a repeated key is malformed). */

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "bus-lifetime.h"
#include "runtime.h"
#include "spec.h"

/* sbx_bus_read_integer(), sbx_bus_type_is_integer(): bus-read.h */

/* Reads an a{sv} spec into a raw spec (see spec-json.h for what "raw" means). */
int sbx_bus_read_spec(sd_bus_message *m, SbxSpec **ret, SbxError *error);

/* Writes a raw spec as the a{sv} that sbx_bus_read_spec() reads back (for clients).
 * Only what is set goes out: no image for an image template without one, no
 * working_dir when NULL, no cpus/memory when 0, no empty env/volumes/ports, no
 * network_isolated when false — the daemon's defaults apply to what is missing.
 * Numbers go as the documented 'u' and a(qq) when they fit, else as 'x' / a(xx). */
int sbx_bus_append_spec(sd_bus_message *m, const SbxSpec *spec, SbxError *error);

/* An a{sv} of options where none is defined: any key is refused. */
int sbx_bus_read_no_options(sd_bus_message *m, SbxError *error);

/* Create options: "labels" a{ss} (bus-labels.h; *ret_labels NULL when absent), the
 * lifetime's (bus-lifetime.h), "pull" (s: "never", the default, or "missing": an
 * image not on the host is pulled first), "egress" a{sv} (bus-egress.h; the default
 * when absent) and "runtime" s (runtime.h: a well-formed name, "" when absent; whether the
 * policy offers it is the caller's check). */
int sbx_bus_read_create_options(sd_bus_message *m, json_object **ret_labels, SbxLifetime *ret_lifetime,
                                bool *ret_pull_missing, SbxEgress *ret_egress,
                                char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], SbxError *error);
/* ClaimSandbox's: the create options and "name_prefix" (s, policy.h's form; NULL when
 * absent). */
int sbx_bus_read_claim_options(sd_bus_message *m, json_object **ret_labels, SbxLifetime *ret_lifetime,
                               bool *ret_pull_missing, SbxEgress *ret_egress,
                               char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], char **ret_name_prefix,
                               SbxError *error);
/* SetSandboxLifetimes' options: the lifetime keys alone, each marked given. */
int sbx_bus_read_lifetime_options(sd_bus_message *m, SbxLifetime *ret, SbxError *error);

/* Stop options: "timeout" (u, or any integer type: seconds before SIGKILL, 0–3600),
 * "force" (b: other connections' leases are revoked, not SandboxBusy). */
#define SBX_STOP_TIMEOUT_DEFAULT 10U
#define SBX_STOP_TIMEOUT_MAX 3600U
typedef struct SbxStopOptions {
        unsigned timeout;
        bool force;
} SbxStopOptions;
int sbx_bus_read_stop_options(sd_bus_message *m, SbxStopOptions *ret, SbxError *error);

/* ExecSandbox / StartExec options (docs/api.md): env a{ss}, working_dir s
 * (absolute), timeout (seconds; capture: 1–86400, default 60; streaming: 0–86400,
 * 0 = none, the default), and for capture stdin ay (≤ 16 MiB) and output_limit
 * (bytes per stream, 0–16 MiB, default 1 MiB) and on_timeout s ("error", the default:
 * TimedOut; "result": the output so far, exit status 124), for streaming tty b and
 * rows/cols. */
#define SBX_EXEC_TIMEOUT_DEFAULT_S 60U
#define SBX_EXEC_TIMEOUT_MAX_S 86400U
#define SBX_EXEC_OUTPUT_LIMIT_DEFAULT ((uint64_t) 1 << 20)
#define SBX_EXEC_OUTPUT_LIMIT_MAX ((uint64_t) 16 << 20)
#define SBX_EXEC_STDIN_MAX ((size_t) 16 << 20)
#define SBX_EXEC_ARGV_MAX 4096U
#define SBX_EXEC_WAIT_MAX_S 3600U

typedef struct SbxExecOptions {
        char **env;                     /* "KEY=VALUE"…, NULL-terminated, or NULL */
        size_t n_env;
        char *working_dir;
        void *stdin_data;
        size_t stdin_size;
        unsigned timeout_s;
        uint64_t output_limit;
        bool tty;
        unsigned rows, cols;
        bool timeout_result;            /* capture: on_timeout "result" (else "error") */
        bool detach;                    /* streaming: a detached process (neither tty nor timeout) */
        unsigned wait_s;                /* a full exec share is waited for so long (0: refused at once) */
        bool resume;                    /* a paused sandbox is resumed first */
} SbxExecOptions;

void sbx_exec_options_done(SbxExecOptions *o);
int sbx_bus_read_exec_options(sd_bus_message *m, bool streaming, SbxExecOptions *ret, SbxError *error);

/* The argv of an exec: non-empty, at most SBX_EXEC_ARGV_MAX strings. */
int sbx_bus_read_argv(sd_bus_message *m, char ***ret, SbxError *error);
/* Ensure options: "on_mismatch" (s: "fail", the default, or "recreate"),
 * "stop_timeout" (u or any integer type: seconds, 0–3600, default 30), "labels"
 * (as create's; *ret_labels NULL when absent), "force" (b: a replacement revokes
 * other connections' leases), "pull", "egress", "runtime" (as create's) and the
 * lifetime's, for a sandbox it makes. */
#define SBX_ENSURE_STOP_TIMEOUT_DEFAULT 30U
int sbx_bus_read_ensure_options(sd_bus_message *m, bool *ret_recreate, unsigned *ret_stop_timeout,
                                json_object **ret_labels, bool *ret_force, SbxLifetime *ret_lifetime,
                                bool *ret_pull_missing, SbxEgress *ret_egress,
                                char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], SbxError *error);

/* File call options (ReadFile, WriteFile, ListFiles, RemoveFile; docs/api.md): read
 * offset t, length t (0–UINT64_MAX: the daemon caps it by max_file_bytes); write mode
 * u (0–07777, default 0644), append b, make_parents b; list depth u (1–32, default 1),
 * limit u (1–100000, default 1000); remove recursive b; read and write fd h (the data
 * through that descriptor instead of the message). Any other key is InvalidArgs. */
typedef enum SbxFileVerb {
        SBX_FILE_READ,
        SBX_FILE_WRITE,
        SBX_FILE_LIST,
        SBX_FILE_REMOVE,
} SbxFileVerb;

typedef struct SbxFileOptions {
        uint64_t offset, length;
        bool has_length;                /* else the policy's max_file_bytes */
        unsigned mode;
        bool append, make_parents;
        unsigned depth, limit;
        bool recursive;
        bool resume;                    /* a paused sandbox is resumed first */
        int fd;                         /* option fd: the message's descriptor, or -1 */
} SbxFileOptions;

int sbx_bus_read_file_options(sd_bus_message *m, SbxFileVerb verb, SbxFileOptions *ret, SbxError *error);

/* A file call's path: absolute, at most 4096 bytes (D-Bus strings carry no NUL). */
#define SBX_FILE_PATH_MAX 4096U
int sbx_bus_read_file_path(sd_bus_message *m, const char **ret, SbxError *error);
