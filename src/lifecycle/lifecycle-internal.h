/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the files of the lifecycle share (private: nothing outside src/lifecycle
 * includes it). Each verb family is one file; this is what they need of each other. */

#include "docker.h"
#include "lifecycle.h"
#include "mount-check.h"
#include "naming.h"

/* A create's container carries a provisional name until it is verified, then its
 * final one: a container found under the provisional name never passed verification
 * (docs/lifecycle.md). */
#define PENDING_SUFFIX ".pending"

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
uint64_t lc_now_usec(void);
int lc_lock_key(SbxLifecycle *l, const char *prefix, const char *key, SbxKeyedLockHandle **ret);
_printf_(3, 4) int lc_remap(SbxError *error, SbxErrorKind kind, const char *fmt, ...);
bool lc_has_suffix(const char *s, const char *suffix);
int lc_listed_owner(json_object *c, uid_t *ret);
int lc_find_container(SbxLifecycle *l, const char *name, bool sweep, char **ret_id, SbxError *error);
int lc_inspect_container(SbxLifecycle *l, const char *id, SbxObserved **ret, SbxError *error);
int lc_load_row(SbxLifecycle *l, const char *name, const char *container_id, SbxSandboxRow *given,
                SbxSandboxRow **ret_row, const SbxSpec **ret_spec, const SbxFingerprints **ret_fps,
                SbxError *error);
unsigned lc_posture_of(SbxLifecycle *l, const SbxObserved *o, bool isolated, int64_t memory_bytes);
bool lc_mounts_truthful(SbxLifecycle *l, const SbxObserved *o, const SbxMountTable *report);
int lc_make_sandbox(SbxLifecycle *l, const char *name, SbxObserved *o, const SbxSandboxRow *row,
                    const SbxSpec *stored, const SbxFingerprints *fps, const SbxMountTable *report,
                    SbxSandbox **ret);
bool lc_names_it(const SbxObserved *o, const char *name);
int lc_locate(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row, SbxError *error);
int lc_locate_existing(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row,
                       SbxError *error);
int lc_describe_by_name(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error);
int lc_remove_container(SbxLifecycle *l, const char *id, SbxError *error);
void lc_pins_done(Pins *p);
int lc_pin_volumes(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, Pins *p, SbxError *error);
const char *lc_lacks(SbxLifecycle *l, const SbxObserved *o);
int lc_row_cmp(const void *key, const void *elem);

/* intent.c: interrupted creates (the intents) and the reservation of an adopted row */
int lc_settle_intent(SbxLifecycle *l, const SbxIntentRow *in, SbxError *error);
int lc_settle_name(SbxLifecycle *l, const char *name, SbxError *error);
int lc_put_adopted(SbxLifecycle *l, const SbxSandboxRow *row, const SbxObserved *o, SbxError *error);

/* start-stop.c: start, stop and delete */
int lc_set_running_locked(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s,
                          SbxError *error);
int lc_delete_locked(SbxLifecycle *l, const char *name, SbxError *error);

/* snapshot.c: snapshots and their intents */
int lc_settle_snapshot_intents(SbxLifecycle *l, SbxReconcileStats *st, SbxError *error);

/* exec.c: the relay of an exec run to its end (timeout_s 0: no deadline); past the
 * deadline, when the service shuts down, or when the stream fails, the exec is killed */
struct SbxExecProcess;
int lc_exec_relay_or_kill(SbxLifecycle *l, struct SbxExecProcess *p, unsigned timeout_s, const char *what,
                          SbxError *error);
