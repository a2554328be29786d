/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "disk-ledger.h"
#include "macro.h"

/* Containers counted at most: the oldest entry makes room (the channels' bound). */
#define LEDGER_MAX 1024U

struct SbxDiskEntry {
        char *container_id;
        uint64_t used;
};

void sbx_disk_ledger_init(SbxDiskLedger *d) {
        *d = (SbxDiskLedger) {};
        pthread_mutex_init(&d->lock, NULL);
}

void sbx_disk_ledger_done(SbxDiskLedger *d) {
        for (size_t i = 0; i < d->n; i++)
                free(d->entries[i].container_id);
        free(d->entries);
        pthread_mutex_destroy(&d->lock);
}

/* The entry of container_id, made when missing (NULL without memory); lock held. */
static SbxDiskEntry *entry(SbxDiskLedger *d, const char *container_id, bool make) {
        SbxDiskEntry *l;
        char *id;

        for (size_t i = 0; i < d->n; i++)
                if (streq(d->entries[i].container_id, container_id))
                        return &d->entries[i];
        if (!make || !(id = strdup(container_id)))
                return NULL;
        if (d->n == LEDGER_MAX) {
                free(d->entries[0].container_id);
                memmove(d->entries, d->entries + 1, (d->n - 1) * sizeof(SbxDiskEntry));
                d->n--;
        }
        if (!(l = reallocarray(d->entries, d->n + 1, sizeof(SbxDiskEntry)))) {
                free(id);
                return NULL;
        }
        d->entries = l;
        d->entries[d->n] = (SbxDiskEntry) { .container_id = id };
        return &d->entries[d->n++];
}

uint64_t sbx_disk_blocks(uint64_t n) {
        return n > UINT64_MAX - 4095 ? UINT64_MAX : (n + 4095) & ~UINT64_C(4095);
}

int sbx_disk_ledger_reserve(SbxDiskLedger *d, const char *container_id, uint64_t bound, uint64_t bytes,
                            uint64_t *ret_used) {
        SbxDiskEntry *e;
        int r = 0;

        pthread_mutex_lock(&d->lock);
        e = entry(d, container_id, true);
        if (!e)
                r = -ENOMEM;
        else if (e->used > bound || bytes > bound - e->used)
                r = -ENOSPC;
        else
                e->used += bytes;
        if (ret_used)
                *ret_used = e ? e->used : 0;
        pthread_mutex_unlock(&d->lock);
        return r;
}

void sbx_disk_ledger_settle(SbxDiskLedger *d, const char *container_id, uint64_t reserved, uint64_t added,
                            uint64_t released) {
        SbxDiskEntry *e;

        pthread_mutex_lock(&d->lock);
        e = entry(d, container_id, added > 0);
        if (e) {
                uint64_t u = e->used > reserved ? e->used - reserved : 0;

                u = added > UINT64_MAX - u ? UINT64_MAX : u + added;
                e->used = u > released ? u - released : 0;
        }
        pthread_mutex_unlock(&d->lock);
}

uint64_t sbx_disk_ledger_used(SbxDiskLedger *d, const char *container_id) {
        SbxDiskEntry *e;
        uint64_t u;

        pthread_mutex_lock(&d->lock);
        e = entry(d, container_id, false);
        u = e ? e->used : 0;
        pthread_mutex_unlock(&d->lock);
        return u;
}
