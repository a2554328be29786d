/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The sandbox operations (docs/lifecycle.md), as plain sequential functions over one
 * worker's Docker client and store connection. Every operation that changes a
 * sandbox runs under that name's lock from the shared keyed lock registry;
 * inspect and verify take no lock and change nothing. The owner is an explicit
 * input wherever one is needed: authorization happened before (bus layer). */

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "docker-image.h"
#include "docker.h"
#include "keyed-lock.h"
#include "observation-cache.h"
#include "observed.h"
#include "policy.h"
#include "spec-memo.h"
#include "spec.h"
#include "store.h"
#include "usage.h"
#include "verdict-cache.h"
#include "verdict.h"

typedef struct SbxLifecycle SbxLifecycle;

/* Names are Docker-level names (naming.h: "~<uid>:<name>" for an owner other than
 * root): a name is always its owner's, so an operation acts only on a container of
 * that owner, and a container of another owner carrying the same name label is not
 * this sandbox. */

struct SbxLifecycle {
        SbxDocker *docker;              /* this worker's */
        SbxStore *store;                /* this worker's */
        SbxKeyedLockRegistry *locks;    /* shared by all workers */
        /* The policy of the current job: a reference its caller takes before each job
         * and drops after it (the bus layer; a reload swaps the Manager's, never a
         * running job's). The lifecycle only reads it. */
        SbxPolicy *policy;
        const char *docker_socket;      /* the socket path, never mounted into a sandbox */
        const char *init_dir;           /* the directory of xagent-sandbox-init (init-volume.h) */
        const char *service_id;         /* this instance's (sbx_lifecycle_service_id); NULL = none */
        SbxVerdictCache *judgements;    /* shared by all workers; NULL = none (lists inspect each) */
        /* shared: set once the first reconciliation looked at every container; before
         * it, a list judges none it has no judgement of (sbx_lifecycle_list()). NULL:
         * lists always judge each. */
        const atomic_bool *lists_judged;
        /* shared by all workers (docs/api.md#reads-from-observations); NULL = none */
        SbxObservationCache *observations;
        SbxSpecMemo *specs;             /* this worker's stored specs, read once (spec-memo.h); required */
        struct SbxChannels *channels;   /* shared by all workers (channel.h); NULL = no file calls */
        /* shared by all workers (resolvers.h); NULL = name entries cannot be served */
        struct SbxResolvers *resolvers;
#ifdef SBX_TEST_SEAMS
        /* Tests only: runs between a create's start and its publish verification,
         * to make a real daemon-side change that verification must catch. */
        void (*seam_after_start)(SbxLifecycle *l, const char *container_id, void *userdata);
        /* Tests only: runs between a create's volume checks and its start, to change
         * what the checked paths name before dockerd mounts them. */
        void (*seam_before_start)(SbxLifecycle *l, const char *container_id, void *userdata);
        /* Tests only: runs just before a create's docker create (given the container's
         * provisional name), to move a snapshot's tag after it was resolved. */
        void (*seam_before_create)(SbxLifecycle *l, const char *container_name, void *userdata);
        void *seam_userdata;
#endif
};

/* The id of a service instance: a hash of its state directory's absolute path, the
 * same across restarts and a lost store; different for a second daemon on the same
 * dockerd (a test's). Its containers carry it (SBX_LABEL_SERVICE). */
int sbx_lifecycle_service_id(const char *state_dir, char **ret);

/* What is known about one sandbox: its container as Docker reports it, and the
 * verdict of its stored spec against that container. */
typedef struct SbxSandbox {
        char *name;
        bool owner_valid;               /* false: the owner label is garbage; nobody owns it */
        uid_t owner;
        char *container_id;
        SbxState state;
        char *status;                   /* Docker's raw status */
        char *image;                    /* Config.Image */
        char *fingerprint;              /* the label, "" if absent */
        SbxVerdict verdict;             /* stored spec vs the container now; unverified without a row */
        unsigned mismatched;            /* for a mismatch: the SBX_SPEC_FIELD_* that differ, as far
                                         * as the container tells (0: not known which) */
        bool has_row;
        bool unjudged;                  /* listed, not looked at: verdict unverified, image and hardened unknown */
        bool hardened;                  /* the container carries the posture of docs/security.md */
        uint64_t created_us;
        char *labels_json;              /* its labels, as stored (user-labels.h); "{}" without a row */
        /* what the service holds of it (the bus fills them in: leases, lifetime) */
        unsigned leases;
        uint64_t last_activity_us, expire_at_us;
        uint32_t idle_timeout_s;
        bool on_idle_pause;
        bool idle_counts_processes;
        char *egress_json;              /* egress.h's stored form, "" for the default (or no row) */
        int egress_enforced;            /* read back: 1 in force, 0 not, -1 not looked at */
        const char *egress_effective;   /* what is in force when it runs (egress.h, static) */
        uint64_t egress_names_refused;  /* names its resolver refused since it was last armed */
        SbxObserved *observed;          /* the sandbox's, or (seen set) the observation's */
        SbxSeen *seen;
} SbxSandbox;

SbxSandbox *sbx_sandbox_free(SbxSandbox *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSandbox *, sbx_sandbox_free);
void sbx_sandbox_list_free(SbxSandbox **list, size_t n);

/* NoSuchSandbox when there is no managed container of that name. */
int sbx_lifecycle_inspect(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error);
/* The inspect of a fresh answer from Docker: the observation of the sandbox's
 * container is dropped first (RefreshSandbox). */
int sbx_lifecycle_refresh(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error);

/* Creates and starts a sandbox from a finalized spec (sbx_spec_finalize) for
 * owner, verifying what Docker made before anything is recorded; on any failure
 * after the container exists, the container is removed again. */
int sbx_lifecycle_create(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         SbxSandbox **ret, SbxError *error);

/* A new sandbox's lifetime (docs/lifecycle.md, "Idle stop and expiry"), stored in the
 * same transaction as its row: its expiry counts from its creation. All 0: none. */
typedef struct SbxNewLifetime {
        uint32_t idle_timeout_s;        /* 0: never */
        uint32_t expire_after_s;        /* 0: never */
        bool on_idle_pause;
        bool counts_processes;          /* idle_counts_processes */
} SbxNewLifetime;

/* What a create takes besides the spec, none of it part of the spec or its fingerprint. */
typedef struct SbxCreateOptions {
        json_object *labels;            /* user-labels.h; NULL = none. Stored, and written on the
                                         * container under SBX_USER_LABEL_PREFIX */
        SbxNewLifetime lifetime;
        const SbxEgress *egress;        /* egress.h, checked against the policy; NULL = the default.
                                         * Stored, and in force before the create answers */
        const char *runtime;            /* runtime.h, offered by the policy; NULL or "" = the default.
                                         * On the container's label SBX_LABEL_RUNTIME */
} SbxCreateOptions;

/* sbx_lifecycle_create() with options (NULL: none). */
int sbx_lifecycle_create_with(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                              const SbxCreateOptions *options, SbxSandbox **ret, SbxError *error);

/* Warm pools (docs/lifecycle.md, "Warm pools"): the members of the policy's warm_pools
 * made, kept or replaced. One refill: one list of this instance's members; a member
 * of no pool of the policy in force (another policy digest, owner, fingerprint or
 * name prefix), not running, or whose image reference names another image now is
 * removed; each pool filled up to its size, all of them within max_pooled (a member
 * that cannot be made is logged and tried again at the next refill). */
typedef struct SbxPoolStats {
        unsigned kept, made, removed, failed;
} SbxPoolStats;
int sbx_lifecycle_pool_refill(SbxLifecycle *l, SbxPoolStats *ret, SbxError *error);
/* GetPoolStatus: per pool of the policy in force (ret_ready: n_warm_pools entries), the
 * running members of it there are now (owner's, or SBX_STORE_ANY_OWNER: everyone's). */
int sbx_lifecycle_pool_status(SbxLifecycle *l, uid_t owner, unsigned *ret_ready, SbxError *error);

/* ClaimSandbox: a member of owner's pool of this spec and name_prefix (NULL: the
 * default) renamed to its final name, recorded now with options (its lifetimes from
 * now, its labels in the store, its egress applied) — *ret_warm true; else an ordinary
 * create under a generated name "<prefix>-<8 hex>" — false. */
int sbx_lifecycle_claim(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, const SbxCreateOptions *options,
                        const char *name_prefix, SbxSandbox **ret, bool *ret_warm, SbxError *error);

/* xagent's verdict of desired against the live container; for a mismatch, the
 * fields that differ as far as the stored row tells (see verdict.h), and
 * SBX_VERIFY_FIELD_EGRESS when the egress rules in force are not the stored ones.
 * ret_described (may be NULL): the sandbox as the same look at it shows it (its stored
 * spec's verdict: the object's), NULL when that could not be worked out. */
#define SBX_VERIFY_FIELD_EGRESS (1u << SBX_SPEC_FIELD_COUNT)
/* … and SBX_VERIFY_FIELD_RUNTIME when it runs under another runtime than it asked for. */
#define SBX_VERIFY_FIELD_RUNTIME (2u << SBX_SPEC_FIELD_COUNT)
int sbx_lifecycle_verify(SbxLifecycle *l, const char *name, const SbxSpec *desired, SbxVerdict *ret_verdict,
                         unsigned *ret_fields, SbxSandbox **ret_described, SbxError *error);

/* Idempotent; NoSuchSandbox for a missing name. Return 1 if something changed.
 * Start checks the volumes on the file system again and, once the container runs,
 * that what it has mounted is what was checked (mount-check.h); a difference stops
 * it again and is RuntimeConflict naming the volume. A non-root owner's container
 * made without the current posture (an older version of this service) is
 * RecoveryRequired: it is never started. */
int sbx_lifecycle_start(SbxLifecycle *l, const char *name, SbxError *error);
int sbx_lifecycle_stop(SbxLifecycle *l, const char *name, unsigned timeout_s, SbxError *error);

/* Pause (Docker's freezer: every process stopped where it is, its memory kept) or
 * resume a running sandbox; idempotent (1 if something changed). NotRunning naming the
 * state for a stopped one. A paused sandbox keeps its verdict; exec, copies and file
 * calls on it are NotRunning; a start leaves it paused, a stop thaws it first. */
int sbx_lifecycle_pause(SbxLifecycle *l, const char *name, bool pause, SbxError *error);

/* xagent #1014's get-or-create (docs/lifecycle.md), atomic under the name's lock. */
typedef enum SbxEnsureOutcome {
        SBX_ENSURE_CREATED,     /* there was none */
        SBX_ENSURE_STARTED,     /* it matched and was stopped */
        SBX_ENSURE_REUSED,      /* it matched and runs */
        SBX_ENSURE_RECREATED,   /* it did not match: stopped, deleted, created */
        _SBX_ENSURE_OUTCOME_MAX,
} SbxEnsureOutcome;

typedef struct SbxEnsureOptions {
        bool recreate;                  /* on a mismatch: replace it (else RuntimeConflict) */
        unsigned stop_timeout_s;        /* for the stop before replacing */
        json_object *labels;            /* a new one's (or a replacement's); for one there is, they
                                         * must equal its own (else InvalidArgs). NULL = not given */
        unsigned busy_leases;           /* leases other connections hold on it: a replacement is
                                         * SandboxBusy */
        SbxNewLifetime lifetime;        /* a new one's (or a replacement's); one there is keeps its own */
        const SbxEgress *egress;        /* a new one's (or a replacement's); one there keeps its own */
        const char *runtime;            /* as create's; one there must have asked for the same (else
                                         * a mismatch: RuntimeConflict naming runtime, or recreated) */
} SbxEnsureOptions;

const char *sbx_ensure_outcome_to_string(SbxEnsureOutcome o) _pure_;

/* Absent → created. A match (fingerprint label under any Python version) → started if
 * stopped, else reused; a match without a row is recorded first. Unverified with a
 * stored spec equal to the desired → reused likewise. Anything else is a mismatch:
 * RuntimeConflict naming the fields, or with options->recreate the sandbox is stopped
 * (RecoveryRequired when that fails or it still runs), deleted and created again. */
int sbx_lifecycle_ensure(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         const SbxEnsureOptions *options, SbxSandbox **ret, SbxEnsureOutcome *ret_outcome,
                         SbxError *error);

/* Egress (docs/security.md): a sandbox's changed atomically (checked against the
 * policy by the caller), stored, and in force at once when it runs (failing: stopped,
 * RuntimeConflict naming egress). NoSuchSandbox; RecoveryRequired for a sandbox the
 * service has no row of. */
int sbx_lifecycle_set_egress(SbxLifecycle *l, const char *name, const SbxEgress *egress, SbxError *error);
/* A start the service did not make (Docker's start event for container_id): the
 * sandbox's egress read back and loaded again if it is not in force (failing: stopped).
 * 1 if it was loaded, 0 if nothing was to do. */
int sbx_lifecycle_rearm_egress(SbxLifecycle *l, const char *name, const char *container_id, SbxError *error);

/* Idempotent: a missing name succeeds. Returns 1 if something was removed. */
int sbx_lifecycle_delete(SbxLifecycle *l, const char *name, SbxError *error);

/* A deadline that fell due (docs/lifecycle.md, "Idle stop and expiry"): it acts only on
 * the sandbox that fell due — the stored row of that name still records its container
 * and creation — and only if, under the name's lock, still_due says its conditions hold
 * (still idle: no lease, no exec, no use since). Returns 1 when it acted, 0 when it did
 * nothing (another sandbox has the name now, it is gone, or it is no longer due). */
typedef enum SbxDeadlineAction {
        SBX_DEADLINE_EXPIRE,            /* deleted */
        SBX_DEADLINE_IDLE_STOP,
        SBX_DEADLINE_IDLE_PAUSE,
} SbxDeadlineAction;

typedef struct SbxDeadline {
        const char *name;
        const char *container_id;       /* the sandbox that fell due */
        uint64_t created_us;            /* … and its creation (0: not compared) */
        SbxDeadlineAction action;
        unsigned stop_timeout_s;        /* an idle stop's */
        bool (*still_due)(void *userdata);      /* NULL: always */
        void *userdata;
} SbxDeadline;

int sbx_lifecycle_deadline(SbxLifecycle *l, const SbxDeadline *d, SbxError *error);

/* Commits the container to xagent-sandbox-snapshot:<safe id> with the commit config of
 * labels.h (xagent's and this service's labels blanked, the source image's entrypoint,
 * command and user restored), and records the snapshot for the owner of the
 * (Docker-level) snapshot_id, with its image id. SnapshotExists for a used id. An intent
 * recorded before the commit makes an interrupted snapshot's image found again: recorded
 * or removed (docs/lifecycle.md), before any later snapshot or delete of the id and at
 * reconciliation. */
int sbx_lifecycle_snapshot(SbxLifecycle *l, const char *name, const char *snapshot_id, char **ret_image_id,
                           SbxError *error);

/* PullImage (docs/api.md, docs/security.md "Images"): reference checked against the
 * policy (allowed_images, registries), its manifest read by the service over TLS
 * verified with the registry's CA (registry.h: the digest, the image id, the size,
 * max_image_mib), then pulled by the engine by that digest — so the engine gets
 * exactly what the service verified, whatever the engine's own trust — with progress
 * (may be NULL), the image's id and size checked, and tagged as reference. The
 * image id ("sha256:…") in *ret_image_id. */
int sbx_lifecycle_pull(SbxLifecycle *l, const char *reference, SbxDockerPullProgress progress, void *userdata,
                       char **ret_image_id, SbxError *error);

/* Create and ensure with option pull "missing": image pulled (as above) unless the
 * host has it. Returns 1 if it was pulled. */
int sbx_lifecycle_pull_missing(SbxLifecycle *l, const char *image, SbxError *error);

/* Idempotent: an unknown id succeeds. Removes the image by the id recorded when it
 * was made, an interrupted snapshot of the id settled first. Returns 1 if something
 * was removed. */
int sbx_lifecycle_delete_snapshot(SbxLifecycle *l, const char *snapshot_id, SbxError *error);

/* Every managed container (xagent's own included) of owner (SBX_STORE_ANY_OWNER:
 * everyone's), with its verdict: one Docker list — filtered by the owner label for
 * an owner other than root — plus the store, and an inspect only for a container
 * whose judgement is not cached (verdict-cache.h). The sandboxes have no observed.
 * Before the first reconciliation looked at every container (l->lists_judged not
 * set: right after an activation), a container without a judgement is not inspected
 * but listed unjudged (from the list and the store: verdict unverified), so that the
 * first answers come from one list and the store. */
int sbx_lifecycle_list(SbxLifecycle *l, uid_t owner, SbxSandbox ***ret, size_t *ret_n, SbxError *error);
/* The same, each container judged (the reconciliation's). */
int sbx_lifecycle_list_judged(SbxLifecycle *l, uid_t owner, SbxSandbox ***ret, size_t *ret_n, SbxError *error);

/* What a reconciliation did. */
typedef struct SbxReconcileStats {
        unsigned settled;       /* interrupted creates finished or undone */
        unsigned in_flight;     /* … not yet: nothing there, and Docker may still make it (retry later) */
        unsigned owned;         /* containers this instance made (its service label) */
        unsigned adopted;       /* … without a row, recorded again from their attested spec */
        unsigned removed;       /* … without a row and without proof of verification, removed */
        unsigned over_limit;    /* … proven, but left without a row: the owner is at max_sandboxes_per_user */
        unsigned dropped;       /* rows whose container is gone, dropped */
        unsigned repaired;      /* rows that said running for a container that is not */
        unsigned snapshots;     /* interrupted snapshots recorded or undone */
} SbxReconcileStats;

/* Store and Docker made to agree (docs/lifecycle.md), at start-up and whenever Docker
 * is back: every interrupted create settled (its container removed, or recorded if it
 * was verified; one with nothing there before its deadline is kept, counted in
 * in_flight: reconcile again later); an owner-labelled container of this instance
 * without a row recorded again if its spec is proven by its fingerprint label and its
 * owner is below max_sandboxes_per_user (else left as it is, in over_limit; stopped in
 * its row when it lacks the posture), removed if nothing proves it; rows whose
 * container is gone dropped; a row that says running for a stopped container
 * corrected; every interrupted snapshot settled. One container list; an inspect only
 * for what has no row. Logs what it changed. */
int sbx_lifecycle_reconcile(SbxLifecycle *l, SbxReconcileStats *ret, SbxError *error);

/* The row of a sandbox whose container Docker removed (an event): dropped if it is
 * still about that container. Returns 1 if dropped. */
int sbx_lifecycle_forget(SbxLifecycle *l, const char *name, const char *container_id, SbxError *error);

/* Docker's one-shot stats of the sandbox (zeros when it is not running). */
int sbx_lifecycle_usage(SbxLifecycle *l, const char *name, SbxUsage *ret, SbxError *error);

/* The id of the sandbox's container (its owner's, by the Docker-level name);
 * NoSuchSandbox when there is none. */
int sbx_lifecycle_container_id(SbxLifecycle *l, const char *name, char **ret, SbxError *error);

/* The sandbox's lock, which every lifecycle operation on it holds (exec.h's start
 * holds it while it makes the process: never during a start's mount check). */
int sbx_lifecycle_lock(SbxLifecycle *l, const char *name, SbxKeyedLockHandle **ret);
