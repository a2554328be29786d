/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Per-name mutual exclusion for worker threads, with the semantics of xagent's
 * KeyedLockRegistry: an entry per key counts its holder and queued waiters;
 * waiters are served in arrival order (tickets) and a queued waiter acquires the
 * same entry the holder releases; an entry is evicted as soon as nobody holds or
 * waits on it, and only that same entry. Not reentrant: a thread that acquires a
 * key it already holds deadlocks. */

#include <stddef.h>

#include "macro.h"

typedef struct SbxKeyedLockRegistry SbxKeyedLockRegistry;
typedef struct SbxKeyedLockHandle SbxKeyedLockHandle;

SbxKeyedLockRegistry *sbx_keyed_lock_registry_new(void);
/* Frees the registry; no handle may be held or waiting. */
SbxKeyedLockRegistry *sbx_keyed_lock_registry_free(SbxKeyedLockRegistry *reg);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxKeyedLockRegistry *, sbx_keyed_lock_registry_free);

/* Blocks until the calling thread holds key; *ret is the handle to release. */
int sbx_keyed_lock_acquire(SbxKeyedLockRegistry *reg, const char *key, SbxKeyedLockHandle **ret);
/* Releases the lock, handing it to the next waiter or evicting the entry. The
 * handle stays valid (and released) until freed: 1 if it was released now, 0 if
 * it had been released already (a stale handle touches nothing). */
int sbx_keyed_lock_release(SbxKeyedLockHandle *handle);
/* Releases the lock if still held, and frees the handle. */
SbxKeyedLockHandle *sbx_keyed_lock_handle_free(SbxKeyedLockHandle *handle);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxKeyedLockHandle *, sbx_keyed_lock_handle_free);

/* Introspection for tests: the number of entries, and the holder + queued
 * waiter count of key's entry (-1 if there is no entry). */
size_t sbx_keyed_lock_registry_size(SbxKeyedLockRegistry *reg);
int sbx_keyed_lock_waiters(SbxKeyedLockRegistry *reg, const char *key);
