/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker-relay.h"
#include "docker-stream.h"

#define CHUNK 65536U

/* What a local descriptor is, found once per run (fstat: after authorization). */
typedef enum FdKind {
        FD_SOCKET,                      /* recv/send with MSG_DONTWAIT */
        FD_REGULAR,                     /* written whole */
        FD_OTHER,                       /* pipes, terminals, devices: bounded (sbx_relay_io_bounded) */
} FdKind;

typedef struct RelayState {
        SbxRelay *r;
        /* towards the process */
        const char *in_ptr;
        size_t in_len;
        char in_buf[CHUNK];
        bool in_open;
        bool shut_down;
        char *filtered;                 /* in_filter's output */
        size_t filtered_size, filtered_alloc;
        /* from the process */
        char raw[CHUNK];
        size_t raw_pos, raw_len;
        SbxDemux demux;
        const char *piece;
        size_t piece_len;
        unsigned piece_stream;          /* 0 stdout, 1 stderr */
        bool sock_eof;
        bool in_status;                 /* within a status frame (status_frames) */
        /* the local descriptors: in_fd, out[0].fd, out[1].fd */
        FdKind kind[3];
        timer_t timer;                  /* this run's thread's (io_bounded()) */
} State;

void sbx_relay_done(SbxRelay *r) {
        for (size_t i = 0; i < 2; i++)
                r->out[i].data = mfree(r->out[i].data);
        if (r->state)
                free(r->state->filtered);
        r->state = mfree(r->state);
        if (r->sock >= 0)
                close(r->sock);
        r->sock = -1;
}

static int keep(SbxRelay *r, SbxRelaySink *s, const char *p, size_t n) {
        size_t kept = r->out[0].size + r->out[1].size;
        size_t take = MIN(n, s->limit - MIN(s->limit, s->size));
        char *d;

        if (r->kept_limit > 0)
                take = MIN(take, r->kept_limit - MIN(r->kept_limit, kept));

        if (take < n)
                s->truncated = true;
        if (take == 0)
                return 0;
        d = realloc(s->data, s->size + take + 1);
        if (!d)
                return -ENOMEM;
        memcpy(d + s->size, p, take);
        s->size += take;
        d[s->size] = 0;
        s->data = d;
        return 0;
}

/* Bounded I/O ----------------------------------------------------------------- */

/* A descriptor the caller passed is shared with the caller (the service never opens
 * anything anew on a caller's behalf), with the file status flags the caller chose:
 * usually blocking. Whoever else holds it may empty or fill it between our poll() and
 * our read() or write(), and a terminal or a slow reader may take less than poll()
 * promised. So each read and write on such a descriptor (a pipe, a terminal, a device)
 * runs under a one-shot timer of this thread's: its signal, caught without SA_RESTART,
 * ends a wait that lasts longer than IO_BOUND_NSEC with EINTR (or a short count), and the
 * relay polls again, its wake-up and deadline in view. The caller's flags stay as
 * they are. */
#define IO_BOUND_NSEC (50U * 1000U * 1000U)
#define IO_SIGNAL (SIGRTMIN + 3)

static void on_io_signal(int sig) {
}

static pthread_once_t io_signal_once = PTHREAD_ONCE_INIT;
static int io_signal_error;

static void io_signal_setup(void) {
        struct sigaction sa = { .sa_handler = on_io_signal };   /* no SA_RESTART */

        sigemptyset(&sa.sa_mask);
        if (sigaction(IO_SIGNAL, &sa, NULL) < 0)
                io_signal_error = -errno;
}

/* The calling thread's timer, its signal unblocked in this thread. */
static int io_timer_new(timer_t *ret) {
        struct sigevent ev = { .sigev_notify = SIGEV_THREAD_ID, .sigev_signo = IO_SIGNAL };
        sigset_t set;

        (void) pthread_once(&io_signal_once, io_signal_setup);
        if (io_signal_error < 0)
                return io_signal_error;
        sigemptyset(&set);
        sigaddset(&set, IO_SIGNAL);
        if (pthread_sigmask(SIG_UNBLOCK, &set, NULL) != 0)
                return -EINVAL;
        ev._sigev_un._tid = gettid();
        return timer_create(CLOCK_MONOTONIC, &ev, ret) < 0 ? -errno : 0;
}

static ssize_t io_bounded(timer_t timer, int fd, const void *wbuf, void *rbuf, size_t n) {
        struct itimerspec on = { .it_value.tv_nsec = IO_BOUND_NSEC }, off = {};
        ssize_t k;
        int error;

        if (timer_settime(timer, 0, &on, NULL) < 0)
                return -errno;
        k = wbuf ? write(fd, wbuf, n) : read(fd, rbuf, n);
        error = errno;
        /* Disarmed before anything else runs: a signal generated meanwhile is
         * delivered on this call's return, never later in someone else's call. */
        (void) timer_settime(timer, 0, &off, NULL);
        if (k < 0)
                return error == EINTR ? -EAGAIN : -error;
        return k;
}

ssize_t sbx_relay_io_bounded(int fd, const void *wbuf, void *rbuf, size_t n) {
        timer_t timer;
        ssize_t k;
        int r = io_timer_new(&timer);

        if (r < 0)
                return r;
        k = io_bounded(timer, fd, wbuf, rbuf, n);
        (void) timer_delete(timer);
        return k;
}

static int classify(int fd, FdKind *ret) {
        struct stat st;

        if (fd < 0)
                return 0;
        if (fstat(fd, &st) < 0)
                return -errno;
        *ret = S_ISSOCK(st.st_mode) ? FD_SOCKET : S_ISREG(st.st_mode) ? FD_REGULAR : FD_OTHER;
        return 0;
}

/* Writes some of the piece to a descriptor that poll() said is writable. */
static ssize_t write_some(State *s, unsigned stream, const char *p, size_t n) {
        int fd = s->r->out[stream].fd;
        ssize_t k;

        switch (s->kind[1 + stream]) {
        case FD_SOCKET:
                k = send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
                return k < 0 ? -errno : k;
        case FD_REGULAR:
                return io_bounded(s->timer, fd, p, NULL, n);
        default:
                return io_bounded(s->timer, fd, p, NULL, MIN(n, (size_t) PIPE_BUF));
        }
}

/* The current piece to its sink; returns 1 when it is all gone. */
static int drain_piece(State *s, bool writable) {
        SbxRelaySink *sink = &s->r->out[s->piece_stream];
        ssize_t k;

        if (sink->fd < 0 || sink->broken) {
                int q = sink->broken ? 0 : keep(s->r, sink, s->piece, s->piece_len);
                s->piece_len = 0;
                return q < 0 ? q : 1;
        }
        if (!writable)
                return 0;
        k = write_some(s, s->piece_stream, s->piece, s->piece_len);
        if (k == -EAGAIN || k == -EINTR)
                return 0;
        if (k < 0) {
                /* Nobody reads any more (EPIPE and the like): drop the rest and
                 * keep draining the process, which must not block. */
                sink->broken = true;
                sink->error = (int) k;
                s->piece_len = 0;
                return 1;
        }
        s->piece += k;
        s->piece_len -= (size_t) k;
        return s->piece_len == 0;
}

/* A status frame's bytes (at most its first sizeof status are kept); a new frame starts anew. */
static void take_status(State *s, const char *p, size_t n, bool last) {
        SbxRelay *r = s->r;

        if (!s->in_status)
                r->status_size = 0;
        for (size_t i = 0; i < n && r->status_size < sizeof r->status; i++)
                r->status[r->status_size++] = (uint8_t) p[i];
        s->in_status = !last;
}

/* The next piece out of what was read, if any. */
static int next_piece(State *s) {
        while (s->piece_len == 0 && s->raw_pos < s->raw_len) {
                const char *p = s->raw + s->raw_pos;
                size_t n = s->raw_len - s->raw_pos;
                unsigned stream = 1;
                ssize_t k;

                if (s->r->tty && !s->r->status_frames) {
                        s->piece = p;
                        s->piece_len = n;
                        s->piece_stream = 0;
                        s->raw_pos = s->raw_len;
                        break;
                }
                s->demux.status_stream = s->r->status_frames;
                k = sbx_demux_step(&s->demux, p, n, &stream, &s->piece, &s->piece_len);
                if (k < 0)
                        return (int) k;
                s->raw_pos += (size_t) k;
                if (stream == 3) {
                        take_status(s, s->piece, s->piece_len, sbx_demux_at_boundary(&s->demux));
                        s->piece_len = 0;
                        continue;
                }
                s->piece_stream = stream - 1;
        }
        return 0;
}

static int read_sock(State *s) {
        ssize_t k = recv(s->r->sock, s->raw, sizeof s->raw, MSG_DONTWAIT);

        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        /* A Unix socket whose peer closed with input of ours unread says ECONNRESET
         * instead of its end, once what the peer sent was read (a command over the
         * channel that ended without reading all its stdin): its end all the same. */
        if (k < 0 && errno != ECONNRESET)
                return -errno;
        if (k <= 0) {
                s->sock_eof = true;
                return (s->r->tty && !s->r->status_frames) || sbx_demux_at_boundary(&s->demux) ? 0 : -EBADMSG;
        }
        s->raw_pos = 0;
        s->raw_len = (size_t) k;
        return next_piece(s);
}

/* The input as the filter passes it on. */
static int filter_input(State *s, const char *data, size_t size) {
        SbxRelay *r = s->r;
        int q;

        s->filtered_size = 0;
        q = r->in_filter(r->in_filter_userdata, data, size, &s->filtered, &s->filtered_size, &s->filtered_alloc);
        if (q < 0)
                return q;
        s->in_ptr = s->filtered;
        s->in_len = s->filtered_size;
        return 0;
}

static int read_input(State *s) {
        ssize_t k;

        /* Shared with the caller: never waiting on it (see io_bounded()). */
        if (s->kind[0] == FD_SOCKET) {
                k = recv(s->r->in_fd, s->in_buf, sizeof s->in_buf, MSG_DONTWAIT);
                if (k < 0)
                        k = -errno;
        } else
                k = io_bounded(s->timer, s->r->in_fd, NULL, s->in_buf, sizeof s->in_buf);
        if (k == -EAGAIN || k == -EINTR)
                return 0;
        if (k <= 0) {
                s->in_open = false;     /* end of input, or an unreadable one: the same to the process */
                if (k < 0)
                        s->r->in_error = (int) k;
                return s->r->in_filter ? filter_input(s, NULL, 0) : 0;
        }
        if (s->r->in_filter)
                return filter_input(s, s->in_buf, (size_t) k);
        s->in_ptr = s->in_buf;
        s->in_len = (size_t) k;
        return 0;
}

static int write_sock(State *s) {
        ssize_t k = send(s->r->sock, s->in_ptr, s->in_len, MSG_DONTWAIT | MSG_NOSIGNAL);

        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (k < 0) {
                /* The process closed its input: what else it gets is dropped. */
                s->in_len = 0;
                s->in_open = false;
                return 0;
        }
        s->in_ptr += k;
        s->in_len -= (size_t) k;
        return 0;
}

static int poll_timeout(const SbxRelay *r) {
        uint64_t now;

        if (r->deadline_us == 0)
                return -1;
        now = sbx_now_monotonic_us();
        if (now >= r->deadline_us)
                return 0;
        return (int) MIN((r->deadline_us - now + 999) / 1000, (uint64_t) INT_MAX);
}

static void half_close(State *s) {
        if (!s->r->tty && !s->in_open && s->in_len == 0 && !s->shut_down) {
                (void) shutdown(s->r->sock, SHUT_WR);
                s->shut_down = true;
        }
}

static int step(State *s) {
        SbxRelay *r = s->r;
        struct pollfd p[4] = {
                { .fd = r->sock, .events = (s->in_len > 0 ? POLLOUT : 0) |
                                           (s->piece_len == 0 && !s->sock_eof ? POLLIN : 0) },
                { .fd = s->in_open && s->in_len == 0 ? r->in_fd : -1, .events = POLLIN },
                { .fd = s->piece_len > 0 ? r->out[s->piece_stream].fd : -1, .events = POLLOUT },
                { .fd = r->wake_fd, .events = POLLIN },
        };
        int n, q;

        /* Not asked about at all when nothing is wanted from it: a hung-up
         * socket would otherwise wake every poll. */
        if (p[0].events == 0)
                p[0].fd = -1;
        n = poll(p, ELEMENTSOF(p), poll_timeout(r));
        if (n < 0)
                return errno == EINTR ? 0 : -errno;
        if (r->deadline_us > 0 && sbx_now_monotonic_us() >= r->deadline_us)
                return -ETIME;
        if (p[3].revents)
                return -ECANCELED;
        if ((p[0].revents | p[1].revents | p[2].revents) & POLLNVAL)
                return -EBADF;
        if (p[1].revents && (q = read_input(s)) < 0)
                return q;
        if ((p[0].revents & (POLLOUT | POLLERR | POLLHUP)) && s->in_len > 0 && (q = write_sock(s)) < 0)
                return q;
        half_close(s);
        if (p[2].revents && (q = drain_piece(s, true)) < 0)
                return q;
        if (s->piece_len == 0 && (q = next_piece(s)) < 0)
                return q;
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) && s->piece_len == 0 && !s->sock_eof &&
            (q = read_sock(s)) < 0)
                return q;
        return 0;
}

static State *state_new(SbxRelay *r) {
        State *s = calloc(1, sizeof(State));

        if (!s)
                return NULL;
        s->r = r;
        s->in_open = r->in_fd >= 0;
        if (r->in_fd < 0) {
                s->in_ptr = r->in_data;
                s->in_len = r->in_size;
        }
        return s;
}

static int classify_all(State *s) {
        const int fds[3] = { s->r->in_fd, s->r->out[0].fd, s->r->out[1].fd };
        int q;

        for (size_t i = 0; i < 3; i++)
                if ((q = classify(fds[i], &s->kind[i])) < 0)
                        return q;
        return 0;
}

static bool wants_timer(const SbxRelay *r) {
        return r->in_fd >= 0 || r->out[0].fd >= 0 || r->out[1].fd >= 0;
}

static int run(State *s) {
        SbxRelay *r = s->r;
        int q;

        half_close(s);
        while (!(s->sock_eof && s->piece_len == 0 && s->raw_pos >= s->raw_len)) {
                /* Buffered sinks take a piece at once; only descriptors wait. */
                while (s->piece_len > 0 && (r->out[s->piece_stream].fd < 0 || r->out[s->piece_stream].broken)) {
                        if ((q = drain_piece(s, false)) < 0 || (q = next_piece(s)) < 0)
                                return q;
                }
                if (s->sock_eof && s->piece_len == 0 && s->raw_pos >= s->raw_len)
                        break;
                if ((q = step(s)) < 0)
                        return q;
        }
        return 0;
}

int sbx_relay_run(SbxRelay *r) {
        State *s;
        int q;

        if (!r->state) {
                if (!(r->state = state_new(r)))
                        return -ENOMEM;
                if ((q = classify_all(r->state)) < 0) {
                        r->state = mfree(r->state);
                        return q;
                }
        }
        s = r->state;
        /* The timer is the running thread's: made for each run. */
        if (wants_timer(r) && (q = io_timer_new(&s->timer)) < 0)
                return q;
        q = run(s);
        if (wants_timer(r))
                (void) timer_delete(s->timer);
        return q;
}
