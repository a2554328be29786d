/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "observation.h"

#define DEFAULT_MAX_ENTRIES 4096U
#define N_BUCKETS 1024U

/* One container: its last event's generation, and maybe an observation. Records
 * form a list from the oldest to the newest touched, for eviction. */
typedef struct Record {
        char *id;
        uint64_t last_event;            /* generation of its last event, 0 = none seen */
        void *payload;                  /* NULL: no observation */
        SbxObservationTicket ticket;
        uint64_t stored_us;
        struct Record *bucket_next;
        struct Record *older, *newer;
} Record;

struct SbxObservations {
        uint64_t max_age_us;
        size_t max_entries;
        void (*free_payload)(void *);
        uint64_t epoch, generation;
        bool connected;
        /* A ticket older than this may have missed an event of a record evicted since. */
        uint64_t floor;
        Record *buckets[N_BUCKETS];
        Record *oldest, *newest;
        size_t n;
};

static size_t bucket_of(const char *id) {
        uint64_t h = 1469598103934665603ULL;

        for (const unsigned char *p = (const unsigned char *) id; *p; p++)
                h = (h ^ *p) * 1099511628211ULL;
        return (size_t) (h % N_BUCKETS);
}

SbxObservations *sbx_observations_new(uint64_t max_age_us, size_t max_entries, void (*free_payload)(void *)) {
        SbxObservations *t = calloc(1, sizeof(SbxObservations));

        if (!t)
                return NULL;
        t->max_age_us = max_age_us;
        t->max_entries = max_entries > 0 ? max_entries : DEFAULT_MAX_ENTRIES;
        t->free_payload = free_payload;
        t->epoch = 1;
        return t;
}

static void drop_payload(SbxObservations *t, Record *r) {
        if (r->payload && t->free_payload)
                t->free_payload(r->payload);
        r->payload = NULL;
}

static void unlink_order(SbxObservations *t, Record *r) {
        if (r->older)
                r->older->newer = r->newer;
        else
                t->oldest = r->newer;
        if (r->newer)
                r->newer->older = r->older;
        else
                t->newest = r->older;
        r->older = r->newer = NULL;
}

static void link_newest(SbxObservations *t, Record *r) {
        r->older = t->newest;
        r->newer = NULL;
        if (t->newest)
                t->newest->newer = r;
        else
                t->oldest = r;
        t->newest = r;
}

static void remove_record(SbxObservations *t, Record *r) {
        Record **p = &t->buckets[bucket_of(r->id)];

        while (*p != r)
                p = &(*p)->bucket_next;
        *p = r->bucket_next;
        unlink_order(t, r);
        if (r->last_event > t->floor)
                t->floor = r->last_event;
        drop_payload(t, r);
        free(r->id);
        free(r);
        t->n--;
}

static Record *find(const SbxObservations *t, const char *id) {
        for (Record *r = t->buckets[bucket_of(id)]; r; r = r->bucket_next)
                if (streq(r->id, id))
                        return r;
        return NULL;
}

/* The record of id, made (and made the newest) if missing; NULL without memory. */
static Record *touch(SbxObservations *t, const char *id) {
        Record *r = find(t, id);
        size_t b;

        if (r) {
                unlink_order(t, r);
                link_newest(t, r);
                return r;
        }
        if (t->n >= t->max_entries)
                remove_record(t, t->oldest);
        r = calloc(1, sizeof(Record));
        if (!r || !(r->id = strdup(id))) {
                free(r);
                return NULL;
        }
        b = bucket_of(id);
        r->bucket_next = t->buckets[b];
        t->buckets[b] = r;
        link_newest(t, r);
        t->n++;
        return r;
}

static void clear(SbxObservations *t) {
        while (t->oldest)
                remove_record(t, t->oldest);
        t->floor = t->generation;
}

SbxObservations *sbx_observations_free(SbxObservations *t) {
        if (!t)
                return NULL;
        clear(t);
        free(t);
        return NULL;
}

void sbx_observations_set_max_age(SbxObservations *t, uint64_t max_age_us) {
        t->max_age_us = max_age_us;
        if (max_age_us == 0)
                for (Record *r = t->oldest; r; r = r->newer)
                        drop_payload(t, r);
}

void sbx_observations_stream_connected(SbxObservations *t) {
        clear(t);
        t->epoch++;
        t->connected = true;
}

void sbx_observations_stream_lost(SbxObservations *t) {
        clear(t);
        t->epoch++;
        t->connected = false;
}

bool sbx_observations_event(SbxObservations *t, const char *container_id, const char *action) {
        Record *r;

        if (action && strncmp(action, "exec_", 5) == 0)
                return false;
        t->generation++;
        r = touch(t, container_id);
        if (!r) {
                /* Out of memory: forget everything rather than keep what may be stale. */
                clear(t);
                return true;
        }
        r->last_event = t->generation;
        drop_payload(t, r);
        if (action && streq(action, "destroy"))
                remove_record(t, r);            /* raises the floor past this event */
        return true;
}

SbxObservationTicket sbx_observations_ticket(const SbxObservations *t) {
        return (SbxObservationTicket) { .epoch = t->epoch, .generation = t->generation, .connected = t->connected };
}

static bool ticket_current(const SbxObservations *t, SbxObservationTicket k) {
        return t->connected && k.connected && k.epoch == t->epoch && k.generation >= t->floor;
}

/* Observations past their age are freed as new ones come, rather than held until
 * they are asked for or evicted. A put makes its record the newest and an event
 * takes the payload away, so the payloads lie in the order they were stored: the
 * walk from the oldest stops at the first one still young (and after a few records
 * without one, to stay cheap). */
#define SWEEP_SKIP_MAX 16U

static void sweep_expired(SbxObservations *t, uint64_t now_us) {
        unsigned skipped = 0;

        for (Record *r = t->oldest; r && skipped < SWEEP_SKIP_MAX; r = r->newer) {
                if (!r->payload) {
                        skipped++;
                        continue;
                }
                if (now_us >= r->stored_us && now_us - r->stored_us <= t->max_age_us)
                        return;
                drop_payload(t, r);
        }
}

void sbx_observations_sweep(SbxObservations *t, uint64_t now_us) {
        for (Record *r = t->oldest; r; r = r->newer)
                if (r->payload && (t->max_age_us == 0 || now_us < r->stored_us || now_us - r->stored_us > t->max_age_us))
                        drop_payload(t, r);
}

bool sbx_observations_quiet_since(const SbxObservations *t, const char *container_id, SbxObservationTicket ticket) {
        const Record *r;

        if (!ticket_current(t, ticket))
                return false;
        r = find((SbxObservations *) t, container_id);
        return !r || r->last_event <= ticket.generation;
}

bool sbx_observations_put(SbxObservations *t, const char *container_id, SbxObservationTicket ticket,
                          uint64_t now_us, void *payload) {
        Record *r;

        if (t->max_age_us == 0 || !ticket_current(t, ticket) ||
            ((r = find(t, container_id)) && r->last_event > ticket.generation) ||
            !(r = touch(t, container_id))) {
                if (payload && t->free_payload)
                        t->free_payload(payload);
                return false;
        }
        drop_payload(t, r);
        sweep_expired(t, now_us);
        r->payload = payload;
        r->ticket = ticket;
        r->stored_us = now_us;
        return true;
}

void *sbx_observations_get(SbxObservations *t, const char *container_id, uint64_t now_us) {
        Record *r = find(t, container_id);

        if (!r || !r->payload)
                return NULL;
        if (t->max_age_us == 0 || !ticket_current(t, r->ticket) || r->last_event > r->ticket.generation ||
            now_us < r->stored_us || now_us - r->stored_us > t->max_age_us) {
                drop_payload(t, r);
                return NULL;
        }
        return r->payload;
}

void sbx_observations_drop(SbxObservations *t, const char *container_id) {
        Record *r = find(t, container_id);

        if (r)
                drop_payload(t, r);
}

size_t sbx_observations_size(const SbxObservations *t) {
        size_t n = 0;

        for (const Record *r = t->oldest; r; r = r->newer)
                n += r->payload != NULL;
        return n;
}
