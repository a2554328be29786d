/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Running processes in a sandbox (docs/api.md, ExecSandbox and StartExec): as the sandbox owner's uid:gid,
 * never privileged, with the container's (empty) capability set, each carrying
 * a token in its environment (XAGENT_SANDBOX_EXEC) so that the service's own init
 * can signal it and its descendants later (the init's --kill mode, run through a
 * second exec as the same owner): Docker cannot signal an exec, and the service
 * may neither see nor signal another uid's processes. The token is this service
 * instance's id (random, made once per process) and a random part: an instance
 * that starts after another died finds the execs the dead one left running by it
 * (sbx_lifecycle_exec_sweep). */

#include <stdbool.h>
#include <stdint.h>

#include "docker-exec.h"
#include "docker-relay.h"
#include "lifecycle.h"

#define SBX_EXEC_INIT_PATH "/.xagent-sandbox/xagent-sandbox-init"
#define SBX_EXEC_TOKEN_VAR "XAGENT_SANDBOX_EXEC"
#define SBX_EXEC_INSTANCE_LEN 16                                /* hex digits */
#define SBX_EXEC_TOKEN_LEN (SBX_EXEC_INSTANCE_LEN + 1 + 32)     /* "<instance>.<random>" */
#define SBX_DETACH_ID_LEN 32                                    /* hex digits */

#define SBX_EXEC_TIMEOUT_DEFAULT_S 60U
#define SBX_EXEC_TIMEOUT_MAX_S 86400U
#define SBX_EXEC_OUTPUT_LIMIT_DEFAULT ((uint64_t) 1 << 20)
#define SBX_EXEC_OUTPUT_LIMIT_MAX ((uint64_t) 16 << 20)
#define SBX_EXEC_STDIN_MAX ((size_t) 16 << 20)
/* What one ExecSandbox reply carries of both streams together: its whole reply must
 * stay below dbus-daemon's max_message_size (32 MiB on the system bus), which
 * disconnects a sender that exceeds it — the whole service. Beyond it, output is
 * dropped and truncated is true, as beyond output_limit. */
#define SBX_EXEC_CAPTURE_MAX ((uint64_t) 24 << 20)

typedef struct SbxExecRequest {
        char **argv;                    /* non-empty */
        char **env;                     /* "KEY=VALUE"…, NULL-terminated, may be NULL */
        char *working_dir;              /* NULL: the sandbox's */
        bool tty;
        unsigned rows, cols;            /* 0: Docker's default */
        bool check_start;               /* sbx_lifecycle_exec_start() returns once the process runs */
        const char *token;              /* NULL: a new one (detached processes bring theirs) */
} SbxExecRequest;

void sbx_exec_request_done(SbxExecRequest *r);

/* A started exec: its stream is in relay.sock. */
typedef struct SbxExecProcess {
        char *container_id;
        char *exec_id;
        char *user;                     /* "uid:gid" */
        char token[SBX_EXEC_TOKEN_LEN + 1];
        char detach_id[SBX_DETACH_ID_LEN + 1];  /* a detached process's id (exec.h, below); else empty */
        bool channel;                   /* started over the channel (no exec_id): its end is in its stream */
        int tty_master;                 /* over the channel with a terminal: its master (Resize); else -1 */
        SbxRelay relay;
} SbxExecProcess;

SbxExecProcess *sbx_exec_process_free(SbxExecProcess *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxExecProcess *, sbx_exec_process_free);

/* Starts the request in the sandbox `name` (the Docker-level name, naming.h: it
 * says whose sandbox it is, and so whose uid runs), which must be running
 * (NotRunning otherwise). With req->check_start it returns once Docker says the
 * process runs (or ran), and a process that could not be started (no such command,
 * a working directory that is not there) is InvalidArgs naming argv[0] or
 * working_dir, as for a capture: StartExec's caller would otherwise get an object
 * whose stdout carries the runtime's text and exit status 126. */
int sbx_lifecycle_exec_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                             SbxError *error);

/* Signals the exec's processes (as the owner, through the service's init).
 * Returns 1 when something was signalled, 0 when nothing was left. */
int sbx_exec_kill(SbxDocker *d, const SbxExecProcess *p, int sig, SbxError *error);

/* Resize of a terminal: Docker's, or the channel's terminal's master. */
int sbx_exec_resize(SbxDocker *d, const SbxExecProcess *p, unsigned rows, unsigned cols, SbxError *error);

/* This process's instance id (SBX_EXEC_INSTANCE_LEN hex digits), the first part of
 * every token it gives an exec. */
const char *sbx_exec_instance_id(void);

/* A new token, "<instance id>.<random>". */
int sbx_exec_make_token(char token[static SBX_EXEC_TOKEN_LEN + 1]);

/* At start-up, after the reconciliation: in every running container of this service
 * (its service label), the execs of another instance of the service that still run
 * — their first process has not ended: the instance died without killing them — are
 * killed (SIGKILL, with their descendants), through the init's --kill-leftovers mode
 * as the sandbox's owner. What a finished exec left behind is not touched. They were
 * the dead instance's to time out and to count against the exec limits; killed, they
 * need neither. *ret_killed: in how many sandboxes something was killed. Goes on
 * past a sandbox that fails; returns the first failure. */
int sbx_lifecycle_exec_sweep(SbxLifecycle *l, unsigned *ret_killed, SbxError *error);

/* After the stream ended: the exit status (the code, or 128+N after signal N). */
int sbx_exec_wait(SbxDocker *d, const SbxExecProcess *p, int *ret_status, SbxError *error);

typedef struct SbxExecResult {
        int exit_status;
        char *out, *err;
        size_t out_size, err_size;
        bool truncated;
} SbxExecResult;

void sbx_exec_result_done(SbxExecResult *r);

/* ExecSandbox: runs to the end with stdin from a buffer and the output captured
 * up to limit bytes per stream, SBX_EXEC_CAPTURE_MAX for both. Past timeout_s the
 * processes are killed and the result is TimedOut, or with timeout_result the
 * output captured until then and exit status SBX_EXEC_TIMED_OUT_STATUS (option
 * on_timeout "result"; coreutils' timeout reports 124 too). */
#define SBX_EXEC_TIMED_OUT_STATUS 124
int sbx_lifecycle_exec_capture(SbxLifecycle *l, const char *name, const SbxExecRequest *req,
                               const void *in, size_t in_size, unsigned timeout_s, uint64_t limit,
                               bool timeout_result, SbxExecResult *ret, SbxError *error);

/* Copies (CopyToSandbox, CopyFromSandbox; copy.c) run the service's own program
 * (xagent-sandbox-init --unpack, --pack) inside the sandbox as its owner, through
 * the exec API, so that the kernel applies the owner's rights to
 * every file: never Docker's archive API, which extracts as root and keeps the
 * archive's owners. What goes in is rewritten on the way (tar-filter.h): only
 * files, directories and links that stay below guest_dir, no setuid/setgid bits,
 * no device nodes. A stream refused midway stops the extraction at once (what was
 * unpacked before the refused entry stays; nothing refused is written).
 * No tar of the image runs: only the init, as the owner, without privileges, on a
 * verified sandbox. */
#define SBX_COPY_TIMEOUT_S 600U

/* The daemon is going away without anyone to answer (its bus is gone): every
 * capture and copy running anywhere in the process is killed and fails at once
 * (BackendUnavailable), instead of running to its timeout. Thread-safe; for good. */
void sbx_exec_cancel_all(void);

int sbx_lifecycle_copy_to(SbxLifecycle *l, const char *name, const char *guest_dir, int tar_fd, SbxError *error);
int sbx_lifecycle_copy_from(SbxLifecycle *l, const char *name, const char *guest_path, int tar_fd, SbxError *error);

/* Detached processes (StartExec's detach; docs/architecture.md, "Detached
 * processes"): started through one exec of the service's init (--detach) as the
 * owner, supervised in the sandbox by that init in a session of its own, the output
 * of each stream kept in a ring file of the policy's max_process_output bytes a
 * stream (proto.h, SBX_RING_*) under
 * SBX_DETACH_DIR/<id>. Nothing of the service's stays attached to it, so it outlives
 * its caller and the service; the store's row (store.h) lets a restarted service give
 * its object back. The calls below go over the kept channel (no exec) but the start:
 * one OUTPUT request each, the ring read in the sandbox by its one reader (ring.h). */
#define SBX_DETACH_DIR "/tmp/.xagent-sandbox-exec"
#define SBX_DETACH_START_TIMEOUT_S 20U
/* What one ReadOutput returns at most of each stream: a reply of both stays well
 * below the bus's message limit whatever the ring's cap. */
#define SBX_DETACH_READ_MAX ((uint64_t) SBX_PROTO_MAX_OUTPUT)

/* Records the row (a new id, caller), starts req detached; *ret: a process for
 * sbx_exec_kill() (no stream) with its detach_id. A command that cannot be started
 * is InvalidArgs naming argv[0] or working_dir, and leaves neither row nor directory. */
int sbx_lifecycle_detach_start(SbxLifecycle *l, const char *name, const SbxExecRequest *req, uid_t caller,
                               SbxExecProcess **ret, SbxError *error);

typedef struct SbxDetachState {
        bool exited, gone;              /* gone: its output is not there any more */
        bool paused;                    /* its sandbox is paused: frozen, not gone (error NotRunning) */
        bool old_layout;                /* gone: its ring is of layout 1, not read (its process is to be killed) */
        bool oom_killed;                /* its supervisor died with no end written, the sandbox out of memory */
        bool unknown;                   /* sbx_lifecycle_detach_poll_all(): not known this time */
        int exit_status;
} SbxDetachState;

/* The process's state from its ring file's header; a supervisor that is not running
 * any more without having recorded an end (killed, or its sandbox restarted) is
 * exited with status 137, and oom_killed when the sandbox ran out of memory (the
 * kernel's OOM killer killed it). */
int sbx_lifecycle_detach_poll(SbxLifecycle *l, const char *name, const char *id, SbxDetachState *ret,
                              SbxError *error);

/* The states of the n processes ids of one sandbox in one channel request (an init
 * of an older version, or ids beyond what one answer holds: one request each). A
 * failure of the channel itself is returned (every state unknown, paused set when
 * the sandbox is); one process's failure sets only its state's unknown. */
int sbx_lifecycle_detach_poll_all(SbxLifecycle *l, const char *name, char *const *ids, size_t n,
                                  SbxDetachState *states, SbxError *error);

typedef struct SbxDetachOutput {
        uint8_t *out, *err;
        size_t out_size, err_size;
        uint64_t next_offset;           /* the cursor after what was returned (ring.h, sbx_ring_cursor) */
        bool more;                      /* more was kept than one call returns */
        bool running;
        int exit_status;                /* when not running */
        bool paused;                    /* its sandbox is paused: frozen, not gone (error NotRunning) */
        bool lost;                      /* its supervisor died with no end written: killed, 137 */
        bool oom_killed;                /* lost, and the sandbox ran out of memory (lc_container_oom_killed) */
} SbxDetachOutput;

void sbx_detach_output_done(SbxDetachOutput *o);

/* What was kept of each stream from the positions the cursor offset names on (what
 * was dropped before them is skipped: output starts at the oldest byte kept), at
 * most SBX_DETACH_READ_MAX bytes of each. */
int sbx_lifecycle_detach_read(SbxLifecycle *l, const char *name, const char *id, uint64_t offset,
                              SbxDetachOutput *ret, SbxError *error);

/* Attach: one exec as the owner of the service's init (--attach) that copies the
 * process's output, the oldest kept first, to the exec's stdout and stderr and the
 * exec's stdin to the process's; *ret: its stream, for the relay. It ends when the
 * process ended and its output was copied. With stream (StreamOutput): no input,
 * the output from the positions ReadOutput's cursor offset names on, until the
 * process ended (follow) or through what was kept when it started. */
typedef struct SbxDetachStream {
        uint64_t offset;
        bool follow;
} SbxDetachStream;

int sbx_lifecycle_detach_attach(SbxLifecycle *l, const char *name, const char *id, const SbxDetachStream *stream,
                                SbxExecProcess **ret, SbxError *error);

/* Removes its directory in the sandbox (its end was read, or its object went). */
int sbx_lifecycle_detach_forget(SbxLifecycle *l, const char *name, const char *id, SbxError *error);
