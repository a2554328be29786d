/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "callers.h"
#include "macro.h"

typedef struct CallerUid {
        char *name;
        uid_t uid;
} CallerUid;

static int caller_cmp(const void *a, const void *b) {
        return strcmp(((const CallerUid *) a)->name, ((const CallerUid *) b)->name);
}

static void caller_free(void *p) {
        CallerUid *c = p;

        free(c->name);
        free(c);
}

static void remember(CallerCache *cache, const char *name, uid_t uid) {
        CallerUid *c, **found;

        if (cache->n >= CALLER_CACHE_MAX || !(c = calloc(1, sizeof(CallerUid))))
                return;
        *c = (CallerUid) { .name = strdup(name), .uid = uid };
        if (!c->name || !(found = tsearch(c, &cache->tree, caller_cmp)) || *found != c) {
                caller_free(c);
                return;
        }
        cache->n++;
}

void caller_cache_forget(CallerCache *cache, const char *name) {
        CallerUid key = { .name = (char *) name }, **found = tfind(&key, &cache->tree, caller_cmp);
        CallerUid *c;

        if (!found)
                return;
        c = *found;
        tdelete(c, &cache->tree, caller_cmp);
        caller_free(c);
        cache->n--;
}

typedef struct Walk {
        uid_t a, b;
        void (*f)(const char *name, void *userdata);
        void *userdata;
} Walk;

static void walk_action(const void *node, VISIT which, void *closure) {
        const CallerUid *c = *(const CallerUid *const *) node;
        const Walk *w = closure;

        if ((which == postorder || which == leaf) && (c->uid == 0 || c->uid == w->a || c->uid == w->b))
                w->f(c->name, w->userdata);
}

void caller_cache_foreach(CallerCache *cache, uid_t a, uid_t b, void (*f)(const char *name, void *userdata),
                          void *userdata) {
        twalk_r(cache->tree, walk_action, &(Walk) { .a = a, .b = b, .f = f, .userdata = userdata });
}

void caller_cache_clear(CallerCache *cache) {
        tdestroy(cache->tree, caller_free);
        *cache = (CallerCache) {};
}

int caller_cache_uid(CallerCache *cache, sd_bus_message *m, uid_t *ret) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        const char *sender = sd_bus_message_get_sender(m);
        uint64_t augmented;
        uid_t uid;
        int r;

        if (sender && sender[0] == ':') {
                CallerUid key = { .name = (char *) sender }, **found = tfind(&key, &cache->tree, caller_cmp);

                if (found) {
                        *ret = (*found)->uid;
                        return 0;
                }
        }
        r = sd_bus_query_sender_creds(m, SD_BUS_CREDS_EUID, &creds);
        if (r < 0)
                return r;
        /* Only what the bus itself vouches for: a value read from /proc after the
         * fact could belong to another process by now. */
        augmented = sd_bus_creds_get_augmented_mask(creds);
        if (augmented & SD_BUS_CREDS_EUID)
                return -EPERM;
        r = sd_bus_creds_get_euid(creds, &uid);
        if (r < 0)
                return r;
        if (sender && sender[0] == ':')
                remember(cache, sender, uid);
        *ret = uid;
        return 0;
}
