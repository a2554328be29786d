/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* `xagent-sandbox-init --attach DIR`, run by the service through an exec as the
 * owner for a detached process's Attach (docs/architecture.md, "Detached
 * processes"). Its stdin is copied into DIR's FIFO, which the process has as its
 * stdin; the process's output, from the oldest byte kept of each stream on, is
 * copied to its stdout and stderr as the ring file grows (inotify, and a poll a
 * second). It ends once the process ended and everything kept was copied, or when
 * its stdout or stderr cannot be written (the service's stream went). End of file
 * on its stdin ends only the input of this attach: the process's stdin stays open.
 * The ring's header and data are the owner's to write: it is read through the
 * ring's one reader (src/core/ring.c, ring-file.c), and nothing is kept but fixed
 * buffers. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "fsutil.h"
#include "ring-file.h"

#define CHUNK 65536U

static uint8_t out_buf[CHUNK], in_buf[CHUNK];
static char events[4096];

/* Copies stream s from *pos up to its commit (at most one cap's worth a call) to
 * fd, through the ring's one reader (src/core/ring.c): what a write overwrote
 * meanwhile is skipped. -1 when the ring cannot be read (2) or fd written (1). */
static int copy_stream(const SbxRingSource *src, SbxRingHeader *h, int s, uint64_t *pos, int fd) {
        uint64_t copied = 0;

        while (*pos < h->commit[s] && copied < h->cap) {
                size_t n;
                int r = sbx_ring_read_stream(src, h, s, pos, out_buf, CHUNK, &n);

                if (r == -EAGAIN)
                        return 0;               /* overwritten faster than read: again at the next turn */
                if (r < 0)
                        return 2;
                if (fs_write_all(fd, out_buf, n) < 0)
                        return 1;
                *pos += n;
                copied += n;
        }
        return 0;
}

typedef struct Input {
        bool open;                      /* stdin not at its end yet */
        int fifo;                       /* the process's stdin, or -1: what comes is dropped */
        size_t len, off;                /* of in_buf, pending */
} Input;

static void input_read(Input *in) {
        ssize_t n = read(STDIN_FILENO, in_buf, sizeof in_buf);

        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (n <= 0) {
                in->open = false;
                return;
        }
        in->len = (size_t) n;
        in->off = 0;
        if (in->fifo < 0)
                in->len = 0;
}

static void input_write(Input *in) {
        ssize_t k = write(in->fifo, in_buf + in->off, in->len - in->off);

        if (k < 0 && (errno == EINTR || errno == EAGAIN))
                return;
        if (k < 0) {                    /* nobody reads it any more (EPIPE) */
                close(in->fifo);
                in->fifo = -1;
                in->len = 0;
                return;
        }
        in->off += (size_t) k;
        if (in->off == in->len)
                in->len = 0;
}

static int open_fifo(int d) {
        struct stat st;
        int fd = openat(d, SBX_RING_STDIN_FILE, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);

        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode))) {
                close(fd);
                return -1;
        }
        return fd;              /* -1 with ENXIO: the process ended, nobody reads it */
}

/* Where the copy starts: the positions the cursor names (0: the oldest byte kept of
 * each), never before the oldest byte kept. -1 for a cursor past a stream's end. */
static int start_positions(const SbxRingHeader *h, uint64_t cursor, uint64_t pos[2]) {
        if (cursor != 0 && sbx_ring_cursor_positions(cursor, h->commit, pos) < 0)
                return -1;
        for (int s = 0; s < 2; s++) {
                uint64_t oldest = h->commit[s] > h->cap ? h->commit[s] - h->cap : 0;

                if (cursor == 0 || pos[s] < oldest)
                        pos[s] = oldest;
        }
        return 0;
}

/* Exit 0 when the process ended (or, not following, what was kept at the start) and
 * its output was copied, 1 when stdout or stderr went, 2 on a usage error, 3 for a
 * cursor past a stream's end, 4 when DIR or its ring cannot be read. */
int sbx_init_attach(const char *dir, const char *cursor_s, const char *follow_s) {
        char path[256], *end;
        uint64_t pos[2], cursor = 0, until[2] = { UINT64_MAX, UINT64_MAX };
        SbxRingHeader h;
        SbxRingSource src;
        Input in = { .open = !cursor_s, .fifo = -1 };
        bool follow = !follow_s || strcmp(follow_s, "1") == 0;
        int d, ring, ino;

        if (strlen(dir) > 200)
                return 2;
        if (cursor_s) {
                errno = 0;
                cursor = strtoull(cursor_s, &end, 10);
                if (errno || end == cursor_s || *end)
                        return 2;
        }
        (void) signal(SIGPIPE, SIG_IGN);
        d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (d < 0)
                return 4;
        if (in.open)
                in.fifo = open_fifo(d);
        close(d);
        ring = ring_file_open(dir);
        src = (SbxRingSource) { .pread = ring_file_pread, .userdata = &ring };
        if (ring < 0 || sbx_ring_read_header(&src, &h) < 0)
                return 4;
        snprintf(path, sizeof path, "%s/%s", dir, SBX_RING_FILE);
        ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
        if (ino >= 0 && inotify_add_watch(ino, path, IN_MODIFY) < 0) {
                close(ino);
                ino = -1;
        }
        if (start_positions(&h, cursor, pos) < 0)
                return 3;
        if (!follow)
                memcpy(until, h.commit, sizeof until);
        for (;;) {
                struct pollfd p[3] = {
                        { .fd = ino, .events = POLLIN },
                        { .fd = in.open && in.len == 0 ? STDIN_FILENO : -1, .events = POLLIN },
                        { .fd = in.len > 0 ? in.fifo : -1, .events = POLLOUT },
                };
                bool ended;
                int r;

                if (sbx_ring_read_header(&src, &h) < 0)
                        return 4;
                ended = ring_file_state(&h) != SBX_RING_STATE_RUNNING;
                for (int s = 0; s < 2; s++)
                        if ((r = copy_stream(&src, &h, s, &pos[s], STDOUT_FILENO + s)) != 0)
                                return r == 1 ? 1 : 4;
                if ((ended && pos[0] >= h.commit[0] && pos[1] >= h.commit[1]) ||
                    (pos[0] >= until[0] && pos[1] >= until[1]))
                        return 0;
                if (pos[0] < h.commit[0] || pos[1] < h.commit[1])
                        continue;       /* more than a cap came meanwhile */
                if (poll(p, 3, 1000) < 0 && errno != EINTR)
                        return 4;
                if (p[0].revents & POLLIN)
                        while (read(ino, events, sizeof events) > 0)
                                ;
                if (p[1].revents & (POLLIN | POLLHUP | POLLERR))
                        input_read(&in);
                if (p[2].revents & (POLLOUT | POLLERR | POLLHUP))
                        input_write(&in);
        }
}
