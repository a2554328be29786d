/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A small, strict DNS message parser (dns.h). Every length is checked against the
 * message before it is read; nothing is trusted from the wire. */

#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "dns.h"

#define MAX_MESSAGE 65535
#define MAX_POINTERS 32
#define TYPE_OPT 41

static uint16_t get16(const uint8_t *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p) {
        return ((uint32_t) p[0] << 24) | ((uint32_t) p[1] << 16) | ((uint32_t) p[2] << 8) | p[3];
}

static void put16(uint8_t *p, uint16_t v) {
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static bool label_char(uint8_t c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* A name at *off: labels, ending with the root or (compressed) a pointer to an earlier
 * offset. text (may be NULL): the name as lower-case dotted text, only for names made of
 * letters, digits, '-' and '_' (else -EBADMSG). *off is moved past the name as written. */
static int read_name(const uint8_t *buf, size_t size, size_t *off, bool compressed, char text[SBX_DNS_NAME_MAX]) {
        size_t pos = *off, end = 0, wire = 0, t = 0;
        unsigned jumps = 0;
        bool jumped = false;

        for (;;) {
                uint8_t len;

                if (pos >= size)
                        return -EBADMSG;
                len = buf[pos];
                if ((len & 0xc0) == 0xc0) {
                        size_t target;

                        if (!compressed || pos + 1 >= size || ++jumps > MAX_POINTERS)
                                return -EBADMSG;
                        target = ((size_t) (len & 0x3f) << 8) | buf[pos + 1];
                        /* backwards only, and never into the header */
                        if (target >= pos || target < SBX_DNS_HEADER_SIZE)
                                return -EBADMSG;
                        if (!jumped)
                                end = pos + 2;
                        jumped = true;
                        pos = target;
                        continue;
                }
                if (len & 0xc0)
                        return -EBADMSG;        /* extended label types */
                if (len == 0) {
                        if (!jumped)
                                end = pos + 1;
                        break;
                }
                if (pos + 1 + len > size || (wire += 1U + len) > 255)
                        return -EBADMSG;
                if (text) {
                        if (t > 0)
                                text[t++] = '.';
                        for (size_t i = 0; i < len; i++) {
                                uint8_t c = buf[pos + 1 + i];

                                if (!label_char(c))
                                        return -EBADMSG;
                                text[t++] = (char) (c >= 'A' && c <= 'Z' ? c + 32 : c);
                        }
                }
                pos += 1U + len;
        }
        if (text)
                text[t] = 0;
        *off = end;
        return 0;
}

/* One resource record's fixed part after its name: type, class, ttl, rdata's bounds. */
typedef struct Record {
        uint16_t type, class;
        uint32_t ttl;
        size_t rdata, rdlen;
} Record;

static int read_record(const uint8_t *buf, size_t size, size_t *off, Record *ret) {
        size_t pos = *off;
        int r;

        if ((r = read_name(buf, size, &pos, true, NULL)) < 0)
                return r;
        if (pos + 10 > size)
                return -EBADMSG;
        ret->type = get16(buf + pos);
        ret->class = get16(buf + pos + 2);
        ret->ttl = get32(buf + pos + 4);
        ret->rdlen = get16(buf + pos + 8);
        ret->rdata = pos + 10;
        if (ret->rdata + ret->rdlen > size)
                return -EBADMSG;
        *off = ret->rdata + ret->rdlen;
        return 0;
}

int sbx_dns_parse_query(const uint8_t *buf, size_t size, SbxDnsQuestion *ret) {
        SbxDnsQuestion q = {};
        size_t pos = SBX_DNS_HEADER_SIZE;
        uint16_t flags;
        Record opt;

        if (size < SBX_DNS_HEADER_SIZE || size > MAX_MESSAGE)
                return -EBADMSG;
        flags = get16(buf + 2);
        /* QR 0, opcode QUERY, not truncated */
        if ((flags & 0x8000) || (flags & 0x7800) || (flags & 0x0200))
                return -EBADMSG;
        if (get16(buf + 4) != 1 || get16(buf + 6) != 0 || get16(buf + 8) != 0 || get16(buf + 10) > 1)
                return -EBADMSG;
        q.id = get16(buf);
        q.rd = flags & 0x0100;
        if (read_name(buf, size, &pos, false, q.name) < 0 || pos + 4 > size)
                return -EBADMSG;
        q.qtype = get16(buf + pos);
        if (get16(buf + pos + 2) != SBX_DNS_CLASS_IN)
                return -EBADMSG;
        pos += 4;
        q.end = pos;
        if (get16(buf + 10) == 1) {
                /* only EDNS's OPT: the root's name, type 41 */
                if (pos >= size || buf[pos] != 0 || read_record(buf, size, &pos, &opt) < 0 || opt.type != TYPE_OPT)
                        return -EBADMSG;
        }
        if (pos != size)
                return -EBADMSG;
        *ret = q;
        return 0;
}

int sbx_dns_parse_answer(const uint8_t *buf, size_t size, const SbxDnsQuestion *q, SbxDnsAnswer *ret) {
        char name[SBX_DNS_NAME_MAX];
        size_t pos = SBX_DNS_HEADER_SIZE, n;
        uint16_t flags;

        if (size < SBX_DNS_HEADER_SIZE || size > MAX_MESSAGE)
                return -EBADMSG;
        flags = get16(buf + 2);
        if (!(flags & 0x8000) || (flags & 0x7800) || get16(buf) != q->id || get16(buf + 4) != 1)
                return -EBADMSG;
        *ret = (SbxDnsAnswer) { .id = q->id, .rcode = flags & 0xf, .truncated = flags & 0x0200 };
        /* its question is ours */
        if (read_name(buf, size, &pos, true, name) < 0 || strcmp(name, q->name) != 0 || pos + 4 > size ||
            get16(buf + pos) != q->qtype || get16(buf + pos + 2) != SBX_DNS_CLASS_IN)
                return -EBADMSG;
        pos += 4;
        n = get16(buf + 6);
        for (size_t i = 0; i < n; i++) {
                Record rr;
                SbxDnsAddress *a;

                if (read_record(buf, size, &pos, &rr) < 0)
                        return -EBADMSG;
                if (rr.class != SBX_DNS_CLASS_IN || (rr.type != SBX_DNS_TYPE_A && rr.type != SBX_DNS_TYPE_AAAA))
                        continue;
                if (rr.rdlen != (rr.type == SBX_DNS_TYPE_A ? 4U : 16U))
                        return -EBADMSG;
                if (ret->n_addresses >= SBX_DNS_MAX_ADDRESSES)
                        return -EBADMSG;
                a = &ret->addresses[ret->n_addresses++];
                a->family = rr.type == SBX_DNS_TYPE_A ? AF_INET : AF_INET6;
                memcpy(a->addr, buf + rr.rdata, rr.rdlen);
                a->ttl = rr.ttl & 0x80000000U ? 0 : rr.ttl;     /* RFC 2181: a "negative" TTL is 0 */
        }
        ret->answer_end = pos;
        return 0;
}

int sbx_dns_error_reply(const uint8_t *query, const SbxDnsQuestion *q, unsigned rcode, uint8_t *buf,
                        size_t size) {
        if (q->end > size || q->end < SBX_DNS_HEADER_SIZE)
                return -ENOBUFS;
        memcpy(buf, query, q->end);
        /* QR, the query's RD, RA, the rcode; one question, nothing else */
        put16(buf + 2, (uint16_t) (0x8000 | (q->rd ? 0x0100 : 0) | 0x0080 | (rcode & 0xf)));
        put16(buf + 4, 1);
        put16(buf + 6, 0);
        put16(buf + 8, 0);
        put16(buf + 10, 0);
        return (int) q->end;
}

size_t sbx_dns_trim_answer(uint8_t *buf, const SbxDnsAnswer *a, uint16_t client_id) {
        put16(buf, client_id);
        put16(buf + 8, 0);
        put16(buf + 10, 0);
        return a->answer_end;
}

int sbx_dns_make_query(const SbxDnsQuestion *q, uint16_t id, uint8_t *buf, size_t size) {
        size_t pos = SBX_DNS_HEADER_SIZE, len = strlen(q->name);
        const char *s = q->name;

        /* the header, the name (one byte more than its text, and the root), type, class, OPT */
        if (size < SBX_DNS_HEADER_SIZE + len + 2 + 4 + 11)
                return -ENOBUFS;
        memset(buf, 0, SBX_DNS_HEADER_SIZE);
        put16(buf, id);
        put16(buf + 2, 0x0100);
        put16(buf + 4, 1);
        put16(buf + 10, 1);
        while (*s) {
                const char *dot = strchr(s, '.');
                size_t l = dot ? (size_t) (dot - s) : strlen(s);

                if (l == 0 || l > 63)
                        return -EINVAL;
                buf[pos++] = (uint8_t) l;
                memcpy(buf + pos, s, l);
                pos += l;
                s += l + (dot ? 1 : 0);
        }
        buf[pos++] = 0;
        put16(buf + pos, q->qtype);
        put16(buf + pos + 2, SBX_DNS_CLASS_IN);
        pos += 4;
        /* OPT: root, type 41, our UDP size, no extended rcode or flags, no options */
        buf[pos] = 0;
        put16(buf + pos + 1, TYPE_OPT);
        put16(buf + pos + 3, SBX_DNS_MAX_UDP);
        memset(buf + pos + 5, 0, 6);
        return (int) (pos + 11);
}

bool sbx_dns_name_matches(const char *pattern, const char *name) {
        size_t pl, nl;

        if (strncmp(pattern, "*.", 2) != 0)
                return strcasecmp(pattern, name) == 0;
        pattern += 1;           /* ".example.com" */
        pl = strlen(pattern);
        nl = strlen(name);
        return nl > pl && strcasecmp(name + nl - pl, pattern) == 0;
}
