/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* `xagent-sandbox-init --pack DIR NAME`: CopyFromSandbox's archive, written by the
 * service's own program as the sandbox's owner (docs/security.md, "Copies"): a tar
 * stream of DIR/NAME on standard output, made without the image's tar.
 *
 * What the owner may read is archived: directories (recursively), regular files
 * and symbolic links (stored as links, never followed). Sockets, FIFOs and device
 * nodes are left out (reading a FIFO could block for ever; a device node is
 * nothing to copy) and named on standard error. A file that changes size while it
 * is read is archived at the size its header gave: cut, or padded with zeros.
 * ustar headers, with a pax header before a name or link longer than a field.
 *
 * Exit status 0 when everything was archived, 1 on a failure (the reason on
 * standard error, naming the path; the stream is then incomplete), 2 on a usage
 * error. No allocation; descriptors bounded by the depth. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pack.h"
#include "ustar.h"

#define BLOCK SBX_USTAR_BLOCK
#define PATH_MAX_LEN 4096U
#define DEPTH_MAX 256U

static int fail(const char *path, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        dprintf(STDERR_FILENO, "pack: '%.200s': %s\n", path, msg);
        return -1;
}

static int write_full(const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(STDOUT_FILENO, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -1;
                p = (const char *) p + k;
                n -= (size_t) k;
        }
        return 0;
}

static int write_zeros(size_t n) {
        static const char zero[BLOCK];

        while (n > 0) {
                size_t k = n < BLOCK ? n : BLOCK;

                if (write_full(zero, k) < 0)
                        return -1;
                n -= k;
        }
        return 0;
}

static void header(unsigned char *h, const char *name, char type, const struct stat *st, uint64_t size,
                   const char *link) {
        sbx_ustar_header(h, &(SbxUstarEntry) {
                .name = name, .type = type, .mode = st->st_mode & 07777, .size = size,
                .mtime = st->st_mtim.tv_sec < 0 ? 0 : (uint64_t) st->st_mtim.tv_sec,
                .uid = st->st_uid, .gid = st->st_gid, .link = link });
}

static int pax_header(const char *name, const char *link, const struct stat *st) {
        static char recs[2 * PATH_MAX_LEN + 64];
        unsigned char h[BLOCK];
        size_t n = 0;

        if (strlen(name) > SBX_USTAR_NAME_FIELD)
                n += sbx_pax_record(recs + n, sizeof recs - n, "path", name);
        if (link && strlen(link) > SBX_USTAR_NAME_FIELD)
                n += sbx_pax_record(recs + n, sizeof recs - n, "linkpath", link);
        if (n == 0)
                return 0;
        header(h, "././@PaxHeader", 'x', st, n, NULL);
        if (write_full(h, BLOCK) < 0 || write_full(recs, n) < 0 || write_zeros((BLOCK - n % BLOCK) % BLOCK) < 0)
                return -1;
        return 0;
}

static int emit_header(const char *name, char type, const struct stat *st, uint64_t size, const char *link) {
        unsigned char h[BLOCK];

        if (pax_header(name, link, st) < 0)
                return -1;
        header(h, name, type, st, size, link);
        return write_full(h, BLOCK);
}

/* The file's data, exactly size bytes: cut or zero-padded if it changed. */
static int emit_data(int fd, const char *path, uint64_t size) {
        static char buf[65536];
        uint64_t left = size;

        while (left > 0) {
                size_t want = left < sizeof buf ? (size_t) left : sizeof buf;
                ssize_t k = read(fd, buf, want);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return fail(path, "cannot read: %s", strerror(errno));
                if (k == 0)
                        break;
                if (write_full(buf, (size_t) k) < 0)
                        return -1;
                left -= (uint64_t) k;
        }
        return write_zeros((size_t) left + (BLOCK - size % BLOCK) % BLOCK);
}

static int pack_at(int dirfd, const char *entry, char *path, size_t len, unsigned depth);

static int pack_dir(int fd, char *path, size_t len, unsigned depth) {
        DIR *d;
        struct dirent *de;
        int r = 0;

        if (depth >= DEPTH_MAX) {
                close(fd);
                return fail(path, "more than %u directories deep", DEPTH_MAX);
        }
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return fail(path, "cannot list: %s", strerror(errno));
        }
        errno = 0;
        while (r == 0 && (de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                r = pack_at(dirfd(d), de->d_name, path, len, depth + 1);
                errno = 0;
        }
        if (r == 0 && errno != 0)
                r = fail(path, "cannot list: %s", strerror(errno));
        closedir(d);
        return r;
}

/* Archives entry (in dirfd) under path + "/" + entry (path holds len bytes). */
static int pack_at(int dirfd, const char *entry, char *path, size_t len, unsigned depth) {
        size_t n = len + (len > 0) + strlen(entry);
        struct stat st;
        int fd, r;

        if (n > PATH_MAX_LEN)
                return fail(entry, "a path longer than %u bytes", PATH_MAX_LEN);
        if (len > 0)
                path[len] = '/';
        strcpy(path + len + (len > 0), entry);

        if (fstatat(dirfd, entry, &st, AT_SYMLINK_NOFOLLOW) < 0)
                r = fail(path, "cannot stat: %s", strerror(errno));
        else if (S_ISLNK(st.st_mode)) {
                char target[PATH_MAX_LEN + 1];
                ssize_t k = readlinkat(dirfd, entry, target, sizeof target);

                if (k < 0 || (size_t) k > PATH_MAX_LEN)
                        r = fail(path, "cannot read the link");
                else {
                        target[k] = 0;
                        r = emit_header(path, '2', &st, 0, target);
                }
        } else if (S_ISREG(st.st_mode)) {
                fd = openat(dirfd, entry, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
                if (fd < 0)
                        r = fail(path, "cannot open: %s", strerror(errno));
                else {
                        r = emit_header(path, '0', &st, (uint64_t) st.st_size, NULL);
                        if (r == 0)
                                r = emit_data(fd, path, (uint64_t) st.st_size);
                        close(fd);
                }
        } else if (S_ISDIR(st.st_mode)) {
                fd = openat(dirfd, entry, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0)
                        r = fail(path, "cannot open: %s", strerror(errno));
                else {
                        char name[PATH_MAX_LEN + 2];

                        snprintf(name, sizeof name, "%s/", path);
                        r = emit_header(name, '5', &st, 0, NULL);
                        r = r < 0 ? (close(fd), -1) : pack_dir(fd, path, n, depth);
                }
        } else {
                dprintf(STDERR_FILENO, "pack: '%.200s': left out (not a file, directory or link)\n", path);
                r = 0;
        }
        path[len] = 0;
        return r;
}

int sbx_init_pack(const char *dir, const char *name) {
        static char path[PATH_MAX_LEN + 1];
        int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (root < 0) {
                fail(dir, "cannot open: %s", strerror(errno));
                return 1;
        }
        if (strchr(name, '/') || strcmp(name, "..") == 0) {
                fail(name, "not one name");
                return 2;
        }
        if (pack_at(root, name, path, 0, 0) < 0)
                return 1;
        close(root);
        return write_zeros(2 * BLOCK) < 0 ? 1 : 0;
}
