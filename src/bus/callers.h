/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Callers' uids by unique name (main thread only), owned by the Manager. On
 * dbus-daemon the credentials are not in the message: asking for them is a
 * synchronous round trip to the bus, which held up the main loop on every call. The
 * bus took the uid from the socket when the connection was made, so it cannot change
 * while the connection lasts, and a unique name is never given out again: it is asked
 * once per connection and forgotten when the connection goes (caller_cache_forget(),
 * from NameOwnerChanged). Bounded: past CALLER_CACHE_MAX connections the bus is asked
 * every time. The signals' recipients are the connections known here (bus-signal.h). */

#include <systemd/sd-bus.h>

#define CALLER_CACHE_MAX 4096U

typedef struct CallerCache {
        void *tree;                     /* tsearch() tree of unique name → uid */
        unsigned n;
} CallerCache;

/* The caller's uid from non-augmented bus credentials, remembered per connection. */
int caller_cache_uid(CallerCache *c, sd_bus_message *m, uid_t *ret);
/* Calls f with the unique name of every connection remembered whose uid is a, b or
 * 0, once each. f must not change this cache. */
void caller_cache_foreach(CallerCache *c, uid_t a, uid_t b, void (*f)(const char *name, void *userdata),
                          void *userdata);
/* That connection is gone (NameOwnerChanged). */
void caller_cache_forget(CallerCache *c, const char *name);
/* All of them (shutdown). */
void caller_cache_clear(CallerCache *c);
