/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* `xagent-sandbox-init --unpack DIR`: CopyToSandbox's unpacking, done by the
 * service's own program as the sandbox's owner (docs/security.md, "Copies"), so a
 * copy needs no tar in the image and never runs the image's binaries.
 *
 * Standard input is the stream the service's filter (src/core/tar-filter.c) wrote:
 * ustar headers for regular files, directories, symbolic and hard links, a pax
 * header before any entry whose name or link is longer than a ustar field, two
 * zero blocks at the end. It is read as untrusted all the same: every length is
 * bounded and every name is checked again (relative, no "..").
 *
 * Nothing appears under its final name before it is complete: a file's data goes
 * to an unnamed file (O_TMPFILE; a hidden temporary name where the file system
 * has none) that is renamed over the final name once its last byte is written; a
 * link is made under a temporary name and renamed. A stream that ends early or
 * fails leaves no partial file behind (an unnamed file vanishes even when this
 * process is killed). Directories get their modes at the end, so that a
 * read-only directory can still be filled.
 *
 * Exit status 0 when the whole stream was unpacked, 1 on any failure (the reason
 * on standard error, naming the entry), 2 on a usage error. No allocation. */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "ustar.h"
#include "unpack.h"

#define BLOCK SBX_USTAR_BLOCK
#define NAME_MAX_LEN 4096U
#define PAX_MAX 65536U
#define DEFERRED_MAX 4096U

typedef struct Entry {
        char name[NAME_MAX_LEN + 1];
        char link[NAME_MAX_LEN + 1];
        char type;
        unsigned mode;
        uint64_t size;
        struct timespec mtime;
} Entry;

/* Directories whose final mode and time are applied at the end. */
typedef struct Deferred {
        char name[NAME_MAX_LEN + 1];
        unsigned mode;
        struct timespec mtime;
} Deferred;

static Deferred deferred[DEFERRED_MAX];
static size_t n_deferred;

static int fail(const char *name, const char *fmt, ...) {
        char msg[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (name)
                dprintf(STDERR_FILENO, "unpack: '%.200s': %s\n", name, msg);
        else
                dprintf(STDERR_FILENO, "unpack: %s\n", msg);
        return -1;
}

/* Reads exactly n bytes; 0 on success, 1 at end of input before any byte, -1 on
 * end of input inside them or an error. */
static int read_full(void *buf, size_t n) {
        size_t done = 0;

        while (done < n) {
                ssize_t k = read(STDIN_FILENO, (char *) buf + done, n - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -1;
                if (k == 0)
                        return done == 0 ? 1 : -1;
                done += (size_t) k;
        }
        return 0;
}

static int skip(uint64_t n) {
        static char buf[65536];

        while (n > 0) {
                size_t k = n < sizeof buf ? (size_t) n : sizeof buf;

                if (read_full(buf, k) != 0)
                        return -1;
                n -= k;
        }
        return 0;
}

static uint64_t padding(uint64_t n) {
        return (BLOCK - n % BLOCK) % BLOCK;
}

/* A name the filter would have written: relative, not empty, no "." or ".."
 * component, no empty component. */
static int name_ok(const char *s) {
        const char *c = s;

        if (*s == 0 || *s == '/')
                return 0;
        for (;;) {
                size_t l = strcspn(c, "/");

                if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return strcmp(s, ".") == 0;
                if (c[l] == 0)
                        return 1;
                c += l + 1;
        }
}

/* A ustar field into dst (NUL-terminated, at most n bytes of it). */
static void field(char *dst, const unsigned char *src, size_t n) {
        size_t l = strnlen((const char *) src, n);

        memcpy(dst, src, l);
        dst[l] = 0;
}

/* The pax records "path" and "linkpath" of one extended header. */
static int read_pax(uint64_t size, char *path, char *link) {
        static char buf[PAX_MAX + 1];
        size_t i = 0;

        if (size > PAX_MAX)
                return fail(NULL, "an extended header larger than %u bytes", PAX_MAX);
        if (read_full(buf, (size_t) size) != 0 || skip(padding(size)) < 0)
                return fail(NULL, "the stream ends inside an extended header");
        buf[size] = 0;
        while (i < size) {
                char *rec = buf + i, *end, *key, *eq;
                unsigned long len = 0;

                for (end = rec; *end >= '0' && *end <= '9' && len <= PAX_MAX; end++)
                        len = len * 10 + (unsigned long) (*end - '0');
                if (end == rec || *end != ' ' || len == 0 || len > size - i || rec[len - 1] != '\n')
                        return fail(NULL, "a malformed pax header");
                rec[len - 1] = 0;
                key = end + 1;
                eq = strchr(key, '=');
                if (eq) {
                        char *dst = NULL;

                        *eq = 0;
                        if (strcmp(key, "path") == 0)
                                dst = path;
                        else if (strcmp(key, "linkpath") == 0)
                                dst = link;
                        if (dst) {
                                if (strlen(eq + 1) > NAME_MAX_LEN)
                                        return fail(NULL, "a pax %s longer than %u bytes", key, NAME_MAX_LEN);
                                strcpy(dst, eq + 1);
                        }
                }
                i += len;
        }
        return 0;
}

/* Reads the next entry's header (and any pax header before it). 1 at the end of
 * the archive, 0 with *e filled, -1 on failure. */
static int next_entry(Entry *e) {
        static unsigned char b[BLOCK];
        char pax_path[NAME_MAX_LEN + 1] = "", pax_link[NAME_MAX_LEN + 1] = "";
        unsigned zeros = 0;

        for (;;) {
                int r = read_full(b, BLOCK);

                if (r != 0)
                        return fail(NULL, "the stream ends before the end of the archive");
                if (sbx_ustar_is_zero(b)) {
                        if (++zeros == 2)
                                return 1;
                        continue;
                }
                if (zeros > 0 || !sbx_ustar_checksum_ok(b))
                        return fail(NULL, "a corrupt header");
                if (b[156] == 'x') {
                        if (read_pax(sbx_ustar_number(b + 124, 12), pax_path, pax_link) < 0)
                                return -1;
                        continue;
                }
                break;
        }

        e->type = b[156] == 0 || b[156] == '7' ? '0' : (char) b[156];
        e->mode = (unsigned) (sbx_ustar_number(b + 100, 8) & 0777);
        e->size = sbx_ustar_number(b + 124, 12);
        e->mtime = (struct timespec) { .tv_sec = (time_t) sbx_ustar_number(b + 136, 12) };
        if (pax_path[0])
                strcpy(e->name, pax_path);
        else if (memcmp(b + 257, "ustar", 5) == 0 && b[345]) {
                char prefix[156], name[101];

                field(prefix, b + 345, 155);
                field(name, b, 100);
                snprintf(e->name, sizeof e->name, "%s/%s", prefix, name);
        } else
                field(e->name, b, 100);
        if (pax_link[0])
                strcpy(e->link, pax_link);
        else
                field(e->link, b + 157, 100);

        if (!name_ok(e->name))
                return fail(e->name, "not a plain relative name");
        if (!strchr("0125", e->type))
                return fail(e->name, "only files, directories and links may be copied");
        if (e->type == '1' && !name_ok(e->link))
                return fail(e->name, "a hard link to a name that is not plain and relative");
        if (e->type == '2' && e->link[0] == 0)
                return fail(e->name, "a symbolic link without a target");
        if (e->type != '0' && e->size > 0 && skip(e->size + padding(e->size)) < 0)
                return fail(e->name, "the stream ends inside the entry");
        return 0;
}

/* The directory part of name ("." for none) and its last component. */
static void split(const char *name, char *dir, const char **base) {
        const char *slash = strrchr(name, '/');

        if (!slash) {
                strcpy(dir, ".");
                *base = name;
                return;
        }
        memcpy(dir, name, (size_t) (slash - name));
        dir[slash - name] = 0;
        *base = slash + 1;
}

/* Moves what is at tmp (in dir) to its final name. A directory there is not
 * replaced: tar refuses that too. */
static int publish(int dir, const char *tmp, const Entry *e, const char *base) {
        if (fs_rename_into_place(dir, tmp, base) < 0)
                return fail(e->name, "cannot put it in place: %s", strerror(errno));
        return 0;
}

/* Writes the data of a regular file to a file with no name yet. */
static int copy_data(int fd, const Entry *e) {
        static char buf[65536];
        uint64_t left = e->size;

        while (left > 0) {
                size_t k = left < sizeof buf ? (size_t) left : sizeof buf;

                if (read_full(buf, k) != 0)
                        return fail(e->name, "the stream ends inside the file (%llu of %llu bytes)",
                                    (unsigned long long) (e->size - left), (unsigned long long) e->size);
                for (size_t done = 0; done < k;) {
                        ssize_t w = write(fd, buf + done, k - done);

                        if (w < 0 && errno == EINTR)
                                continue;
                        if (w < 0)
                                return fail(e->name, "cannot write: %s", strerror(errno));
                        done += (size_t) w;
                }
                left -= k;
        }
        if (skip(padding(e->size)) < 0)
                return fail(e->name, "the stream ends inside the file's padding");
        return 0;
}

static int unpack_file(int dir, const Entry *e, const char *base) {
        char tmp[FS_TMP_NAME_MAX];
        struct timespec times[2] = { e->mtime, e->mtime };
        bool unnamed;
        int fd = fs_create_hidden(dir, tmp, &unnamed);

        if (fd < 0)
                return fail(e->name, "cannot create: %s", strerror(errno));
        if (copy_data(fd, e) < 0) {
                fs_discard(dir, fd, unnamed, tmp);
                return -1;
        }
        if (fchmod(fd, e->mode) < 0 || futimens(fd, times) < 0) {
                fs_discard(dir, fd, unnamed, tmp);
                return fail(e->name, "cannot set its mode or time: %s", strerror(errno));
        }
        if (fs_publish(dir, fd, unnamed, tmp, base) < 0)
                return fail(e->name, "cannot put it in place: %s", strerror(errno));
        return 0;
}

static int unpack_link(int root, int dir, const Entry *e, const char *base) {
        char tmp[FS_TMP_NAME_MAX];
        int r;

        fs_tmp_name(tmp);
        r = e->type == '2' ? symlinkat(e->link, dir, tmp) : linkat(root, e->link, dir, tmp, 0);
        if (r < 0)
                return fail(e->name, "cannot make the link: %s", strerror(errno));
        if (e->type == '2') {
                struct timespec times[2] = { e->mtime, e->mtime };
                (void) utimensat(dir, tmp, times, AT_SYMLINK_NOFOLLOW);
        }
        return publish(dir, tmp, e, base);
}

static int set_dir(int root, const char *name, unsigned mode, struct timespec mtime) {
        struct timespec times[2] = { mtime, mtime };

        if (fchmodat(root, name, mode, 0) < 0 || utimensat(root, name, times, 0) < 0)
                return fail(name, "cannot set its mode or time: %s", strerror(errno));
        return 0;
}

static int unpack_dir(int root, const Entry *e) {
        int fd = fs_open_dirs(root, e->name, true);

        if (fd < 0)
                return fail(e->name, "cannot make the directory: %s", strerror(errno));
        close(fd);
        if (n_deferred == DEFERRED_MAX)
                return set_dir(root, e->name, e->mode, e->mtime);
        strcpy(deferred[n_deferred].name, e->name);
        deferred[n_deferred].mode = e->mode;
        deferred[n_deferred].mtime = e->mtime;
        n_deferred++;
        return 0;
}

static int unpack_entry(int root, const Entry *e) {
        char dir_name[NAME_MAX_LEN + 1];
        const char *base;
        int dir, r;

        if (e->type == '5')
                return unpack_dir(root, e);
        split(e->name, dir_name, &base);
        dir = fs_open_dirs(root, dir_name, true);
        if (dir < 0)
                return fail(e->name, "cannot make its directory: %s", strerror(errno));
        r = e->type == '0' ? unpack_file(dir, e, base) : unpack_link(root, dir, e, base);
        close(dir);
        return r;
}

int sbx_init_unpack(const char *target) {
        static Entry e;
        int root = open(target, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        if (root < 0) {
                fail(target, "cannot open the target directory: %s", strerror(errno));
                return 1;
        }
        while ((r = next_entry(&e)) == 0)
                if (unpack_entry(root, &e) < 0)
                        return 1;
        if (r < 0)
                return 1;
        /* Innermost first: a read-only parent set last. */
        while (n_deferred > 0) {
                n_deferred--;
                if (set_dir(root, deferred[n_deferred].name, deferred[n_deferred].mode,
                            deferred[n_deferred].mtime) < 0)
                        return 1;
        }
        close(root);
        return 0;
}
