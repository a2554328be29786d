/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* `xagent-sandbox-init --cat PATH OFFSET LENGTH` and `--put PATH MODE FLAGS MAX`:
 * the descriptor transfers of ReadFile and WriteFile (their option fd; docs/api.md,
 * "Files"), run by the service through one exec as the sandbox's owner, so that the
 * bytes flow between the caller's descriptor and this program through the exec's
 * stream, never assembled in the service's memory nor in a bus message.
 *
 * --cat writes LENGTH bytes (or, LENGTH "-", all) of the regular file PATH from
 * OFFSET on to standard output (sendfile), then one line on standard error:
 * "size=N mode=N mtime=N eof=0|1".
 *
 * --put reads standard input into PATH: the data, then the trailer of proto.h
 * (SBX_PUT_TRAILER_*). The file is written as an unnamed one (a hidden temporary
 * name where the file system has none) and put in place only once the trailer came
 * whole and says the length that came, so an input cut short — the service gone or
 * refusing midway, this program killed — leaves nothing under the name. FLAGS are
 * proto.h's WRITE bits: an append goes to the file itself and is cut back to the
 * file's former length when it fails. More than MAX bytes (in 4 KiB blocks: the
 * sandbox's disk budget, docs/security.md "Disk") are refused the same way. On
 * success one line on standard output: "allocated=N released=N".
 *
 * A failure: "error=ERRNO" on standard error and exit status 1 (EDQUOT: past MAX;
 * EPIPE: the input ended without its trailer); 2 on a usage error. No allocation. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "macro.h"
#include "path.h"
#include "proto.h"
#include "stream.h"

#define BUF_SIZE (256U << 10)
#define SEND_MAX ((size_t) 1 << 20)

static uint8_t buf[BUF_SIZE + SBX_PUT_TRAILER_SIZE];

static int fail(int err) {
        dprintf(STDERR_FILENO, "error=%d\n", err);
        return 1;
}

static int parse_u64(const char *s, int base, uint64_t *ret) {
        char *end;

        errno = 0;
        *ret = strtoull(s, &end, base);
        return errno || end == s || *end || *s == '-' ? -1 : 0;
}

static uint64_t usec(const struct timespec *t) {
        return t->tv_sec < 0 ? 0 : (uint64_t) t->tv_sec * 1000000U + (uint64_t) t->tv_nsec / 1000U;
}

/* ---- --cat ------------------------------------------------------------------------ */

/* One piece of the file to standard output: sendfile, or read and write where it
 * cannot. The count, 0 at the file's end, -1 with errno. */
static ssize_t send_piece(int fd, off_t *offset, size_t n) {
        ssize_t k = sendfile(STDOUT_FILENO, fd, offset, n);

        if (k >= 0 || (errno != EINVAL && errno != ENOSYS))
                return k;
        k = pread(fd, buf, MIN(n, (size_t) BUF_SIZE), *offset);
        if (k > 0 && fs_write_all(STDOUT_FILENO, buf, (size_t) k) < 0)
                return -1;
        if (k > 0)
                *offset += k;
        return k;
}

int sbx_init_cat(const char *path, const char *offset_s, const char *length_s) {
        char normal[SBX_PROTO_MAX_PATH + 1];
        uint64_t offset, length = UINT64_MAX, sent = 0;
        struct stat st;
        off_t pos;
        int fd;

        if (parse_u64(offset_s, 10, &offset) < 0 || (strcmp(length_s, "-") != 0 && parse_u64(length_s, 10, &length) < 0) ||
            offset > INT64_MAX || sbx_path_normalize_absolute(path, normal, sizeof normal) < 0)
                return 2;
        /* Without waiting: a FIFO would hold the program in open(). */
        fd = open(normal, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0 || fstat(fd, &st) < 0)
                return fail(errno);
        if (S_ISDIR(st.st_mode))
                return fail(EISDIR);
        if (!S_ISREG(st.st_mode))
                return fail(ESPIPE);
        pos = (off_t) offset;
        while (sent < length) {
                ssize_t k = send_piece(fd, &pos, (size_t) MIN(length - sent, (uint64_t) SEND_MAX));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return fail(errno);
                if (k == 0)
                        break;
                sent += (uint64_t) k;
        }
        dprintf(STDERR_FILENO, "size=%" PRIu64 " mode=%u mtime=%" PRIu64 " eof=%d\n", (uint64_t) st.st_size,
                (unsigned) st.st_mode, usec(&st.st_mtim), offset + sent >= (uint64_t) st.st_size);
        return 0;
}

/* ---- --put ------------------------------------------------------------------------ */

typedef struct Put {
        int dir, fd;
        bool unnamed, append;
        char tmp[FS_TMP_NAME_MAX];
        struct stat before;             /* an append's file before it */
} Put;

static uint64_t blocks(uint64_t n) {
        return (n + 4095U) & ~UINT64_C(4095);
}

static bool trailer_ok(const uint8_t *t, uint64_t length) {
        uint64_t said = 0;

        if (memcmp(t, SBX_PUT_TRAILER_MAGIC, 8) != 0)
                return false;
        for (unsigned i = 0; i < 8; i++)
                said |= (uint64_t) t[8 + i] << (8 * i);
        return said == length;
}

/* Standard input to p->fd, the trailer held back; 0 once the whole of it came
 * (*ret_length: the data's length), else the errno. */
static int copy_in(Put *p, uint64_t max, uint64_t *ret_length) {
        size_t held = 0;                /* bytes at buf's start not yet written: the trailer, perhaps */
        uint64_t length = 0;

        for (;;) {
                ssize_t k = read(STDIN_FILENO, buf + held, BUF_SIZE);
                size_t out;

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return errno;
                if (k == 0)
                        break;
                held += (size_t) k;
                if (held <= SBX_PUT_TRAILER_SIZE)
                        continue;
                out = held - SBX_PUT_TRAILER_SIZE;
                length += out;
                if (blocks(length) > max)
                        return EDQUOT;
                if (fs_write_all(p->fd, buf, out) < 0)
                        return errno;
                memmove(buf, buf + out, SBX_PUT_TRAILER_SIZE);
                held = SBX_PUT_TRAILER_SIZE;
        }
        if (held != SBX_PUT_TRAILER_SIZE || !trailer_ok(buf, length))
                return EPIPE;
        *ret_length = length;
        return 0;
}

static int open_target(Put *p, const char *base, unsigned mode) {
        if (!p->append) {
                p->fd = fs_create_hidden(p->dir, p->tmp, &p->unnamed);
                return p->fd < 0 ? errno : 0;
        }
        /* An append: to a regular file only, opened without waiting. */
        p->fd = openat(p->dir, base, O_WRONLY | O_APPEND | O_CREAT | O_NOCTTY | O_NONBLOCK | O_CLOEXEC, (mode_t) mode);
        if (p->fd < 0)
                return errno == ENXIO ? ESPIPE : errno;
        if (fstat(p->fd, &p->before) < 0)
                return errno;
        return S_ISREG(p->before.st_mode) ? 0 : ESPIPE;
}

/* Nothing of a failed transfer stays: an unnamed file goes, an append is cut back. */
static void undo(Put *p) {
        if (p->fd < 0)
                return;
        if (p->append) {
                (void) ftruncate(p->fd, p->before.st_size);
                close(p->fd);
        } else
                fs_discard(p->dir, p->fd, p->unnamed, p->tmp);
        p->fd = -1;
}

int sbx_init_put(const char *path, const char *mode_s, const char *flags_s, const char *max_s) {
        char normal[SBX_PROTO_MAX_PATH + 1], dir_path[SBX_PROTO_MAX_PATH + 1];
        uint64_t mode, flags, max, length, released = 0;
        Put p = { .dir = -1, .fd = -1 };
        const char *base;
        struct stat st;
        int err;

        if (parse_u64(mode_s, 8, &mode) < 0 || mode > 07777 || parse_u64(flags_s, 10, &flags) < 0 ||
            parse_u64(max_s, 10, &max) < 0 || sbx_path_normalize_absolute(path, normal, sizeof normal) < 0)
                return 2;
        if (!(base = fs_split(normal, dir_path)) || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
                return fail(EINVAL);
        p.append = flags & SBX_PROTO_WRITE_APPEND;
        p.dir = fs_open_dirs(AT_FDCWD, dir_path, flags & SBX_PROTO_WRITE_MAKE_PARENTS);
        if (p.dir < 0)
                return fail(errno);
        if ((err = open_target(&p, base, (unsigned) mode)) == 0 && (err = copy_in(&p, max, &length)) == 0 &&
            ((!p.append && fchmod(p.fd, (mode_t) mode) < 0) || fstat(p.fd, &st) < 0))
                err = errno;
        if (err != 0) {
                undo(&p);
                return fail(err);
        }
        if (p.append) {
                released = fs_disk_bytes(&p.before);
                close(p.fd);
        } else {
                released = fs_released_by(p.dir, base);
                if (fs_publish(p.dir, p.fd, p.unnamed, p.tmp, base) < 0)
                        return fail(errno);
        }
        dprintf(STDOUT_FILENO, "allocated=%" PRIu64 " released=%" PRIu64 "\n", fs_disk_bytes(&st), released);
        return 0;
}
