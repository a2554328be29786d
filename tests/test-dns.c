/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <netinet/in.h>
#include <sys/socket.h>

#include "dns.h"

/* A query for name/type as a stub resolver sends it (with EDNS). */
static size_t query_of(const char *name, uint16_t type, uint16_t id, uint8_t *buf) {
        SbxDnsQuestion q = { .qtype = type };
        int n;

        snprintf(q.name, sizeof q.name, "%s", name);
        n = sbx_dns_make_query(&q, id, buf, 512);
        ck_assert_int_gt(n, 0);
        return (size_t) n;
}

START_TEST(test_query) {
        uint8_t buf[512];
        size_t n = query_of("Pypi.ORG", SBX_DNS_TYPE_A, 0x1234, buf);
        SbxDnsQuestion q;

        ck_assert_int_eq(sbx_dns_parse_query(buf, n, &q), 0);
        ck_assert_str_eq(q.name, "pypi.org");
        ck_assert_uint_eq(q.id, 0x1234);
        ck_assert_uint_eq(q.qtype, SBX_DNS_TYPE_A);
        ck_assert(q.rd);
        /* without the OPT record too */
        buf[11] = 0;
        ck_assert_int_eq(sbx_dns_parse_query(buf, q.end, &q), 0);
        /* every truncation is refused */
        for (size_t i = 0; i < q.end; i++)
                ck_assert_int_lt(sbx_dns_parse_query(buf, i, &q), 0);
        /* trailing bytes */
        ck_assert_int_lt(sbx_dns_parse_query(buf, q.end + 1, &q), 0);
}
END_TEST

START_TEST(test_query_refused) {
        uint8_t buf[512], b2[512];
        size_t n = query_of("example.com", SBX_DNS_TYPE_A, 7, buf);
        SbxDnsQuestion q;

        /* a response, another opcode, two questions, an answer record, class CH */
        memcpy(b2, buf, n), b2[2] |= 0x80;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        memcpy(b2, buf, n), b2[2] |= 0x10;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        memcpy(b2, buf, n), b2[5] = 2;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        memcpy(b2, buf, n), b2[7] = 1;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        memcpy(b2, buf, n), b2[12 + 13 + 3] = 3;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        /* a compression pointer in a question (to itself) */
        memcpy(b2, buf, n), b2[12] = 0xc0, b2[13] = 12;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        /* a label with a dot or a NUL in it would read as another name: refused */
        memcpy(b2, buf, n), b2[14] = '.';
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        memcpy(b2, buf, n), b2[14] = 0;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        /* a label length running past the end */
        memcpy(b2, buf, n), b2[12] = 63;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
        /* the additional record is not OPT */
        memcpy(b2, buf, n), b2[n - 10] = 1;
        ck_assert_int_lt(sbx_dns_parse_query(b2, n, &q), 0);
}
END_TEST

START_TEST(test_long_names) {
        uint8_t buf[600];
        SbxDnsQuestion q;
        size_t pos = 12;

        /* 5 labels of 63: 320 bytes, more than 255 */
        memset(buf, 0, sizeof buf);
        buf[5] = 1;
        for (int i = 0; i < 5; i++) {
                buf[pos++] = 63;
                memset(buf + pos, 'a', 63);
                pos += 63;
        }
        buf[pos++] = 0;
        buf[pos + 1] = 1, buf[pos + 3] = 1;
        ck_assert_int_lt(sbx_dns_parse_query(buf, pos + 4, &q), 0);
        /* 3 of 63 and one of 61: 253 as text, 255 on the wire: the longest */
        buf[12 + 3 * 64] = 61;
        buf[12 + 3 * 64 + 62] = 0;
        buf[12 + 3 * 64 + 63] = 0, buf[12 + 3 * 64 + 64] = 1;
        buf[12 + 3 * 64 + 65] = 0, buf[12 + 3 * 64 + 66] = 1;
        ck_assert_int_eq(sbx_dns_parse_query(buf, 12 + 3 * 64 + 67, &q), 0);
        ck_assert_uint_eq(strlen(q.name), 253);
}
END_TEST

/* An answer to buf's query: a CNAME, then A and AAAA records of its target, with pointers. */
static size_t answer_of(uint8_t *buf, size_t n, uint32_t ttl) {
        static const uint8_t cname[] = { 0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 6, 3, 'c', 'd', 'n', 0xc0, 12 };
        uint8_t a[] = { 0xc0, 12 + 17 + 12 + 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 203, 0, 113, 10 };
        uint8_t aaaa[] = { 0xc0, 0, 0, 28, 0, 1, 0, 0, 0, 0, 0, 16, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                           0, 0, 0, 0, 0, 0, 0, 1 };
        size_t qend = n - 11;           /* without OPT */
        size_t pos = qend;

        buf[2] = 0x81, buf[3] = 0x80;
        buf[7] = 3, buf[11] = 1;        /* three answers, the OPT left as the additional */
        memmove(buf + qend + sizeof cname + sizeof a + sizeof aaaa, buf + qend, 11);
        memcpy(buf + pos, cname, sizeof cname);
        a[1] = (uint8_t) (qend + 12);   /* the CNAME's target "cdn.<name>" */
        aaaa[1] = a[1];
        a[6] = aaaa[6] = (uint8_t) (ttl >> 24), a[7] = aaaa[7] = (uint8_t) (ttl >> 16);
        a[8] = aaaa[8] = (uint8_t) (ttl >> 8), a[9] = aaaa[9] = (uint8_t) ttl;
        pos += sizeof cname;
        memcpy(buf + pos, a, sizeof a);
        pos += sizeof a;
        memcpy(buf + pos, aaaa, sizeof aaaa);
        return pos + sizeof aaaa + 11;
}

START_TEST(test_answer) {
        uint8_t buf[512];
        size_t n = query_of("example.com", SBX_DNS_TYPE_A, 0x4242, buf), m;
        SbxDnsQuestion q;
        SbxDnsAnswer a;

        ck_assert_int_eq(sbx_dns_parse_query(buf, n, &q), 0);
        m = answer_of(buf, n, 300);
        ck_assert_int_eq(sbx_dns_parse_answer(buf, m, &q, &a), 0);
        ck_assert_uint_eq(a.rcode, 0);
        ck_assert_uint_eq(a.n_addresses, 2);
        ck_assert_int_eq(a.addresses[0].family, AF_INET);
        ck_assert_uint_eq(a.addresses[0].addr[0], 203);
        ck_assert_uint_eq(a.addresses[0].ttl, 300);
        ck_assert_int_eq(a.addresses[1].family, AF_INET6);
        ck_assert_uint_eq(a.addresses[1].addr[1], 0x01);
        ck_assert_uint_eq(a.answer_end, m - 11);
        /* the sandbox gets the answer section only, under its own id */
        ck_assert_uint_eq(sbx_dns_trim_answer(buf, &a, 0x0101), m - 11);
        ck_assert_uint_eq(buf[0], 1);
        ck_assert_uint_eq(buf[11], 0);
        /* every truncation is refused */
        for (size_t i = 0; i < m - 11; i++)
                ck_assert_int_lt(sbx_dns_parse_answer(buf, i, &q, &a), 0);
        /* a "negative" TTL is 0 */
        n = query_of("example.com", SBX_DNS_TYPE_A, 0x4242, buf);
        m = answer_of(buf, n, 0x80000001U);
        ck_assert_int_eq(sbx_dns_parse_answer(buf, m, &q, &a), 0);
        ck_assert_uint_eq(a.addresses[0].ttl, 0);
}
END_TEST

START_TEST(test_answer_refused) {
        uint8_t buf[512], b2[512];
        size_t n = query_of("example.com", SBX_DNS_TYPE_A, 0x4242, buf), m;
        SbxDnsQuestion q, other;
        SbxDnsAnswer a;

        ck_assert_int_eq(sbx_dns_parse_query(buf, n, &q), 0);
        m = answer_of(buf, n, 60);
        /* another id, not a response, another question */
        memcpy(b2, buf, m), b2[1] ^= 1;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        memcpy(b2, buf, m), b2[2] &= 0x7f;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        other = q;
        strcpy(other.name, "example.org");
        ck_assert_int_lt(sbx_dns_parse_answer(buf, m, &other, &a), 0);
        other = q;
        other.qtype = SBX_DNS_TYPE_AAAA;
        ck_assert_int_lt(sbx_dns_parse_answer(buf, m, &other, &a), 0);
        /* a pointer forwards, a pointer into the header, a pointer loop */
        memcpy(b2, buf, m), b2[q.end + 1] = (uint8_t) (q.end + 20);
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        memcpy(b2, buf, m), b2[q.end + 1] = 2;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        memcpy(b2, buf, m), b2[q.end] = 0xc0, b2[q.end + 1] = (uint8_t) q.end;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        /* an A record of 5 bytes */
        memcpy(b2, buf, m), b2[q.end + 18 + 11] = 5;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m, &q, &a), 0);
        /* more answers claimed than there are */
        memcpy(b2, buf, m), b2[7] = 9;
        ck_assert_int_lt(sbx_dns_parse_answer(b2, m - 11, &q, &a), 0);
}
END_TEST

START_TEST(test_error_reply) {
        uint8_t buf[512], out[512];
        size_t n = query_of("leak.example.net", 16, 99, buf);
        SbxDnsQuestion q;
        int k;

        ck_assert_int_eq(sbx_dns_parse_query(buf, n, &q), 0);
        k = sbx_dns_error_reply(buf, &q, SBX_DNS_RCODE_REFUSED, out, sizeof out);
        ck_assert_int_eq(k, (int) q.end);
        ck_assert_uint_eq(out[0], 0);
        ck_assert_uint_eq(out[1], 99);
        ck_assert_uint_eq(out[3] & 0xf, SBX_DNS_RCODE_REFUSED);
        ck_assert(out[2] & 0x80);
        ck_assert_uint_eq(out[11], 0);
        ck_assert_int_lt(sbx_dns_error_reply(buf, &q, SBX_DNS_RCODE_REFUSED, out, 8), 0);
}
END_TEST

START_TEST(test_names) {
        ck_assert(sbx_dns_name_matches("pypi.org", "pypi.org"));
        ck_assert(sbx_dns_name_matches("PyPI.org", "pypi.org"));
        ck_assert(!sbx_dns_name_matches("pypi.org", "files.pypi.org"));
        ck_assert(sbx_dns_name_matches("*.github.com", "api.github.com"));
        ck_assert(sbx_dns_name_matches("*.github.com", "a.b.github.com"));
        ck_assert(!sbx_dns_name_matches("*.github.com", "github.com"));
        ck_assert(!sbx_dns_name_matches("*.github.com", "evilgithub.com"));
        ck_assert(!sbx_dns_name_matches("*.github.com", "github.com.evil.org"));
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("dns");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_query);
        tcase_add_test(tc, test_query_refused);
        tcase_add_test(tc, test_long_names);
        tcase_add_test(tc, test_answer);
        tcase_add_test(tc, test_answer_refused);
        tcase_add_test(tc, test_error_reply);
        tcase_add_test(tc, test_names);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
