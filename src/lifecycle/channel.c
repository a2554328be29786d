/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "channel.h"
#include "docker-stream.h"
#include "lifecycle-internal.h"
#include "exec.h"
#include "path.h"
#include "time-util.h"

/* Channels kept at most; a closed one is dropped to make room. */
#define CHANNELS_MAX 1024U
/* What the program may write to its standard error, kept for nothing: dropped. */
#define READ_CHUNK 65536U
/* A channel's buffer of bytes not yet a whole frame is given back after a frame
 * when it grew beyond this (a 16 MiB ReadFile's reply would otherwise stay, per
 * running sandbox, until it stops). */
#define IN_KEEP_MAX 65536U

typedef struct SbxChannel {
        char *container_id;
        pthread_mutex_t lock;           /* one request at a time */
        unsigned users;                 /* callers holding it (registry lock) */
        atomic_bool forgotten;          /* its container paused, stopped: a call waiting on it ends */
        int fd;                         /* the exec's stream, -1 when closed */
        SbxExecProcess *process;        /* the program's exec (its token, to end it) */
        int pidfd;                      /* the program on this host, for EXEC's descriptors; -1: none */
        uid_t uid;                      /* its owner's */
        SbxDemux demux;
        uint8_t *in;                    /* standard output bytes not yet a whole frame */
        size_t in_size, in_alloc;
} SbxChannel;

struct SbxChannels {
        pthread_mutex_t lock;
        SbxChannel **list;
        size_t n;
        SbxDiskLedger disk;
};

int sbx_channels_new(SbxChannels **ret) {
        SbxChannels *c = calloc(1, sizeof(SbxChannels));

        if (!c)
                return -ENOMEM;
        pthread_mutex_init(&c->lock, NULL);
        sbx_disk_ledger_init(&c->disk);
        *ret = c;
        return 0;
}

SbxDiskLedger *sbx_channels_disk(SbxChannels *c) {
        return &c->disk;
}

/* Gives back a buffer a large frame grew (what is pending moves to a small one). */
static void shrink_in(SbxChannel *ch) {
        uint8_t *b;

        if (ch->in_alloc <= IN_KEEP_MAX || ch->in_size > IN_KEEP_MAX / 2)
                return;
        if (ch->in_size == 0) {
                ch->in = mfree(ch->in);
                ch->in_alloc = 0;
        } else if ((b = malloc(IN_KEEP_MAX))) {
                memcpy(b, ch->in, ch->in_size);
                free(ch->in);
                ch->in = b;
                ch->in_alloc = IN_KEEP_MAX;
        }
}

static void channel_close(SbxChannel *ch) {
        if (ch->fd >= 0) {
                /* The program ends at the end of its input. */
                (void) shutdown(ch->fd, SHUT_RDWR);
                ch->fd = safe_close(ch->fd);
        }
        ch->process = sbx_exec_process_free(ch->process);
        ch->pidfd = safe_close(ch->pidfd);
        ch->demux = SBX_DEMUX_INIT;
        ch->in_size = 0;
        shrink_in(ch);
}

static void channel_free(SbxChannel *ch) {
        channel_close(ch);
        pthread_mutex_destroy(&ch->lock);
        free(ch->in);
        free(ch->container_id);
        free(ch);
}

SbxChannels *sbx_channels_free(SbxChannels *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n; i++)
                channel_free(c->list[i]);
        free(c->list);
        sbx_disk_ledger_done(&c->disk);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

/* Drops closed, unused channels (the registry's lock held). */
static void sweep(SbxChannels *c) {
        size_t k = 0;

        for (size_t i = 0; i < c->n; i++) {
                SbxChannel *ch = c->list[i];

                if (ch->users == 0 && (ch->fd < 0 || ch->forgotten))
                        channel_free(ch);
                else
                        c->list[k++] = ch;
        }
        c->n = k;
}

static int acquire(SbxChannels *c, const char *container_id, SbxChannel **ret) {
        SbxChannel *ch = NULL, **l;
        int r = 0;

        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < c->n && !ch; i++)
                if (!c->list[i]->forgotten && streq(c->list[i]->container_id, container_id))
                        ch = c->list[i];
        if (!ch) {
                if (c->n >= CHANNELS_MAX)
                        sweep(c);
                if (c->n >= CHANNELS_MAX)
                        r = -EBUSY;
                else if (!(l = reallocarray(c->list, c->n + 1, sizeof(SbxChannel *))))
                        r = -ENOMEM;
                else if (!(c->list = l, ch = calloc(1, sizeof(SbxChannel))) ||
                         !(ch->container_id = strdup(container_id))) {
                        free(ch);
                        ch = NULL;
                        r = -ENOMEM;
                } else {
                        pthread_mutex_init(&ch->lock, NULL);
                        ch->fd = ch->pidfd = -1;
                        c->list[c->n++] = ch;
                }
        }
        if (ch)
                ch->users++;
        pthread_mutex_unlock(&c->lock);
        *ret = ch;
        return r;
}

static void release(SbxChannels *c, SbxChannel *ch) {
        pthread_mutex_lock(&c->lock);
        ch->users--;
        if (ch->forgotten && ch->users == 0)
                sweep(c);
        pthread_mutex_unlock(&c->lock);
}

void sbx_channels_forget(SbxChannels *c, const char *container_id) {
        if (!c || !container_id)
                return;
        pthread_mutex_lock(&c->lock);
        for (size_t i = 0; i < c->n; i++)
                if (streq(c->list[i]->container_id, container_id))
                        c->list[i]->forgotten = true;
        sweep(c);
        pthread_mutex_unlock(&c->lock);
}

void sbx_channel_reply_done(SbxChannelReply *r) {
        free(r->buf);
        *r = (SbxChannelReply) {};
}

/* ---- the stream ------------------------------------------------------------------- */

/* Waits for fd until the deadline, in slices: a channel forgotten meanwhile (its
 * container paused or stopped, whose program then answers nothing) ends the wait
 * with -ECANCELED at once, not at the deadline. */
#define WAIT_SLICE_MS 200

static int wait_fd(SbxChannel *ch, short events, uint64_t deadline_us) {
        uint64_t now = sbx_now_monotonic_us();
        int r;

        if (atomic_load(&ch->forgotten))
                return -ECANCELED;
        if (now >= deadline_us)
                return -ETIME;
        r = poll(&(struct pollfd) { .fd = ch->fd, .events = events }, 1,
                 (int) MIN((deadline_us - now + 999) / 1000, (uint64_t) WAIT_SLICE_MS));
        if (r < 0)
                return errno == EINTR ? 0 : -errno;
        return 0;
}

static int send_all(SbxChannel *ch, const uint8_t *p, size_t n, uint64_t deadline_us) {
        while (n > 0) {
                ssize_t k = send(ch->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
                int r;

                if (k >= 0) {
                        p += k;
                        n -= (size_t) k;
                        continue;
                }
                if (errno != EAGAIN && errno != EINTR)
                        return -errno;
                if ((r = wait_fd(ch, POLLOUT, deadline_us)) < 0)
                        return r;
        }
        return 0;
}

/* Appends the standard output in data to ch->in (bounded by one frame). */
static int take_output(SbxChannel *ch, const char *data, size_t size) {
        while (size > 0) {
                const char *piece;
                size_t piece_size;
                unsigned stream;
                ssize_t k = sbx_demux_step(&ch->demux, data, size, &stream, &piece, &piece_size);

                if (k < 0)
                        return (int) k;
                data += k;
                size -= (size_t) k;
                if (piece_size == 0 || stream != 1)
                        continue;
                if (ch->in_size + piece_size > SBX_PROTO_HEADER_SIZE + SBX_PROTO_MAX_PAYLOAD)
                        return -EMSGSIZE;
                if (ch->in_size + piece_size > ch->in_alloc) {
                        size_t a = MAX(ch->in_alloc * 2, ch->in_size + piece_size + 4096);
                        uint8_t *b = realloc(ch->in, a);

                        if (!b)
                                return -ENOMEM;
                        ch->in = b;
                        ch->in_alloc = a;
                }
                memcpy(ch->in + ch->in_size, piece, piece_size);
                ch->in_size += piece_size;
        }
        return 0;
}

/* Reads until one whole frame is there; *got_any says whether any byte came. */
static int recv_frame(SbxChannel *ch, SbxChannelReply *ret, uint64_t deadline_us, bool *got_any) {
        static __thread char chunk[READ_CHUNK];

        for (;;) {
                SbxProtoFrame f;
                int n = sbx_proto_frame(ch->in, ch->in_size, &f), r;
                ssize_t k;

                if (n < 0)
                        return n;
                if (n > 0 && (size_t) n == ch->in_size) {
                        /* The whole buffer is the frame: it becomes the reply's. */
                        *ret = (SbxChannelReply) { .buf = TAKE_PTR(ch->in) };
                        ch->in_size = ch->in_alloc = 0;
                        return sbx_proto_frame(ret->buf, (size_t) n, &ret->frame) > 0 ? 0 : -EBADMSG;
                }
                if (n > 0) {
                        uint8_t *b = malloc((size_t) n);

                        if (!b)
                                return -ENOMEM;
                        memcpy(b, ch->in, (size_t) n);
                        memmove(ch->in, ch->in + n, ch->in_size - (size_t) n);
                        ch->in_size -= (size_t) n;
                        shrink_in(ch);
                        *ret = (SbxChannelReply) { .buf = b };
                        return sbx_proto_frame(b, (size_t) n, &ret->frame) > 0 ? 0 : -EBADMSG;
                }
                k = recv(ch->fd, chunk, sizeof chunk, MSG_DONTWAIT);
                if (k == 0)
                        return -EPIPE;
                if (k < 0) {
                        if (errno != EAGAIN && errno != EINTR)
                                return -errno;
                        if ((r = wait_fd(ch, POLLIN, deadline_us)) < 0)
                                return r;
                        continue;
                }
                *got_any = true;
                if ((r = take_output(ch, chunk, (size_t) k)) < 0)
                        return r;
        }
}

static int round_trip(SbxChannel *ch, const uint8_t *req, size_t req_size, SbxChannelReply *ret,
                      uint64_t deadline_us, bool *ret_sent, bool *ret_got_any) {
        int r = send_all(ch, req, req_size, deadline_us);

        if (r < 0)
                return r;
        *ret_sent = true;
        return recv_frame(ch, ret, deadline_us, ret_got_any);
}

/* A call that waited on a channel its container's pause or stop ended. */
static int not_running_now(SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_NOT_RUNNING,
                             "The sandbox was paused or stopped while the call waited for it");
}

/* The channel's program died, and the sandbox's container ran out of memory
 * (lc_container_oom_killed): that is what the caller is told. */
static int out_of_memory(SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                             "The service's program in the sandbox was killed: the sandbox ran out of memory (the "
                             "kernel's OOM killer killed in it; its memory limit is too small for what runs in it)");
}

static int channel_open(SbxLifecycle *l, const char *name, SbxChannel *ch, uint64_t deadline_us,
                        SbxError *error) {
        _cleanup_(sbx_proto_writer_done) SbxProtoWriter w = {};
        _cleanup_(sbx_channel_reply_done) SbxChannelReply hello = {};
        SbxProtoField v;
        uint64_t version = 0;
        bool sent = false, got = false;
        int n, r;

        r = lc_exec_docker(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--serve", NULL } }, &ch->process, error);
        if (r < 0)
                return r;
        ch->fd = ch->process->relay.sock;
        ch->process->relay.sock = -1;

        if ((n = sbx_proto_request_write(&w, &(SbxProtoRequest) { .type = SBX_PROTO_HELLO })) < 0)
                return n;
        r = round_trip(ch, w.buf, (size_t) n, &hello, deadline_us, &sent, &got);
        if (r >= 0 && (hello.frame.type != SBX_PROTO_OK ||
                       sbx_proto_find(hello.frame.payload, hello.frame.size, SBX_TAG_VERSION, &v) <= 0 ||
                       sbx_proto_u64(&v, &version) < 0 || version != SBX_PROTO_VERSION))
                r = -EPROTO;
        if (r < 0) {
                channel_close(ch);
                if (r == -ECANCELED)
                        return not_running_now(error);
                if (lc_container_oom_killed(l, name) > 0)
                        return out_of_memory(error);
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The service's program in the sandbox did not answer (%s): the sandbox "
                                     "lacks the service's init (" SBX_EXEC_INIT_PATH ") or it is another version",
                                     strerror(-r));
        }
        if (!sbx_docker_remote(l->docker))
                ch->pidfd = lc_channel_pidfd(l->docker, ch->process, &hello.frame, deadline_us, &ch->uid);
        return 0;
}

static int channel_error(const char *path, const SbxChannelReply *reply, int *ret_errno, SbxError *error) {
        SbxProtoError e;

        if (sbx_proto_error_parse(&reply->frame, &e) < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "The service's program in the sandbox answered garbage");
        if (ret_errno)
                *ret_errno = e.err;
        /* Its own text is the sandbox's: the meaning of its errno is ours. */
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.256s': %s", path,
                             e.err == ESPIPE ? "not a regular file" : strerror(e.err));
}

/* The channel's lock, waited for until the request's deadline at most: a request
 * queued behind one the sandbox does not answer gives up with it, never after. */
static int lock_until(SbxChannel *ch, uint64_t deadline_us) {
        struct timespec ts = { .tv_sec = (time_t) (deadline_us / 1000000U),
                               .tv_nsec = (long) (deadline_us % 1000000U) * 1000L };

        return -pthread_mutex_clocklock(&ch->lock, CLOCK_MONOTONIC, &ts);
}

static int timed_out(SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_TIMED_OUT, "The sandbox did not answer within %u s",
                             SBX_DOCKER_EXEC_CALL_TIMEOUT_S);
}

int sbx_lifecycle_channel_call(SbxLifecycle *l, const char *name, const SbxProtoRequest *q,
                               SbxChannelReply *ret, SbxError *error) {
        return sbx_lifecycle_channel_call_errno(l, name, q, ret, NULL, error);
}

static int garbage(SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox answered garbage");
}

/* One request on the channel of sandbox `name`, under its lock until deadline_us.
 * With ret_fd (EXEC): a channel that cannot pass descriptors is -EOPNOTSUPP (no
 * error set) before anything is sent, and an OK reply's FD is taken under the lock. */
static int channel_request(SbxLifecycle *l, const char *name, const uint8_t *req, size_t n, bool may_repeat,
                           uint64_t deadline_us, SbxChannelReply *ret, int *ret_fd, SbxError *error) {
        _cleanup_free_ char *container_id = NULL;
        SbxChannel *ch = NULL;
        int r;

        if (!l->channels)
                return -EINVAL;
        r = sbx_lifecycle_container_id(l, name, &container_id, error);
        if (r < 0)
                return r;
        if ((r = acquire(l->channels, container_id, &ch)) < 0)
                return r == -EBUSY ? sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED, "Too many sandbox channels")
                                   : r;
        if ((r = lock_until(ch, deadline_us)) < 0) {
                release(l->channels, ch);
                return r == -ETIMEDOUT ? timed_out(error) : r;
        }
        for (unsigned attempt = 0;; attempt++) {
                bool reused = ch->fd >= 0, sent = false, got = false;

                /* Past its deadline (it waited behind a request that timed out): no new
                 * channel, no new exec in the sandbox. */
                if (!reused && sbx_now_monotonic_us() >= deadline_us) {
                        r = timed_out(error);
                        break;
                }
                if (!reused && (r = channel_open(l, name, ch, deadline_us, error)) < 0)
                        break;
                if (ret_fd && ch->pidfd < 0) {
                        r = -EOPNOTSUPP;
                        break;
                }
                r = round_trip(ch, req, n, ret, deadline_us, &sent, &got);
                if (r >= 0) {
                        if (ret_fd && ret->frame.type == SBX_PROTO_OK)
                                r = lc_channel_take_fd(ch->pidfd, ch->uid, &ret->frame, ret_fd, error);
                        break;
                }
                channel_close(ch);
                if (r == -ECANCELED) {
                        r = not_running_now(error);
                        break;
                }
                /* A kept channel that had ended (the sandbox restarted, the service's
                 * program gone): once more on a new one, unless the request may have
                 * been carried out. */
                if (reused && attempt == 0 && !got && r != -ETIME && (!sent || may_repeat))
                        continue;
                if (r == -ETIME)
                        r = timed_out(error);
                else if (lc_container_oom_killed(l, name) > 0)
                        r = out_of_memory(error);
                else
                        r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The channel to the sandbox failed: %s",
                                          strerror(-r));
                break;
        }
        pthread_mutex_unlock(&ch->lock);
        release(l->channels, ch);
        return r;
}

int sbx_lifecycle_channel_call_errno(SbxLifecycle *l, const char *name, const SbxProtoRequest *q,
                                     SbxChannelReply *ret, int *ret_errno, SbxError *error) {
        _cleanup_(sbx_proto_writer_done) SbxProtoWriter w = {};
        uint64_t deadline_us = sbx_now_monotonic_us() + (uint64_t) SBX_DOCKER_EXEC_CALL_TIMEOUT_S * 1000000U;
        int n, r;

        if ((n = sbx_proto_request_write(&w, q)) < 0)
                return n;
        r = channel_request(l, name, w.buf, (size_t) n,
                            !(q->type == SBX_PROTO_WRITE && (q->flags & SBX_PROTO_WRITE_APPEND)), deadline_us, ret,
                            NULL, error);
        if (r >= 0 && ret->frame.type == SBX_PROTO_ERROR) {
                r = channel_error(q->path, ret, ret_errno, error);
                sbx_channel_reply_done(ret);
        } else if (r >= 0 && ret->frame.type != SBX_PROTO_OK) {
                sbx_channel_reply_done(ret);
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox answered "
                                  "a message of type %u", (unsigned) ret->frame.type);
        }
        return r;
}

int sbx_lifecycle_channel_exec(SbxLifecycle *l, const char *name, const SbxProtoExec *x, uint64_t deadline_us,
                               int *ret_fd, SbxError *error) {
        _cleanup_(sbx_proto_writer_done) SbxProtoWriter w = {};
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        SbxProtoError e;
        int n, r;

        if ((n = sbx_proto_exec_write(&w, x)) < 0)
                return n;
        /* Repeated on a new channel when the kept one had ended: a supervisor that
         * never got its start byte started nothing. */
        r = channel_request(l, name, w.buf, (size_t) n, true, deadline_us, &reply, ret_fd, error);
        if (r < 0 || reply.frame.type == SBX_PROTO_OK)
                return r;
        if (sbx_proto_error_parse(&reply.frame, &e) < 0)
                return garbage(error);
        if (e.err == EOPNOTSUPP)
                return -EOPNOTSUPP;     /* an init of before commands over the channel */
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox could not "
                             "start the command: %s", strerror(e.err));
}

/* ---- the file operations ---------------------------------------------------------- */

void sbx_file_data_done(SbxFileData *d) {
        free(d->data);
        *d = (SbxFileData) {};
}

/* One rule for every file call (docs/api.md, "Files"): the path is absolute and
 * normalised lexically before anything is checked or sent ("//", "/.", "/tmp/.."
 * are "/"). */
static int set_path(SbxProtoRequest *q, const char *path, SbxError *error) {
        if (strlen(path) > SBX_PROTO_MAX_PATH ||
            sbx_path_normalize_absolute(path, q->path, sizeof q->path) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.64s' is not an absolute path of at "
                                     "most %u bytes", path, SBX_PROTO_MAX_PATH);
        return 0;
}

int sbx_lifecycle_read_file(SbxLifecycle *l, const char *name, const char *path, uint64_t offset,
                            uint64_t length, SbxFileData *ret, SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        SbxProtoRequest q = { .type = SBX_PROTO_READ, .offset = offset, .length = MIN(length, SBX_PROTO_MAX_DATA) };
        SbxProtoReadReply rr;
        int r;

        if ((r = set_path(&q, path, error)) < 0 ||
            (r = sbx_lifecycle_channel_call(l, name, &q, &reply, error)) < 0)
                return r;
        if (sbx_proto_read_reply_parse(&reply.frame, q.length, &rr) < 0)
                return garbage(error);
        *ret = (SbxFileData) { .data = malloc(MAX(rr.data_size, 1U)), .size = rr.data_size,
                               .file_size = rr.size, .mode = rr.mode, .mtime_us = rr.mtime_us, .eof = rr.eof };
        if (!ret->data)
                return -ENOMEM;
        memcpy(ret->data, rr.data, rr.data_size);
        return 0;
}

/* The host policy's max_disk_mib holds for a write as for a copy (copy.c): the
 * write's own blocks are reserved in the sandbox's ledger (disk-ledger.h) before it
 * is sent, and what the program says it took and freed settles it. */
static int disk_reserve(SbxLifecycle *l, const char *container_id, size_t size, uint64_t *ret_reserved,
                        SbxError *error) {
        uint64_t bound = (uint64_t) l->policy->max_disk_mib << 20, bytes = sbx_disk_blocks(size), used = 0;
        int r = sbx_disk_ledger_reserve(sbx_channels_disk(l->channels), container_id, bound, bytes, &used);

        if (r == -ENOSPC)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "max_disk_mib: the service's file calls and copies put %" PRIu64 " bytes into "
                                     "the sandbox; %" PRIu64 " more would take it past the host policy's "
                                     "max_disk_mib %" PRIi64 " MiB", used, bytes, l->policy->max_disk_mib);
        if (r < 0)
                return r;
        *ret_reserved = bytes;
        return 0;
}

int sbx_lifecycle_write_file(SbxLifecycle *l, const char *name, const char *path, const void *data,
                             size_t size, unsigned mode, unsigned flags, SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        _cleanup_free_ char *container_id = NULL;
        SbxProtoRequest q = { .type = SBX_PROTO_WRITE, .data = data, .data_size = (uint32_t) size,
                              .mode = mode, .flags = flags };
        uint64_t reserved = 0, added = 0, released = 0;
        int r;

        if (size > SBX_PROTO_MAX_DATA)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "data: more than %u bytes",
                                     SBX_PROTO_MAX_DATA);
        if (mode > 07777)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "mode: %o is not a file mode", mode);
        if (!l->channels)
                return -EINVAL;
        if ((r = set_path(&q, path, error)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &container_id, error)) < 0 ||
            (l->policy && (r = disk_reserve(l, container_id, size, &reserved, error)) < 0))
                return r;
        r = sbx_lifecycle_channel_call(l, name, &q, &reply, error);
        if (r >= 0) {
                if (sbx_proto_reply_u64(&reply.frame, SBX_TAG_ALLOCATED, &added) < 0 ||
                    sbx_proto_reply_u64(&reply.frame, SBX_TAG_RELEASED, &released) < 0) {
                        added = reserved;       /* an answer without them: the write counts as asked */
                        released = 0;
                }
        } else if (sbx_error_is(error, SBX_ERROR_TIMED_OUT) || sbx_error_is(error, SBX_ERROR_BACKEND_ERROR))
                added = reserved;               /* lost on the way: it may be there, in part */
        sbx_disk_ledger_settle(sbx_channels_disk(l->channels), container_id, reserved, added, released);
        return r;
}

void sbx_file_entries_free(SbxFileEntry *e, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(e[i].name);
        free(e);
}

int sbx_lifecycle_list_files(SbxLifecycle *l, const char *name, const char *path, unsigned depth,
                             unsigned limit, SbxFileEntry **ret, size_t *ret_n, bool *ret_truncated,
                             SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        SbxProtoRequest q = { .type = SBX_PROTO_LIST, .depth = depth, .limit = limit };
        static __thread SbxProtoEntry e;
        SbxFileEntry *list = NULL;
        size_t pos = 0, n = 0;
        int r;

        if (depth == 0 || depth > SBX_PROTO_MAX_DEPTH || limit == 0 || limit > SBX_PROTO_MAX_LIMIT)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "depth must be 1 to %u and limit 1 to %u",
                                     SBX_PROTO_MAX_DEPTH, SBX_PROTO_MAX_LIMIT);
        if ((r = set_path(&q, path, error)) < 0 ||
            (r = sbx_lifecycle_channel_call(l, name, &q, &reply, error)) < 0)
                return r;
        while ((r = sbx_proto_list_next(&reply.frame, &pos, &e)) > 0) {
                SbxFileEntry *grown;

                if (n == limit) {
                        r = -EBADMSG;           /* more than was asked for */
                        break;
                }
                if (!(grown = reallocarray(list, n + 1, sizeof(SbxFileEntry)))) {
                        sbx_file_entries_free(list, n);
                        return -ENOMEM;
                }
                list = grown;
                list[n] = (SbxFileEntry) { .name = strdup(e.name), .size = e.size, .mtime_us = e.mtime_us,
                                           .mode = (uint32_t) e.mode };
                memcpy(list[n].kind, e.kind, sizeof list[n].kind);
                if (!list[n].name) {
                        sbx_file_entries_free(list, n);
                        return -ENOMEM;
                }
                n++;
        }
        if (r < 0 || sbx_proto_list_truncated(&reply.frame, ret_truncated) < 0) {
                sbx_file_entries_free(list, n);
                return garbage(error);
        }
        *ret = list;
        *ret_n = n;
        return 0;
}

int sbx_lifecycle_remove_file(SbxLifecycle *l, const char *name, const char *path, bool recursive,
                              SbxError *error) {
        _cleanup_(sbx_channel_reply_done) SbxChannelReply reply = {};
        _cleanup_free_ char *container_id = NULL;
        SbxProtoRequest q = { .type = SBX_PROTO_REMOVE, .flags = recursive ? SBX_PROTO_REMOVE_RECURSIVE : 0 };
        uint64_t released = 0;
        int r;

        if (!l->channels)
                return -EINVAL;
        if ((r = set_path(&q, path, error)) < 0)
                return r;
        if (streq(q.path, "/"))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.256s' names the sandbox's root, "
                                     "which is never removed", path);
        if ((r = sbx_lifecycle_container_id(l, name, &container_id, error)) < 0 ||
            (r = sbx_lifecycle_channel_call(l, name, &q, &reply, error)) < 0)
                return r;
        if (sbx_proto_reply_u64(&reply.frame, SBX_TAG_RELEASED, &released) >= 0)
                sbx_disk_ledger_settle(sbx_channels_disk(l->channels), container_id, 0, 0, released);
        return 0;
}
