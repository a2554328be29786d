/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* `xagent-sandbox-init --serve`: the service's kept channel into a sandbox, run by
 * the service through one exec as the sandbox's owner after the sandbox's start was
 * verified. It answers file requests (read, write, list, remove) and a detached
 * process's OUTPUT (its ring read by the ring's one reader, src/core/ring.c) in the protocol of
 * src/core/proto.h, one frame in on standard input, one frame out on standard
 * output, until standard input ends. It acts with the owner's rights only, inside
 * the sandbox's root: a path is the sandbox's, whatever its symbolic links say.
 *
 * Requests are hostile input (the owner's processes could reach this program's
 * descriptors only through the service, but nothing here relies on that): every
 * field is bounded by the protocol's limits, a malformed request gets an ERROR
 * reply, and a frame that cannot be read (a wrong magic or version, a payload
 * above the limit) ends the program, since the stream can no longer be trusted to
 * be in step. No allocation: two static buffers of the largest frame. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec-serve.h"
#include "fsutil.h"
#include "path.h"
#include "ring-file.h"
#include "serve.h"

#define FRAME_MAX (SBX_PROTO_HEADER_SIZE + SBX_PROTO_MAX_PAYLOAD)
#define REMOVE_DEPTH_MAX 256U
/* How long a READ of a FIFO or device waits for its first byte. */
#define PIPE_WAIT_MS 200

static uint8_t in[FRAME_MAX];
static uint8_t out[FRAME_MAX];
/* A READ's data, or an OUTPUT's two streams. */
static uint8_t data[SBX_PROTO_MAX_DATA];
_Static_assert(2 * SBX_PROTO_MAX_OUTPUT <= SBX_PROTO_MAX_DATA, "an OUTPUT's streams fit in data");
static SbxProtoWriter w = { .buf = out, .alloc = sizeof out, .fixed = true };

static int reply_error(int err, const char *path, const char *fmt, ...) {
        char msg[512];
        va_list ap;
        int n;

        n = path ? snprintf(msg, sizeof msg, "'%.200s': ", path) : 0;
        va_start(ap, fmt);
        vsnprintf(msg + n, sizeof msg - (size_t) n, fmt, ap);
        va_end(ap);
        w.size = 0;
        w.error = 0;
        sbx_proto_begin(&w, SBX_PROTO_ERROR);
        sbx_proto_put_u64(&w, SBX_TAG_ERRNO, (uint64_t) err);
        sbx_proto_put_str(&w, SBX_TAG_MESSAGE, msg);
        return -err;
}

static int reply_errno(const char *path, const char *what) {
        int err = errno;

        return reply_error(err, path, "%s: %s", what, strerror(err));
}

static void begin_ok(void) {
        w.size = 0;
        w.error = 0;
        sbx_proto_begin(&w, SBX_PROTO_OK);
}

static uint64_t usec(const struct timespec *t) {
        return t->tv_sec < 0 ? 0 : (uint64_t) t->tv_sec * 1000000U + (uint64_t) t->tv_nsec / 1000U;
}

/* ---- READ ------------------------------------------------------------------------- */

/* What a FIFO, socket or device gives within a short wait, up to want bytes. */
static ssize_t read_stream(int fd, uint8_t *buf, size_t want, bool *eof) {
        size_t got = 0;

        while (got < want) {
                ssize_t k = read(fd, buf + got, want - got);

                if (k > 0) {
                        got += (size_t) k;
                        continue;
                }
                if (k == 0) {
                        *eof = true;
                        break;
                }
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -1;
                if (got > 0 || poll(&(struct pollfd) { .fd = fd, .events = POLLIN }, 1, PIPE_WAIT_MS) <= 0)
                        break;
        }
        return (ssize_t) got;
}

static ssize_t read_file(int fd, uint64_t offset, uint8_t *buf, size_t want) {
        size_t got = 0;

        while (got < want) {
                ssize_t k = pread(fd, buf + got, want - got, (off_t) (offset + got));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -1;
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        return (ssize_t) got;
}

static int do_read(const SbxProtoRequest *q) {
        uint64_t offset = q->offset, length = q->length;
        struct stat st;
        bool eof = false;
        ssize_t got;
        int fd;

        fd = open(q->path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return reply_errno(q->path, "cannot open");
        if (fstat(fd, &st) < 0) {
                close(fd);
                return reply_errno(q->path, "cannot stat");
        }
        if (S_ISDIR(st.st_mode)) {
                close(fd);
                return reply_error(EISDIR, q->path, "a directory: list it instead");
        }
        if (S_ISREG(st.st_mode)) {
                got = read_file(fd, offset, data, (size_t) length);
                eof = got >= 0 && offset + (uint64_t) got >= (uint64_t) st.st_size;
        } else if (offset > 0) {
                close(fd);
                return reply_error(ESPIPE, q->path, "not a regular file: it has no offsets");
        } else
                got = read_stream(fd, data, (size_t) length, &eof);
        if (got < 0) {
                int err = errno;
                close(fd);
                errno = err;
                return reply_errno(q->path, "cannot read");
        }
        close(fd);
        begin_ok();
        sbx_proto_put(&w, SBX_TAG_DATA, data, (size_t) got);
        sbx_proto_put_u64(&w, SBX_TAG_SIZE, (uint64_t) st.st_size);
        sbx_proto_put_u64(&w, SBX_TAG_MODE, st.st_mode);
        sbx_proto_put_u64(&w, SBX_TAG_MTIME, usec(&st.st_mtim));
        sbx_proto_put_u64(&w, SBX_TAG_EOF, eof);
        return 0;
}

/* ---- WRITE ------------------------------------------------------------------------ */

static void begin_written(uint64_t allocated, uint64_t released) {
        begin_ok();
        sbx_proto_put_u64(&w, SBX_TAG_ALLOCATED, allocated);
        sbx_proto_put_u64(&w, SBX_TAG_RELEASED, released);
}

/* An append: to a regular file only, opened without waiting (a FIFO with no reader
 * would hold the program in open(), one with a reader in write()). */
static int append_to(int dir, const char *base, const SbxProtoRequest *q) {
        struct stat before, after;
        int fd, r;

        fd = openat(dir, base, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, (mode_t) q->mode);
        if (fd < 0 && errno == ENXIO)
                return reply_error(ESPIPE, q->path, "not a regular file");
        if (fd < 0)
                return reply_errno(q->path, "cannot open");
        if (fstat(fd, &before) < 0)
                r = reply_errno(q->path, "cannot stat");
        else if (!S_ISREG(before.st_mode))
                r = reply_error(ESPIPE, q->path, "not a regular file");
        else if (fs_write_all(fd, q->data, q->data_size) < 0 || fstat(fd, &after) < 0)
                r = reply_errno(q->path, "cannot write");
        else {
                begin_written(fs_disk_bytes(&after), fs_disk_bytes(&before));
                r = 0;
        }
        close(fd);
        return r;
}

static int do_write(const SbxProtoRequest *q) {
        char dir_path[SBX_PROTO_MAX_PATH + 1], tmp[FS_TMP_NAME_MAX];
        mode_t mode = (mode_t) q->mode;
        uint64_t flags = q->flags, released = 0;
        const char *base;
        struct stat st;
        bool unnamed;
        int dir, fd, r;

        if (!(base = fs_split(q->path, dir_path)) || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return reply_error(EINVAL, q->path, "not a file name");

        dir = fs_open_dirs(AT_FDCWD, dir_path, flags & SBX_PROTO_WRITE_MAKE_PARENTS);
        if (dir < 0)
                return reply_errno(dir_path, "cannot open the directory");
        if (flags & SBX_PROTO_WRITE_APPEND) {
                r = append_to(dir, base, q);
                close(dir);
                return r;
        }
        /* Atomic: the new contents appear whole, under the name, or not at all. */
        fd = fs_create_hidden(dir, tmp, &unnamed);
        if (fd < 0)
                r = reply_errno(q->path, "cannot create");
        else if (fs_write_all(fd, q->data, q->data_size) < 0 || fchmod(fd, mode) < 0 || fstat(fd, &st) < 0) {
                fs_discard(dir, fd, unnamed, tmp);
                r = reply_errno(q->path, "cannot write");
        } else {
                released = fs_released_by(dir, base);
                r = fs_publish(dir, fd, unnamed, tmp, base) < 0 ? reply_errno(q->path, "cannot put it in place") : 0;
        }
        close(dir);
        if (r == 0)
                begin_written(fs_disk_bytes(&st), released);
        return r;
}

/* ---- LIST ------------------------------------------------------------------------- */

static const char *kind_of(mode_t m) {
        return S_ISREG(m) ? "file" : S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : S_ISFIFO(m) ? "fifo" :
               S_ISSOCK(m) ? "socket" : S_ISCHR(m) ? "char-device" : S_ISBLK(m) ? "block-device" : "unknown";
}

typedef struct Walk {
        uint64_t left;                  /* entries still allowed */
        bool truncated;
} Walk;

/* Room for one more entry and the reply's end, well below the frame's limit. */
static bool room_for_entry(void) {
        return w.size + 2 * SBX_PROTO_MAX_PATH + 256 < sizeof out;
}

static int list_dir(int fd, char *rel, size_t len, unsigned depth, Walk *walk) {
        DIR *d = fdopendir(fd);
        struct dirent *de;

        if (!d) {
                close(fd);
                return -1;
        }
        while ((de = readdir(d))) {
                struct stat st;
                size_t n;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                n = len + (len > 0) + strlen(de->d_name);
                if (walk->left == 0 || !room_for_entry() || n > SBX_PROTO_MAX_PATH) {
                        walk->truncated = true;
                        break;
                }
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                        continue;               /* gone meanwhile */
                if (len > 0)
                        rel[len] = '/';
                strcpy(rel + len + (len > 0), de->d_name);

                size_t at = sbx_proto_open_nested(&w, SBX_TAG_ENTRY);
                sbx_proto_put_str(&w, SBX_TAG_NAME, rel);
                sbx_proto_put_str(&w, SBX_TAG_KIND, kind_of(st.st_mode));
                sbx_proto_put_u64(&w, SBX_TAG_SIZE, (uint64_t) st.st_size);
                sbx_proto_put_u64(&w, SBX_TAG_MTIME, usec(&st.st_mtim));
                sbx_proto_put_u64(&w, SBX_TAG_MODE, st.st_mode);
                sbx_proto_close_nested(&w, at);
                walk->left--;

                if (S_ISDIR(st.st_mode) && depth > 1) {
                        int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (sub >= 0)
                                (void) list_dir(sub, rel, n, depth - 1, walk);
                }
                rel[len] = 0;
                if (walk->truncated)
                        break;
        }
        closedir(d);
        return 0;
}

static int do_list(const SbxProtoRequest *q) {
        static char rel[SBX_PROTO_MAX_PATH + 1];
        Walk walk;
        int fd;

        fd = open(q->path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return reply_errno(q->path, "cannot open the directory");
        begin_ok();
        walk = (Walk) { .left = q->limit };
        rel[0] = 0;
        if (list_dir(fd, rel, 0, (unsigned) q->depth, &walk) < 0)
                return reply_errno(q->path, "cannot list");
        sbx_proto_put_u64(&w, SBX_TAG_TRUNCATED, walk.truncated);
        return 0;
}

/* ---- REMOVE ----------------------------------------------------------------------- */

/* Empties the directory fd (closed here), depth-first, never following a link;
 * adds what it gave back to *released. */
static int remove_tree(int fd, unsigned depth, uint64_t *released) {
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth >= REMOVE_DEPTH_MAX) {
                close(fd);
                errno = ELOOP;
                return -1;
        }
        if (!(d = fdopendir(fd))) {
                close(fd);
                return -1;
        }
        while (r == 0 && (de = readdir(d))) {
                uint64_t size;

                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                size = fs_released_by(dirfd(d), de->d_name);
                if (unlinkat(dirfd(d), de->d_name, 0) == 0) {
                        *released += size;
                        continue;
                }
                if (errno != EISDIR && errno != EPERM) {
                        r = -1;
                        break;
                }
                int sub = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (sub < 0 || remove_tree(sub, depth + 1, released) < 0 ||
                    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) < 0)
                        r = -1;
                else
                        *released += size;
        }
        closedir(d);
        return r;
}

/* The path is normalised (handle()): "/" is the root in every spelling. */
static int do_remove(const SbxProtoRequest *q) {
        uint64_t released = 0;
        struct stat st;

        if (strcmp(q->path, "/") == 0)
                return reply_error(EBUSY, q->path, "the sandbox's root is not removed");
        if (lstat(q->path, &st) < 0)
                return reply_errno(q->path, "cannot remove");
        if (!S_ISDIR(st.st_mode) && st.st_nlink <= 1)
                released = fs_disk_bytes(&st);
        if (!S_ISDIR(st.st_mode)) {
                if (unlink(q->path) < 0)
                        return reply_errno(q->path, "cannot remove");
        } else {
                if (q->flags & SBX_PROTO_REMOVE_RECURSIVE) {
                        int fd = open(q->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                        if (fd < 0 || remove_tree(fd, 0, &released) < 0)
                                return reply_errno(q->path, "cannot remove what it holds");
                }
                if (rmdir(q->path) < 0)
                        return reply_errno(q->path, "cannot remove");
                released += fs_disk_bytes(&st);
        }
        begin_ok();
        sbx_proto_put_u64(&w, SBX_TAG_RELEASED, released);
        return 0;
}

/* ---- OUTPUT ----------------------------------------------------------------------- */

/* A detached process's state and output through the ring's one reader: the header
 * read first names the positions, the streams are read under it (again on a newer
 * one when a write overwrote them), and the header read last gives the state and
 * the commits, so a process that ended meanwhile shows its end with "more" to read. */
static int do_output(const SbxProtoRequest *q) {
        static const uint8_t tags[2][3] = { { SBX_TAG_POS_OUT, SBX_TAG_COMMIT_OUT, SBX_TAG_STDOUT },
                                            { SBX_TAG_POS_ERR, SBX_TAG_COMMIT_ERR, SBX_TAG_STDERR } };
        int fd = ring_file_open(q->path), r = 0;
        SbxRingSource src = { .pread = ring_file_pread, .userdata = &fd };
        SbxRingHeader h, last;
        uint64_t pos[2];
        size_t n[2] = {};
        unsigned state;

        if (fd < 0)
                return reply_errno(q->path, "cannot open the output");
        if ((r = sbx_ring_read_header(&src, &h)) < 0 || (r = sbx_ring_cursor_positions(q->offset, h.commit, pos)) < 0)
                goto fail;
        for (int s = 0; s < 2; s++)
                if ((r = sbx_ring_read_stream(&src, &h, s, &pos[s], data + (size_t) s * SBX_PROTO_MAX_OUTPUT,
                                              (size_t) q->length, &n[s])) < 0)
                        goto fail;
        if ((r = sbx_ring_read_header(&src, &last)) < 0)
                goto fail;
        state = ring_file_state(&last);
        /* Gone without a word: it may have recorded its end just now. */
        if (state == SBX_RING_STATE_LOST && sbx_ring_read_header(&src, &last) >= 0 && last.exited)
                state = SBX_RING_STATE_EXITED;
        close(fd);
        begin_ok();
        sbx_proto_put_u64(&w, SBX_TAG_STATE, state);
        sbx_proto_put_u64(&w, SBX_TAG_STATUS, last.status);
        for (int s = 0; s < 2; s++) {
                sbx_proto_put_u64(&w, tags[s][0], pos[s]);
                sbx_proto_put_u64(&w, tags[s][1], MAX(last.commit[s], pos[s] + n[s]));
                sbx_proto_put(&w, tags[s][2], data + (size_t) s * SBX_PROTO_MAX_OUTPUT, n[s]);
        }
        return 0;
fail:
        close(fd);
        return reply_error(-r, q->path, "%s", r == -ERANGE ? "the cursor is past the output's end" :
                           r == -EAGAIN ? "the output was overwritten faster than it could be read" :
                           "the output file is damaged");
}

/* ---- STATES ----------------------------------------------------------------------- */

/* One process's state from its ring's header (as do_output() says it), or the
 * errno of why it could not be read. */
static void put_state(int dir, const char *name) {
        size_t at = sbx_proto_open_nested(&w, SBX_TAG_ENTRY);
        int fd = ring_file_openat(dir, name), r = fd < 0 ? -errno : 0;
        SbxRingSource src = { .pread = ring_file_pread, .userdata = &fd };
        SbxRingHeader h;
        unsigned state;

        sbx_proto_put_str(&w, SBX_TAG_NAME, name);
        if (r == 0 && (r = sbx_ring_read_header(&src, &h)) == 0) {
                state = ring_file_state(&h);
                if (state == SBX_RING_STATE_LOST && sbx_ring_read_header(&src, &h) >= 0 && h.exited)
                        state = SBX_RING_STATE_EXITED;
                sbx_proto_put_u64(&w, SBX_TAG_STATE, state);
                sbx_proto_put_u64(&w, SBX_TAG_STATUS, h.status);
        } else
                sbx_proto_put_u64(&w, SBX_TAG_ERRNO, (uint64_t) (r < 0 ? -r : EIO));
        if (fd >= 0)
                close(fd);
        sbx_proto_close_nested(&w, at);
}

/* Every detached process of the directory PATH at once: a sandbox's poll is one
 * request, however many it runs. */
static int do_states(const SbxProtoRequest *q) {
        int fd = open(q->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct dirent *de;
        uint64_t left = q->limit;
        bool truncated = false;
        DIR *d;

        if (fd < 0)
                return reply_errno(q->path, "cannot open the directory");
        if (!(d = fdopendir(fd))) {
                close(fd);
                return reply_errno(q->path, "cannot list");
        }
        begin_ok();
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (left == 0) {
                        truncated = true;
                        break;
                }
                left--;
                put_state(dirfd(d), de->d_name);
        }
        closedir(d);
        sbx_proto_put_u64(&w, SBX_TAG_TRUNCATED, truncated);
        return 0;
}

/* ---- the loop --------------------------------------------------------------------- */

/* EXEC's descriptor for the service to take: kept until the next frame, or 2 s. */
#define HANDOFF_KEEP_MS 2000
static int handoff = -1;

static int safe_close_fd(int fd) {
        if (fd >= 0)
                close(fd);
        return -1;
}

static int handle(const SbxProtoFrame *f) {
        static SbxProtoRequest q;
        char why[128];
        int r;

        if (f->type == SBX_PROTO_EXEC)
                return sbx_serve_exec(f, &w, &handoff);
        r = sbx_proto_request_parse(f, &q, why, sizeof why);

        if (r < 0)
                return reply_error(-r, NULL, "%s", why);
        /* One rule for every path (docs/api.md, "Files"): "//", "/." or "/tmp/.."
         * name the root, as the service normalised them already. */
        if (q.type != SBX_PROTO_HELLO && sbx_path_normalize_absolute(q.path, q.path, sizeof q.path) < 0)
                return reply_error(EINVAL, NULL, "not an absolute path");
        switch (q.type) {
        case SBX_PROTO_HELLO:
                begin_ok();
                sbx_proto_put_u64(&w, SBX_TAG_VERSION, SBX_PROTO_VERSION);
                sbx_proto_put_u64(&w, SBX_TAG_PID, (uint64_t) getpid());
                return 0;
        case SBX_PROTO_READ:
                return do_read(&q);
        case SBX_PROTO_WRITE:
                return do_write(&q);
        case SBX_PROTO_LIST:
                return do_list(&q);
        case SBX_PROTO_OUTPUT:
                return do_output(&q);
        case SBX_PROTO_STATES:
                return do_states(&q);
        default:
                return do_remove(&q);
        }
}

static int read_full(uint8_t *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(STDIN_FILENO, buf + done, n - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return done == 0 && k == 0 ? 1 : -1;
                done += (size_t) k;
        }
        return 0;
}

static int write_reply(void) {
        int n = sbx_proto_end(&w);

        if (n < 0) {
                /* Cannot happen within the bounds above; answer something all the same. */
                reply_error(ENOBUFS, NULL, "the reply does not fit in a frame");
                n = sbx_proto_end(&w);
        }
        return fs_write_all(STDOUT_FILENO, out, (size_t) n);
}

/* The last EXEC's descriptor goes once the next frame comes (the service took it
 * before it sent anything else) or after a while (it never will). */
static void drop_handoff(void) {
        if (handoff < 0)
                return;
        (void) poll(&(struct pollfd) { .fd = STDIN_FILENO, .events = POLLIN }, 1, HANDOFF_KEEP_MS);
        handoff = safe_close_fd(handoff);
}

int sbx_init_serve(void) {
        /* EXEC's supervisors are reaped by the kernel. */
        (void) signal(SIGCHLD, SIG_IGN);
        for (;;) {
                SbxProtoFrame f;
                int r;

                drop_handoff();
                r = read_full(in, SBX_PROTO_HEADER_SIZE);

                if (r == 1)
                        return 0;               /* the service closed the channel */
                if (r < 0)
                        return 1;
                r = sbx_proto_frame(in, SBX_PROTO_HEADER_SIZE, &f);
                if (r == 0) {
                        uint32_t size = (uint32_t) in[8] | (uint32_t) in[9] << 8 | (uint32_t) in[10] << 16 |
                                        (uint32_t) in[11] << 24;

                        if (read_full(in + SBX_PROTO_HEADER_SIZE, size) != 0)
                                return 1;
                        r = sbx_proto_frame(in, SBX_PROTO_HEADER_SIZE + size, &f);
                }
                if (r <= 0) {
                        if (r == -EMSGSIZE)
                                dprintf(STDERR_FILENO, "serve: a frame above the limit\n");
                        else
                                dprintf(STDERR_FILENO, "serve: not a frame of protocol version %d\n",
                                        SBX_PROTO_VERSION);
                        return 1;
                }
                (void) handle(&f);
                if (write_reply() < 0)
                        return 1;
        }
}
