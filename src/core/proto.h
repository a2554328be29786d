/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The private protocol between the service and its own program inside a sandbox
 * (xagent-sandbox-init --serve, docs/architecture.md "The channel"). Pure: no I/O,
 * no allocation except a growing writer's buffer; compiled into the static init
 * as well as the daemon.
 *
 * A frame is a 12-byte header — the magic "XSB" and the protocol version (one
 * byte), the message type (u32), the payload's length (u32), all little-endian —
 * and a payload of fields: a tag (u8), a length (u32), that many bytes. Integers
 * are 8 bytes little-endian; strings carry no NUL; a nested list entry is a field
 * whose bytes are fields again. Every length read is checked against what is left
 * and against the limits below before anything is used: both ends treat the other
 * as hostile (the program in the sandbox shares it with the owner's processes). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_PROTO_VERSION 1
#define SBX_PROTO_HEADER_SIZE 12U
/* Docker's multiplexed stream's frame header (docker-stream.h), for the EXEC stream. */
#define SBX_DOCKER_FRAME_HEADER_SIZE 8U
/* Above the largest ReadFile/WriteFile data the policy allows (16 MiB), with room
 * for the other fields. */
#define SBX_PROTO_MAX_PAYLOAD ((16U << 20) + 65536U)
#define SBX_PROTO_MAX_PATH 4096U

typedef enum SbxProtoType {
        /* requests */
        SBX_PROTO_HELLO = 1,            /* VERSION → OK(VERSION) */
        SBX_PROTO_READ = 2,             /* PATH, OFFSET, LENGTH → OK(DATA, SIZE, MODE, MTIME, EOF) */
        SBX_PROTO_WRITE = 3,            /* PATH, DATA, MODE, FLAGS → OK(ALLOCATED, RELEASED) */
        SBX_PROTO_LIST = 4,             /* PATH, DEPTH, LIMIT → OK(ENTRY…, TRUNCATED) */
        SBX_PROTO_REMOVE = 5,           /* PATH, FLAGS → OK(RELEASED) */
        /* a detached process's ring in the directory PATH: state, and what it kept of
         * each stream from the cursor OFFSET on, at most LENGTH bytes each (ring.h) */
        SBX_PROTO_OUTPUT = 6,           /* PATH, OFFSET, LENGTH → OK(STATE, STATUS, POS_*, COMMIT_*, STDOUT, STDERR) */
        /* a command run by the program (proto-exec below) */
        SBX_PROTO_EXEC = 7,             /* ARG…, ENV…, [PATH], TOKEN, [FLAGS, ROWS, COLS] → OK(FD) */
        /* the state of every detached process in the directory PATH (its rings'
         * directories), at most LIMIT of them: one request for all of a sandbox's */
        SBX_PROTO_STATES = 12,          /* PATH, LIMIT → OK(ENTRY(NAME, STATE, STATUS | ERRNO)…, TRUNCATED) */
        /* replies */
        SBX_PROTO_OK = 100,
        SBX_PROTO_ERROR = 101,          /* ERRNO, MESSAGE */
} SbxProtoType;

typedef enum SbxProtoTag {
        SBX_TAG_VERSION = 1,
        SBX_TAG_PATH = 2,
        SBX_TAG_OFFSET = 3,
        SBX_TAG_LENGTH = 4,
        SBX_TAG_DATA = 5,
        SBX_TAG_MODE = 6,
        SBX_TAG_FLAGS = 7,
        SBX_TAG_DEPTH = 8,
        SBX_TAG_LIMIT = 9,
        SBX_TAG_SIZE = 10,
        SBX_TAG_MTIME = 11,             /* µs since the epoch */
        SBX_TAG_EOF = 12,
        SBX_TAG_ENTRY = 13,             /* nested: NAME, KIND, SIZE, MTIME, MODE */
        SBX_TAG_NAME = 14,
        SBX_TAG_KIND = 15,
        SBX_TAG_TRUNCATED = 16,
        SBX_TAG_ERRNO = 17,
        SBX_TAG_MESSAGE = 18,
        SBX_TAG_STATE = 19,             /* SBX_RING_STATE_* */
        SBX_TAG_STATUS = 20,
        SBX_TAG_STDOUT = 21,
        SBX_TAG_STDERR = 22,
        SBX_TAG_POS_OUT = 23,           /* the stream position of the first byte returned */
        SBX_TAG_POS_ERR = 24,
        SBX_TAG_COMMIT_OUT = 25,        /* the stream position after its last byte written */
        SBX_TAG_COMMIT_ERR = 26,
        SBX_TAG_ALLOCATED = 27,         /* bytes of disk (blocks) the written file takes now */
        SBX_TAG_RELEASED = 28,          /* bytes of disk (blocks) freed: what a write replaced, a remove removed */
        SBX_TAG_ARG = 29,               /* EXEC: argv, one field each, in order */
        SBX_TAG_ENV = 30,               /* EXEC: "KEY=VALUE", one field each */
        SBX_TAG_TOKEN = 31,             /* EXEC: the command's XAGENT_SANDBOX_EXEC */
        SBX_TAG_ROWS = 32,
        SBX_TAG_COLS = 33,
        SBX_TAG_FD = 34,                /* EXEC's reply: the program's descriptor of the command's stream */
        SBX_TAG_PID = 35,               /* HELLO's reply: the program's pid in the sandbox */
} SbxProtoTag;

/* A descriptor transfer into a file (WriteFile's option fd; src/init/stream.c): the
 * data on the program's standard input ends with this trailer — the magic and the
 * data's length, u64 little-endian — so that an input cut short (the service gone,
 * the call refused midway) is told from a whole one and nothing is put in place. */
#define SBX_PUT_TRAILER_MAGIC "XSBEND01"
#define SBX_PUT_TRAILER_SIZE 16U

/* FLAGS bits */
#define SBX_PROTO_WRITE_APPEND       (1U << 0)
#define SBX_PROTO_WRITE_MAKE_PARENTS (1U << 1)
#define SBX_PROTO_REMOVE_RECURSIVE   (1U << 0)
#define SBX_PROTO_EXEC_TTY           (1U << 0)

/* The ring file of a detached process (src/init/detach.c writes it, the service
 * reads it through READ requests): a header of u64 little-endian fields, then one
 * ring of `cap` bytes per stream (stdout, then stderr; each keeps its newest cap
 * bytes, the oldest overwritten), then each stream's intent. cap is the policy's
 * max_process_output when the process started, recorded in the header, so a reader
 * after a restart or a policy change reads it as it was written. Versioned by its
 * magic: layout 1 (XSBRING1, one 2 MiB ring of both streams) is refused. Everything
 * in it is hostile input: the owner's processes can write it. */
#define SBX_RING_FILE "output"
/* The FIFO beside it that the process has as its stdin (Attach writes it). */
#define SBX_RING_STDIN_FILE "stdin"
#define SBX_RING_MAGIC "XSBRING2"
#define SBX_RING_MAGIC_V1 "XSBRING1"
#define SBX_RING_CAP_MIN ((uint64_t) 64 << 10)
#define SBX_RING_CAP_MAX ((uint64_t) 64 << 20)
#define SBX_RING_CAP_DEFAULT ((uint64_t) 1 << 20)
#define SBX_RING_HEADER_SIZE 128U
#define SBX_RING_CAP_OFFSET 8U
#define SBX_RING_STATE_OFFSET 16U      /* 0 running, SBX_RING_EXITED */
#define SBX_RING_STATUS_OFFSET 24U     /* the exit status (128+N after signal N) */
#define SBX_RING_PID_OFFSET 32U        /* the supervisor's pid in the sandbox */
#define SBX_RING_START_TIME_OFFSET 40U /* and its start time (/proc/PID/stat, field 22) */
/* stream s's position after its last byte written (s: 0 stdout, 1 stderr) */
#define SBX_RING_COMMIT_OFFSET(s) (48U + 8U * (unsigned) (s))
#define SBX_RING_EXITED 1U
/* An OUTPUT reply's STATE: the header's state, or LOST when the supervisor is gone
 * without having recorded an end (killed, or its sandbox restarted). */
#define SBX_RING_STATE_RUNNING 0U
#define SBX_RING_STATE_EXITED SBX_RING_EXITED
#define SBX_RING_STATE_LOST 2U
#define SBX_RING_DATA_OFFSET(cap, s) ((uint64_t) SBX_RING_HEADER_SIZE + (uint64_t) (s) * (cap))
#define SBX_RING_INTENT_OFFSET(cap, s) ((uint64_t) SBX_RING_HEADER_SIZE + 2 * (cap) + 8U * (uint64_t) (s))
#define SBX_RING_FILE_SIZE(cap) SBX_RING_INTENT_OFFSET(cap, 2)

typedef struct SbxRingHeader {
        uint64_t cap;
        uint64_t commit[2];
        uint64_t status, pid, start_time;
        bool exited;
} SbxRingHeader;

/* Its readers: ring.h. */

typedef struct SbxProtoFrame {
        uint32_t type;
        const uint8_t *payload;
        uint32_t size;
} SbxProtoFrame;

typedef struct SbxProtoField {
        uint8_t tag;
        const uint8_t *data;
        uint32_t size;
} SbxProtoField;

/* The first frame of buf (n bytes so far): > 0 its whole length, with *ret
 * pointing into buf; 0 when more bytes are needed; -EBADMSG for a wrong magic or
 * version, -EMSGSIZE for a payload above the limit. */
int sbx_proto_frame(const uint8_t *buf, size_t n, SbxProtoFrame *ret);

/* The field at *pos of a payload; advances *pos. 1 with *ret, 0 at the end,
 * -EBADMSG when a field does not fit. */
int sbx_proto_next(const uint8_t *payload, size_t size, size_t *pos, SbxProtoField *ret);

/* The first field with tag in payload: 1 found, 0 absent, -EBADMSG malformed. */
int sbx_proto_find(const uint8_t *payload, size_t size, uint8_t tag, SbxProtoField *ret);

/* Typed readers of a field: -EBADMSG when its size is not the type's. */
int sbx_proto_u64(const SbxProtoField *f, uint64_t *ret);
/* A string without NUL, at most max bytes, copied NUL-terminated into buf (of
 * max + 1 bytes). */
int sbx_proto_str(const SbxProtoField *f, char *buf, size_t max);

/* A writer. With fixed set, buf is never grown (the init allocates nothing): a
 * frame that does not fit fails with -ENOBUFS. */
typedef struct SbxProtoWriter {
        uint8_t *buf;
        size_t size, alloc;
        size_t frame_at;                /* where the open frame's header is */
        bool fixed;
        int error;                      /* the first failure; every later call is a no-op */
} SbxProtoWriter;

void sbx_proto_begin(SbxProtoWriter *w, uint32_t type);
void sbx_proto_put(SbxProtoWriter *w, uint8_t tag, const void *data, size_t size);
void sbx_proto_put_u64(SbxProtoWriter *w, uint8_t tag, uint64_t v);
void sbx_proto_put_str(SbxProtoWriter *w, uint8_t tag, const char *s);
/* A nested field: open it, put its fields, close it. */
size_t sbx_proto_open_nested(SbxProtoWriter *w, uint8_t tag);
void sbx_proto_close_nested(SbxProtoWriter *w, size_t at);
/* Closes the frame; its total length, or the first failure (negative errno). */
int sbx_proto_end(SbxProtoWriter *w);
/* Frees a growing writer's buffer. */
void sbx_proto_writer_done(SbxProtoWriter *w);

/* ---- requests, as both ends see them ---------------------------------------------- */

typedef struct SbxProtoRequest {
        uint32_t type;
        char path[SBX_PROTO_MAX_PATH + 1];
        uint64_t offset, length;        /* READ; OUTPUT (offset: the cursor) */
        const uint8_t *data;            /* WRITE (into the frame) */
        uint32_t data_size;
        uint64_t mode, flags;           /* WRITE (mode), WRITE and REMOVE (flags) */
        uint64_t depth, limit;          /* LIST */
} SbxProtoRequest;

/* Defaults of the optional fields. */
#define SBX_PROTO_DEFAULT_MODE 0644U
#define SBX_PROTO_DEFAULT_DEPTH 1U
#define SBX_PROTO_DEFAULT_LIMIT 1000U
#define SBX_PROTO_MAX_DEPTH 32U
#define SBX_PROTO_MAX_LIMIT 100000U
#define SBX_PROTO_MAX_DATA (16U << 20)
/* What one OUTPUT returns at most of each stream: a reply of both stays well below
 * the bus's message limit whatever the ring's cap. */
#define SBX_PROTO_MAX_OUTPUT (4U << 20)

/* Parses and checks a request frame (every field within its bounds, the path
 * absolute without NUL); on -EINVAL/-EBADMSG/-EOPNOTSUPP, why says what was
 * wrong. The data of a WRITE points into the frame. */
int sbx_proto_request_parse(const SbxProtoFrame *f, SbxProtoRequest *ret, char *why, size_t why_size);

/* Writes a request frame; the writer's result. */
int sbx_proto_request_write(SbxProtoWriter *w, const SbxProtoRequest *q);

/* ---- replies, as the service reads them ------------------------------------------- */

typedef struct SbxProtoError {
        int err;                        /* errno in the sandbox (positive) */
        char message[512];
} SbxProtoError;

/* An ERROR frame: -EBADMSG if malformed. */
int sbx_proto_error_parse(const SbxProtoFrame *f, SbxProtoError *ret);

typedef struct SbxProtoReadReply {
        const uint8_t *data;
        uint32_t data_size;
        uint64_t size, mode, mtime_us;
        bool eof;
} SbxProtoReadReply;

int sbx_proto_read_reply_parse(const SbxProtoFrame *f, uint64_t max_data, SbxProtoReadReply *ret);

/* An integer field an OK reply must have (ALLOCATED, RELEASED): -EBADMSG if absent. */
int sbx_proto_reply_u64(const SbxProtoFrame *f, uint8_t tag, uint64_t *ret);

typedef struct SbxProtoOutputReply {
        uint64_t state, status;         /* SBX_RING_STATE_*; the exit status when exited */
        uint64_t pos[2], commit[2];     /* each stream's: first byte returned, end */
        const uint8_t *data[2];
        uint32_t size[2];
} SbxProtoOutputReply;

/* An OUTPUT reply, checked as hostile: every position below 2^63, what it returns
 * within [pos, commit] and at most max_data bytes a stream, and — when max_data is
 * not 0 — something returned of every stream that has bytes past pos (a reply
 * that says there is more and returns none is no progress): -EBADMSG otherwise. */
int sbx_proto_output_reply_parse(const SbxProtoFrame *f, uint64_t max_data, SbxProtoOutputReply *ret);

typedef struct SbxProtoEntry {
        char name[SBX_PROTO_MAX_PATH + 1];
        char kind[16];
        uint64_t size, mtime_us, mode;
} SbxProtoEntry;

/* The entries of a LIST reply, one at a time: call with *pos 0 first; 1 with an
 * entry, 0 at the end, -EBADMSG for anything malformed (a name that is empty,
 * absolute, has NUL or a ".." component; a kind not of the protocol). */
int sbx_proto_list_next(const SbxProtoFrame *f, size_t *pos, SbxProtoEntry *ret);
typedef struct SbxProtoState {
        char name[SBX_PROTO_MAX_PATH + 1];
        int err;                        /* its ring could not be read (positive errno); 0: state, status */
        uint64_t state, status;
} SbxProtoState;

/* The entries of a STATES reply, one at a time, as sbx_proto_list_next(). */
int sbx_proto_states_next(const SbxProtoFrame *f, size_t *pos, SbxProtoState *ret);
/* The TRUNCATED flag of a LIST or STATES reply. */
int sbx_proto_list_truncated(const SbxProtoFrame *f, bool *ret);

/* ---- commands over the channel (docs/architecture.md, "Commands over the channel") -- */

/* EXEC: the program makes a socket pair, forks a supervisor holding one end and
 * answers OK(FD) with its descriptor number of the other end, which it keeps open
 * until the next frame it reads (or 2 s), for the service to take with
 * pidfd_getfd(2). The supervisor waits (SBX_EXEC_GO_TIMEOUT_MS at most) for one byte,
 * SBX_EXEC_GO, on its end — the service holds the stream — and only then forks the
 * command, as the program's own uid, gid, namespaces and cgroup, in PATH (else the
 * program's working directory), with the program's environment but its
 * XAGENT_SANDBOX_EXEC, overridden by ENV, then TOKEN's XAGENT_SANDBOX_EXEC.
 *
 * The stream is Docker's multiplexed one (docker-stream.h): stdout on stream 1
 * (everything, with a terminal), stderr on 2, and on SBX_EXEC_STREAM_STATUS two
 * frames of SBX_EXEC_STATUS_SIZE bytes: the first, before any output, says whether
 * the command started (with a terminal it carries the terminal's master descriptor
 * (SCM_RIGHTS), for Resize); the last one its exit status, after which the stream
 * ends. What the service writes after SBX_EXEC_GO is the command's stdin; its
 * half-close is the command's end of file. A supervisor whose stream the service
 * closed kills the command (its token) and ends. */
#define SBX_EXEC_GO 'G'
#define SBX_EXEC_GO_TIMEOUT_MS 10000
#define SBX_EXEC_STREAM_STATUS 3U
#define SBX_EXEC_STATUS_SIZE 8U          /* kind (u8), 3 zero bytes, value (u32 big-endian) */
#define SBX_EXEC_ARGS_MAX 65536U
#define SBX_EXEC_TOKEN_MAX 64U

typedef enum SbxExecStatusKind {
        SBX_EXEC_STARTED = 0,           /* value 0 */
        SBX_EXEC_EXITED = 1,            /* value: the exit status (128+N after signal N) */
        SBX_EXEC_NOT_EXECUTED = 2,      /* value: execve's errno */
        SBX_EXEC_NO_WORKING_DIR = 3,    /* value: chdir's errno */
        SBX_EXEC_FAILED = 4,            /* value: errno; the supervisor could not set it up */
} SbxExecStatusKind;

typedef struct SbxProtoExec {
        char *const *argv;              /* non-empty, NULL-terminated */
        char *const *env;               /* NULL-terminated; may be NULL */
        const char *working_dir;        /* NULL: the program's */
        const char *token;
        bool tty;
        unsigned rows, cols;            /* 0: the terminal's default */
} SbxProtoExec;

int sbx_proto_exec_write(SbxProtoWriter *w, const SbxProtoExec *x);

/* Parses an EXEC frame without allocating: its strings are copied NUL-terminated
 * into strings (strings_size ≥ the frame's payload size), argv and env are
 * NULL-terminated arrays in ptrs (ptrs_max entries). -EINVAL/-EBADMSG with why. */
int sbx_proto_exec_parse(const SbxProtoFrame *f, SbxProtoExec *ret, char *strings, size_t strings_size,
                         char **ptrs, size_t ptrs_max, char *why, size_t why_size);

/* A status frame's payload, checked: -EBADMSG for an unknown kind or nonzero padding. */
int sbx_exec_status_parse(const uint8_t b[static SBX_EXEC_STATUS_SIZE], unsigned *ret_kind, uint32_t *ret_value);
void sbx_exec_status_frame(uint8_t b[static SBX_DOCKER_FRAME_HEADER_SIZE + SBX_EXEC_STATUS_SIZE], unsigned kind,
                           uint32_t value);
