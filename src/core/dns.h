/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A small, strict DNS message parser (docs/security.md, "Egress", names): what the
 * service's resolver for a sandbox reads from the sandbox (a query: hostile) and from
 * the policy's upstream resolvers (an answer: checked as strictly). Only what that
 * resolver needs: one question of class IN; the A and AAAA records of an answer's
 * answer section with their TTLs. Compression pointers point backwards only, names are
 * at most 255 bytes, labels 63; anything else is refused. Pure. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

#define SBX_DNS_HEADER_SIZE 12
#define SBX_DNS_MAX_UDP 1232           /* the EDNS size the resolver offers and answers within */
#define SBX_DNS_NAME_MAX 254           /* dotted text, without the root's dot, and the NUL */
#define SBX_DNS_MAX_ADDRESSES 32

enum {
        SBX_DNS_TYPE_A = 1,
        SBX_DNS_TYPE_CNAME = 5,
        SBX_DNS_TYPE_AAAA = 28,
        SBX_DNS_CLASS_IN = 1,
        SBX_DNS_RCODE_NOERROR = 0,
        SBX_DNS_RCODE_FORMERR = 1,
        SBX_DNS_RCODE_SERVFAIL = 2,
        SBX_DNS_RCODE_NXDOMAIN = 3,
        SBX_DNS_RCODE_REFUSED = 5,
};

typedef struct SbxDnsQuestion {
        uint16_t id;
        bool rd;                        /* recursion desired */
        char name[SBX_DNS_NAME_MAX];    /* lower case, dotted, no trailing dot ("" for the root) */
        uint16_t qtype;
        size_t end;                     /* the offset just past the question */
} SbxDnsQuestion;

typedef struct SbxDnsAddress {
        int family;                     /* AF_INET or AF_INET6 */
        uint8_t addr[16];
        uint32_t ttl;
} SbxDnsAddress;

typedef struct SbxDnsAnswer {
        uint16_t id;
        unsigned rcode;
        bool truncated;
        SbxDnsAddress addresses[SBX_DNS_MAX_ADDRESSES];
        size_t n_addresses;
        size_t answer_end;              /* the offset just past the answer section */
} SbxDnsAnswer;

/* A standard query (QR 0, opcode 0) with exactly one question of class IN, no answer
 * or authority records, at most one additional (EDNS). -EBADMSG otherwise. */
int sbx_dns_parse_query(const uint8_t *buf, size_t size, SbxDnsQuestion *ret);

/* A response to q (its id, its question again, QR 1): its rcode, and the A/AAAA records
 * of its answer section (any owner: a CNAME chain's end). -EBADMSG when it is not one. */
int sbx_dns_parse_answer(const uint8_t *buf, size_t size, const SbxDnsQuestion *q, SbxDnsAnswer *ret);

/* A reply carrying only q's question and rcode, into buf (at least SBX_DNS_HEADER_SIZE +
 * q's question). Its size, or -ENOBUFS. */
int sbx_dns_error_reply(const uint8_t *query, const SbxDnsQuestion *q, unsigned rcode, uint8_t *buf,
                        size_t size);

/* An upstream answer a made the sandbox's: the client's id, the answer section only
 * (authority and additional dropped), in place; the new size. */
size_t sbx_dns_trim_answer(uint8_t *buf, const SbxDnsAnswer *a, uint16_t client_id);

/* A query for q's name and type with id, recursion desired, into buf; its size or -ENOBUFS. */
int sbx_dns_make_query(const SbxDnsQuestion *q, uint16_t id, uint8_t *buf, size_t size);

/* Whether name (lower case, dotted) is pattern's: the same name (case-insensitive),
 * or for "*.example.com" any name below example.com (not example.com itself). */
bool sbx_dns_name_matches(const char *pattern, const char *name) _pure_;
