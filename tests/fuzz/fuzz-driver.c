/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A deterministic stand-in for libFuzzer's driver, so that the fuzz target runs in
 * the unit suite on every build: valid frames of every kind as seeds, then seeded
 * pseudo-random mutations of them (bytes flipped, lengths set to edge values,
 * frames cut and joined). `fuzz-proto N` runs N mutations (default 200000). */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t state = 0x9e3779b97f4a7c15ULL;

static uint64_t next_random(void) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        return state;
}

#define N_SEEDS 7
static SbxProtoWriter seeds[N_SEEDS];

static void make_seeds(void) {
        static const uint8_t data[] = "some file data";
        size_t at;

        sbx_proto_request_write(&seeds[0], &(SbxProtoRequest) { .type = SBX_PROTO_READ, .path = "/etc/passwd",
                                                                .length = 100 });
        sbx_proto_request_write(&seeds[1], &(SbxProtoRequest) { .type = SBX_PROTO_WRITE, .path = "/tmp/x",
                                                                .data = data, .data_size = sizeof data,
                                                                .mode = 0644 });
        sbx_proto_request_write(&seeds[2], &(SbxProtoRequest) { .type = SBX_PROTO_LIST, .path = "/", .depth = 2,
                                                                .limit = 10 });
        sbx_proto_begin(&seeds[3], SBX_PROTO_OK);
        for (int i = 0; i < 3; i++) {
                at = sbx_proto_open_nested(&seeds[3], SBX_TAG_ENTRY);
                sbx_proto_put_str(&seeds[3], SBX_TAG_NAME, i == 1 ? "dir/name" : "name");
                sbx_proto_put_str(&seeds[3], SBX_TAG_KIND, "file");
                sbx_proto_put_u64(&seeds[3], SBX_TAG_SIZE, 1);
                sbx_proto_put_u64(&seeds[3], SBX_TAG_MTIME, 2);
                sbx_proto_put_u64(&seeds[3], SBX_TAG_MODE, 3);
                sbx_proto_close_nested(&seeds[3], at);
        }
        sbx_proto_put_u64(&seeds[3], SBX_TAG_TRUNCATED, 0);
        sbx_proto_end(&seeds[3]);
        sbx_proto_begin(&seeds[4], SBX_PROTO_OK);
        sbx_proto_put(&seeds[4], SBX_TAG_DATA, data, sizeof data);
        sbx_proto_put_u64(&seeds[4], SBX_TAG_SIZE, 1);
        sbx_proto_put_u64(&seeds[4], SBX_TAG_MODE, 2);
        sbx_proto_put_u64(&seeds[4], SBX_TAG_MTIME, 3);
        sbx_proto_put_u64(&seeds[4], SBX_TAG_EOF, 1);
        sbx_proto_end(&seeds[4]);
        sbx_proto_begin(&seeds[5], SBX_PROTO_ERROR);
        sbx_proto_put_u64(&seeds[5], SBX_TAG_ERRNO, 2);
        sbx_proto_put_str(&seeds[5], SBX_TAG_MESSAGE, "no such file");
        sbx_proto_end(&seeds[5]);
        /* A ring file's header (proto.h): 1 MiB a stream, both streams written. */
        seeds[6] = (SbxProtoWriter) { .buf = calloc(1, SBX_RING_HEADER_SIZE) };
        if (seeds[6].buf) {
                seeds[6].size = SBX_RING_HEADER_SIZE;
                static const uint64_t fields[][2] = { { SBX_RING_CAP_OFFSET, SBX_RING_CAP_DEFAULT },
                                                      { SBX_RING_COMMIT_OFFSET(0), 5000000 },
                                                      { SBX_RING_COMMIT_OFFSET(1), 12 },
                                                      { SBX_RING_HEADER_SIZE - 8, 4000000 | (UINT64_C(3) << 32) } };

                memcpy(seeds[6].buf, SBX_RING_MAGIC, 8);
                for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
                        for (int b = 0; b < 8; b++)
                                seeds[6].buf[fields[i][0] + b] = (uint8_t) (fields[i][1] >> (8 * b));
        }
}

static size_t mutate(uint8_t *buf, size_t n, size_t cap) {
        static const uint32_t edges[] = { 0, 1, 4, 5, 0x7fffffff, 0xffffffff, SBX_PROTO_MAX_PAYLOAD,
                                          SBX_PROTO_MAX_PAYLOAD + 1 };
        unsigned rounds = 1 + next_random() % 8;

        for (unsigned i = 0; i < rounds && n > 0; i++) {
                size_t at = next_random() % n;

                switch (next_random() % 5) {
                case 0:
                        buf[at] ^= (uint8_t) (1u << (next_random() % 8));
                        break;
                case 1:
                        buf[at] = (uint8_t) next_random();
                        break;
                case 2:
                        if (at + 4 <= n) {
                                uint32_t v = edges[next_random() % (sizeof edges / sizeof edges[0])];
                                memcpy(buf + at, &v, 4);
                        }
                        break;
                case 3:
                        n = at;                         /* cut */
                        break;
                default:                                /* another seed appended */
                        {
                                const SbxProtoWriter *s = &seeds[next_random() % N_SEEDS];
                                size_t k = s->size < cap - n ? s->size : cap - n;
                                memcpy(buf + n, s->buf, k);
                                n += k;
                        }
                        break;
                }
        }
        return n;
}

int main(int argc, char **argv) {
        long count = argc > 1 ? atol(argv[1]) : 200000;
        static uint8_t buf[4096];

        make_seeds();
        for (int i = 0; i < N_SEEDS; i++)
                LLVMFuzzerTestOneInput(seeds[i].buf, seeds[i].size);
        for (long i = 0; i < count; i++) {
                const SbxProtoWriter *s = &seeds[next_random() % N_SEEDS];
                size_t n = s->size < sizeof buf ? s->size : sizeof buf;

                memcpy(buf, s->buf, n);
                n = mutate(buf, n, sizeof buf);
                LLVMFuzzerTestOneInput(buf, n);
        }
        for (int i = 0; i < N_SEEDS; i++)
                free(seeds[i].buf);
        printf("fuzz-proto: %ld inputs\n", count + N_SEEDS);
        return 0;
}
