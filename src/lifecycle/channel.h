/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kept channel into a running sandbox (docs/architecture.md, "The channel"):
 * one `xagent-sandbox-init --serve` per sandbox, started through one exec as the
 * sandbox's owner once its start was verified (the exec's own check,
 * sbx_lifecycle_exec_start()), and then used for every file request, so a file call
 * costs a round trip on an open stream instead of a Docker exec. Shared by all
 * workers: one request at a time per sandbox. A channel that broke (the sandbox
 * stopped, the program ended, the service restarted) is opened again on the next
 * request. Everything the program answers is hostile input, read through the
 * bounded parsers of proto.h. */

#include <stdbool.h>
#include <stdint.h>

#include "disk-ledger.h"
#include "lifecycle.h"
#include "proto.h"

typedef struct SbxChannels SbxChannels;

int sbx_channels_new(SbxChannels **ret);
SbxChannels *sbx_channels_free(SbxChannels *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxChannels *, sbx_channels_free);

/* The ledger of max_disk_mib (disk-ledger.h). */
SbxDiskLedger *sbx_channels_disk(SbxChannels *c);

/* Closes the channel of a container (stopped, deleted): its program ends. */
void sbx_channels_forget(SbxChannels *c, const char *container_id);

/* One reply, owning its bytes. */
typedef struct SbxChannelReply {
        uint8_t *buf;
        SbxProtoFrame frame;
} SbxChannelReply;

void sbx_channel_reply_done(SbxChannelReply *r);

/* Sends q on the channel of sandbox `name` (opened as needed) and reads its reply.
 * An ERROR reply is returned as an error (InvalidArgs naming the path and the
 * errno's meaning; the program's own text is not passed on). */
int sbx_lifecycle_channel_call(SbxLifecycle *l, const char *name, const SbxProtoRequest *q,
                               SbxChannelReply *ret, SbxError *error);
/* The same; an ERROR reply's errno (positive) also in *ret_errno (left alone
 * otherwise), for callers that tell the program's answers apart. */
int sbx_lifecycle_channel_call_errno(SbxLifecycle *l, const char *name, const SbxProtoRequest *q,
                                     SbxChannelReply *ret, int *ret_errno, SbxError *error);

/* EXEC (proto.h, "commands over the channel"): *ret_fd is the command's stream,
 * taken from the program with pidfd_getfd(2) and checked (a connected AF_UNIX
 * stream socket whose peer is the sandbox's owner). -EOPNOTSUPP, without an error,
 * when this sandbox's channel cannot carry commands (a remote engine, a runtime whose
 * processes are not this host's, an init without EXEC): the caller falls back. */
int sbx_lifecycle_channel_exec(SbxLifecycle *l, const char *name, const SbxProtoExec *x, uint64_t deadline_us,
                               int *ret_fd, SbxError *error);

/* The file operations on top of it (docs/architecture.md, "The channel"). Every
 * path is normalised lexically first, the same way for each (path.h). */
typedef struct SbxFileData {
        uint8_t *data;
        size_t size;
        uint64_t file_size, mode, mtime_us;
        bool eof;
} SbxFileData;

void sbx_file_data_done(SbxFileData *d);

int sbx_lifecycle_read_file(SbxLifecycle *l, const char *name, const char *path, uint64_t offset,
                            uint64_t length, SbxFileData *ret, SbxError *error);

/* The same with the caller's descriptor fd (file-stream.c): the file's data is written
 * to fd, from offset on, length bytes (UINT64_MAX: to the end); ret gets the file's
 * size, mode, time and eof, no data. max_file_bytes does not apply. */
int sbx_lifecycle_read_file_fd(SbxLifecycle *l, const char *name, const char *path, uint64_t offset,
                               uint64_t length, int fd, SbxFileData *ret, SbxError *error);

#define SBX_WRITE_APPEND SBX_PROTO_WRITE_APPEND
#define SBX_WRITE_MAKE_PARENTS SBX_PROTO_WRITE_MAKE_PARENTS

int sbx_lifecycle_write_file(SbxLifecycle *l, const char *name, const char *path, const void *data,
                             size_t size, unsigned mode, unsigned flags, SbxError *error);

/* The same with the data read from fd to its end (file-stream.c), bounded by the
 * sandbox's disk budget (max_disk_mib) alone; a transfer refused or cut short leaves
 * nothing under the name (an append is cut back). */
int sbx_lifecycle_write_file_fd(SbxLifecycle *l, const char *name, const char *path, int fd, unsigned mode,
                                unsigned flags, SbxError *error);

typedef struct SbxFileEntry {
        char *name;                     /* relative to the listed path */
        char kind[16];
        uint64_t size, mtime_us;
        uint32_t mode;
} SbxFileEntry;

void sbx_file_entries_free(SbxFileEntry *e, size_t n);

int sbx_lifecycle_list_files(SbxLifecycle *l, const char *name, const char *path, unsigned depth,
                             unsigned limit, SbxFileEntry **ret, size_t *ret_n, bool *ret_truncated,
                             SbxError *error);

int sbx_lifecycle_remove_file(SbxLifecycle *l, const char *name, const char *path, bool recursive,
                              SbxError *error);
