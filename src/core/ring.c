/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "ring.h"

/* Parts beyond the first 2^32 positions cycle through 1 … 2^32 - 1. */
#define PART_CYCLE (UINT64_C(0xFFFFFFFF))

static uint64_t ring_u64(const uint8_t *p) {
        uint64_t v = 0;

        for (int i = 7; i >= 0; i--)
                v = (v << 8) | p[i];
        return v;
}

int sbx_ring_parse_header(const uint8_t *buf, size_t n, SbxRingHeader *ret) {
        uint64_t state;

        if (n >= 8 && memcmp(buf, SBX_RING_MAGIC_V1, 8) == 0)
                return -EPROTONOSUPPORT;
        if (n < SBX_RING_HEADER_SIZE || memcmp(buf, SBX_RING_MAGIC, 8) != 0)
                return -EBADMSG;
        state = ring_u64(buf + SBX_RING_STATE_OFFSET);
        if (state > SBX_RING_EXITED)
                return -EBADMSG;
        *ret = (SbxRingHeader) {
                .cap = ring_u64(buf + SBX_RING_CAP_OFFSET),
                .commit = { ring_u64(buf + SBX_RING_COMMIT_OFFSET(0)), ring_u64(buf + SBX_RING_COMMIT_OFFSET(1)) },
                .status = ring_u64(buf + SBX_RING_STATUS_OFFSET),
                .pid = ring_u64(buf + SBX_RING_PID_OFFSET),
                .start_time = ring_u64(buf + SBX_RING_START_TIME_OFFSET),
                .exited = state == SBX_RING_EXITED,
        };
        if (ret->cap < SBX_RING_CAP_MIN || ret->cap > SBX_RING_CAP_MAX || ret->status > 255 ||
            ret->commit[0] > INT64_MAX || ret->commit[1] > INT64_MAX)
                return -EBADMSG;
        return 0;
}

int sbx_ring_read_header(const SbxRingSource *src, SbxRingHeader *ret) {
        uint8_t buf[SBX_RING_HEADER_SIZE];
        int r = src->pread(src->userdata, 0, buf, sizeof buf);

        return r < 0 ? r : sbx_ring_parse_header(buf, sizeof buf, ret);
}

static uint64_t part(uint64_t pos) {
        return pos == 0 ? 0 : 1 + (pos - 1) % PART_CYCLE;
}

uint64_t sbx_ring_cursor(const uint64_t pos[2]) {
        return part(pos[0]) | (part(pos[1]) << 32);
}

/* A part k (of some position p) n bytes on: part(p + n), whichever p had it. */
static uint64_t part_advance(uint64_t k, uint64_t n) {
        return n == 0 ? k : k == 0 ? part(n) : 1 + (k - 1 + n % PART_CYCLE) % PART_CYCLE;
}

uint64_t sbx_ring_cursor_advance(uint64_t cursor, const uint64_t n[2]) {
        return part_advance(cursor & UINT32_MAX, n[0]) | (part_advance(cursor >> 32, n[1]) << 32);
}

/* The newest position <= commit whose part is k. */
static int position(uint64_t k, uint64_t commit, uint64_t *ret) {
        uint64_t r, back;

        if (k == 0) {
                *ret = 0;
                return 0;
        }
        if (commit == 0)
                return -ERANGE;
        r = (commit - 1) % PART_CYCLE;
        back = r >= k - 1 ? r - (k - 1) : r + PART_CYCLE - (k - 1);
        if (back > commit - 1)
                return -ERANGE;
        *ret = commit - back;
        return 0;
}

int sbx_ring_cursor_positions(uint64_t cursor, const uint64_t commit[2], uint64_t ret[2]) {
        uint64_t p[2];

        if (position(cursor & UINT32_MAX, commit[0], &p[0]) < 0 || position(cursor >> 32, commit[1], &p[1]) < 0)
                return -ERANGE;
        ret[0] = p[0];
        ret[1] = p[1];
        return 0;
}

/* n bytes of the ring at base, from stream position pos on, unwrapped. */
static int read_ring(const SbxRingSource *src, uint64_t base, uint64_t cap, uint64_t pos, size_t n, uint8_t *buf) {
        uint64_t at = pos % cap;
        size_t first = (size_t) MIN((uint64_t) n, cap - at);
        int r = first > 0 ? src->pread(src->userdata, base + at, buf, first) : 0;

        if (r < 0 || n == first)
                return r;
        return src->pread(src->userdata, base, buf + first, n - first);
}

static int read_intent(const SbxRingSource *src, const SbxRingHeader *h, int s, uint64_t *ret) {
        uint8_t b[8];
        int r = src->pread(src->userdata, SBX_RING_INTENT_OFFSET(h->cap, s), b, sizeof b);

        if (r >= 0)
                *ret = ring_u64(b);
        return r;
}

int sbx_ring_read_stream(const SbxRingSource *src, SbxRingHeader *h, int s, uint64_t *pos, uint8_t *buf,
                         size_t max, size_t *ret_n) {
        for (unsigned attempt = 0; attempt < SBX_RING_READ_TRIES; attempt++) {
                uint64_t commit = h->commit[s], oldest = commit > h->cap ? commit - h->cap : 0;
                uint64_t start = MAX(*pos, oldest), len, intent, valid;
                int r;

                if (start > commit)
                        return -ERANGE;
                len = MIN(commit - start, (uint64_t) max);
                if (attempt > 0) {
                        /* Overwritten while read: the newest bytes, fewer each time. */
                        len = MIN(len, MAX((uint64_t) max >> attempt, (uint64_t) 1));
                        start = commit - len;
                }
                if (len == 0) {
                        *pos = start;
                        *ret_n = 0;
                        return 0;
                }
                if ((r = read_ring(src, SBX_RING_DATA_OFFSET(h->cap, s), h->cap, start, (size_t) len, buf)) < 0 ||
                    (r = read_intent(src, h, s, &intent)) < 0)
                        return r;
                /* A write declares its end (intent) before it overwrites: what lies
                 * below intent - cap was not touched by any write begun before now. */
                valid = intent > h->cap ? intent - h->cap : 0;
                if (valid < start + len) {
                        uint64_t drop = valid > start ? valid - start : 0;

                        if (drop > 0)
                                memmove(buf, buf + drop, (size_t) (len - drop));
                        *pos = start + drop;
                        *ret_n = (size_t) (len - drop);
                        return 0;
                }
                if ((r = sbx_ring_read_header(src, h)) < 0)
                        return r;
        }
        return -EAGAIN;
}
