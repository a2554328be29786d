/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "keyed-lock.h"

/* All bookkeeping happens under the registry's one mutex, which is also the mutex
 * of every entry's condition variable: the waiter count and the eviction decision
 * then change together, so an entry can never be evicted while a thread is about
 * to wait on it. Hold times are a few instructions; the lock bodies themselves
 * (Docker calls) run outside it. */
typedef struct KeyedLockEntry KeyedLockEntry;
struct KeyedLockEntry {
        KeyedLockEntry *next;
        char *key;
        pthread_cond_t cond;
        unsigned waiters;               /* holder + queued */
        uint64_t next_ticket;
        uint64_t now_serving;
};

struct SbxKeyedLockRegistry {
        pthread_mutex_t mutex;
        KeyedLockEntry *entries;        /* bounded by the number of workers: a list will do */
        size_t n_entries;
};

struct SbxKeyedLockHandle {
        SbxKeyedLockRegistry *reg;
        KeyedLockEntry *entry;          /* NULL once released */
};

SbxKeyedLockRegistry *sbx_keyed_lock_registry_new(void) {
        SbxKeyedLockRegistry *reg = calloc(1, sizeof *reg);

        if (!reg)
                return NULL;
        if (pthread_mutex_init(&reg->mutex, NULL) != 0) {
                free(reg);
                return NULL;
        }
        return reg;
}

SbxKeyedLockRegistry *sbx_keyed_lock_registry_free(SbxKeyedLockRegistry *reg) {
        if (!reg)
                return NULL;
        assert(!reg->entries);
        pthread_mutex_destroy(&reg->mutex);
        free(reg);
        return NULL;
}

static KeyedLockEntry *entry_find(SbxKeyedLockRegistry *reg, const char *key) {
        for (KeyedLockEntry *e = reg->entries; e; e = e->next)
                if (streq(e->key, key))
                        return e;
        return NULL;
}

static KeyedLockEntry *entry_install(SbxKeyedLockRegistry *reg, const char *key) {
        KeyedLockEntry *e = calloc(1, sizeof *e);

        if (!e)
                return NULL;
        e->key = strdup(key);
        if (!e->key || pthread_cond_init(&e->cond, NULL) != 0) {
                free(e->key);
                free(e);
                return NULL;
        }
        e->next = reg->entries;
        reg->entries = e;
        reg->n_entries++;
        return e;
}

/* Evicts entry if nobody holds or waits on it, and only if it is the one the map
 * holds for its key: a stale entry never evicts a fresh one. */
static void entry_drop_if_unused(SbxKeyedLockRegistry *reg, KeyedLockEntry *entry) {
        if (entry->waiters > 0)
                return;
        for (KeyedLockEntry **p = &reg->entries; *p; p = &(*p)->next) {
                if (*p != entry)
                        continue;
                *p = entry->next;
                reg->n_entries--;
                pthread_cond_destroy(&entry->cond);
                free(entry->key);
                free(entry);
                return;
        }
}

int sbx_keyed_lock_acquire(SbxKeyedLockRegistry *reg, const char *key, SbxKeyedLockHandle **ret) {
        SbxKeyedLockHandle *h;
        KeyedLockEntry *e;
        uint64_t ticket;

        assert(reg);
        assert(key);
        assert(ret);

        h = calloc(1, sizeof *h);
        if (!h)
                return -ENOMEM;

        pthread_mutex_lock(&reg->mutex);
        e = entry_find(reg, key) ?: entry_install(reg, key);
        if (!e) {
                pthread_mutex_unlock(&reg->mutex);
                free(h);
                return -ENOMEM;
        }
        e->waiters++;
        ticket = e->next_ticket++;
        while (e->now_serving != ticket)
                pthread_cond_wait(&e->cond, &reg->mutex);
        pthread_mutex_unlock(&reg->mutex);

        h->reg = reg;
        h->entry = e;
        *ret = h;
        return 0;
}

int sbx_keyed_lock_release(SbxKeyedLockHandle *h) {
        SbxKeyedLockRegistry *reg;
        KeyedLockEntry *e;

        if (!h || !h->entry)
                return 0;
        reg = h->reg;
        e = TAKE_PTR(h->entry);

        pthread_mutex_lock(&reg->mutex);
        assert(e->waiters > 0);
        e->now_serving++;
        e->waiters--;
        /* Every waiter of this entry wakes and checks its ticket; only the next one proceeds. */
        pthread_cond_broadcast(&e->cond);
        entry_drop_if_unused(reg, e);
        pthread_mutex_unlock(&reg->mutex);
        return 1;
}

SbxKeyedLockHandle *sbx_keyed_lock_handle_free(SbxKeyedLockHandle *h) {
        if (!h)
                return NULL;
        sbx_keyed_lock_release(h);
        free(h);
        return NULL;
}

size_t sbx_keyed_lock_registry_size(SbxKeyedLockRegistry *reg) {
        size_t n;

        pthread_mutex_lock(&reg->mutex);
        n = reg->n_entries;
        pthread_mutex_unlock(&reg->mutex);
        return n;
}

int sbx_keyed_lock_waiters(SbxKeyedLockRegistry *reg, const char *key) {
        KeyedLockEntry *e;
        int n;

        pthread_mutex_lock(&reg->mutex);
        e = entry_find(reg, key);
        n = e ? (int) e->waiters : -1;
        pthread_mutex_unlock(&reg->mutex);
        return n;
}
