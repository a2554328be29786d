/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Moves bytes between an exec's hijacked stream (docker-exec.h) and the local
 * side: its standard input from a descriptor or a buffer, its output (split by
 * stream without a terminal) to descriptors or to capped buffers. One poll()
 * loop, on the calling thread, with back-pressure both ways: nothing is read
 * from one side before the other took the previous piece, so a slow reader
 * slows only its own exec and memory stays bounded by one read each way.
 *
 * The local descriptors are used as they are: they are the caller's (copies of what
 * came with the call; nothing is ever opened anew on a caller's behalf), shared with
 * the caller, and their file status flags stay untouched. A read happens only after
 * poll() said readable, a write only after it said writable; a socket is read and
 * written without waiting (MSG_DONTWAIT); anything else — a pipe or a terminal the
 * caller may empty or fill between our poll() and our call, a slow reader — is read
 * and written under a timer of the running thread that ends any wait after 50 ms
 * (sbx_relay_io_bounded()), at most PIPE_BUF bytes at a time to what is not a regular
 * file. So no caller can hold the relay in a read or a write: it goes back to its
 * poll(), where its wake-up and its deadline are seen. What a descriptor is (fstat) is
 * looked at when the relay first runs. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "time-util.h"     /* deadline_us is sbx_now_monotonic_us()'s clock */

typedef struct SbxRelaySink {
        int fd;                         /* ≥ 0: written there; < 0: kept in data */
        char *data;                     /* owned; NUL-terminated when non-NULL */
        size_t size;
        size_t limit;                   /* bytes kept at most; the rest is dropped */
        bool truncated;
        bool broken;                    /* the reader went away: the rest is dropped */
        int error;                      /* why it broke (negative errno) */
} SbxRelaySink;

typedef struct SbxRelay {
        int sock;                       /* the stream; O_NONBLOCK; owned (closed by sbx_relay_done) */
        bool tty;                       /* raw: all output is stdout's; the input is never
                                         * half-closed (Docker ends a terminal's stream then) */
        int in_fd;                      /* ≥ 0: standard input from there; < 0: in_data */
        const char *in_data;
        size_t in_size;
        SbxRelaySink out[2];            /* stdout, stderr */
        size_t kept_limit;              /* > 0: both buffered sinks together keep at most
                                         * this; the rest is dropped (truncated) */
        int wake_fd;                    /* ≥ 0: readable means stop; not consumed */
        uint64_t deadline_us;           /* CLOCK_MONOTONIC; 0 = none */
        /* Optional: what is read from in_fd passes through here first (appending
         * to *out); at end of input it is called once with data NULL. A negative
         * return stops the relay with that error. */
        int (*in_filter)(void *userdata, const char *data, size_t size, char **out, size_t *out_size,
                         size_t *out_alloc);
        void *in_filter_userdata;
        int in_error;                   /* in_fd's read failed (negative errno): its input ended there */
        /* A command over the channel (proto.h, "commands over the channel"): the
         * stream is multiplexed even with a terminal, and its frames on stream 3 are
         * the command's status; the last one read is in status[] (status_size bytes). */
        bool status_frames;
        uint8_t status[8];
        size_t status_size;
        struct RelayState *state;       /* kept between runs */
} SbxRelay;

#define SBX_RELAY_INIT ((SbxRelay) { .sock = -1, .in_fd = -1, .wake_fd = -1, \
                                     .out = { { .fd = -1 }, { .fd = -1 } } })

/* Runs until the stream ends (0), the deadline passes (-ETIME) or wake_fd turns
 * readable (-ECANCELED); -EBADMSG for a malformed stream, other negative errnos
 * for I/O errors on the stream. After -ETIME or -ECANCELED it may be run again
 * (with a new deadline, or the wake-up consumed) and continues where it was. */
int sbx_relay_run(SbxRelay *r);

/* Frees the buffers and the state, closes the stream. */
void sbx_relay_done(SbxRelay *r);

/* One write(2) of wbuf (or, wbuf NULL, one read(2) into rbuf) of at most n bytes that
 * waits 50 ms at most: -EAGAIN when nothing moved meanwhile, else the count or the
 * negative errno. The timer's signal is a real-time one the relay owns (SIGRTMIN+3),
 * caught by a handler that does nothing. */
ssize_t sbx_relay_io_bounded(int fd, const void *wbuf, void *rbuf, size_t n);
