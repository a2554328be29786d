/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <pthread.h>
#include <search.h>

#include "verdict-cache.h"

typedef struct Entry {
        char *id;
        char *row_fingerprint;
        SbxSeen *seen;          /* what it was worked out from (referenced: no other's address) */
        SbxJudgement j;
} Entry;

struct SbxVerdictCache {
        pthread_mutex_t lock;
        void *root;             /* tsearch() tree of Entry, by id */
        unsigned n;
};

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const Entry *) a)->id, ((const Entry *) b)->id);
}

static void entry_free(void *p) {
        Entry *e = p;

        free(e->id);
        free(e->row_fingerprint);
        sbx_seen_unref(e->seen);
        free(e->j.image);
        free(e);
}

SbxVerdictCache *sbx_verdict_cache_new(void) {
        SbxVerdictCache *c = calloc(1, sizeof(SbxVerdictCache));

        if (c)
                pthread_mutex_init(&c->lock, NULL);
        return c;
}

SbxVerdictCache *sbx_verdict_cache_free(SbxVerdictCache *c) {
        if (!c)
                return NULL;
        tdestroy(c->root, entry_free);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

/* With the lock held. */
static Entry *find(SbxVerdictCache *c, const char *id) {
        Entry key = { .id = (char *) id }, **e = tfind(&key, &c->root, entry_cmp);

        return e ? *e : NULL;
}

static void forget_locked(SbxVerdictCache *c, const char *id) {
        Entry *e = find(c, id);

        if (!e)
                return;
        tdelete(e, &c->root, entry_cmp);
        entry_free(e);
        c->n--;
}

bool sbx_verdict_cache_get(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           const SbxSeen *seen, SbxJudgement *ret) {
        bool hit = false;
        Entry *e;

        if (!seen)
                return false;
        pthread_mutex_lock(&c->lock);
        e = find(c, container_id);
        if (e && e->seen != seen)
                forget_locked(c, container_id);         /* judged from an observation that no longer stands */
        else if (e && streq(e->row_fingerprint, row_fingerprint)) {
                *ret = e->j;
                ret->image = e->j.image ? strdup(e->j.image) : NULL;
                hit = !e->j.image || ret->image;
        }
        pthread_mutex_unlock(&c->lock);
        return hit;
}

void sbx_verdict_cache_put(SbxVerdictCache *c, const char *container_id, const char *row_fingerprint,
                           SbxSeen *seen, const SbxJudgement *j) {
        Entry *e = seen ? calloc(1, sizeof(Entry)) : NULL;

        if (!e || !(e->id = strdup(container_id)) || !(e->row_fingerprint = strdup(row_fingerprint)) ||
            (j->image && !(e->j.image = strdup(j->image)))) {
                if (e)
                        entry_free(e);
                return;
        }
        e->seen = sbx_seen_ref(seen);
        e->j.verdict = j->verdict;
        e->j.hardened = j->hardened;
        e->j.created_us = j->created_us;
        pthread_mutex_lock(&c->lock);
        forget_locked(c, container_id);
        if (c->n >= SBX_VERDICT_CACHE_MAX) {     /* full: start over */
                tdestroy(c->root, entry_free);
                c->root = NULL;
                c->n = 0;
        }
        if (tsearch(e, &c->root, entry_cmp)) {
                c->n++;
                e = NULL;
        }
        pthread_mutex_unlock(&c->lock);
        if (e)
                entry_free(e);
}

void sbx_verdict_cache_forget(SbxVerdictCache *c, const char *container_id) {
        pthread_mutex_lock(&c->lock);
        forget_locked(c, container_id);
        pthread_mutex_unlock(&c->lock);
}

void sbx_verdict_cache_clear(SbxVerdictCache *c) {
        pthread_mutex_lock(&c->lock);
        tdestroy(c->root, entry_free);
        c->root = NULL;
        c->n = 0;
        pthread_mutex_unlock(&c->lock);
}

unsigned sbx_verdict_cache_size(SbxVerdictCache *c) {
        unsigned n;

        pthread_mutex_lock(&c->lock);
        n = c->n;
        pthread_mutex_unlock(&c->lock);
        return n;
}
