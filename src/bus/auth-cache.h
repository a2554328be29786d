/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A short-lived memory of polkit's "yes" for reads of one's own objects.
 *
 * org.xagent.sandbox1.inspect guards only reads (Get/Inspect/Verify/List of the
 * caller's own sandboxes) and defaults to yes. Asking polkit on every read costs a
 * round trip that dwarfs the read itself, so a positive answer is remembered per
 * bus connection (unique name) and per action with its details (the key: a
 * yes about one sandbox says nothing about another, as in systemd's bus-polkit.c)
 * for SBX_AUTH_CACHE_USEC, and forgotten as soon as that connection goes away or
 * polkit announces that its rules or actions changed. Refusals, challenges and every other action are never
 * remembered: state changes always ask polkit. One exception, the lists' widening
 * (manage-others asked without a prompt, operation.c): its answer is remembered
 * either way (auth_cache_remember_answer()), as a no there refuses nothing — the
 * caller sees its own objects only. Bounded: at most SBX_AUTH_CACHE_MAX entries;
 * when full, nothing more is remembered until entries expire. */

#include <stdbool.h>
#include <stdint.h>

#define SBX_AUTH_CACHE_USEC (5ULL * 1000000ULL)
#define SBX_AUTH_CACHE_MAX 1024U

typedef struct AuthCache AuthCache;

AuthCache *auth_cache_new(void);
AuthCache *auth_cache_free(AuthCache *c);

/* now: CLOCK_MONOTONIC µs. */
/* key: the action and its details, as the caller composes them. */
bool auth_cache_allowed(AuthCache *c, const char *sender, const char *key, uint64_t now);
void auth_cache_remember(AuthCache *c, const char *sender, const char *key, uint64_t now);
/* The remembered answer, yes or no: 1 yes, 0 no, -ENOENT none (or expired). */
int auth_cache_answer(AuthCache *c, const char *sender, const char *key, uint64_t now);
void auth_cache_remember_answer(AuthCache *c, const char *sender, const char *key, bool allowed, uint64_t now);
void auth_cache_forget(AuthCache *c, const char *sender);
void auth_cache_clear(AuthCache *c);
unsigned auth_cache_size(const AuthCache *c);
