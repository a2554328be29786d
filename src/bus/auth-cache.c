/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auth-cache.h"
#include "macro.h"

typedef struct Entry {
        char *sender;
        char *action;
        uint64_t until;
        bool allowed;
} Entry;

struct AuthCache {
        Entry entries[SBX_AUTH_CACHE_MAX];
        unsigned n;
};

AuthCache *auth_cache_new(void) {
        return calloc(1, sizeof(AuthCache));
}

static void drop(AuthCache *c, unsigned i) {
        free(c->entries[i].sender);
        free(c->entries[i].action);
        c->entries[i] = c->entries[--c->n];
}

AuthCache *auth_cache_free(AuthCache *c) {
        if (!c)
                return NULL;
        while (c->n > 0)
                drop(c, 0);
        free(c);
        return NULL;
}

static int find(AuthCache *c, const char *sender, const char *action) {
        for (unsigned i = 0; i < c->n; i++)
                if (streq(c->entries[i].sender, sender) && streq(c->entries[i].action, action))
                        return (int) i;
        return -1;
}

static void expire(AuthCache *c, uint64_t now) {
        for (unsigned i = 0; i < c->n;)
                if (c->entries[i].until <= now)
                        drop(c, i);
                else
                        i++;
}

int auth_cache_answer(AuthCache *c, const char *sender, const char *action, uint64_t now) {
        int i;

        expire(c, now);
        i = find(c, sender, action);
        return i < 0 ? -ENOENT : c->entries[i].allowed;
}

bool auth_cache_allowed(AuthCache *c, const char *sender, const char *action, uint64_t now) {
        return auth_cache_answer(c, sender, action, now) > 0;
}

void auth_cache_remember_answer(AuthCache *c, const char *sender, const char *action, bool allowed, uint64_t now) {
        char *s, *a;
        int i;

        expire(c, now);
        i = find(c, sender, action);
        if (i >= 0) {
                c->entries[i].until = now + SBX_AUTH_CACHE_USEC;
                c->entries[i].allowed = allowed;
                return;
        }
        if (c->n >= SBX_AUTH_CACHE_MAX)
                return;
        s = strdup(sender);
        a = strdup(action);
        if (!s || !a) {
                free(s);
                free(a);
                return;
        }
        c->entries[c->n++] = (Entry) { .sender = s, .action = a, .until = now + SBX_AUTH_CACHE_USEC,
                                       .allowed = allowed };
}

void auth_cache_remember(AuthCache *c, const char *sender, const char *action, uint64_t now) {
        auth_cache_remember_answer(c, sender, action, true, now);
}

void auth_cache_forget(AuthCache *c, const char *sender) {
        for (unsigned i = 0; i < c->n;)
                if (streq(c->entries[i].sender, sender))
                        drop(c, i);
                else
                        i++;
}

void auth_cache_clear(AuthCache *c) {
        while (c->n > 0)
                drop(c, c->n - 1);
}

unsigned auth_cache_size(const AuthCache *c) {
        return c->n;
}
