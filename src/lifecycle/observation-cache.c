/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <stdlib.h>

#include "observation-cache.h"
#include "time-util.h"

struct SbxObservationCache {
        pthread_mutex_t lock;
        SbxObservations *table;
        uint64_t max_age_us;            /* the table's, from the policy of the last read */
};

SbxSeen *sbx_seen_new(SbxObserved *o) {
        SbxSeen *s = calloc(1, sizeof(SbxSeen));

        if (!s) {
                sbx_observed_free(o);
                return NULL;
        }
        atomic_init(&s->n_ref, 1);
        s->observed = o;
        return s;
}

SbxSeen *sbx_seen_ref(SbxSeen *s) {
        if (s)
                atomic_fetch_add(&s->n_ref, 1);
        return s;
}

SbxSeen *sbx_seen_unref(SbxSeen *s) {
        if (!s || atomic_fetch_sub(&s->n_ref, 1) > 1)
                return NULL;
        sbx_observed_free(s->observed);
        sbx_mount_table_done(&s->report);
        free(s);
        return NULL;
}

static void unref_payload(void *p) {
        sbx_seen_unref(p);
}

SbxObservationCache *sbx_observation_cache_new(void) {
        SbxObservationCache *c = calloc(1, sizeof(SbxObservationCache));

        if (!c)
                return NULL;
        /* max age 0 until a read brings the policy's */
        c->table = sbx_observations_new(0, 0, unref_payload);
        if (!c->table) {
                free(c);
                return NULL;
        }
        pthread_mutex_init(&c->lock, NULL);
        return c;
}

SbxObservationCache *sbx_observation_cache_free(SbxObservationCache *c) {
        if (!c)
                return NULL;
        sbx_observations_free(c->table);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

/* With the lock held. */
static void set_max_age(SbxObservationCache *c, uint64_t max_age_us) {
        if (c->max_age_us == max_age_us)
                return;
        c->max_age_us = max_age_us;
        sbx_observations_set_max_age(c->table, max_age_us);
}

void sbx_observation_cache_connected(SbxObservationCache *c) {
        pthread_mutex_lock(&c->lock);
        sbx_observations_stream_connected(c->table);
        pthread_mutex_unlock(&c->lock);
}

void sbx_observation_cache_lost(SbxObservationCache *c) {
        pthread_mutex_lock(&c->lock);
        sbx_observations_stream_lost(c->table);
        pthread_mutex_unlock(&c->lock);
}

void sbx_observation_cache_event(SbxObservationCache *c, const char *container_id, const char *action) {
        pthread_mutex_lock(&c->lock);
        (void) sbx_observations_event(c->table, container_id, action);
        pthread_mutex_unlock(&c->lock);
}

void sbx_observation_cache_changed(SbxObservationCache *c, const char *container_id) {
        if (c && container_id)
                sbx_observation_cache_event(c, container_id, "changed");
}

void sbx_observation_cache_drop(SbxObservationCache *c, const char *container_id) {
        pthread_mutex_lock(&c->lock);
        sbx_observations_drop(c->table, container_id);
        pthread_mutex_unlock(&c->lock);
}

SbxObservationTicket sbx_observation_cache_ticket(SbxObservationCache *c) {
        SbxObservationTicket k;

        pthread_mutex_lock(&c->lock);
        k = sbx_observations_ticket(c->table);
        pthread_mutex_unlock(&c->lock);
        return k;
}

bool sbx_observation_cache_quiet_since(SbxObservationCache *c, const char *container_id, SbxObservationTicket ticket) {
        bool quiet;

        pthread_mutex_lock(&c->lock);
        quiet = sbx_observations_quiet_since(c->table, container_id, ticket);
        pthread_mutex_unlock(&c->lock);
        return quiet;
}

void sbx_observation_cache_put(SbxObservationCache *c, const char *container_id, SbxObservationTicket ticket,
                               uint64_t max_age_us, SbxSeen *seen) {
        uint64_t now = sbx_now_monotonic_us();

        pthread_mutex_lock(&c->lock);
        set_max_age(c, max_age_us);
        (void) sbx_observations_put(c->table, container_id, ticket, now, sbx_seen_ref(seen));
        pthread_mutex_unlock(&c->lock);
}

SbxSeen *sbx_observation_cache_get(SbxObservationCache *c, const char *container_id, uint64_t max_age_us) {
        uint64_t now = sbx_now_monotonic_us();
        SbxSeen *s;

        pthread_mutex_lock(&c->lock);
        set_max_age(c, max_age_us);
        s = sbx_seen_ref(sbx_observations_get(c->table, container_id, now));
        pthread_mutex_unlock(&c->lock);
        return s;
}

bool sbx_observation_cache_holds(SbxObservationCache *c, const char *container_id, const SbxSeen *seen,
                                 uint64_t max_age_us) {
        uint64_t now = sbx_now_monotonic_us();
        bool holds;

        if (!c || !seen || !container_id || max_age_us == 0)
                return false;
        pthread_mutex_lock(&c->lock);
        set_max_age(c, max_age_us);
        /* seen is referenced by the caller: its address is no other's meanwhile */
        holds = sbx_observations_get(c->table, container_id, now) == seen;
        pthread_mutex_unlock(&c->lock);
        return holds;
}

bool sbx_observed_checks_host(const SbxObserved *o) {
        return sbx_state_is_up(o->state) && o->n_volumes > 0 && o->init_volume && o->id;
}

void sbx_observation_cache_sweep(SbxObservationCache *c) {
        uint64_t now = sbx_now_monotonic_us();

        if (!c)
                return;
        pthread_mutex_lock(&c->lock);
        sbx_observations_sweep(c->table, now);
        pthread_mutex_unlock(&c->lock);
}

size_t sbx_observation_cache_size(SbxObservationCache *c) {
        size_t n;

        pthread_mutex_lock(&c->lock);
        n = sbx_observations_size(c->table);
        pthread_mutex_unlock(&c->lock);
        return n;
}
