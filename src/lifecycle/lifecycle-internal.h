/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the files of the lifecycle share (private: nothing outside src/lifecycle
 * includes it). Each verb family is one file; this is what they need of each other. */

#include "docker.h"
#include "lifecycle.h"
#include "mount-check.h"
#include "naming.h"
#include "proto.h"
#include "time-util.h"

/* A create's container carries a provisional name until it is verified, then its
 * final one: a container found under the provisional name never passed verification
 * (docs/lifecycle.md). */
#define PENDING_SUFFIX ".pending"
/* A warm pool's member, verified and started, waits under its final name with this
 * suffix (docs/lifecycle.md, "Warm pools"): no sandbox — never listed, counted, found
 * by name, recorded again or removed by the reconciliation; pool.c alone handles it. */
#define POOL_SUFFIX ".pool"

/* Docker records StartedAt once the process runs; the init may have reported its
 * mounts a little earlier. */
#define MOUNT_REPORT_SLACK_US (2U * 1000000U)

/* The intent is kept: nothing of it is there yet, and Docker may still make it. */
#define SETTLE_IN_FLIGHT 2

/* The volumes as checked on the file system, held open until the container's mounts
 * have been compared with them (mount-check.h). */
typedef struct Pins {
        size_t n;
        int *fds;
} Pins;

/* sandbox.c: locating and describing a sandbox, the volume pins, inspect, verify, list */
/* The lock of a sandbox name or (prefix "snapshot") of a snapshot id. */
int lc_lock_key(SbxLifecycle *l, const char *prefix, const char *key, SbxKeyedLockHandle **ret);
/* The error replaced by one of kind (a Docker-level kind renamed for the caller). */
_printf_(3, 4) int lc_remap(SbxError *error, SbxErrorKind kind, const char *fmt, ...);
/* Whose a container of a list answer is (sbx_label_parse_owner_of()). */
int lc_listed_owner(json_object *c, uid_t *ret);
/* The managed container of the Docker-level name, by one label-filtered list (sweep:
 * this instance's provisional ones of the name removed). 1 and its id, or 0. */
int lc_find_container(SbxLifecycle *l, const char *name, bool sweep, char **ret_id, SbxError *error);
int lc_inspect_container(SbxLifecycle *l, const char *id, SbxObserved **ret, SbxError *error);
/* The stored row of this container and its spec from the worker's memo; 0: none. */
int lc_load_row(SbxLifecycle *l, const char *name, const char *container_id, SbxSandboxRow *given,
                SbxSandboxRow **ret_row, const SbxSpec **ret_spec, const SbxFingerprints **ret_fps,
                SbxError *error);
/* runtime-check.c: the posture items it does not carry (posture.h), its runtime judged
 * by its label through the policy, the engine's report and its first process. */
unsigned lc_posture_of(SbxLifecycle *l, const SbxObserved *o, bool isolated, int64_t memory_bytes);
/* The engine runtime its label asks for (NULL: the default); *ret_known false when the
 * policy does not offer the label's runtime. */
const char *lc_engine_runtime_of(SbxLifecycle *l, const SbxObserved *o, bool *ret_known);
/* It runs under the runtime it asked for (the posture's item runtime is clear). */
bool lc_runtime_as_asked(SbxLifecycle *l, const SbxObserved *o);
/* An ensure that finds the sandbox: it asked for the runtime asked for now (the
 * default's NULL, "" and "runc" alike), else RuntimeConflict naming runtime (a
 * recreate replaces it). */
int lc_check_runtime_kept(const char *shown, const SbxObserved *o, const char *runtime, SbxError *error);
/* A create's asked runtime: NULL for the default (NULL, "" or "runc": no label). */
const char *lc_runtime_asked(const char *runtime);
/* A local engine's runsc processes of the container (its id on their command line),
 * killed: a failed runsc start can leave them outside the engine's view. */
void lc_reap_runtime_strays(SbxLifecycle *l, const char *container_id);
/* Whether a running container's bind mounts show what their sources name now, by the
 * report given (read already) or, when NULL, the one read from its log. */
bool lc_mounts_truthful(SbxLifecycle *l, const SbxObserved *o, const SbxMountTable *report);
/* For reads (docs/api.md#reads-from-observations): the container's observation, or Docker's answer now (kept
 * as the observation); lc_mounts_truthful() of it. */
int lc_observe(SbxLifecycle *l, const char *id, SbxSeen **ret, SbxError *error);
bool lc_seen_truthful(SbxLifecycle *l, const SbxSeen *seen);
/* After a request that changes (or, failing, may have changed) the container: what
 * was observed of it before is not used again. */
void lc_changed(SbxLifecycle *l, const char *container_id);
/* Frees or lets go of s->observed. */
void lc_sandbox_drop_observed(SbxSandbox *s);
/* The SbxSandbox of an inspected container (takes o on success): verdict, posture. */
int lc_make_sandbox(SbxLifecycle *l, const char *name, SbxObserved *o, const SbxSandboxRow *row,
                    const SbxSpec *stored, const SbxFingerprints *fps, const SbxMountTable *report,
                    SbxSandbox **ret);
bool lc_names_it(const SbxObserved *o, const char *name);
/* The sandbox's container now: by the row's id, else by the list. 1 and *ret, or 0;
 * _existing: none is NoSuchSandbox. */
int lc_locate(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row, SbxError *error);
int lc_locate_existing(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row,
                       SbxError *error);
int lc_describe_by_name(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error);
/* 1 if it was there, 0 if it was gone already. */
int lc_remove_container(SbxLifecycle *l, const char *id, SbxError *error);
/* Each volume opened and checked from the root that admits it (and the working dir). */
void lc_pins_done(Pins *p);
int lc_pin_volumes(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, Pins *p, SbxError *error);
/* The first posture item the container lacks, or NULL. */
const char *lc_lacks(SbxLifecycle *l, const SbxObserved *o);
/* bsearch() of a name in rows sorted by name. */
int lc_row_cmp(const void *key, const void *elem);

/* intent.c: interrupted creates (the intents) and the reservation of an adopted row */
/* An interrupted create finished or undone (the name's lock held): 1 recorded,
 * SETTLE_IN_FLIGHT kept, 0 ended; _name: the name's, if any, with the caller's error. */
int lc_settle_intent(SbxLifecycle *l, const SbxIntentRow *in, SbxError *error);
int lc_settle_name(SbxLifecycle *l, const char *name, SbxError *error);
/* A row for a container found without one, within the owner's limit: 1, or 0 over it. */
int lc_put_adopted(SbxLifecycle *l, const SbxSandboxRow *row, const SbxObserved *o, SbxError *error);

/* start-stop.c: start, stop and delete */
/* Start (running) or stop, and delete, with the name's lock held. */
int lc_set_running_locked(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s,
                          SbxError *error);
int lc_delete_locked(SbxLifecycle *l, const char *name, SbxError *error);
/* Pause or resume, with the name's lock held: 1 if it changed. */
int lc_pause_locked(SbxLifecycle *l, const char *name, bool pause, SbxError *error);

/* create.c: what a claim shares with a create */
/* A new sandbox's lifetime row (false: none), and the reply's view of it. */
bool lc_lifetime_row(const char *name, int64_t created_us, const SbxNewLifetime *t, SbxLifetimeRow *ret);
void lc_take_lifetime(const char *name, int64_t created_us, const SbxNewLifetime *lifetime, SbxSandbox *s);
/* A warm pool's member made through the whole create path (admission, verification,
 * egress), started, under name POOL_SUFFIX, with no intent and no row; its inspect. */
int lc_create_member(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                     const SbxEgress *egress, SbxObserved **ret, SbxError *error);

/* container-marks.c: what marks a container that is no sandbox (yet) */
bool lc_has_suffix(const char *s, const char *suffix);
/* Whether a container name (Docker's leading "/" or not) is a member's: the one test. */
bool lc_is_pool_name(const char *container_name) _pure_;
/* … of a container of a list answer (its "Names"). */
bool lc_listed_pool_member(json_object *c);
/* The policy's digest label written on a member. */
int lc_pool_label(SbxLifecycle *l, json_object *labels);

/* snapshot.c: snapshots and their intents */
/* Every interrupted snapshot settled, each under its id's lock (reconciliation). */
int lc_settle_snapshot_intents(SbxLifecycle *l, SbxReconcileStats *st, SbxError *error);

typedef struct SbxExecProcess SbxExecProcess;
typedef struct SbxExecRequest SbxExecRequest;

/* After a kill, how long an exec's stream may take to end. */
#define KILL_DRAIN_US (5U * 1000000U)

/* exec.c: the relay of an exec run to its end (timeout_s 0: no deadline); past the
 * deadline, when the service shuts down, or when the stream fails, the exec is killed */
int lc_exec_relay_or_kill(SbxLifecycle *l, SbxExecProcess *p, unsigned timeout_s, const char *what,
                          SbxError *error);

/* exec-docker.c: a process as the owner through Docker's exec */
/* A new process of the request: its token the request's, else a new one. */
int lc_exec_new(const SbxExecRequest *req, SbxExecProcess **ret);
/* Under the sandbox's lock (*ret_lock): p's container, and its user and working
 * directory (NULL: Docker's) anew; NotRunning for a non-root owner's sandbox this
 * service did not start and verify. */
int lc_exec_locate(SbxLifecycle *l, const char *name, SbxExecProcess *p, SbxKeyedLockHandle **ret_lock,
                   char **ret_working_dir, SbxError *error);
/* Located p started through Docker's exec (with req->check_start: checked to run). */
int lc_exec_start_docker(SbxLifecycle *l, SbxExecProcess *p, const SbxExecRequest *req, const char *working_dir,
                         SbxError *error);
/* All three: a process through Docker's exec, never the channel (the channel's own). */
int lc_exec_docker(SbxLifecycle *l, const char *name, const SbxExecRequest *req, SbxExecProcess **ret,
                   SbxError *error);
/* Why a command could not be started, as InvalidArgs. */
int lc_exec_start_refused(const SbxExecRequest *req, bool working_dir, const char *why, SbxError *error);
/* Whether Docker says the process never started (no such command, a working
 * directory that is not there); then why, from the runtime's text in its output. */
typedef struct SbxExecState SbxExecState;
bool lc_exec_never_started(const SbxExecState *s);
int lc_exec_start_failed(const SbxExecProcess *p, const SbxExecRequest *req, SbxError *error);
/* Whether the sandbox's container ran out of memory: Docker's State.OOMKilled, or on a
 * local engine its memory cgroup's count of processes the OOM killer killed; 0 also
 * when that cannot be told. */
int lc_container_oom_killed(SbxLifecycle *l, const char *name);

/* channel-fd.c: the channel's program on this host and the descriptors taken from it */
/* The channel's program on this host (Docker's pid of its exec, checked against what
 * it says of itself): a pidfd, or -1 when it cannot be reached so (fall back). */
int lc_channel_pidfd(SbxDocker *d, const SbxExecProcess *channel, const SbxProtoFrame *hello,
                     uint64_t deadline_us, uid_t *ret_uid);
/* EXEC's OK: its FD taken from the program and checked. */
int lc_channel_take_fd(int pidfd, uid_t uid, const SbxProtoFrame *ok, int *ret_fd, SbxError *error);

/* channel-exec.c: commands over the channel (docs/architecture.md, "Commands over the channel") */
/* Starts p over the channel: 1 started (its stream in p->relay), 0 when the sandbox's
 * channel cannot carry commands (the caller falls back to a Docker exec), or an error
 * (a command that could not be started: InvalidArgs naming argv[0] or working_dir). */
int lc_exec_start_channel(SbxLifecycle *l, const char *name, SbxExecProcess *p, const SbxExecRequest *req,
                          const char *working_dir, SbxError *error);
