/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "proto.h"

#define FIELD_HEADER 5U

static uint32_t get32(const uint8_t *p) {
        return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

static void set32(uint8_t *p, uint32_t v) {
        for (size_t i = 0; i < 4; i++)
                p[i] = (uint8_t) (v >> (8 * i));
}

int sbx_proto_frame(const uint8_t *buf, size_t n, SbxProtoFrame *ret) {
        uint32_t size;

        /* A wrong magic is refused as soon as its bytes are there. */
        for (size_t i = 0; i < 3 && i < n; i++)
                if (buf[i] != (uint8_t) "XSB"[i])
                        return -EBADMSG;
        if (n >= 4 && buf[3] != SBX_PROTO_VERSION)
                return -EBADMSG;
        if (n < SBX_PROTO_HEADER_SIZE)
                return 0;
        size = get32(buf + 8);
        if (size > SBX_PROTO_MAX_PAYLOAD)
                return -EMSGSIZE;
        if (n - SBX_PROTO_HEADER_SIZE < size)
                return 0;
        *ret = (SbxProtoFrame) { .type = get32(buf + 4), .payload = buf + SBX_PROTO_HEADER_SIZE, .size = size };
        return (int) (SBX_PROTO_HEADER_SIZE + size);
}

int sbx_proto_next(const uint8_t *payload, size_t size, size_t *pos, SbxProtoField *ret) {
        uint32_t len;

        if (*pos >= size)
                return 0;
        if (size - *pos < FIELD_HEADER)
                return -EBADMSG;
        len = get32(payload + *pos + 1);
        if (len > size - *pos - FIELD_HEADER)
                return -EBADMSG;
        *ret = (SbxProtoField) { .tag = payload[*pos], .data = payload + *pos + FIELD_HEADER, .size = len };
        *pos += FIELD_HEADER + len;
        return 1;
}

int sbx_proto_find(const uint8_t *payload, size_t size, uint8_t tag, SbxProtoField *ret) {
        SbxProtoField f;
        size_t pos = 0;
        int r;

        while ((r = sbx_proto_next(payload, size, &pos, &f)) > 0)
                if (f.tag == tag) {
                        *ret = f;
                        return 1;
                }
        return r;
}

int sbx_proto_u64(const SbxProtoField *f, uint64_t *ret) {
        uint64_t v = 0;

        if (f->size != 8)
                return -EBADMSG;
        for (size_t i = 0; i < 8; i++)
                v |= (uint64_t) f->data[i] << (8 * i);
        *ret = v;
        return 0;
}

int sbx_proto_str(const SbxProtoField *f, char *buf, size_t max) {
        if (f->size > max || memchr(f->data, 0, f->size))
                return -EBADMSG;
        memcpy(buf, f->data, f->size);
        buf[f->size] = 0;
        return 0;
}

/* ---- writing ---------------------------------------------------------------------- */

static uint8_t *room(SbxProtoWriter *w, size_t n) {
        if (w->error)
                return NULL;
        if (n > w->alloc - w->size) {
                size_t a;
                uint8_t *b;

                if (w->fixed || n > SIZE_MAX / 2 - w->size) {
                        w->error = -ENOBUFS;
                        return NULL;
                }
                a = MAX(w->alloc * 2, w->size + n + 4096);
                if (!(b = realloc(w->buf, a))) {
                        w->error = -ENOMEM;
                        return NULL;
                }
                w->buf = b;
                w->alloc = a;
        }
        w->size += n;
        return w->buf + w->size - n;
}

void sbx_proto_begin(SbxProtoWriter *w, uint32_t type) {
        uint8_t *p;

        w->frame_at = w->size;
        if (!(p = room(w, SBX_PROTO_HEADER_SIZE)))
                return;
        memcpy(p, "XSB", 3);
        p[3] = SBX_PROTO_VERSION;
        set32(p + 4, type);
        set32(p + 8, 0);
}

void sbx_proto_put(SbxProtoWriter *w, uint8_t tag, const void *data, size_t size) {
        uint8_t *p;

        if (size > SBX_PROTO_MAX_PAYLOAD) {
                if (!w->error)
                        w->error = -EMSGSIZE;
                return;
        }
        if (!(p = room(w, FIELD_HEADER + size)))
                return;
        p[0] = tag;
        set32(p + 1, (uint32_t) size);
        if (size > 0)
                memcpy(p + FIELD_HEADER, data, size);
}

void sbx_proto_put_u64(SbxProtoWriter *w, uint8_t tag, uint64_t v) {
        uint8_t b[8];

        for (size_t i = 0; i < 8; i++)
                b[i] = (uint8_t) (v >> (8 * i));
        sbx_proto_put(w, tag, b, sizeof b);
}

void sbx_proto_put_str(SbxProtoWriter *w, uint8_t tag, const char *s) {
        sbx_proto_put(w, tag, s, strlen(s));
}

size_t sbx_proto_open_nested(SbxProtoWriter *w, uint8_t tag) {
        size_t at = w->size;

        sbx_proto_put(w, tag, NULL, 0);
        return at;
}

void sbx_proto_close_nested(SbxProtoWriter *w, size_t at) {
        if (!w->error)
                set32(w->buf + at + 1, (uint32_t) (w->size - at - FIELD_HEADER));
}

void sbx_proto_writer_done(SbxProtoWriter *w) {
        if (!w->fixed)
                free(w->buf);
        *w = (SbxProtoWriter) {};
}

int sbx_proto_end(SbxProtoWriter *w) {
        size_t payload;

        if (w->error)
                return w->error;
        payload = w->size - w->frame_at - SBX_PROTO_HEADER_SIZE;
        if (payload > SBX_PROTO_MAX_PAYLOAD)
                return (w->error = -EMSGSIZE);
        set32(w->buf + w->frame_at + 8, (uint32_t) payload);
        return (int) (payload + SBX_PROTO_HEADER_SIZE);
}

/* ---- requests --------------------------------------------------------------------- */

static int why_set(char *why, size_t n, const char *msg, int r) {
        if (why && n > 0)
                snprintf(why, n, "%s", msg);
        return r;
}

/* An optional integer: def when absent, at most max. */
static int opt_u64(const SbxProtoFrame *f, uint8_t tag, uint64_t def, uint64_t max, uint64_t *ret) {
        SbxProtoField field;
        int r = sbx_proto_find(f->payload, f->size, tag, &field);

        if (r < 0)
                return r;
        if (r == 0) {
                *ret = def;
                return 0;
        }
        if (sbx_proto_u64(&field, ret) < 0 || *ret > max)
                return -EINVAL;
        return 0;
}

int sbx_proto_request_parse(const SbxProtoFrame *f, SbxProtoRequest *q, char *why, size_t why_size) {
        SbxProtoField field;
        size_t pos = 0;
        int r;

        *q = (SbxProtoRequest) { .type = f->type };
        while ((r = sbx_proto_next(f->payload, f->size, &pos, &field)) > 0)
                ;
        if (r < 0)
                return why_set(why, why_size, "a malformed request", -EBADMSG);
        if (f->type == SBX_PROTO_HELLO)
                return 0;
        if ((f->type < SBX_PROTO_READ || f->type > SBX_PROTO_OUTPUT) && f->type != SBX_PROTO_STATES)
                return why_set(why, why_size, "an unknown request type", -EOPNOTSUPP);
        if (sbx_proto_find(f->payload, f->size, SBX_TAG_PATH, &field) <= 0 ||
            sbx_proto_str(&field, q->path, SBX_PROTO_MAX_PATH) < 0 || q->path[0] != '/')
                return why_set(why, why_size, "no absolute path without NUL of at most 4096 bytes", -EINVAL);
        switch (f->type) {
        case SBX_PROTO_READ:
                if (opt_u64(f, SBX_TAG_OFFSET, 0, INT64_MAX, &q->offset) < 0 ||
                    opt_u64(f, SBX_TAG_LENGTH, SBX_PROTO_MAX_DATA, UINT64_MAX, &q->length) < 0)
                        return why_set(why, why_size, "a malformed offset or length", -EINVAL);
                q->length = MIN(q->length, (uint64_t) SBX_PROTO_MAX_DATA);
                return 0;
        case SBX_PROTO_WRITE:
                if (opt_u64(f, SBX_TAG_MODE, SBX_PROTO_DEFAULT_MODE, 07777, &q->mode) < 0 ||
                    opt_u64(f, SBX_TAG_FLAGS, 0, SBX_PROTO_WRITE_APPEND | SBX_PROTO_WRITE_MAKE_PARENTS,
                            &q->flags) < 0)
                        return why_set(why, why_size, "a malformed mode or flags", -EINVAL);
                if (sbx_proto_find(f->payload, f->size, SBX_TAG_DATA, &field) <= 0 ||
                    field.size > SBX_PROTO_MAX_DATA)
                        return why_set(why, why_size, "no data, or more than 16 MiB", -EINVAL);
                q->data = field.data;
                q->data_size = field.size;
                return 0;
        case SBX_PROTO_LIST:
                if (opt_u64(f, SBX_TAG_DEPTH, SBX_PROTO_DEFAULT_DEPTH, SBX_PROTO_MAX_DEPTH, &q->depth) < 0 ||
                    opt_u64(f, SBX_TAG_LIMIT, SBX_PROTO_DEFAULT_LIMIT, SBX_PROTO_MAX_LIMIT, &q->limit) < 0 ||
                    q->depth == 0 || q->limit == 0)
                        return why_set(why, why_size, "depth must be 1 to 32 and limit 1 to 100000", -EINVAL);
                return 0;
        case SBX_PROTO_STATES:
                if (opt_u64(f, SBX_TAG_LIMIT, SBX_PROTO_DEFAULT_LIMIT, SBX_PROTO_MAX_LIMIT, &q->limit) < 0 ||
                    q->limit == 0)
                        return why_set(why, why_size, "limit must be 1 to 100000", -EINVAL);
                return 0;
        case SBX_PROTO_OUTPUT:
                if (opt_u64(f, SBX_TAG_OFFSET, 0, UINT64_MAX, &q->offset) < 0 ||
                    opt_u64(f, SBX_TAG_LENGTH, SBX_PROTO_MAX_OUTPUT, SBX_PROTO_MAX_OUTPUT, &q->length) < 0)
                        return why_set(why, why_size, "a malformed cursor, or a length above 4 MiB", -EINVAL);
                return 0;
        default:
                if (opt_u64(f, SBX_TAG_FLAGS, 0, SBX_PROTO_REMOVE_RECURSIVE, &q->flags) < 0)
                        return why_set(why, why_size, "malformed flags", -EINVAL);
                return 0;
        }
}

int sbx_proto_request_write(SbxProtoWriter *w, const SbxProtoRequest *q) {
        sbx_proto_begin(w, q->type);
        if (q->type == SBX_PROTO_HELLO) {
                sbx_proto_put_u64(w, SBX_TAG_VERSION, SBX_PROTO_VERSION);
                return sbx_proto_end(w);
        }
        sbx_proto_put_str(w, SBX_TAG_PATH, q->path);
        switch (q->type) {
        case SBX_PROTO_READ:
        case SBX_PROTO_OUTPUT:
                sbx_proto_put_u64(w, SBX_TAG_OFFSET, q->offset);
                sbx_proto_put_u64(w, SBX_TAG_LENGTH, q->length);
                break;
        case SBX_PROTO_WRITE:
                sbx_proto_put(w, SBX_TAG_DATA, q->data, q->data_size);
                sbx_proto_put_u64(w, SBX_TAG_MODE, q->mode);
                sbx_proto_put_u64(w, SBX_TAG_FLAGS, q->flags);
                break;
        case SBX_PROTO_LIST:
                sbx_proto_put_u64(w, SBX_TAG_DEPTH, q->depth);
                sbx_proto_put_u64(w, SBX_TAG_LIMIT, q->limit);
                break;
        case SBX_PROTO_STATES:
                sbx_proto_put_u64(w, SBX_TAG_LIMIT, q->limit);
                break;
        default:
                sbx_proto_put_u64(w, SBX_TAG_FLAGS, q->flags);
                break;
        }
        return sbx_proto_end(w);
}

/* ---- replies ---------------------------------------------------------------------- */

static int need_u64(const uint8_t *p, size_t n, uint8_t tag, uint64_t *ret) {
        SbxProtoField f;

        if (sbx_proto_find(p, n, tag, &f) <= 0 || sbx_proto_u64(&f, ret) < 0)
                return -EBADMSG;
        return 0;
}

int sbx_proto_error_parse(const SbxProtoFrame *f, SbxProtoError *ret) {
        SbxProtoField m;
        uint64_t err;

        if (f->type != SBX_PROTO_ERROR || need_u64(f->payload, f->size, SBX_TAG_ERRNO, &err) < 0 ||
            err == 0 || err > 4095 || sbx_proto_find(f->payload, f->size, SBX_TAG_MESSAGE, &m) <= 0 ||
            sbx_proto_str(&m, ret->message, sizeof ret->message - 1) < 0)
                return -EBADMSG;
        ret->err = (int) err;
        return 0;
}

int sbx_proto_read_reply_parse(const SbxProtoFrame *f, uint64_t max_data, SbxProtoReadReply *ret) {
        SbxProtoField d;
        uint64_t eof;

        if (f->type != SBX_PROTO_OK || sbx_proto_find(f->payload, f->size, SBX_TAG_DATA, &d) <= 0 ||
            d.size > max_data || need_u64(f->payload, f->size, SBX_TAG_SIZE, &ret->size) < 0 ||
            need_u64(f->payload, f->size, SBX_TAG_MODE, &ret->mode) < 0 ||
            need_u64(f->payload, f->size, SBX_TAG_MTIME, &ret->mtime_us) < 0 ||
            need_u64(f->payload, f->size, SBX_TAG_EOF, &eof) < 0 || eof > 1)
                return -EBADMSG;
        ret->data = d.data;
        ret->data_size = d.size;
        ret->eof = eof;
        return 0;
}

int sbx_proto_reply_u64(const SbxProtoFrame *f, uint8_t tag, uint64_t *ret) {
        return f->type == SBX_PROTO_OK ? need_u64(f->payload, f->size, tag, ret) : -EBADMSG;
}

/* One stream of an OUTPUT reply (s: 0 stdout, 1 stderr). */
static int output_stream(const SbxProtoFrame *f, int s, uint64_t max_data, SbxProtoOutputReply *ret) {
        static const uint8_t tags[2][3] = { { SBX_TAG_POS_OUT, SBX_TAG_COMMIT_OUT, SBX_TAG_STDOUT },
                                            { SBX_TAG_POS_ERR, SBX_TAG_COMMIT_ERR, SBX_TAG_STDERR } };
        SbxProtoField d;

        if (need_u64(f->payload, f->size, tags[s][0], &ret->pos[s]) < 0 ||
            need_u64(f->payload, f->size, tags[s][1], &ret->commit[s]) < 0 ||
            sbx_proto_find(f->payload, f->size, tags[s][2], &d) <= 0 || d.size > max_data ||
            ret->commit[s] > INT64_MAX || ret->pos[s] > ret->commit[s] || d.size > ret->commit[s] - ret->pos[s])
                return -EBADMSG;
        if (max_data > 0 && d.size == 0 && ret->pos[s] < ret->commit[s])
                return -EBADMSG;
        ret->data[s] = d.data;
        ret->size[s] = d.size;
        return 0;
}

int sbx_proto_output_reply_parse(const SbxProtoFrame *f, uint64_t max_data, SbxProtoOutputReply *ret) {
        *ret = (SbxProtoOutputReply) {};
        if (f->type != SBX_PROTO_OK || need_u64(f->payload, f->size, SBX_TAG_STATE, &ret->state) < 0 ||
            ret->state > SBX_RING_STATE_LOST || need_u64(f->payload, f->size, SBX_TAG_STATUS, &ret->status) < 0 ||
            ret->status > 255 || output_stream(f, 0, max_data, ret) < 0 || output_stream(f, 1, max_data, ret) < 0)
                return -EBADMSG;
        return 0;
}

static bool kind_ok(const char *k) {
        static const char *const kinds[] = { "file", "directory", "symlink", "fifo", "socket", "char-device",
                                             "block-device", "unknown" };

        for (size_t i = 0; i < ELEMENTSOF(kinds); i++)
                if (streq(k, kinds[i]))
                        return true;
        return false;
}

/* A relative name without empty, "." or ".." components. */
static bool relative_name_ok(const char *s) {
        const char *c = s;

        if (*s == 0 || *s == '/')
                return false;
        for (;;) {
                size_t l = strcspn(c, "/");

                if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return false;
                if (c[l] == 0)
                        return true;
                c += l + 1;
        }
}

/* The next ENTRY field of an OK reply from *pos: 1 with it, 0 at the end. */
static int next_entry(const SbxProtoFrame *f, size_t *pos, SbxProtoField *e) {
        int r;

        if (f->type != SBX_PROTO_OK)
                return -EBADMSG;
        do {
                r = sbx_proto_next(f->payload, f->size, pos, e);
                if (r <= 0)
                        return r;
        } while (e->tag != SBX_TAG_ENTRY);
        return 1;
}

int sbx_proto_list_next(const SbxProtoFrame *f, size_t *pos, SbxProtoEntry *ret) {
        SbxProtoField e, n, k;
        int r = next_entry(f, pos, &e);

        if (r <= 0)
                return r;
        if (sbx_proto_find(e.data, e.size, SBX_TAG_NAME, &n) <= 0 ||
            sbx_proto_str(&n, ret->name, SBX_PROTO_MAX_PATH) < 0 || !relative_name_ok(ret->name) ||
            sbx_proto_find(e.data, e.size, SBX_TAG_KIND, &k) <= 0 ||
            sbx_proto_str(&k, ret->kind, sizeof ret->kind - 1) < 0 || !kind_ok(ret->kind) ||
            need_u64(e.data, e.size, SBX_TAG_SIZE, &ret->size) < 0 ||
            need_u64(e.data, e.size, SBX_TAG_MTIME, &ret->mtime_us) < 0 ||
            need_u64(e.data, e.size, SBX_TAG_MODE, &ret->mode) < 0 || ret->mode > UINT32_MAX)
                return -EBADMSG;
        return 1;
}

int sbx_proto_states_next(const SbxProtoFrame *f, size_t *pos, SbxProtoState *ret) {
        SbxProtoField e, n;
        uint64_t err = 0;
        int r = next_entry(f, pos, &e);

        if (r <= 0)
                return r;
        *ret = (SbxProtoState) {};
        if (sbx_proto_find(e.data, e.size, SBX_TAG_NAME, &n) <= 0 ||
            sbx_proto_str(&n, ret->name, SBX_PROTO_MAX_PATH) < 0 || !relative_name_ok(ret->name))
                return -EBADMSG;
        if (sbx_proto_find(e.data, e.size, SBX_TAG_ERRNO, &n) > 0) {
                if (sbx_proto_u64(&n, &err) < 0 || err == 0 || err > 4095)
                        return -EBADMSG;
                ret->err = (int) err;
                return 1;
        }
        if (need_u64(e.data, e.size, SBX_TAG_STATE, &ret->state) < 0 || ret->state > SBX_RING_STATE_LOST ||
            need_u64(e.data, e.size, SBX_TAG_STATUS, &ret->status) < 0 || ret->status > 255)
                return -EBADMSG;
        return 1;
}

int sbx_proto_list_truncated(const SbxProtoFrame *f, bool *ret) {
        uint64_t t;

        if (f->type != SBX_PROTO_OK || need_u64(f->payload, f->size, SBX_TAG_TRUNCATED, &t) < 0 || t > 1)
                return -EBADMSG;
        *ret = t;
        return 0;
}
