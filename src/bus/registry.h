/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The registry of known sandboxes behind the per-sandbox objects (in the manner of
 * machined's machine.c), owned by the Manager: keyed by Docker-level name, updated
 * from what the workers saw, announcing what changed (bus-signal.h) with the
 * properties as the objects show them. Main thread only. */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "bus-names.h"
#include "callers.h"
#include "fingerprint.h"
#include "lifecycle.h"
#include "observation-cache.h"

/* A deadline on its way (deadlines.c) watches its sandbox: a use that begins meanwhile
 * (a call using it, a lease) is marked here on the main thread, and the deadline's
 * worker reads it under the name's lock before it acts. Shared: reference counted. */
typedef struct UseWatch {
        _Atomic bool used;
        _Atomic unsigned refs;
} UseWatch;

UseWatch *use_watch_new(void);
UseWatch *use_watch_ref(UseWatch *w);
UseWatch *use_watch_unref(UseWatch *w);

typedef struct Registry {
        void *tree;                     /* tsearch() tree of SandboxEntry, by name */
        uint64_t seq;                   /* counts entries added and dropped */
        size_t n_deadlines;             /* entries with a deadline still to come (no walk per call) */
        sd_bus *bus;                    /* where changes are announced; NULL: nowhere */
        CallerCache *callers;           /* … to these connections */
        void (*dropped)(void *userdata, const char *name); /* after an entry went (its leases end) */
        void *dropped_userdata;
        uint64_t (*now)(void *userdata); /* the service's clock (manager_now_us()); NULL: realtime */
        void *now_userdata;
} Registry;

/* A sandbox as the objects show it (docs/api.md). */
typedef struct SandboxEntry {
        Registry *registry;
        char *name;                     /* Docker-level (naming.h): the key */
        const char *display;            /* as its owner calls it: points into name */
        char *path;
        bool owner_valid;
        uid_t owner;
        char *container_id;
        SbxState state;
        char *status;
        char *image;
        char *fingerprint;
        SbxVerdict verdict;
        uint64_t created_us;
        char *labels_json;              /* user-labels.h's stored form */
        json_object *labels;            /* … parsed: never NULL once put */
        uint64_t listed;                /* the last reconciliation that listed it (reconcile_mark) */
        uint64_t looked_us;             /* monotonic: when a look at Docker last set it (registry_put()) */
        bool relooking;                 /* a property read past observation_max_age has it looked at again */
        unsigned leases;                /* leases held on it (leases.h) */
        uint64_t last_activity_us;      /* realtime; in steps of REGISTRY_ACTIVITY_STEP_US */
        /* its lifetime (docs/lifecycle.md; deadlines.h acts on it) */
        uint32_t idle_timeout_s;        /* 0: never */
        uint64_t expire_at_us;          /* realtime; 0: never */
        bool on_idle_pause;
        bool idle_counts_processes;     /* a running process (detached, unattached) is activity */
        bool has_lifetime;              /* a stored row: its activity is written back */
        uint64_t activity_stored_us;    /* the last activity written to the store */
        unsigned active;                /* operations using it in flight (an exec's, a copy's) */
        bool deadline_due;              /* its idle stop or expiry is on the way */
        UseWatch *watch;                /* … watching for a use meanwhile */
        bool rebased;                   /* its times moved with a wall-clock step: written back whole */
        SbxSandbox *described;          /* the last inspect's, from an observation (registry_described()) */
        unsigned described_plan;        /* … its strings' checks (bus_append_inspection_planned()) */
        SbxSpec *verified;              /* … the last spec a Verify found no mismatch with, */
        SbxFingerprints verified_fps;   /* … and its fingerprints */
} SandboxEntry;

/* LastActivity moves in steps of at least this much (no signal for every file call). */
#define REGISTRY_ACTIVITY_STEP_US (UINT64_C(5) * 1000000U)

SandboxEntry *registry_get(Registry *reg, const char *name);
/* Adds or refreshes the entry of a sandbox, emitting SandboxNew and
 * InterfacesAdded for a new one, PropertiesChanged for a changed one. */
int registry_put(Registry *reg, const SbxSandbox *s);
/* What a list that judged nothing tells (s->unjudged: right after an activation,
 * sbx_lifecycle_list()): a new sandbox as listed (Verdict unverified); of a known one
 * in the same container only its state and status — its verdict, image and the rest
 * stay what a look found. */
int registry_listed(Registry *reg, const SbxSandbox *s);
/* Sets a known sandbox's state after start/stop, emitting PropertiesChanged. */
void registry_set_state(Registry *reg, const char *name, SbxState state, const char *status);
/* What a start/resume, a stop and a pause did to it (the effect, apart from any reply). */
void registry_started(Registry *reg, const char *name);
void registry_stopped(Registry *reg, const char *name);
void registry_paused(Registry *reg, const char *name);
/* A use of it begins now (a call using it, a lease): a deadline on its way sees it. */
void registry_mark_used(SandboxEntry *e);
/* The wall clock stepped by step_us (the service's clock re-based): every entry's
 * LastActivity and ExpiresAt move with it, so no idle time or expiry is gained or
 * lost; they are written back whole at the next flush (rebased). */
void registry_rebase(Registry *reg, int64_t step_us);
/* A known sandbox was used now (realtime µs): LastActivity moves if a step has passed. */
void registry_touch(Registry *reg, const char *name, uint64_t now_us);
/* Its stored lifetime (store.h; all 0: none): IdleTimeout and ExpiresAt, the later
 * of the two activities. Emits PropertiesChanged. */
void registry_set_lifetime(Registry *reg, const SbxLifetimeRow *row);
/* Whether any sandbox has a deadline still to come (the idle exit waits for it). */
bool registry_deadlines_pending(Registry *reg);
/* Its lease count, a use now too; emits PropertiesChanged (Leases, LastActivity). */
void registry_set_leases(Registry *reg, const char *name, unsigned n);
/* Removes an entry, emitting SandboxRemoved and InterfacesRemoved, then tells
 * reg->dropped. */
void registry_drop(Registry *reg, const char *name);
/* Keeps what an inspect worked out from an observation (takes s, which holds it:
 * s->seen) for the reads after it, while that observation stands. The entry must be
 * there (registry_put() of the same sandbox first). */
void registry_describe(Registry *reg, SbxSandbox *s);
/* The entry's kept description while its observation is still the one a read of
 * the container would use (observation-cache.h: no event, no refresh, not past
 * max_age since); otherwise it is dropped, and NULL. Anything else that changes
 * the entry drops it too. */
const SbxSandbox *registry_described(SandboxEntry *e, SbxObservationCache *c, uint64_t max_age_us);
/* The fingerprints of spec for a Verify from the kept description: those kept when
 * it is the spec verified last (the hashing of its repr() done once), else worked
 * out into *buf. */
int registry_fingerprints_of(SandboxEntry *e, const SbxSpec *spec, SbxFingerprints *buf,
                             const SbxFingerprints **ret);
/* Keeps spec (taking it) and its fingerprints for the next Verify of the same spec,
 * as long as the description is kept. */
void registry_keep_verified(SandboxEntry *e, SbxSpec *spec, const SbxFingerprints *fps);
/* InspectSandbox's a{sv} of the kept description. */
int registry_append_inspection(SandboxEntry *e, sd_bus_message *reply);
/* Drops the descriptions whose observation no longer stands (c NULL: all), so none
 * outlives its observation for long; returns how many are kept. */
size_t registry_sweep_described(Registry *reg, SbxObservationCache *c, uint64_t max_age_us);
/* Calls f for each entry; f must not add or drop entries. */
void registry_foreach(Registry *reg, void (*f)(SandboxEntry *e, void *userdata), void *userdata);
/* Frees every entry, announcing nothing. */
void registry_clear(Registry *reg);

/* The object path of a sandbox name. */
int registry_path(const char *name, char **ret);

/* The value of one property of org.xagent.Sandbox1.Sandbox; broadcast: for a signal
 * or a read without a call, which carry no spec contents nor labels (Image,
 * Fingerprint: empty; Labels: none). */
int sandbox_entry_append_property(sd_bus_message *reply, const SandboxEntry *e, const char *property, bool broadcast);
/* InterfacesAdded's o a{sa{sv}}: */
int sandbox_entry_append_interfaces(sd_bus_message *m, const SandboxEntry *e);
/* PropertiesChanged's s a{sv} as, for the properties named (NULL-terminated). */
int sandbox_entry_append_changed(sd_bus_message *m, const SandboxEntry *e, const char *const *names);
