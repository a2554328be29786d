/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tar-filter.h"
#include "ustar.h"

#define BLOCK 512U
/* pax and GNU long-name data kept at most (a path is at most 4096 bytes). */
#define EXT_MAX 65536U
/* Steps of work (bytes hashed or passed on) between two should_stop() calls. */
#define STOP_QUANTUM 4096U
#define MERSENNE31 0x7fffffffU

typedef enum Phase {
        PHASE_HEADER,
        PHASE_DATA,                     /* passing a file's data (and padding) on */
        PHASE_EXT,                      /* collecting pax / GNU long-name data */
        PHASE_SKIP,                     /* dropping data nobody needs */
        PHASE_END,                      /* after the end blocks: the rest is dropped */
} Phase;

/* Two polynomial hashes mod 2^31 - 1 of a string, extended byte by byte. */
typedef struct Hash {
        uint32_t a, b;
} Hash;

typedef struct Slot {
        uint64_t hash;
        char *name;                     /* NULL: free */
        size_t len;
} Slot;

/* Open addressing, linear probing; never more than half full. */
typedef struct NameSet {
        Slot *slots;
        size_t n, cap;
} NameSet;

struct SbxTarFilter {
        uid_t uid;
        gid_t gid;
        SbxTarLimits limits;
        uint32_t base[2];               /* the hashes' random bases */
        bool (*should_stop)(void *userdata);
        void *stop_userdata;
        uint64_t work, next_check;
        Phase phase;
        uint8_t block[BLOCK];
        size_t fill;
        uint64_t remaining;             /* bytes of the current data phase */
        char ext_type;
        char *ext;
        size_t ext_size, ext_fill;
        char *path, *linkpath;          /* overrides for the next entry */
        NameSet symlinks;               /* names made symbolic links so far */
        uint64_t n_symlinks, symlink_bytes;
        unsigned zero_blocks;
        uint64_t entries;
};

int sbx_tar_filter_new(uid_t uid, gid_t gid, SbxTarFilter **ret) {
        _cleanup_free_ SbxTarFilter *f = calloc(1, sizeof(SbxTarFilter));
        uint32_t r[2];

        if (!f)
                return -ENOMEM;
        /* Random bases: who writes the archive cannot make names collide. */
        if (gnutls_rnd(GNUTLS_RND_NONCE, r, sizeof r) < 0)
                return -EIO;
        for (size_t i = 0; i < 2; i++)
                f->base[i] = 256 + r[i] % (MERSENNE31 - 512);
        f->uid = uid;
        f->gid = gid;
        f->limits = SBX_TAR_LIMITS_DEFAULT;
        f->next_check = STOP_QUANTUM;
        *ret = TAKE_PTR(f);
        return 0;
}

void sbx_tar_filter_set_limits(SbxTarFilter *f, const SbxTarLimits *limits) {
        f->limits = *limits;
}

void sbx_tar_filter_set_stop(SbxTarFilter *f, bool (*should_stop)(void *userdata), void *userdata) {
        f->should_stop = should_stop;
        f->stop_userdata = userdata;
}

SbxTarFilter *sbx_tar_filter_free(SbxTarFilter *f) {
        if (!f)
                return NULL;
        for (size_t i = 0; i < f->symlinks.cap; i++)
                free(f->symlinks.slots[i].name);
        free(f->symlinks.slots);
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

/* Work counted; past each STOP_QUANTUM steps, the caller is asked whether to go on. */
static int tick(SbxTarFilter *f, size_t steps, SbxError *error) {
        f->work += steps;
        if (f->work < f->next_check)
                return 0;
        f->next_check = f->work + STOP_QUANTUM;
        if (f->should_stop && f->should_stop(f->stop_userdata))
                return sbx_error_set(error, SBX_ERROR_TIMED_OUT,
                                     "tar: the copy's time ran out while its archive was checked (after %llu entries)",
                                     (unsigned long long) f->entries);
        return 0;
}

static uint32_t mod31(uint64_t x) {
        x = (x & MERSENNE31) + (x >> 31);
        x = (x & MERSENNE31) + (x >> 31);
        return (uint32_t) (x >= MERSENNE31 ? x - MERSENNE31 : x);
}

static void hash_add(const SbxTarFilter *f, Hash *h, unsigned char c) {
        h->a = mod31((uint64_t) h->a * f->base[0] + c + 1);
        h->b = mod31((uint64_t) h->b * f->base[1] + c + 1);
}

static void hash_add_bytes(const SbxTarFilter *f, Hash *h, const char *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                hash_add(f, h, (unsigned char) p[i]);
}

static uint64_t hash_value(Hash h) {
        return (uint64_t) h.a << 32 | h.b;
}

static size_t slot_of(const NameSet *s, uint64_t hash) {
        return (size_t) ((hash * UINT64_C(0x9e3779b97f4a7c15)) >> 16) & (s->cap - 1);
}

static bool set_contains(const NameSet *s, uint64_t hash, const char *name, size_t len) {
        if (s->cap == 0)
                return false;
        for (size_t i = slot_of(s, hash);; i = (i + 1) & (s->cap - 1)) {
                const Slot *e = &s->slots[i];

                if (!e->name)
                        return false;
                if (e->hash == hash && e->len == len && memcmp(e->name, name, len) == 0)
                        return true;
        }
}

static void set_place(NameSet *s, Slot e) {
        size_t i = slot_of(s, e.hash);

        while (s->slots[i].name)
                i = (i + 1) & (s->cap - 1);
        s->slots[i] = e;
}

static int set_grow(NameSet *s) {
        NameSet bigger = { .cap = MAX(s->cap * 2, (size_t) 64), .n = s->n };

        if (!(bigger.slots = calloc(bigger.cap, sizeof(Slot))))
                return -ENOMEM;
        for (size_t i = 0; i < s->cap; i++)
                if (s->slots[i].name)
                        set_place(&bigger, s->slots[i]);
        free(s->slots);
        *s = bigger;
        return 0;
}

/* Adds name (if not there yet): 1 if added, 0 if it was there. */
static int set_add(NameSet *s, uint64_t hash, const char *name, size_t len) {
        char *copy;
        int r;

        if (set_contains(s, hash, name, len))
                return 0;
        if ((s->n + 1) * 2 > s->cap && (r = set_grow(s)) < 0)
                return r;
        if (!(copy = strndup(name, len)))
                return -ENOMEM;
        set_place(s, (Slot) { .hash = hash, .name = copy, .len = len });
        s->n++;
        return 1;
}

/* Whether name (a normalized path) is a symbolic link made earlier (itself, with
 * itself true) or lies below one: each prefix looked up once, hashed on the way. */
static int on_symlink(SbxTarFilter *f, const char *name, bool itself, bool *ret, SbxError *error) {
        size_t len = strlen(name), from = 0;
        Hash h = {};
        int r;

        for (size_t i = 0; i <= len; i++) {
                if (i < len && name[i] != '/')
                        continue;
                hash_add_bytes(f, &h, name + from, i - from);
                if ((r = tick(f, i - from + 1, error)) < 0)
                        return r;
                if ((i < len || itself) && set_contains(&f->symlinks, hash_value(h), name, i)) {
                        *ret = true;
                        return 0;
                }
                if (i < len)
                        hash_add(f, &h, '/');
                from = i + 1;
        }
        *ret = false;
        return 0;
}

static size_t count_components(const char *p) {
        size_t n = 0;

        for (; *p; p++)
                if (*p != '/' && (p[1] == '/' || p[1] == 0))
                        n++;
        return n;
}

/* One level of a lexical walk: the path's first len bytes, and their hash. */
typedef struct Level {
        size_t len;
        Hash hash;
} Level;

/* A symbolic link at name (normalized, not below a link of the archive) to target
 * stays below the root, read lexically from the link's directory, and does not
 * pass through a link made earlier: lexical ".." after such a link is not where
 * the file system goes. Every prefix of the path walked is checked when it is
 * reached, so each step looks up the path itself only. */
static int link_contained(SbxTarFilter *f, const char *name, const char *target, bool *ret,
                          SbxError *error) {
        size_t nlen = strlen(name), tlen = strlen(target), depth = 0;
        _cleanup_free_ char *path = NULL;
        _cleanup_free_ Level *levels = NULL;
        const char *slash = strrchr(name, '/');
        size_t dir = slash ? (size_t) (slash - name) : 0;      /* the link's directory */
        int r;

        *ret = false;
        if (target[0] == '/' || target[0] == 0)
                return 0;
        path = malloc(nlen + tlen + 2);
        levels = calloc(count_components(name) + count_components(target) + 1, sizeof(Level));
        if (!path || !levels)
                return -ENOMEM;
        memcpy(path, name, dir);
        for (size_t i = 0, from = 0; dir > 0 && i <= dir; i++)
                if (i == dir || name[i] == '/') {
                        Level l = levels[depth];
                        if (depth > 0)
                                hash_add(f, &l.hash, '/');
                        hash_add_bytes(f, &l.hash, name + from, i - from);
                        l.len = i;
                        levels[++depth] = l;
                        from = i + 1;
                }
        for (const char *c = target; *c;) {
                size_t n = strcspn(c, "/");

                if ((r = tick(f, n + 1, error)) < 0)
                        return r;
                if (n == 0 || (n == 1 && c[0] == '.')) {
                        c += n + (c[n] == '/');
                        continue;
                }
                if (depth > 0 && set_contains(&f->symlinks, hash_value(levels[depth].hash), path, levels[depth].len))
                        return 0;
                if (n == 2 && c[0] == '.' && c[1] == '.') {
                        if (depth == 0)
                                return 0;
                        depth--;
                } else {
                        Level l = levels[depth];
                        if (depth > 0) {
                                path[l.len++] = '/';
                                hash_add(f, &l.hash, '/');
                        }
                        memcpy(path + l.len, c, n);
                        hash_add_bytes(f, &l.hash, c, n);
                        l.len += n;
                        levels[++depth] = l;
                }
                c += n + (c[n] == '/');
        }
        *ret = true;
        return 0;
}

static int refuse(SbxError *error, const char *name, const char *why) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: entry '%.200s': %s", name, why);
}

/* A pax record appended to *buf (grown). */
static int pax_record(char **buf, size_t *n, const char *key, const char *value) {
        size_t len = sbx_pax_record(NULL, 0, key, value);
        char *b = realloc(*buf, *n + len + 1);

        if (!b)
                return -ENOMEM;
        *buf = b;
        (void) sbx_pax_record(b + *n, len + 1, key, value);
        *n += len;
        return 0;
}

/* Names longer than a ustar field go out in a pax header of their own. */
static int emit_long_names(const char *name, const char *link, char **out, size_t *size, size_t *alloc) {
        _cleanup_free_ char *recs = NULL;
        uint8_t h[BLOCK], pad[BLOCK] = {};
        size_t n = 0;
        int r;

        if (strlen(name) > SBX_USTAR_NAME_FIELD && (r = pax_record(&recs, &n, "path", name)) < 0)
                return r;
        if (link && strlen(link) > SBX_USTAR_NAME_FIELD && (r = pax_record(&recs, &n, "linkpath", link)) < 0)
                return r;
        if (n == 0)
                return 0;
        sbx_ustar_header(h, &(SbxUstarEntry) { .name = "././@PaxHeader", .type = 'x', .mode = 0644, .size = n });
        if ((r = emit(h, BLOCK, out, size, alloc)) < 0 || (r = emit(recs, n, out, size, alloc)) < 0)
                return r;
        return emit(pad, (BLOCK - n % BLOCK) % BLOCK, out, size, alloc);
}

static int remember_symlink(SbxTarFilter *f, const char *name) {
        size_t len = strlen(name);
        Hash h = {};
        int r;

        hash_add_bytes(f, &h, name, len);
        if ((r = set_add(&f->symlinks, hash_value(h), name, len)) < 0)
                return r;
        f->n_symlinks++;
        f->symlink_bytes += len;
        return 0;
}

static uint64_t padded(uint64_t n) {
        return (n + BLOCK - 1) / BLOCK * BLOCK;
}

/* "tar: entry 'x': <what> <limit> <unit>, the limit of a copy" */
static int refuse_limit(SbxError *error, const char *name, const char *what, uint64_t limit, const char *unit) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "tar: entry '%.200s': %s %llu %s, the limit of a copy",
                             name, what, (unsigned long long) limit, unit);
}

/* The caps of one stream, before any work on the entry. */
static int check_limits(const SbxTarFilter *f, char type, const char *raw, const char *rawlink,
                        SbxError *error) {
        const SbxTarLimits *l = &f->limits;

        if (f->entries >= l->entries)
                return refuse_limit(error, raw, "the archive has more than", l->entries, "entries");
        if (strlen(raw) > l->name)
                return refuse_limit(error, raw, "a name longer than", l->name, "bytes");
        if (type != '1' && type != '2')
                return 0;
        if (strlen(rawlink) > l->target)
                return refuse_limit(error, raw, "a link target longer than", l->target, "bytes");
        if (type == '1')
                return 0;
        if (f->n_symlinks >= l->symlinks)
                return refuse_limit(error, raw, "the archive has more than", l->symlinks, "symbolic links");
        if (f->symlink_bytes + strlen(raw) > l->symlink_bytes)
                return refuse_limit(error, raw, "the archive's symbolic links have more than",
                                    l->symlink_bytes, "bytes of names");
        if (count_components(rawlink) > l->components)
                return refuse_limit(error, raw, "a symbolic link's target of more than",
                                    l->components, "components");
        return 0;
}

/* name (normalized) not below a link of the archive; a link's target contained. */
static int check_links(SbxTarFilter *f, char type, const char *raw, const char *name, const char *rawlink,
                       char **ret_link, SbxError *error) {
        bool yes;
        int r;

        if ((r = on_symlink(f, name, false, &yes, error)) < 0)
                return r;
        if (yes)
                return refuse(error, raw, "lies below a symbolic link of the same archive");
        if (type == '2') {
                if ((r = link_contained(f, name, rawlink, &yes, error)) < 0)
                        return r;
                if (!yes)
                        return refuse(error, raw, "a symbolic link that leads outside the target directory");
        }
        if (type != '1')
                return 0;
        /* A hard link to a symbolic link is that symbolic link again, elsewhere. */
        if (!(*ret_link = normalize(rawlink)))
                yes = true;
        else if ((r = on_symlink(f, *ret_link, true, &yes, error)) < 0)
                return r;
        if (yes)
                return refuse(error, raw, "a hard link to a name outside the target directory, or to a symbolic link");
        return 0;
}

/* Checks one entry and writes its clean header; sets the data phase. */
static int entry(SbxTarFilter *f, char type, char **out, size_t *size, size_t *alloc, SbxError *error) {
        const uint8_t *b = f->block;
        _cleanup_free_ char *raw = NULL, *name = NULL, *rawlink = NULL, *link = NULL;
        uint64_t data = sbx_ustar_number(b + 124, 12);
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
        if ((r = check_limits(f, type, raw, rawlink, error)) < 0)
                return r;
        if (!(name = normalize(raw)))
                return refuse(error, raw, "an absolute name, or one with a '..' component");
        if ((r = check_links(f, type, raw, name, rawlink, &link, error)) < 0)
                return r;
        if (type == '2' && (r = remember_symlink(f, name)) < 0)
                return r;

        {
                const char *target = type == '2' ? rawlink : type == '1' ? link : NULL;
                if ((r = emit_long_names(name, target, out, size, alloc)) < 0)
                        return r;
                sbx_ustar_header(h, &(SbxUstarEntry) {
                        .name = name, .type = regular ? '0' : type,
                        .mode = (unsigned) (sbx_ustar_number(b + 100, 8) & 0777), .size = regular ? data : 0,
                        .mtime_field = b + 136, .uid = f->uid, .gid = f->gid, .link = target });
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

        if (sbx_ustar_is_zero(f->block)) {
                if (++f->zero_blocks == 2) {
                        f->phase = PHASE_END;
                        return emit(f->block, BLOCK, out, size, alloc) < 0 ? -ENOMEM
                                                                         : emit(f->block, BLOCK, out, size, alloc);
                }
                return 0;
        }
        if (f->zero_blocks > 0 || !sbx_ustar_checksum_ok(f->block))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, f->entries == 0 && !f->path && !f->linkpath
                                     ? "tar: not a tar stream (the first header's checksum is wrong)"
                                     : "tar: a corrupt header after %llu entries", (unsigned long long) f->entries);
        if (!strchr("xgLK", type) || type == 0)
                return entry(f, type, out, size, alloc, error);

        data = sbx_ustar_number(f->block + 124, 12);
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
                                if ((r = tick(f, BLOCK, error)) < 0 ||
                                    (r = header(f, out, out_size, out_alloc, error)) < 0)
                                        return r;
                        }
                        break;
                case PHASE_DATA:
                case PHASE_SKIP:
                case PHASE_EXT:
                        n = (size_t) MIN((uint64_t) size, f->remaining);
                        if ((r = tick(f, n, error)) < 0)
                                return r;
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
