/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar-filter.h"

#define BLOCK 512U
/* pax and GNU long-name data kept at most (a path is at most 4096 bytes). */
#define EXT_MAX 65536U
#define PATH_MAX_LEN 4096U

typedef enum Phase {
        PHASE_HEADER,
        PHASE_DATA,                     /* passing a file's data (and padding) on */
        PHASE_EXT,                      /* collecting pax / GNU long-name data */
        PHASE_SKIP,                     /* dropping data nobody needs */
        PHASE_END,                      /* after the end blocks: the rest is dropped */
} Phase;

struct SbxTarFilter {
        uid_t uid;
        gid_t gid;
        Phase phase;
        uint8_t block[BLOCK];
        size_t fill;
        uint64_t remaining;             /* bytes of the current data phase */
        char ext_type;
        char *ext;
        size_t ext_size, ext_fill;
        char *path, *linkpath;          /* overrides for the next entry */
        char **symlinks;                /* names made symbolic links so far */
        size_t n_symlinks;
        unsigned zero_blocks;
        uint64_t entries;
};

int sbx_tar_filter_new(uid_t uid, gid_t gid, SbxTarFilter **ret) {
        SbxTarFilter *f = calloc(1, sizeof(SbxTarFilter));

        if (!f)
                return -ENOMEM;
        f->uid = uid;
        f->gid = gid;
        *ret = f;
        return 0;
}

SbxTarFilter *sbx_tar_filter_free(SbxTarFilter *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->n_symlinks; i++)
                free(f->symlinks[i]);
        free(f->symlinks);
        free(f->ext);
        free(f->path);
        free(f->linkpath);
        free(f);
        return NULL;
}

static int emit(const void *p, size_t n, char **out, size_t *size, size_t *alloc) {
        if (*size + n > *alloc) {
                size_t a = MAX(*alloc * 2, *size + n + 65536);
                char *q = realloc(*out, a);

                if (!q)
                        return -ENOMEM;
                *out = q;
                *alloc = a;
        }
        memcpy(*out + *size, p, n);
        *size += n;
        return 0;
}

static uint64_t octal(const uint8_t *p, size_t n) {
        uint64_t v = 0;

        if (p[0] & 0x80) {              /* GNU base-256 */
                v = p[0] & 0x7f;
                for (size_t i = 1; i < n; i++)
                        v = v << 8 | p[i];
                return v;
        }
        for (size_t i = 0; i < n && p[i] == ' '; i++)
                p++, n--;
        for (size_t i = 0; i < n && p[i] >= '0' && p[i] <= '7'; i++)
                v = v * 8 + (uint64_t) (p[i] - '0');
        return v;
}

static bool checksum_ok(const uint8_t *b) {
        uint64_t want = octal(b + 148, 8), u = 0;
        int64_t s = 0;

        for (size_t i = 0; i < BLOCK; i++) {
                uint8_t c = i >= 148 && i < 156 ? ' ' : b[i];
                u += c;
                s += (int8_t) c;
        }
        return want == u || (int64_t) want == s;
}

static bool all_zero(const uint8_t *b) {
        for (size_t i = 0; i < BLOCK; i++)
                if (b[i])
                        return false;
        return true;
}

static char *field(const uint8_t *p, size_t n) {
        return strndup((const char *) p, n);
}

/* The name with "." and empty components removed; NULL for an absolute name or
 * one with "..". */
static char *normalize(const char *name) {
        _cleanup_free_ char *copy = strdup(name), *out = NULL;
        size_t n = 0;
        char *save = NULL;

        if (!copy || name[0] == '/')
                return NULL;
        out = calloc(strlen(name) + 2, 1);
        if (!out)
                return NULL;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (streq(c, "."))
                        continue;
                if (streq(c, ".."))
                        return NULL;
                if (n > 0)
                        out[n++] = '/';
                strcpy(out + n, c);
                n += strlen(c);
        }
        if (n == 0)
                strcpy(out, ".");
        return TAKE_PTR(out);
}

/* Whether name (a normalized path) is a symbolic link made earlier (itself, with
 * itself true) or lies below one. */
static bool on_symlink(const SbxTarFilter *f, const char *name, bool itself) {
        for (size_t i = 0; i < f->n_symlinks; i++) {
                size_t l = strlen(f->symlinks[i]);

                if (strncmp(name, f->symlinks[i], l) == 0 && (name[l] == '/' || (itself && name[l] == 0)))
                        return true;
        }
        return false;
}

/* A symbolic link at name (normalized) to target stays below the root, read
 * lexically from the link's directory, and does not pass through a link made
 * earlier: lexical ".." after such a link is not where the file system goes. */
static bool link_contained(const SbxTarFilter *f, const char *name, const char *target) {
        _cleanup_free_ char *copy = strdup(target), *path = NULL;
        char *save = NULL, *slash;
        size_t n;

        if (!copy || target[0] == '/' || target[0] == 0)
                return false;
        if (!(path = malloc(strlen(name) + strlen(target) + 2)))
                return false;
        strcpy(path, name);
        slash = strrchr(path, '/');
        n = slash ? (size_t) (slash - path) : 0;        /* the link's directory */
        path[n] = 0;
        for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
                if (streq(c, "."))
                        continue;
                if (n > 0 && on_symlink(f, path, true))
                        return false;
                if (streq(c, "..")) {
                        if (n == 0)
                                return false;
                        slash = strrchr(path, '/');
                        n = slash ? (size_t) (slash - path) : 0;
                } else {
                        if (n > 0)
                                path[n++] = '/';
                        strcpy(path + n, c);
                        n += strlen(c);
                }
                path[n] = 0;
        }
        return true;
}

static int refuse(SbxError *error, const char *name, const char *why) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: entry '%.200s': %s", name, why);
}

static int put_octal(uint8_t *p, size_t n, uint64_t v) {
        char buf[32];

        snprintf(buf, sizeof buf, "%0*llo", (int) n - 1, (unsigned long long) v);
        if (strlen(buf) > n - 1)
                return -ERANGE;
        memcpy(p, buf, n);
        return 0;
}

static void put_checksum(uint8_t *h) {
        unsigned sum = 0;

        memset(h + 148, ' ', 8);
        for (size_t i = 0; i < BLOCK; i++)
                sum += h[i];
        snprintf((char *) h + 148, 8, "%06o", sum);
        h[155] = ' ';
}

static void ustar_header(uint8_t *h, const char *name, char type, unsigned mode, uint64_t size,
                         const uint8_t *mtime, uid_t uid, gid_t gid, const char *link) {
        memset(h, 0, BLOCK);
        strncpy((char *) h, name, 100);
        (void) put_octal(h + 100, 8, mode);
        if (put_octal(h + 108, 8, uid) < 0)
                (void) put_octal(h + 108, 8, 0);
        if (put_octal(h + 116, 8, gid) < 0)
                (void) put_octal(h + 116, 8, 0);
        if (put_octal(h + 124, 12, size) < 0) {        /* ≥ 8 GiB: base-256 */
                h[124] = 0x80;
                for (size_t i = 0; i < 8; i++)
                        h[135 - i] = (uint8_t) (size >> (8 * i));
        }
        if (mtime)
                memcpy(h + 136, mtime, 12);
        else
                (void) put_octal(h + 136, 12, 0);
        h[156] = (uint8_t) type;
        if (link)
                strncpy((char *) h + 157, link, 100);
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        put_checksum(h);
}

static int pax_record(char **buf, size_t *n, const char *key, const char *value) {
        size_t body = strlen(key) + strlen(value) + 3, len = body + 1, digits;
        char *rec;

        /* The length counts its own digits. */
        for (;;) {
                digits = (size_t) snprintf(NULL, 0, "%zu", len);
                if (digits + body == len)
                        break;
                len = digits + body;
        }
        if (asprintf(&rec, "%zu %s=%s\n", len, key, value) < 0)
                return -ENOMEM;
        *buf = realloc(*buf, *n + len + 1);
        if (!*buf) {
                free(rec);
                return -ENOMEM;
        }
        memcpy(*buf + *n, rec, len);
        *n += len;
        free(rec);
        return 0;
}

/* Names longer than a ustar field go out in a pax header of their own. */
static int emit_long_names(const char *name, const char *link, char **out, size_t *size, size_t *alloc) {
        _cleanup_free_ char *recs = NULL;
        uint8_t h[BLOCK], pad[BLOCK] = {};
        size_t n = 0;
        int r;

        if (strlen(name) > 100 && (r = pax_record(&recs, &n, "path", name)) < 0)
                return r;
        if (link && strlen(link) > 100 && (r = pax_record(&recs, &n, "linkpath", link)) < 0)
                return r;
        if (n == 0)
                return 0;
        ustar_header(h, "././@PaxHeader", 'x', 0644, n, NULL, 0, 0, NULL);
        if ((r = emit(h, BLOCK, out, size, alloc)) < 0 || (r = emit(recs, n, out, size, alloc)) < 0)
                return r;
        return emit(pad, (BLOCK - n % BLOCK) % BLOCK, out, size, alloc);
}

static int remember_symlink(SbxTarFilter *f, const char *name) {
        char **l = reallocarray(f->symlinks, f->n_symlinks + 1, sizeof(char *));

        if (!l)
                return -ENOMEM;
        f->symlinks = l;
        l[f->n_symlinks] = strdup(name);
        if (!l[f->n_symlinks])
                return -ENOMEM;
        f->n_symlinks++;
        return 0;
}

static uint64_t padded(uint64_t n) {
        return (n + BLOCK - 1) / BLOCK * BLOCK;
}

/* Checks one entry and writes its clean header; sets the data phase. */
static int entry(SbxTarFilter *f, char type, char **out, size_t *size, size_t *alloc, SbxError *error) {
        const uint8_t *b = f->block;
        _cleanup_free_ char *raw = NULL, *name = NULL, *rawlink = NULL, *link = NULL;
        uint64_t data = octal(b + 124, 12);
        bool regular = type == '0' || type == 0 || type == '7';
        uint8_t h[BLOCK];
        int r;

        if (f->path)
                raw = TAKE_PTR(f->path);
        else if (memcmp(b + 257, "ustar", 5) == 0 && b[345]) {
                _cleanup_free_ char *prefix = field(b + 345, 155), *n = field(b, 100);
                if (!prefix || !n || asprintf(&raw, "%s/%s", prefix, n) < 0)
                        return -ENOMEM;
        } else if (!(raw = field(b, 100)))
                return -ENOMEM;
        rawlink = f->linkpath ? TAKE_PTR(f->linkpath) : field(b + 157, 100);
        if (!rawlink)
                return -ENOMEM;

        if (!regular && type != '5' && type != '2' && type != '1')
                return refuse(error, raw, "only files, directories and links may be copied (no devices, FIFOs)");
        if (strlen(raw) > PATH_MAX_LEN || !(name = normalize(raw)))
                return refuse(error, raw, "an absolute name, or one with a '..' component");
        if (on_symlink(f, name, false))
                return refuse(error, raw, "lies below a symbolic link of the same archive");
        if (type == '2' && !link_contained(f, name, rawlink))
                return refuse(error, raw, "a symbolic link that leads outside the target directory");
        /* A hard link to a symbolic link is that symbolic link again, elsewhere. */
        if (type == '1' && (!(link = normalize(rawlink)) || on_symlink(f, link, true)))
                return refuse(error, raw, "a hard link to a name outside the target directory, or to a symbolic link");
        if (type == '2' && (r = remember_symlink(f, name)) < 0)
                return r;

        {
                const char *target = type == '2' ? rawlink : type == '1' ? link : NULL;
                if ((r = emit_long_names(name, target, out, size, alloc)) < 0)
                        return r;
                ustar_header(h, name, regular ? '0' : type, (unsigned) (octal(b + 100, 8) & 0777),
                             regular ? data : 0, b + 136, f->uid, f->gid, target);
        }
        f->entries++;
        f->remaining = padded(data);
        f->phase = f->remaining == 0 ? PHASE_HEADER : regular ? PHASE_DATA : PHASE_SKIP;
        return emit(h, BLOCK, out, size, alloc);
}

/* pax 'x' data: the path and linkpath records. */
static int parse_pax(SbxTarFilter *f, SbxError *error) {
        size_t i = 0;

        while (i < f->ext_fill) {
                char *end, *eq, *rec = f->ext + i;
                unsigned long len = strtoul(rec, &end, 10);

                if (len == 0 || len > f->ext_fill - i || *end != ' ' || rec[len - 1] != '\n')
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: a malformed pax header");
                rec[len - 1] = 0;
                eq = strchr(end + 1, '=');
                if (eq) {
                        *eq = 0;
                        if (streq(end + 1, "path") || streq(end + 1, "linkpath")) {
                                char **dst = streq(end + 1, "path") ? &f->path : &f->linkpath;
                                free(*dst);
                                if (!(*dst = strdup(eq + 1)))
                                        return -ENOMEM;
                        }
                }
                i += len;
        }
        return 0;
}

static int ext_done(SbxTarFilter *f, SbxError *error) {
        char **dst;

        f->ext[f->ext_fill] = 0;        /* parse_pax() reads numbers with strtoul() */
        if (f->ext_type == 'x')
                return parse_pax(f, error);
        if (f->ext_type == 'g')
                return 0;
        dst = f->ext_type == 'L' ? &f->path : &f->linkpath;
        free(*dst);
        *dst = strndup(f->ext, f->ext_fill);
        return *dst ? 0 : -ENOMEM;
}

static int header(SbxTarFilter *f, char **out, size_t *size, size_t *alloc, SbxError *error) {
        char type = (char) f->block[156];
        uint64_t data;

        if (all_zero(f->block)) {
                if (++f->zero_blocks == 2) {
                        f->phase = PHASE_END;
                        return emit(f->block, BLOCK, out, size, alloc) < 0 ? -ENOMEM
                                                                         : emit(f->block, BLOCK, out, size, alloc);
                }
                return 0;
        }
        if (f->zero_blocks > 0 || !checksum_ok(f->block))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, f->entries == 0 && !f->path && !f->linkpath
                                     ? "tar: not a tar stream (the first header's checksum is wrong)"
                                     : "tar: a corrupt header after %llu entries", (unsigned long long) f->entries);
        if (!strchr("xgLK", type) || type == 0)
                return entry(f, type, out, size, alloc, error);

        data = octal(f->block + 124, 12);
        if (data > EXT_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: an extended header larger than %u bytes",
                                     EXT_MAX);
        free(f->ext);
        f->ext = malloc(data + 1);
        if (!f->ext)
                return -ENOMEM;
        f->ext_type = type;
        f->ext_size = data;
        f->ext_fill = 0;
        f->remaining = padded(data);
        f->phase = PHASE_EXT;
        return f->remaining == 0 ? (f->phase = PHASE_HEADER, ext_done(f, error)) : 0;
}

int sbx_tar_filter_feed(SbxTarFilter *f, const char *data, size_t size, char **out, size_t *out_size,
                        size_t *out_alloc, SbxError *error) {
        while (size > 0) {
                size_t n;
                int r;

                switch (f->phase) {
                case PHASE_HEADER:
                        n = MIN(size, BLOCK - f->fill);
                        memcpy(f->block + f->fill, data, n);
                        f->fill += n;
                        if (f->fill == BLOCK) {
                                f->fill = 0;
                                if ((r = header(f, out, out_size, out_alloc, error)) < 0)
                                        return r;
                        }
                        break;
                case PHASE_DATA:
                case PHASE_SKIP:
                case PHASE_EXT:
                        n = (size_t) MIN((uint64_t) size, f->remaining);
                        if (f->phase == PHASE_DATA && (r = emit(data, n, out, out_size, out_alloc)) < 0)
                                return r;
                        if (f->phase == PHASE_EXT && f->ext_fill < f->ext_size) {
                                size_t k = MIN(n, f->ext_size - f->ext_fill);
                                memcpy(f->ext + f->ext_fill, data, k);
                                f->ext_fill += k;
                        }
                        f->remaining -= n;
                        if (f->remaining == 0) {
                                if (f->phase == PHASE_EXT && (r = ext_done(f, error)) < 0)
                                        return r;
                                f->phase = PHASE_HEADER;
                        }
                        break;
                default:
                        n = size;
                        break;
                }
                data += n;
                size -= n;
        }
        return 0;
}

int sbx_tar_filter_finish(SbxTarFilter *f, char **out, size_t *out_size, size_t *out_alloc, SbxError *error) {
        static const uint8_t zero[2 * BLOCK];

        if (f->phase == PHASE_END)
                return 0;
        if (f->phase != PHASE_HEADER || f->fill != 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: the stream ends inside an entry");
        if (f->entries == 0 && f->zero_blocks == 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: an empty stream");
        return emit(zero, sizeof zero, out, out_size, out_alloc);
}
