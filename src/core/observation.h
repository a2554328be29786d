/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* When a read may be answered from what the service already knows (docs/api.md#reads-from-observations):
 * the rule, in one place, with no I/O and no locking (the caller serializes).
 *
 * An observation is an answer Docker gave about one container, tagged with the
 * ticket taken just before the request was sent: the event stream's epoch (one per
 * connection) and its generation (one per event). It may be used only while
 *   - the event stream is connected, and has stayed connected since the ticket
 *     (the same epoch: a gap in the stream could have hidden any change);
 *   - no event for that container has arrived since the ticket (any container
 *     event counts, but the exec_* ones, which change nothing an inspection shows);
 *   - it is at most max_age old (0: observations are never used).
 * An answer whose container had an event while its request was in flight is not
 * kept at all. What a read can then see late is a change whose event had not yet
 * arrived: the staleness window the documentation measures.
 *
 * The table holds at most a fixed number of observations (the oldest goes), an
 * observation goes with its container's removal, and one past its age is freed when
 * the next one is kept. What an observation holds is the
 * caller's (a payload with its free function). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SbxObservations SbxObservations;

typedef struct SbxObservationTicket {
        uint64_t epoch, generation;
        bool connected;
} SbxObservationTicket;

/* max_entries 0: a default (4096). */
SbxObservations *sbx_observations_new(uint64_t max_age_us, size_t max_entries, void (*free_payload)(void *));
SbxObservations *sbx_observations_free(SbxObservations *t);

void sbx_observations_set_max_age(SbxObservations *t, uint64_t max_age_us);

/* The event stream (re)connected, or broke: either way everything known goes. */
void sbx_observations_stream_connected(SbxObservations *t);
void sbx_observations_stream_lost(SbxObservations *t);

/* An event for a container (its full id). Returns true when it invalidated (an
 * exec_* action does not). A "destroy" also forgets the container's last event. */
bool sbx_observations_event(SbxObservations *t, const char *container_id, const char *action);

/* Before a request to Docker about the container is sent. */
SbxObservationTicket sbx_observations_ticket(const SbxObservations *t);

/* Whether nothing happened to the container since the ticket (the stream unbroken, no
 * event but exec_* for it): what was learnt of it since is not older than any change.
 * Kept track of also while observations are off (max_age 0). */
bool sbx_observations_quiet_since(const SbxObservations *t, const char *container_id, SbxObservationTicket ticket);

/* After its answer: keeps payload (taking it) if nothing happened to the container
 * since the ticket; otherwise frees it at once. Returns true when kept. */
bool sbx_observations_put(SbxObservations *t, const char *container_id, SbxObservationTicket ticket,
                          uint64_t now_us, void *payload);

/* The payload of a usable observation (still the table's), or NULL. */
void *sbx_observations_get(SbxObservations *t, const char *container_id, uint64_t now_us);

/* Frees every observation past its age (before memory is given back). */
void sbx_observations_sweep(SbxObservations *t, uint64_t now_us);

/* Drops one observation (RefreshSandbox). */
void sbx_observations_drop(SbxObservations *t, const char *container_id);

size_t sbx_observations_size(const SbxObservations *t);
