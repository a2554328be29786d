/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Fuzz target: the DNS parser of the names' resolver (src/core/dns.c) over arbitrary
 * bytes — a query as a sandbox would send it, and an answer to a fixed question as an
 * upstream resolver would send it; what parses is used as the resolver uses it (the
 * error reply, the answer trimmed).
 * Built two ways: with libFuzzer (tools/fuzz.sh dns), and with fuzz-driver.c into the
 * unit suite. */

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        SbxDnsQuestion q, fixed = { .id = 0x4242, .qtype = SBX_DNS_TYPE_A, .name = "example.com" };
        uint8_t out[SBX_DNS_MAX_UDP * 4];
        SbxDnsAnswer a;
        uint8_t *copy;

        if (size > 65535)
                return 0;
        if (sbx_dns_parse_query(data, size, &q) == 0) {
                (void) sbx_dns_error_reply(data, &q, SBX_DNS_RCODE_REFUSED, out, sizeof out);
                (void) sbx_dns_make_query(&q, 7, out, sizeof out);
        }
        if (sbx_dns_parse_answer(data, size, &fixed, &a) == 0 && (copy = malloc(size ?: 1))) {
                memcpy(copy, data, size);
                if (sbx_dns_trim_answer(copy, &a, 1) > size)
                        abort();
                free(copy);
        }
        return 0;
}
