/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <gnutls/crypto.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/random.h>
#include <time.h>

#include "attested.h"
#include "config.h"
#include "conflict.h"
#include "container-body.h"
#include "docker-container.h"
#include "docker-image.h"
#include "fingerprint.h"
#include "init-volume.h"
#include "json-util.h"
#include "labels.h"
#include "lifecycle.h"
#include "log.h"
#include "mount-check.h"
#include "naming.h"
#include "owner-info.h"
#include "posture.h"
#include "publish.h"
#include "spec-json.h"
#include "timestamp.h"
#include "volume-check.h"

SbxSandbox *sbx_sandbox_free(SbxSandbox *s) {
        if (!s)
                return NULL;
        free(s->name);
        free(s->container_id);
        free(s->status);
        free(s->image);
        free(s->fingerprint);
        sbx_observed_free(s->observed);
        free(s);
        return NULL;
}

int sbx_lifecycle_service_id(const char *state_dir, char **ret) {
        char path[PATH_MAX];
        uint8_t digest[32];

        if (!realpath(state_dir, path))
                return -errno;
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, path, strlen(path), digest) < 0)
                return -EIO;
        if (asprintf(ret, "%02x%02x%02x%02x%02x%02x%02x%02x", digest[0], digest[1], digest[2], digest[3], digest[4],
                     digest[5], digest[6], digest[7]) < 0)
                return -ENOMEM;
        return 0;
}

void sbx_sandbox_list_free(SbxSandbox **list, size_t n) {
        for (size_t i = 0; i < n; i++)
                sbx_sandbox_free(list[i]);
        free(list);
}

static uint64_t now_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (uint64_t) ts.tv_sec * 1000000 + (uint64_t) ts.tv_nsec / 1000;
}

/* Sandbox names and snapshot ids share one registry; the prefixes keep them apart. */
static int lock_key(SbxLifecycle *l, const char *prefix, const char *key, SbxKeyedLockHandle **ret) {
        _cleanup_free_ char *k = NULL;

        if (asprintf(&k, "%s:%s", prefix, key) < 0)
                return -ENOMEM;
        return sbx_keyed_lock_acquire(l->locks, k, ret);
}

int sbx_lifecycle_lock(SbxLifecycle *l, const char *name, SbxKeyedLockHandle **ret) {
        return lock_key(l, "sandbox", name, ret);
}

/* A Docker-level name as its owner calls it, for messages. */
static const char *plain(const char *name) {
        const char *p;

        (void) sbx_name_unqualify(name, &p);
        return p;
}

_printf_(3, 4) static int remap(SbxError *error, SbxErrorKind kind, const char *fmt, ...) {
        va_list ap;
        int r;

        sbx_error_free(error);
        va_start(ap, fmt);
        r = sbx_error_setv(error, kind, fmt, ap);
        va_end(ap);
        return r;
}

/* A create's container carries a provisional name until it is verified, then its
 * final one: a container found under the provisional name never passed verification
 * (docs/lifecycle.md). */
#define PENDING_SUFFIX ".pending"

static bool has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && streq(s + n - m, suffix);
}

static const char *listed_label(json_object *c, const char *key) {
        json_object *labels = json_object_object_get(c, "Labels"), *v;

        return labels && json_object_object_get_ex(labels, key, &v) ? json_object_get_string(v) : NULL;
}

/* Whether a listed container is this instance's and still under its provisional
 * name: a create that never passed verification — one being made, one whose undo
 * failed, or one Docker carried out after the create had given up. It is never a
 * sandbox: it does not block its name and is not listed. */
static bool listed_pending(SbxLifecycle *l, json_object *c) {
        json_object *names = json_object_object_get(c, "Names");

        if (!l->service_id || !streq_ptr(listed_label(c, SBX_LABEL_SERVICE), l->service_id) ||
            !json_object_is_type(names, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(names); i++) {
                const char *n = json_object_get_string(json_object_array_get_idx(names, i));

                if (n && has_suffix(n, PENDING_SUFFIX))
                        return true;
        }
        return false;
}

/* Whose a listed container is (sbx_label_parse_owner_of()). */
static int listed_owner(json_object *c, uid_t *ret) {
        return sbx_label_parse_owner_of(listed_label(c, SBX_LABEL_OWNER), listed_label(c, SBX_LABEL_SERVICE), ret);
}

/* Whether the listed container's owner label is owner's (missing or blank: root's,
 * unless it carries a service label: nobody's) and, unless name_label is NULL, its
 * name label is name_label. */
static bool listed_as(json_object *c, uid_t owner, const char *name_label) {
        uid_t uid;

        return listed_owner(c, &uid) >= 0 && uid == owner &&
                (!name_label || streq_ptr(listed_label(c, SBX_LABEL_SANDBOX_NAME), name_label));
}

static int remove_container(SbxLifecycle *l, const char *id, SbxError *error);

/* This instance's provisional containers of the name (name_label NULL: the list is
 * the name's already) are removed: nothing of this service's is creating the name
 * now, its lock being held, so none of them will ever be verified. */
static int sweep_pending(SbxLifecycle *l, json_object *list, uid_t owner, const char *name_label,
                         SbxError *error) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i);
                const char *id = json_object_get_string(json_object_object_get(c, "Id"));
                int r;

                if (!id || !listed_pending(l, c) || !listed_as(c, owner, name_label))
                        continue;
                if ((r = remove_container(l, id, error)) < 0)
                        return r;
                if (r > 0)
                        log_notice("Removed container %s: a create of '%s' that never passed verification",
                                   id, listed_label(c, SBX_LABEL_SANDBOX_NAME));
        }
        return 0;
}

/* The first listed container of owner (and of name_label, unless NULL) that is not
 * a provisional one. Returns 1 and its id, 0 if none. */
static int pick_owned(SbxLifecycle *l, json_object *list, uid_t owner, const char *name_label, char **ret_id,
                      SbxError *error) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i), *id;

                if (!listed_as(c, owner, name_label) || listed_pending(l, c))
                        continue;
                if (!json_object_object_get_ex(c, "Id", &id) || !json_object_is_type(id, json_type_string))
                        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker: a listed container has no Id");
                *ret_id = strdup(json_object_get_string(id));
                return *ret_id ? 1 : -ENOMEM;
        }
        return 0;
}

/* The managed container of the Docker-level name (xagent's look-up: by labels, not
 * by the derived container name), in its owner's namespace only: a container
 * carrying the name label but another owner's label is not this sandbox. An
 * owner's container from before names had owners carries the plain name: it is
 * found too. One list, so dockerd looks at each container once: root's by the name
 * label (a container without an owner label is root's), another uid's by its owner
 * label, which sbx_label_parse_owner() accepts only in the one spelling asked for
 * here. This instance's provisional containers are none (and with sweep, the name's
 * lock held, they are removed). Returns 1 and its id, or 0 if none. */
static int find_container(SbxLifecycle *l, const char *name, bool sweep, char **ret_id, SbxError *error) {
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *filter = NULL;
        const char *plain;
        uid_t owner = sbx_name_unqualify(name, &plain);
        int r;

        if ((owner == 0 ? asprintf(&filter, "%s=%s", SBX_LABEL_SANDBOX_NAME, name)
                        : asprintf(&filter, "%s=%u", SBX_LABEL_OWNER, (unsigned) owner)) < 0)
                return -ENOMEM;
        if ((r = sbx_docker_container_list(l->docker, (const char *const[]) {
                SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, filter, NULL }, &list, error)) < 0)
                return r;
        if (sweep && (r = sweep_pending(l, list, owner, owner == 0 ? NULL : name, error)) < 0)
                return r;
        if (owner == 0)
                return pick_owned(l, list, 0, NULL, ret_id, error);
        r = pick_owned(l, list, owner, name, ret_id, error);
        return r != 0 ? r : pick_owned(l, list, owner, plain, ret_id, error);
}

static int inspect_container(SbxLifecycle *l, const char *id, SbxObserved **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        int r = sbx_docker_container_inspect(l->docker, id, &attrs, error);

        if (r < 0)
                return r;
        return sbx_observed_from_json(attrs, ret, error);
}

/* The stored row of this container, and its spec with the spec's fingerprints from
 * the worker's memo (valid until the memo's next use; NULL when the spec cannot be
 * read back). A row about another container (one re-created behind our back) says
 * nothing about this one and counts as none: 0, and nothing is set. */
static int load_row(SbxLifecycle *l, const char *name, const char *container_id, SbxSandboxRow *given,
                    SbxSandboxRow **ret_row, const SbxSpec **ret_spec, const SbxFingerprints **ret_fps,
                    SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = given;   /* read already, or NULL */
        const SbxFingerprints *fps = NULL;
        const SbxSpec *spec = NULL;
        int r = row ? 1 : sbx_store_get_sandbox(l->store, name, &row, error);

        if (r <= 0)
                return r;
        if (!streq_ptr(row->container_id, container_id))
                return 0;
        if ((r = sbx_spec_memo_get(l->specs, row->spec_json, &spec, &fps)) < 0)
                return r;
        *ret_spec = spec;
        if (ret_fps)
                *ret_fps = fps;
        *ret_row = TAKE_PTR(row);
        return 1;
}

/* Docker records StartedAt once the process runs; the init may have reported its
 * mounts a little earlier. */
#define MOUNT_REPORT_SLACK_US (2U * 1000000U)

static unsigned posture_of(SbxLifecycle *l, const SbxObserved *o, bool isolated, int64_t memory_bytes) {
        return sbx_posture_check(o, &(SbxPostureExpect) {
                .pids_limit = l->policy->pids_limit,
                .publish_address = l->policy->publish_address,
                .network_isolated = isolated,
                .memory_bytes = memory_bytes,
        });
}

/* A running container's bind mounts, judged by what is mounted rather than by what
 * was asked (docs/security.md): each must show the directory its source names now. Only
 * a container whose first process is this service's init reports its mounts; for
 * others (xagent's own) there is nothing to judge by. The report is the last one
 * logged since shortly before the container's start. */
static bool mounts_truthful(SbxLifecycle *l, const SbxObserved *o) {
        _cleanup_(sbx_mount_table_done) SbxMountTable t = {};
        SbxError e = SBX_ERROR_NULL;
        uint64_t started = 0;
        int r;

        if (o->state != SBX_STATE_RUNNING || o->n_volumes == 0 || !o->init_volume || !o->id)
                return true;
        if (!o->started_at || sbx_parse_rfc3339_usec(o->started_at, &started) < 0)
                return false;
        r = sbx_container_mounts(l->docker, o->id, started > MOUNT_REPORT_SLACK_US ? started - MOUNT_REPORT_SLACK_US : 0,
                                 0, &t, &e);
        sbx_error_free(&e);
        return r >= 0 && sbx_mounts_truthful(&t, o->volumes, o->n_volumes);
}

static int make_sandbox(SbxLifecycle *l, const char *name, SbxObserved *o, const SbxSandboxRow *row,
                        const SbxSpec *stored, const SbxFingerprints *fps, SbxSandbox **ret) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *s = calloc(1, sizeof(SbxSandbox));
        bool truthful = mounts_truthful(l, o);

        if (!s)
                return -ENOMEM;
        s->name = strdup(name);
        s->container_id = strdup(o->id ?: "");
        s->status = strdup(o->raw_status);
        s->image = strdup(o->image_ref ?: "");
        s->fingerprint = strdup(o->fingerprint_label ?: "");
        if (!s->name || !s->container_id || !s->status || !s->image || !s->fingerprint)
                return -ENOMEM;
        s->owner_valid = o->owner_valid;
        s->owner = o->owner;
        s->state = o->state;
        s->has_row = row != NULL;
        s->verdict = SBX_VERDICT_UNVERIFIED;
        if (stored && row)
                s->verdict = sbx_verdict(stored, fps, o, SBX_CONTRACT_VERSION);
        if (!truthful && s->verdict == SBX_VERDICT_MATCH)
                s->verdict = SBX_VERDICT_MISMATCH;
        if (row && row->created_us > 0)
                s->created_us = (uint64_t) row->created_us;
        else if (o->created_at)
                (void) sbx_parse_rfc3339_usec(o->created_at, &s->created_us);
        /* Network and memory values themselves are the verdict's business, not the
         * posture's. */
        s->hardened = o->owner_valid && truthful &&
                      posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0) == 0;
        s->observed = o;
        *ret = TAKE_PTR(s);
        return 0;
}

/* The sandbox of a container Docker reported (takes o). */
static int describe_observed(SbxLifecycle *l, const char *name, SbxObserved *o, SbxSandboxRow *given,
                             SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *owned = o;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        const SbxFingerprints *fps = NULL;
        const SbxSpec *stored = NULL;
        int r;

        if ((r = load_row(l, name, o->id, given, &row, &stored, &fps, error)) < 0)
                return r;
        r = make_sandbox(l, name, o, row, stored, fps, ret);
        if (r >= 0)
                TAKE_PTR(owned);
        return r;
}

static int describe(SbxLifecycle *l, const char *name, const char *id, SbxSandbox **ret, SbxError *error) {
        SbxObserved *o = NULL;
        int r;

        if ((r = inspect_container(l, id, &o, error)) < 0)
                return sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)
                        ? remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name)) : r;
        return describe_observed(l, name, o, NULL, ret, error);
}

/* Whether the container carries the Docker-level name in its owner's namespace. */
static bool names_it(const SbxObserved *o, const char *name) {
        _cleanup_free_ char *q = NULL;

        return o->owner_valid &&
                sbx_name_from_labels(sbx_observed_get_label(o, SBX_LABEL_SANDBOX_NAME), o->owner, &q) >= 0 &&
                streq_ptr(q, name);
}

/* The sandbox's container as Docker reports it now: by the id its row records — one
 * inspect, its labels checked — and only without a row, or when that container is
 * gone, by the label-filtered list (which makes dockerd look at every container).
 * Returns 1 and *ret, or 0 when there is none. */
static int locate(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        if ((r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        if (r > 0) {
                r = inspect_container(l, row->container_id, &o, error);
                if (r >= 0 && names_it(o, name)) {
                        *ret = TAKE_PTR(o);
                        if (ret_row)
                                *ret_row = TAKE_PTR(row);
                        return 1;
                }
                if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return r;
                sbx_error_free(error);
                o = sbx_observed_free(o);
        }
        if ((r = find_container(l, name, false, &id, error)) <= 0)
                return r;
        r = inspect_container(l, id, &o, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {  /* removed since the listing */
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 1;
}

/* locate(), with none being NoSuchSandbox. */
static int locate_existing(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row,
                           SbxError *error) {
        int r = locate(l, name, ret, ret_row, error);

        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
        return r;
}

static int describe_by_name(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error) {
        SbxSandboxRow *row = NULL;
        SbxObserved *o = NULL;
        int r = locate_existing(l, name, &o, &row, error);

        return r < 0 ? r : describe_observed(l, name, o, row, ret, error);
}

int sbx_lifecycle_inspect(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error) {
        return describe_by_name(l, name, ret, error);
}

/* Removes the container; 1 if it was there, 0 if it was gone already. */
static int remove_container(SbxLifecycle *l, const char *id, SbxError *error) {
        int r = sbx_docker_container_remove(l->docker, id, error);

        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);          /* gone meanwhile: that is what was asked */
                return 0;
        }
        return r < 0 ? r : 1;
}

/* Removes the container a failed create made, and ends the create's intent. The
 * create's own error stays the one reported (first error wins): a remove that fails
 * (Docker gone) is logged and the intent kept, so the container is removed when
 * Docker answers again (sbx_lifecycle_reconcile) or before the name is created again. */
static void undo_create(SbxLifecycle *l, const char *name, const char *id) {
        SbxError e = SBX_ERROR_NULL;

        if (remove_container(l, id, &e) < 0)
                log_warning("Could not remove container %s after a failed create of '%s', will retry: %s", id,
                            plain(name), e.message ?: "unknown error");
        else if (sbx_store_delete_intent(l->store, name, &e) < 0)
                log_warning("Could not end the create of '%s' in the store: %s", plain(name),
                            e.message ?: "unknown error");
        sbx_error_free(&e);
}

/* Whether the container is this instance's (made since containers say so). */
static bool ours(SbxLifecycle *l, const SbxObserved *o) {
        return l->service_id && streq_ptr(sbx_observed_get_label(o, SBX_LABEL_SERVICE), l->service_id);
}

/* Whether the container is the one the intent was about to make. */
static bool made_by(SbxLifecycle *l, const SbxObserved *o, const SbxIntentRow *in) {
        const char *name = sbx_observed_get_label(o, SBX_LABEL_SANDBOX_NAME);

        return ours(l, o) && o->owner_valid && o->owner == in->owner_uid && streq_ptr(name, in->name) &&
                streq_ptr(o->fingerprint_label, in->fingerprint);
}

/* Until the create's own deadline (every Docker call of it shares the operation's
 * budget, which began before the intent was written) has passed, Docker may still
 * carry out a create request that reached it: the intent is kept that long. */
static uint64_t intent_deadline_us(SbxLifecycle *l, const SbxIntentRow *in) {
        return in->created_us > 0 ? (uint64_t) in->created_us + (uint64_t) l->policy->docker_timeout * 1000000U : 0;
}

/* The intent is kept: nothing of it is there yet, and Docker may still make it. */
#define SETTLE_IN_FLIGHT 2

/* Finishes or undoes an interrupted create, with its name's lock held: a container
 * still under the provisional name was never verified and is removed; one renamed to
 * its final name passed verification and is recorded from the intent. Returns 1 if
 * a sandbox was recorded, SETTLE_IN_FLIGHT if neither is there and the create's
 * deadline has not passed (the intent stays), 0 otherwise; on a Docker or store
 * failure the intent stays, for the next try. */
static int settle_intent(SbxLifecycle *l, const SbxIntentRow *in, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *pending = NULL, *final = NULL;
        _cleanup_free_ char *final_name = NULL;
        int r;

        r = inspect_container(l, in->container_name, &pending, error);
        if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        sbx_error_free(error);
        if (pending && made_by(l, pending, in)) {
                if ((r = remove_container(l, pending->id, error)) < 0)
                        return r;
                log_notice("Removed container %s of an interrupted create of '%s' (never verified)",
                           pending->id, plain(in->name));
        } else if (!pending) {
                if ((r = sbx_container_name(in->name, &final_name)) < 0)
                        return r;
                r = inspect_container(l, final_name, &final, error);
                if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return r;
                sbx_error_free(error);
                if (final && made_by(l, final, in)) {
                        /* Writing the row ends the intent (store.h). */
                        r = sbx_store_put_sandbox(l->store, &(SbxSandboxRow) {
                                .name = in->name,
                                .owner_uid = in->owner_uid,
                                .owner_gid = in->owner_gid,
                                .container_id = final->id,
                                .spec_json = in->spec_json,
                                .fingerprint = in->fingerprint,
                                .contract_version = SBX_CONTRACT_VERSION,
                                .state = final->state == SBX_STATE_RUNNING ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                                .created_us = in->created_us,
                        }, error);
                        if (r < 0)
                                return r;
                        log_notice("Recorded sandbox '%s' (container %s) of an interrupted create", plain(in->name),
                                   final->id);
                        return 1;
                }
                /* Looked for after the deadline: what Docker never made, it never will. */
                if (now_usec() < intent_deadline_us(l, in))
                        return SETTLE_IN_FLIGHT;
        }
        r = sbx_store_delete_intent(l->store, in->name, error);
        return r < 0 ? r : 0;
}

/* The interrupted create of the name, if any, settled first (with the lock held). */
static int settle_name(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        int r = sbx_store_get_intent(l->store, name, &in, error);

        if (r <= 0)
                return r;
        r = settle_intent(l, in, error);
        if (r < 0 && sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE)) {
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                return remap(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                             "An interrupted create of '%s' is still to be undone: %s", plain(name), why ?: "");
        }
        if (r == SETTLE_IN_FLIGHT) {
                uint64_t deadline = intent_deadline_us(l, in), now = now_usec();

                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "An interrupted create of '%s' may still be carried out by Docker; try again "
                                     "in %" PRIu64 " s", plain(name), (deadline > now ? deadline - now : 0) / 1000000U + 1);
        }
        return r;
}

/* The reference the container is made from, and for a snapshot the image id it must
 * turn out to be (check_snapshot_image()). A snapshot is made from its tag while the
 * tag still names the image recorded with it — what xagent makes it from, so Config.Image
 * is what its publish check expects — and from that image id once the tag names another
 * image or none (a snapshot is always used by the image recorded, never by a tag
 * someone else can move). */
static int resolve_image(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, char **ret_ref,
                         char **ret_id, SbxError *error) {
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *snap = NULL;
        _cleanup_(json_object_putp) json_object *tagged = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        *ret_id = NULL;
        if (spec->template_type == SBX_TEMPLATE_IMAGE)
                return (*ret_ref = strdup(spec->image)) ? 0 : -ENOMEM;

        /* A snapshot is a template only for its owner: looked up in the owner's
         * namespace. */
        if ((r = sbx_name_qualify(owner->uid, spec->snapshot_id, &id)) < 0)
                return r;
        r = sbx_store_get_snapshot(l->store, id, &snap, error);
        if (r < 0)
                return r;
        if (r == 0 || snap->owner_uid != owner->uid)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SNAPSHOT, "Snapshot not found: %s", spec->snapshot_id);
        r = sbx_docker_image_inspect(l->docker, snap->image_tag, &tagged, error);
        if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        sbx_error_free(error);
        if (r >= 0 && streq_ptr(json_object_get_string(json_object_object_get(tagged, "Id")), snap->image_id))
                *ret_ref = TAKE_PTR(snap->image_tag);
        else {
                log_notice("The tag %s of snapshot '%s' no longer names its image %s: made from the image id",
                           snap->image_tag, spec->snapshot_id, snap->image_id);
                *ret_ref = strdup(snap->image_id);
                if (!*ret_ref)
                        return -ENOMEM;
        }
        *ret_id = TAKE_PTR(snap->image_id);
        return 0;
}

/* Docker resolved the snapshot's tag when it made the container; anyone with the socket
 * can move a tag (also since resolve_image() looked), so what it made must be the image
 * recorded with the snapshot. */
static int check_snapshot_image(SbxLifecycle *l, const char *name, const char *container_id, const char *ref,
                                const char *image_id, SbxError *error) {
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        const char *got;
        int r;

        if ((r = sbx_docker_container_inspect(l->docker, container_id, &attrs, error)) < 0)
                return r;
        got = json_object_get_string(json_object_object_get(attrs, "Image"));
        if (streq_ptr(got, image_id))
                return 0;
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                             "Sandbox '%s' failed publish verification; mismatched fields: image (%s names %s now, "
                             "not the snapshot's image %s)", plain(name), ref, got ?: "nothing", image_id);
}

/* The volumes as checked on the file system, held open until the container's mounts
 * have been compared with them (mount-check.h). */
typedef struct Pins {
        size_t n;
        int *fds;
} Pins;

static void pins_done(Pins *p) {
        for (size_t i = 0; i < p->n; i++)
                if (p->fds[i] >= 0)
                        (void) close(p->fds[i]);
        free(p->fds);
        *p = (Pins) {};
}

/* Each volume on the file system, from the root that admits it downward, and the
 * working directory where it lies inside one. */
static int pin_volumes(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, Pins *p, SbxError *error) {
        const char *rest;
        ssize_t wd;
        int r;

        p->fds = calloc(spec->n_volumes + 1, sizeof(int));
        if (!p->fds)
                return -ENOMEM;
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *v = &spec->volumes[i];
                _cleanup_free_ char *root = NULL;

                p->fds[i] = -EBADF;
                p->n++;
                if ((r = sbx_policy_find_root(l->policy, owner, v->host, v->mode, &root, error)) < 0)
                        return r;
                p->fds[i] = sbx_volume_open_checked(root, v->host, v->mode, owner->uid, owner->gid, owner->groups,
                                                    owner->n_groups, error);
                if (p->fds[i] < 0)
                        return p->fds[i];
        }
        wd = sbx_spec_working_dir_volume(spec, &rest);
        if (wd >= 0)
                return sbx_volume_check_working_dir(p->fds[wd], spec->volumes[wd].host, rest, spec->working_dir,
                                                    error);
        return 0;
}

static int check_admissible(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, Pins *pins,
                            SbxError *error) {
        int r, n = sbx_store_count_sandboxes(l->store, owner->uid, error);

        if (n < 0)
                return n;
        if ((r = sbx_policy_check_count(l->policy, (size_t) n, error)) < 0 ||
            (r = sbx_policy_check_spec(l->policy, owner, spec, l->docker_socket, error)) < 0 ||
            (r = sbx_check_spec_conflicts(spec, error)) < 0)
                return r;
        return pin_volumes(l, spec, owner, pins, error);
}

/* Publish-before-verify (contract §6, docs/lifecycle.md): the seven fields and the posture
 * as Docker reports them, before anything is recorded or announced. */
static int verify_published(SbxLifecycle *l, const char *name, const SbxSpec *spec, const char *image,
                            const SbxOwner *owner, const SbxObserved *o, SbxError *error) {
        const char *fields[SBX_PUBLISH_FIELD_COUNT + 1], *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned mismatches = sbx_find_publish_mismatches(spec, image, o);
        unsigned posture = posture_of(l, o, spec->network_isolated, spec->memory * 1048576);
        _cleanup_free_ char *list = NULL;
        size_t size = 0;
        FILE *f;

        if (mismatches == 0 && posture == 0)
                return 0;
        sbx_publish_fields_to_names(mismatches, fields);
        sbx_posture_items_to_names(posture, items);
        f = open_memstream(&list, &size);
        if (!f)
                return -ENOMEM;
        for (const char **n = fields; *n; n++)
                fprintf(f, "%s%s", n == fields ? "" : ", ", *n);
        for (const char **n = items; *n; n++)
                fprintf(f, "%sposture.%s", (n == items && !fields[0]) ? "" : ", ", *n);
        if (fclose(f) != 0)
                return -ENOMEM;
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                             "Sandbox '%s' failed publish verification; mismatched fields: %s", plain(name), list);
}

static int record(SbxLifecycle *l, const char *name, const SbxSpec *spec, const char *fp, const SbxOwner *owner,
                  const SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *json = NULL;
        int r = sbx_spec_to_json_string(spec, &json);

        if (r < 0)
                return r;
        return sbx_store_put_sandbox(l->store, &(SbxSandboxRow) {
                .name = (char *) name,
                .owner_uid = owner->uid,
                .owner_gid = owner->gid,
                .container_id = o->id,
                .spec_json = json,
                .fingerprint = (char *) fp,
                .contract_version = SBX_CONTRACT_VERSION,
                .state = o->state == SBX_STATE_RUNNING ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                .created_us = (int64_t) now_usec(),
        }, error);
}

/* The final name is held by a container that is not this sandbox (its lock is held
 * and the name's look-up found none): one whose labels name nobody's sandbox, say
 * "~1002:x" without uid 1002's owner label, which derives the same container name.
 * It never blocks the owner: the container takes the final name plus a random part
 * instead (the look-ups go by labels, never by the container name). A holder that is
 * this sandbox after all (made meanwhile, outside the service) is SandboxExists. */
static int rename_aside(SbxLifecycle *l, const char *name, const char *id, const char *final_name,
                        SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *holder = NULL;
        _cleanup_free_ char *aside = NULL;
        uint8_t b[4];
        int r;

        r = inspect_container(l, final_name, &holder, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {         /* gone meanwhile */
                sbx_error_free(error);
                return sbx_docker_container_rename(l->docker, id, final_name, error);
        }
        if (r < 0)
                return r;
        if (names_it(holder, name))
                return sbx_error_set(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", plain(name));
        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        if (asprintf(&aside, "%s.%02x%02x%02x%02x", final_name, b[0], b[1], b[2], b[3]) < 0)
                return -ENOMEM;
        log_notice("Container name %s is held by container %s, which is not '%s' (its name label: %s): it is "
                   "created as %s", final_name, holder->id, plain(name),
                   sbx_observed_get_label(holder, SBX_LABEL_SANDBOX_NAME) ?: "none", aside);
        return sbx_docker_container_rename(l->docker, id, aside, error);
}

/* Everything after the container exists: start, verify, rename, record (the row
 * ends the intent). On failure the caller removes the container. */
static int start_verify_record(SbxLifecycle *l, const char *name, const SbxSpec *spec, const char *image,
                               const char *fp, const SbxOwner *owner, const Pins *pins, const char *id,
                               const char *final_name, SbxObserved **ret, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_mount_table_done) SbxMountTable mounts = {};
        uint64_t t0 = now_usec();
        int r;

#ifdef SBX_TEST_SEAMS
        if (l->seam_before_start)
                l->seam_before_start(l, id, l->seam_userdata);
#endif
        if ((r = sbx_docker_container_start(l->docker, id, error)) < 0)
                return r;
#ifdef SBX_TEST_SEAMS
        if (l->seam_after_start)
                l->seam_after_start(l, id, l->seam_userdata);
#endif
        if ((r = sbx_container_mounts(l->docker, id, t0, SBX_MOUNT_REPORT_TIMEOUT_MS, &mounts, error)) < 0 ||
            (r = sbx_mounts_verify(&mounts, spec->volumes, pins->fds, spec->n_volumes, error)) < 0 ||
            (r = inspect_container(l, id, &o, error)) < 0 ||
            (r = verify_published(l, name, spec, image, owner, o, error)) < 0)
                return r;
        /* Verified: the final name says so, should the row below never be written. */
        r = sbx_docker_container_rename(l->docker, id, final_name, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT)) {
                sbx_error_free(error);
                r = rename_aside(l, name, id, final_name, error);
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return remap(error, SBX_ERROR_SANDBOX_EXISTS, "Container name '%s' is taken", final_name);
        if (r < 0 || (r = record(l, name, spec, fp, owner, o, error)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* Create, with the name's lock held. */
static int create_locked(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         SbxSandbox **ret, SbxError *error) {
        _cleanup_free_ char *existing = NULL, *image = NULL, *image_id = NULL, *cname = NULL, *pending = NULL,
                *id = NULL, *init_volume = NULL, *json = NULL;
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(pins_done) Pins pins = {};
        const SbxFingerprints *fps = NULL;
        const SbxSpec *stored = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        int r;

        if ((r = settle_name(l, name, error)) < 0)
                return r;
        r = find_container(l, name, true, &existing, error);
        if (r < 0)
                return r;
        if (r > 0)
                return sbx_error_set(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", plain(name));
        /* A row without its container is stale (removed behind our back): drop it. */
        if ((r = sbx_store_delete_sandbox(l->store, name, error)) < 0)
                return r;

        if ((r = resolve_image(l, spec, owner, &image, &image_id, error)) < 0 ||
            (r = check_admissible(l, spec, owner, &pins, error)) < 0 ||
            (r = sbx_init_volume_ensure(l->docker, l->init_dir, &init_volume, error)) < 0 ||
            (r = sbx_spec_fingerprint(spec, l->policy->python_version, fp)) < 0 ||
            (r = sbx_container_body(&(SbxContainerParams) {
                    .name = name, .spec = spec, .image = image, .fingerprint = fp,
                    .uid = owner->uid, .init_volume = init_volume,
                    .pids_limit = l->policy->pids_limit, .publish_address = l->policy->publish_address,
                    .service = l->service_id,
            }, &body)) < 0 ||
            (r = sbx_container_name(name, &cname)) < 0 ||
            (r = sbx_spec_to_json_string(spec, &json)) < 0)
                return r;
        if (asprintf(&pending, "%s" PENDING_SUFFIX, cname) < 0)
                return -ENOMEM;

        /* The intent first: whatever happens from here on, the container is found again.
         * It also counts against the owner's limit, with the other creates in flight. */
        r = sbx_store_put_intent(l->store, &(SbxIntentRow) {
                .name = (char *) name,
                .owner_uid = owner->uid,
                .owner_gid = owner->gid,
                .container_name = pending,
                .fingerprint = fp,
                .spec_json = json,
        }, (unsigned) l->policy->max_sandboxes_per_user, error);
        if (r < 0 || (r = sbx_policy_check_count(l->policy, (size_t) r, error)) < 0)
                return r;
#ifdef SBX_TEST_SEAMS
        if (l->seam_before_create)
                l->seam_before_create(l, pending, l->seam_userdata);
#endif
        r = sbx_docker_container_create(l->docker, pending, body, &id, error);
        /* No answer: Docker may have made it; the intent stays to settle that. */
        if (r < 0 && !sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE)) {
                SbxError e = SBX_ERROR_NULL;

                if (sbx_store_delete_intent(l->store, name, &e) < 0)
                        log_warning("Could not end the create of '%s' in the store: %s", plain(name),
                                    e.message ?: "unknown error");
                sbx_error_free(&e);
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return remap(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", plain(name));
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return remap(error, SBX_ERROR_BACKEND_ERROR, "Image not present on this host: %s", image);
        if (r < 0)
                return r;
        if (image_id && (r = check_snapshot_image(l, name, id, image, image_id, error)) < 0) {
                undo_create(l, name, id);
                return r;
        }

        r = start_verify_record(l, name, spec, image, fp, owner, &pins, id, cname, &o, error);
        if (r < 0) {
                undo_create(l, name, id);
                return r;
        }

        /* Judged like every later read of it: by the spec the row records. */
        r = sbx_spec_memo_get(l->specs, json, &stored, &fps);
        if (r < 0)
                return r;
        r = make_sandbox(l, name, o, &(SbxSandboxRow) { .owner_gid = owner->gid, .fingerprint = fp,
                                                        .created_us = (int64_t) now_usec() }, stored, fps, ret);
        if (r >= 0)
                TAKE_PTR(o);
        return r;
}

static int check_namespace(const char *name, const SbxOwner *owner, SbxError *error) {
        if (sbx_name_unqualify(name, &(const char *) { NULL }) != owner->uid)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "'%s' is not a name of uid %u", name,
                                     (unsigned) owner->uid);
        return 0;
}

int sbx_lifecycle_create(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = check_namespace(name, owner, error)) < 0 || (r = lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return create_locked(l, name, spec, owner, ret, error);
}

int sbx_lifecycle_verify(SbxLifecycle *l, const char *name, const SbxSpec *desired, SbxVerdict *ret_verdict,
                         unsigned *ret_fields, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *found = NULL, *row = NULL;
        const SbxSpec *stored = NULL;
        SbxFingerprints fps;
        int r;

        if ((r = sbx_spec_fingerprints(desired, &fps)) < 0 || (r = locate_existing(l, name, &o, &found, error)) < 0)
                return r;

        *ret_verdict = sbx_verdict(desired, &fps, o, SBX_CONTRACT_VERSION);
        *ret_fields = 0;
        /* Which fields differ is told by the stored spec: read only for a mismatch. */
        if (*ret_verdict == SBX_VERDICT_MISMATCH) {
                if ((r = load_row(l, name, o->id, TAKE_PTR(found), &row, &stored, NULL, error)) < 0)
                        return r;
                *ret_fields = sbx_verify_mismatched_fields(desired, stored, row ? row->fingerprint : NULL, o);
        }
        /* Judged by what is mounted, not by what was asked (docs/security.md). */
        if (*ret_verdict == SBX_VERDICT_MATCH && !mounts_truthful(l, o)) {
                *ret_verdict = SBX_VERDICT_MISMATCH;
                *ret_fields = SBX_SPEC_FIELD_VOLUMES;
        }
        return 0;
}

/* A start is safe only for a container whose first process is this service's init
 * running as another uid (docs/security.md). root's containers (xagent's own among them)
 * are exempt: nothing can give root more than it has. */
static int check_startable(SbxLifecycle *l, const char *name, const SbxObserved *o, SbxError *error) {
        const char *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned posture;

        if (!o->owner_valid)
                return sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                                     "Sandbox '%s' has no valid owner label; it is not started", plain(name));
        if (o->owner == 0)
                return 0;
        posture = posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0);
        if (posture == 0)
                return 0;
        sbx_posture_items_to_names(posture, items);
        return sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                             "Sandbox '%s' does not carry the current hardened posture (first: %s); it is not "
                             "started: delete it and create it again", plain(name), items[0]);
}

/* After a start, or for one found running: what the container has mounted must be
 * what its sources name now, as checked; else it is stopped at once. */
static int verify_mounts_or_stop(SbxLifecycle *l, const char *id, uint64_t since_us, const SbxSpec *view,
                                 const Pins *pins, SbxError *error) {
        _cleanup_(sbx_mount_table_done) SbxMountTable mounts = {};
        SbxError e = SBX_ERROR_NULL;
        int r;

        r = sbx_container_mounts(l->docker, id, since_us, SBX_MOUNT_REPORT_TIMEOUT_MS, &mounts, error);
        if (r >= 0)
                r = sbx_mounts_verify(&mounts, view->volumes, pins->fds, view->n_volumes, error);
        if (r >= 0)
                return 0;
        if (sbx_docker_container_stop(l->docker, id, 0, &e) < 0)
                log_error("Could not stop container %s after a failed mount check: %s", id,
                          e.message ?: "unknown error");
        sbx_error_free(&e);
        return r;
}

/* Checks the volumes Docker will mount (the container's own Mounts and working
 * directory) for the owner as at create, starts the container if it is not
 * running, and verifies its mounts. */
static int start_checked(SbxLifecycle *l, const char *name, const char *id, const SbxObserved *o, SbxError *error) {
        _cleanup_(pins_done) Pins pins = {};
        SbxOwnerInfo info;
        const SbxSpec view = {
                .volumes = o->volumes,
                .n_volumes = o->n_volumes,
                .working_dir = o->working_dir ?: (char *) "/",
        };
        uint64_t since = now_usec();
        int r, started = 0;

        if ((r = check_startable(l, name, o, error)) < 0 ||
            (r = sbx_owner_info_lookup(o->owner, &info, error)) < 0 ||
            (r = sbx_policy_check_guest_paths(&view, error)) < 0 ||
            (r = sbx_policy_check_volumes(l->policy, &info.owner, &view, l->docker_socket, error)) < 0 ||
            (r = pin_volumes(l, &view, &info.owner, &pins, error)) < 0)
                return r;
        if (o->state == SBX_STATE_RUNNING) {
                /* Found running: judged by the report of the start it runs from. */
                if (!o->started_at || sbx_parse_rfc3339_usec(o->started_at, &since) < 0)
                        since = 0;
                since = since > MOUNT_REPORT_SLACK_US ? since - MOUNT_REPORT_SLACK_US : 0;
        } else {
                r = sbx_docker_container_start(l->docker, id, error);
                if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
                if (r < 0)
                        return r;
                started = r == 0;
        }
        /* Only this service's init reports the mounts; check_startable() lets a
         * container without it start only for root (xagent's own, say). */
        if (!o->init_volume)
                return started;
        r = verify_mounts_or_stop(l, id, since, &view, &pins, error);
        return r < 0 ? r : started;
}

/* What Docker did is done: a store write that fails after it does not make the
 * operation fail (docs/lifecycle.md). The row is repaired by the start-up
 * reconciliation (sbx_lifecycle_reconcile); until then a row that says stopped keeps
 * an owner's exec out, the safe side. */
static void store_after_docker(SbxLifecycle *l, const char *name, int r, SbxError *e) {
        if (r < 0)
                log_warning("'%s': Docker's part is done, but the store was not updated (repaired at the next "
                            "start-up): %s", plain(name), e->message ?: strerror(-r));
        sbx_error_free(e);
}

/* Start and stop: under the lock, converge the container and the row's state. */
static int set_running_locked(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s,
                              SbxError *error) {
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        int r, changed = 0;

        if ((r = locate_existing(l, name, &o, NULL, error)) < 0)
                return r;

        /* Until its mounts are verified the row says stopped, so nothing of the owner's
         * runs in it (exec.c) should the check fail and the stop too, or this process die. */
        if (running && (r = sbx_store_update_sandbox_state(l->store, name, SBX_SANDBOX_STOPPED, error)) < 0)
                return r;
        if (running)
                r = start_checked(l, name, o->id, o, error);
        else if (o->state == SBX_STATE_RUNNING)
                r = sbx_docker_container_stop(l->docker, o->id, timeout_s, error);
        else
                r = 1;
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
        if (r < 0)
                return r;
        changed = running ? r : r == 0;
        store_after_docker(l, name, sbx_store_update_sandbox_state(l->store, name, running ? SBX_SANDBOX_RUNNING :
                                                                   SBX_SANDBOX_STOPPED, &e), &e);
        return changed;
}

static int set_running(SbxLifecycle *l, const char *name, bool running, unsigned timeout_s, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return set_running_locked(l, name, running, timeout_s, error);
}

int sbx_lifecycle_start(SbxLifecycle *l, const char *name, SbxError *error) {
        return set_running(l, name, true, 0, error);
}

int sbx_lifecycle_stop(SbxLifecycle *l, const char *name, unsigned timeout_s, SbxError *error) {
        return set_running(l, name, false, timeout_s, error);
}

static int delete_locked(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_free_ char *id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r, removed = 0;

        if ((r = settle_name(l, name, error)) < 0 || (r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        /* By the id the row records (a container this service made for that name);
         * else, or when it is gone, whatever carries the name (xagent's own, say). */
        if (row && (r = removed = remove_container(l, row->container_id, error)) < 0)
                return r;
        if (!removed) {
                if ((r = find_container(l, name, true, &id, error)) < 0 ||
                    (r > 0 && (r = removed = remove_container(l, id, error)) < 0))
                        return r;
        }
        r = sbx_store_delete_sandbox(l->store, name, &e);
        if (removed) {
                store_after_docker(l, name, r, &e);
                return 1;
        }
        if (r < 0) {
                sbx_error_move(error, &e);      /* nothing was done: the store's error is the answer */
                return r;
        }
        return r > 0;
}

int sbx_lifecycle_delete(SbxLifecycle *l, const char *name, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return delete_locked(l, name, error);
}

static const char *const outcome_table[_SBX_ENSURE_OUTCOME_MAX] = {
        [SBX_ENSURE_CREATED]   = "created",
        [SBX_ENSURE_STARTED]   = "started",
        [SBX_ENSURE_REUSED]    = "reused",
        [SBX_ENSURE_RECREATED] = "recreated",
};

const char *sbx_ensure_outcome_to_string(SbxEnsureOutcome o) {
        return o >= 0 && o < _SBX_ENSURE_OUTCOME_MAX ? outcome_table[o] : NULL;
}

/* Records a row for a container found without one (adopted: by the reconciliation,
 * or by an ensure that reuses it), within the owner's max_sandboxes_per_user: an
 * intent reserves the place, counted with the owner's rows and creates in flight in
 * one transaction (as a create's does), and the row ends it. Returns 1 if recorded,
 * 0 when the owner has no place left: the container stays as it is, listed
 * unverified without a row — it is not this service's to remove. */
static int put_adopted(SbxLifecycle *l, const SbxSandboxRow *row, const SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *reserved = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        /* No container has this provisional name: an intent left by a crash here is
         * settled by the final name, or dropped (and the adoption made again). */
        if (asprintf(&reserved, "%s" PENDING_SUFFIX, o->name && o->name[0] == '/' ? o->name + 1 : o->name ?: "") < 0)
                return -ENOMEM;
        r = sbx_store_put_intent(l->store, &(SbxIntentRow) {
                .name = row->name,
                .owner_uid = row->owner_uid,
                .owner_gid = row->owner_gid,
                .container_name = reserved,
                .fingerprint = row->fingerprint,
                .spec_json = row->spec_json,
        }, (unsigned) l->policy->max_sandboxes_per_user, error);
        if (r < 0)
                return r;
        if (l->policy->max_sandboxes_per_user > 0 && r >= l->policy->max_sandboxes_per_user) {
                log_notice("Sandbox '%s' (container %s) is not recorded: uid %u has max_sandboxes_per_user (%" PRIi64
                           ") sandboxes already; it stays, unverified", plain(row->name), o->id,
                           (unsigned) row->owner_uid, l->policy->max_sandboxes_per_user);
                return 0;
        }
        r = sbx_store_put_sandbox(l->store, row, error);
        if (r < 0 && sbx_store_delete_intent(l->store, row->name, &e) < 0)
                log_warning("Could not drop the reservation of '%s': %s", plain(row->name),
                            e.message ?: "unknown error");
        sbx_error_free(&e);
        return r < 0 ? r : 1;
}

/* The first posture item the container lacks, or NULL: it is hardened. */
static const char *lacks(SbxLifecycle *l, const SbxObserved *o) {
        const char *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned posture = posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0);

        if (posture == 0)
                return NULL;
        sbx_posture_items_to_names(posture, items);
        return items[0];
}

/* A verified container without its row (the row was lost, or it is xagent's own):
 * recorded again, within the owner's limit. Returns 1 if recorded, 0 if not. */
static int record_found(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                        const SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *json = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        const char *missing = lacks(l, o);
        int r = sbx_spec_fingerprint(spec, l->policy->python_version, fp);

        if (r < 0 || (r = sbx_spec_to_json_string(spec, &json)) < 0)
                return r;
        r = put_adopted(l, &(SbxSandboxRow) {
                .name = (char *) name,
                .owner_uid = owner->uid,
                .owner_gid = owner->gid,
                .container_id = o->id,
                .spec_json = json,
                /* The label may be another Python's fingerprint of the same spec: keep it. */
                .fingerprint = (char *) (o->fingerprint_label ?: fp),
                .contract_version = SBX_CONTRACT_VERSION,
                .state = o->state == SBX_STATE_RUNNING ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
        }, o, error);
        if (r > 0 && missing)
                log_notice("Sandbox '%s' (container %s) recorded; it does not carry the service's posture (first: "
                           "%s): hardened is false", plain(name), o->id, missing);
        return r;
}

/* What the desired spec makes of the sandbox there is: reuse it (starting it if need
 * be), or a mismatch naming the fields. */
static int ensure_existing(SbxLifecycle *l, const char *name, const SbxSpec *desired, const SbxOwner *owner,
                           bool *ret_reusable, SbxEnsureOutcome *ret_outcome, SbxError *error) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *found = NULL, *row = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        const SbxFingerprints *stored_fps = NULL;
        const SbxSpec *stored = NULL;
        SbxFingerprints fps;
        SbxVerdict verdict;
        int r;

        /* The row located by is the row described and judged by: one store read. */
        if ((r = locate(l, name, &o, &found, error)) <= 0 ||
            (r = load_row(l, name, o->id, TAKE_PTR(found), &row, &stored, &stored_fps, error)) < 0 ||
            (r = make_sandbox(l, name, o, row, stored, stored_fps, &sb)) < 0)
                return r;
        TAKE_PTR(o);                    /* sb->observed */
        if ((r = sbx_spec_fingerprints(desired, &fps)) < 0)
                return r;
        verdict = sbx_verdict(desired, &fps, sb->observed, SBX_CONTRACT_VERSION);
        if (verdict == SBX_VERDICT_MATCH && !sb->hardened && sb->owner != 0)
                verdict = SBX_VERDICT_MISMATCH;         /* what is mounted is not what it says */
        *ret_reusable = verdict == SBX_VERDICT_MATCH ||
                        (verdict == SBX_VERDICT_UNVERIFIED && stored && sbx_spec_equal(stored, desired));
        if (!*ret_reusable) {
                const char *names[SBX_SPEC_FIELD_COUNT + 1];
                _cleanup_free_ char *list = NULL;
                size_t size = 0;
                FILE *f = open_memstream(&list, &size);

                if (!f)
                        return -ENOMEM;
                sbx_spec_fields_to_names(sbx_verify_mismatched_fields(desired, stored, row ? row->fingerprint : NULL,
                                                                      sb->observed), names);
                for (const char **n = names; *n; n++)
                        fprintf(f, "%s%s", n == names ? "" : ", ", *n);
                if (fclose(f) != 0)
                        return -ENOMEM;
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "Sandbox '%s' exists with a different spec (%s); mismatched fields: %s",
                                     plain(name), sbx_verdict_to_string(verdict), isempty(list) ? "unknown" : list);
        }
        if (verdict == SBX_VERDICT_MATCH && !row && (r = record_found(l, name, desired, owner, sb->observed, error)) < 0)
                return r;
        if (sb->state == SBX_STATE_RUNNING) {
                *ret_outcome = SBX_ENSURE_REUSED;
                return 1;
        }
        if ((r = set_running_locked(l, name, true, 0, error)) < 0)
                return r;
        *ret_outcome = SBX_ENSURE_STARTED;
        return 1;
}

/* A mismatched sandbox, replaced: stopped (it must really stop), deleted, created. */
static int recreate_locked(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                           unsigned stop_timeout_s, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        r = set_running_locked(l, name, false, stop_timeout_s, &e);
        if (r >= 0 && (r = locate(l, name, &o, NULL, &e)) > 0 && o->state == SBX_STATE_RUNNING)
                r = sbx_error_set(&e, SBX_ERROR_IO, "it is still running");
        if (r < 0) {
                r = sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                                  "Sandbox '%s' does not match and could not be stopped: %s", plain(name),
                                  e.message ?: "unknown error");
                sbx_error_free(&e);
                return r;
        }
        return delete_locked(l, name, error);
}

int sbx_lifecycle_ensure(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         const SbxEnsureOptions *options, SbxSandbox **ret, SbxEnsureOutcome *ret_outcome,
                         SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        SbxEnsureOutcome outcome = SBX_ENSURE_CREATED;
        SbxError mismatch = SBX_ERROR_NULL;
        bool reusable = false;
        int r;

        if ((r = check_namespace(name, owner, error)) < 0 || (r = lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        r = ensure_existing(l, name, spec, owner, &reusable, &outcome, &mismatch);
        if (r < 0 && !(sbx_error_is(&mismatch, SBX_ERROR_RUNTIME_CONFLICT) && options->recreate)) {
                sbx_error_move(error, &mismatch);
                return r;
        }
        if (r < 0) {            /* a mismatch, to be replaced */
                sbx_error_free(&mismatch);
                if ((r = recreate_locked(l, name, spec, owner, options->stop_timeout_s, error)) < 0)
                        return r;
                outcome = SBX_ENSURE_RECREATED;
        } else if (r > 0) {
                *ret_outcome = outcome;
                return describe_by_name(l, name, ret, error);
        }
        if ((r = create_locked(l, name, spec, owner, ret, error)) < 0)
                return r;
        *ret_outcome = outcome;
        return 0;
}

/* ---- snapshots ------------------------------------------------------------------- */

/* A snapshot intent's token: 128 random bits in hex. */
static int new_token(char ret[static 33]) {
        uint8_t b[16];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return errno > 0 ? -errno : -EIO;
        for (size_t i = 0; i < sizeof b; i++)
                snprintf(ret + 2 * i, 3, "%02x", b[i]);
        return 0;
}

static bool image_tagged(json_object *image, const char *ref) {
        json_object *tags = json_object_object_get(image, "RepoTags");

        for (size_t i = 0; json_object_is_type(tags, json_type_array) && i < json_object_array_length(tags); i++)
                if (streq_ptr(json_object_get_string(json_object_array_get_idx(tags, i)), ref))
                        return true;
        return false;
}

/* Removes the image by its id; 1 if it was there, 0 if it was gone already. */
static int remove_image(SbxLifecycle *l, const char *id, SbxError *error) {
        int r = sbx_docker_image_remove(l->docker, id, false, error);

        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        return r < 0 ? r : 1;
}

/* Finishes or undoes an interrupted snapshot, with its id's lock held. Of the images its
 * commit made (its token label, tagged or not), the one still tagged with the intent's
 * reference is complete and recorded — unless the intent was abandoned: its caller was
 * told the snapshot failed — and every other is removed; then the intent ends. With
 * keep_if_none, finding none keeps it, abandoned: Docker may still be committing.
 * Returns 1 and the recorded image id, or 0; on a Docker or store failure the intent
 * stays, for the next try. */
static int settle_snapshot_intent(SbxLifecycle *l, const SbxSnapshotIntentRow *in, bool keep_if_none,
                                  char **ret_image_id, SbxError *error) {
        _cleanup_(json_object_putp) json_object *images = NULL;
        _cleanup_free_ char *label = NULL;
        const char *adopt = NULL;
        size_t n;
        int r;

        if (asprintf(&label, SBX_LABEL_SNAPSHOT_INTENT "=%s", in->token) < 0)
                return -ENOMEM;
        if ((r = sbx_docker_image_list(l->docker, label, &images, error)) < 0)
                return r;
        n = json_object_array_length(images);
        for (size_t i = 0; i < n && !in->abandoned && !adopt; i++)
                if (image_tagged(json_object_array_get_idx(images, i), in->image_tag))
                        adopt = json_object_get_string(json_object_object_get(json_object_array_get_idx(images, i), "Id"));
        /* The others first: once the row is written, nothing would remove them. */
        for (size_t i = 0; i < n; i++) {
                const char *id = json_object_get_string(json_object_object_get(json_object_array_get_idx(images, i), "Id"));

                if (isempty(id) || streq_ptr(id, adopt))
                        continue;
                if ((r = remove_image(l, id, error)) < 0)
                        return r;
                log_notice("Removed image %s of an interrupted snapshot '%s' (never recorded)", id, plain(in->id));
        }
        if (!isempty(adopt)) {
                /* Writing the row ends the intent (store.h). */
                r = sbx_store_add_snapshot(l->store, &(SbxSnapshotRow) {
                        .id = in->id,
                        .owner_uid = in->owner_uid,
                        .source_sandbox = in->source_sandbox,
                        .image_id = (char *) adopt,
                        .image_tag = in->image_tag,
                        .created_us = in->created_us,
                }, error);
                if (r < 0)
                        return r;
                log_notice("Recorded snapshot '%s' (image %s) of an interrupted snapshot", plain(in->id), adopt);
                if (ret_image_id && !(*ret_image_id = strdup(adopt)))
                        return -ENOMEM;
                return 1;
        }
        if (n == 0 && keep_if_none)
                r = sbx_store_abandon_snapshot_intent(l->store, in->id, error);
        else
                r = sbx_store_delete_snapshot_intent(l->store, in->id, error);
        return r < 0 ? r : 0;
}

/* The interrupted snapshot of the id, if any, settled first (with its lock held). */
static int settle_snapshot_id(SbxLifecycle *l, const char *snapshot_id, SbxError *error) {
        _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *in = NULL;
        int r = sbx_store_get_snapshot_intent(l->store, snapshot_id, &in, error);

        if (r <= 0)
                return r;
        r = settle_snapshot_intent(l, in, false, NULL, error);
        if (r < 0 && (sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE) ||
                      sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))) {
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                return remap(error, error->kind == SBX_ERROR_DOCKER_CONFLICT ? SBX_ERROR_BACKEND_ERROR
                                                                              : SBX_ERROR_BACKEND_UNAVAILABLE,
                             "An interrupted snapshot '%s' is still to be settled: %s", plain(snapshot_id), why ?: "");
        }
        return r;
}

/* The commit's config (labels.h), from the image the container was made from. */
static int commit_config(SbxLifecycle *l, const char *container_id, const char *token, json_object **ret,
                         SbxError *error) {
        _cleanup_(json_object_putp) json_object *container = NULL, *image = NULL;
        json_object *image_id;
        int r;

        if ((r = sbx_docker_container_inspect(l->docker, container_id, &container, error)) < 0)
                return r;
        if (json_object_object_get_ex(container, "Image", &image_id) && json_object_is_type(image_id, json_type_string)) {
                r = sbx_docker_image_inspect(l->docker, json_object_get_string(image_id), &image, error);
                if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        sbx_error_free(error);          /* gone: nothing to restore from */
                else if (r < 0)
                        return r;
        }
        return sbx_labels_build_commit_config(image ? json_object_object_get(image, "Config") : NULL, token, ret);
}

/* After a commit that failed or whose answer was lost, what Docker made decides: its
 * image, complete, is recorded and the snapshot reported as made (what Docker did is
 * reported as done); anything else is removed and the commit's error stands. When
 * Docker cannot be asked, or may still be committing (no answer), the intent stays,
 * abandoned: whatever the commit made is removed once Docker answers. */
static int commit_failed(SbxLifecycle *l, const SbxSnapshotIntentRow *in, const char *name, int r,
                         char **ret_image_id, SbxError *error) {
        _cleanup_free_ char *image_id = NULL;
        SbxError e = SBX_ERROR_NULL;
        int k = settle_snapshot_intent(l, in, sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE), &image_id, &e);

        if (k > 0) {
                log_notice("The commit of snapshot '%s' failed (%s), but Docker made its image %s: recorded",
                           plain(in->id), error->message ?: "unknown error", image_id);
                sbx_error_free(error);
                if (ret_image_id)
                        *ret_image_id = TAKE_PTR(image_id);
                return 0;
        }
        if (k < 0) {
                log_warning("Could not settle the failed commit of snapshot '%s' now, will retry: %s", plain(in->id),
                            e.message ?: "unknown error");
                sbx_error_free(&e);
                if (sbx_store_abandon_snapshot_intent(l->store, in->id, &e) < 0)
                        log_warning("Could not mark the snapshot '%s' failed in the store: %s", plain(in->id),
                                    e.message ?: "unknown error");
        }
        sbx_error_free(&e);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
        return r;
}

/* The row could not be written: the image goes again, and with it the intent (which,
 * should the removal fail, removes it later). */
static void undo_snapshot(SbxLifecycle *l, const SbxSnapshotIntentRow *in, const char *image_id) {
        SbxError e = SBX_ERROR_NULL;

        (void) sbx_store_abandon_snapshot_intent(l->store, in->id, &e);
        sbx_error_free(&e);
        if (remove_image(l, image_id, &e) < 0)
                log_warning("Could not remove image %s of snapshot '%s' after a store failure, will retry: %s",
                            image_id, plain(in->id), e.message ?: "unknown error");
        else if (sbx_store_delete_snapshot_intent(l->store, in->id, &e) < 0)
                log_warning("Could not end the snapshot '%s' in the store: %s", plain(in->id),
                            e.message ?: "unknown error");
        sbx_error_free(&e);
}

int sbx_lifecycle_snapshot(SbxLifecycle *l, const char *name, const char *snapshot_id, char **ret_image_id,
                           SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL, *snap_lock = NULL;
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *existing = NULL;
        _cleanup_(json_object_putp) json_object *config = NULL, *image = NULL;
        _cleanup_free_ char *id = NULL, *tag = NULL, *ref = NULL, *image_id = NULL;
        SbxSnapshotIntentRow in;
        char token[33];
        int r;

        /* Lock order: the sandbox, then the snapshot id. */
        if ((r = lock_key(l, "sandbox", name, &lock)) < 0 || (r = lock_key(l, "snapshot", snapshot_id, &snap_lock)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &id, error)) < 0 ||
            (r = settle_snapshot_id(l, snapshot_id, error)) < 0)
                return r;
        if ((r = sbx_store_get_snapshot(l->store, snapshot_id, &existing, error)) < 0)
                return r;
        if (r > 0)
                return sbx_error_set(error, SBX_ERROR_SNAPSHOT_EXISTS, "Snapshot already exists: %s",
                                     plain(snapshot_id));

        if ((r = sbx_snapshot_image_tag(snapshot_id, &tag)) < 0 || (r = sbx_snapshot_image_ref(snapshot_id, &ref)) < 0)
                return r;
        /* An image already tagged so (left by xagent, or by hand) is not overwritten. */
        r = sbx_docker_image_inspect(l->docker, ref, &image, error);
        if (r >= 0)
                return sbx_error_set(error, SBX_ERROR_SNAPSHOT_EXISTS, "Snapshot image already exists: %s", ref);
        if (!sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        sbx_error_free(error);

        /* The committed image attests nothing, belongs to no one, and starts as its own
         * image did (labels.h). */
        if ((r = new_token(token)) < 0)
                return r;
        r = commit_config(l, id, token, &config, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
        if (r < 0)
                return r;

        /* The intent first: whatever the commit makes is found again by its token. */
        in = (SbxSnapshotIntentRow) {
                .id = (char *) snapshot_id,
                .owner_uid = sbx_name_unqualify(snapshot_id, &(const char *) { NULL }),
                .source_sandbox = (char *) name,
                .image_tag = ref,
                .token = token,
                .created_us = (int64_t) now_usec(),
        };
        if ((r = sbx_store_put_snapshot_intent(l->store, &in, error)) < 0)
                return r;
        r = sbx_docker_commit(l->docker, id, SBX_SNAPSHOT_REPOSITORY, tag, config, &image_id, error);
        if (r < 0)
                return commit_failed(l, &in, name, r, ret_image_id, error);

        /* Writing the row ends the intent (store.h). */
        r = sbx_store_add_snapshot(l->store, &(SbxSnapshotRow) {
                .id = (char *) snapshot_id,
                .owner_uid = in.owner_uid,
                .source_sandbox = (char *) name,
                .image_id = image_id,
                .image_tag = ref,
                .created_us = in.created_us,
        }, error);
        if (r < 0) {
                undo_snapshot(l, &in, image_id);
                return r;
        }
        if (ret_image_id)
                *ret_image_id = TAKE_PTR(image_id);
        return 0;
}

int sbx_lifecycle_delete_snapshot(SbxLifecycle *l, const char *snapshot_id, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_snapshot_row_freep) SbxSnapshotRow *row = NULL;
        int r;

        /* An interrupted snapshot of the id is settled first: recorded, its image then
         * removed below, or removed there. */
        if ((r = lock_key(l, "snapshot", snapshot_id, &lock)) < 0 || (r = settle_snapshot_id(l, snapshot_id, error)) < 0)
                return r;
        if ((r = sbx_store_get_snapshot(l->store, snapshot_id, &row, error)) <= 0)
                return r;
        /* By the image id recorded when it was made: the tag may have been moved to
         * someone else's image since. */
        r = sbx_docker_image_remove(l->docker, row->image_id, false, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                sbx_error_free(error);
        else if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT)) {
                /* in use by a container: Docker's message says which */
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                return remap(error, SBX_ERROR_BACKEND_ERROR, "Snapshot '%s' is in use: %s", plain(snapshot_id), why ?: "");
        } else if (r < 0)
                return r;
        if ((r = sbx_store_delete_snapshot(l->store, snapshot_id, error)) < 0)
                return r;
        return 1;
}

/* Every interrupted snapshot settled, each under its id's lock with the intent read
 * again. One that cannot be settled for now (its image in use) is logged and kept;
 * Docker gone stops the reconciliation. */
static int settle_snapshot_intents(SbxLifecycle *l, SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_snapshot_intent_row_list_freep) SbxSnapshotIntentRow **intents = NULL;
        int r;

        if ((r = sbx_store_list_snapshot_intents(l->store, &intents, error)) < 0)
                return r;
        for (SbxSnapshotIntentRow **in = intents; *in; in++) {
                _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
                _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *again = NULL;

                if ((r = lock_key(l, "snapshot", (*in)->id, &lock)) < 0 ||
                    (r = sbx_store_get_snapshot_intent(l->store, (*in)->id, &again, error)) < 0)
                        return r;
                if (r > 0 && (r = settle_snapshot_intent(l, again, false, NULL, error)) < 0) {
                        if (sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE) || r == -ENOMEM)
                                return r;
                        log_warning("Could not settle the interrupted snapshot '%s' yet: %s", plain((*in)->id),
                                    error->message ?: "unknown error");
                        sbx_error_free(error);
                        continue;
                }
                st->snapshots += r >= 0;
        }
        return 0;
}

static int row_cmp(const void *key, const void *elem) {
        return strcmp(key, (*(SbxSandboxRow *const *) elem)->name);
}

/* A listed container's sandbox from the list's answer, its row and its cached
 * judgement; without a judgement, from an inspect (which is then cached). */
static int list_one(SbxLifecycle *l, json_object *c, const char *name, SbxSandboxRow *const *rows, size_t n_rows,
                    SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *s = NULL;
        SbxSandboxRow *const *found = bsearch(name, rows, n_rows, sizeof(SbxSandboxRow *), row_cmp);
        const char *id = json_object_get_string(json_object_object_get(c, "Id"));
        const SbxSandboxRow *row = found && streq((*found)->container_id, id) ? *found : NULL;
        json_object *labels = json_object_object_get(c, "Labels");
        SbxJudgement j = {};
        int r;

        if (!l->judgements || !sbx_verdict_cache_get(l->judgements, id, row ? row->fingerprint : "", &j)) {
                r = describe(l, name, id, &s, error);
                if (r >= 0 && l->judgements)
                        sbx_verdict_cache_put(l->judgements, id, row ? row->fingerprint : "", &(SbxJudgement) {
                                .verdict = s->verdict, .hardened = s->hardened, .image = s->image,
                                .created_us = s->created_us });
                if (r >= 0)
                        s->observed = sbx_observed_free(s->observed);
                *ret = TAKE_PTR(s);
                return r;
        }
        s = calloc(1, sizeof(SbxSandbox));
        if (!s) {
                free(j.image);
                return -ENOMEM;
        }
        s->image = j.image;
        s->verdict = j.verdict;
        s->hardened = j.hardened;
        s->created_us = j.created_us;
        s->owner_valid = listed_owner(c, &s->owner) >= 0;
        s->status = strdup(json_object_get_string(json_object_object_get(c, "State")) ?: "");
        s->state = sbx_state_from_status(s->status);
        s->name = strdup(name);
        s->container_id = strdup(id);
        s->fingerprint = strdup(sbx_label_attestation(json_object_get_string(
                json_object_object_get(labels, SBX_LABEL_SPEC_FINGERPRINT))) ?: "");
        s->has_row = row != NULL;
        if (!s->status || !s->name || !s->container_id || !s->fingerprint || !s->image)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

int sbx_lifecycle_list(SbxLifecycle *l, uid_t owner, SbxSandbox ***ret, size_t *ret_n, SbxError *error) {
        _cleanup_(sbx_sandbox_row_list_freep) SbxSandboxRow **rows = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        _cleanup_free_ char *owner_filter = NULL;
        const char *filters[3] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE };
        SbxSandbox **out = NULL;
        size_t n = 0, len;
        int r, n_rows;

        /* Another owner's containers are not even looked at; root's have no label
         * (xagent's own) or "0", so root's are picked below. */
        if (owner != SBX_STORE_ANY_OWNER && owner != 0) {
                if (asprintf(&owner_filter, "%s=%u", SBX_LABEL_OWNER, (unsigned) owner) < 0)
                        return -ENOMEM;
                filters[1] = owner_filter;
        }
        if ((n_rows = sbx_store_list_sandboxes(l->store, owner, &rows, error)) < 0)
                return n_rows;
        r = sbx_docker_container_list(l->docker, filters, &list, error);
        if (r < 0)
                return r;
        len = json_object_array_length(list);
        out = calloc(len + 1, sizeof(SbxSandbox *));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < len; i++) {
                json_object *c = json_object_array_get_idx(list, i), *id, *labels, *name;
                _cleanup_free_ char *qualified = NULL;
                uid_t uid = 0;

                if (!json_object_object_get_ex(c, "Id", &id) || !json_object_object_get_ex(c, "Labels", &labels) ||
                    !json_object_object_get_ex(labels, SBX_LABEL_SANDBOX_NAME, &name))
                        continue;       /* not one of ours after all */
                r = listed_owner(c, &uid);
                if (r == -ENOENT)
                        continue;       /* no sandbox at all (labels.h) */
                if (r < 0 && owner != SBX_STORE_ANY_OWNER)
                        continue;       /* nobody's: only in everyone's list */
                if (owner != SBX_STORE_ANY_OWNER && uid != owner)
                        continue;
                if (listed_pending(l, c))
                        continue;       /* a create not verified (yet): no sandbox */
                r = sbx_name_from_labels(json_object_get_string(name), uid, &qualified);
                if (r == -EBADMSG)
                        continue;       /* a name in nobody's namespace: no one's sandbox */
                if (r < 0) {
                        sbx_sandbox_list_free(out, n);
                        return r;
                }
                r = list_one(l, c, qualified, rows, (size_t) MAX(n_rows, 0), &out[n], error);
                if (sbx_error_is(error, SBX_ERROR_NO_SUCH_SANDBOX)) {   /* removed since the listing */
                        sbx_error_free(error);
                        continue;
                }
                if (r < 0) {
                        sbx_sandbox_list_free(out, n);
                        return r;
                }
                n++;
        }
        *ret = out;
        *ret_n = n;
        return 0;
}

/* The group of Config.User "uid:gid"; the owner's primary group if it says none. */
static int user_gid(const SbxObserved *o, gid_t *ret, SbxError *error) {
        const char *colon = o->user ? strchr(o->user, ':') : NULL;
        SbxOwnerInfo info;
        char *end;
        unsigned long v;
        int r;

        if (colon) {
                errno = 0;
                v = strtoul(colon + 1, &end, 10);
                if (errno == 0 && end != colon + 1 && !*end && v < (gid_t) -1) {
                        *ret = (gid_t) v;
                        return 0;
                }
        }
        if ((r = sbx_owner_info_lookup(o->owner, &info, error)) < 0)
                return r;
        *ret = info.owner.gid;
        return 0;
}

/* The image's own environment, which Docker merged into the container's (NULL when
 * the image is gone). */
static int image_env(SbxLifecycle *l, const char *image, char ***ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        json_object *config, *env;
        char **v;
        size_t n;
        int r;

        *ret = NULL;
        r = sbx_docker_image_inspect(l->docker, image, &j, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        if (!json_object_object_get_ex(j, "Config", &config) || !json_object_object_get_ex(config, "Env", &env) ||
            !json_object_is_type(env, json_type_array))
                return 0;
        n = json_object_array_length(env);
        v = calloc(n + 1, sizeof(char *));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0, k = 0; i < n; i++) {
                json_object *e = json_object_array_get_idx(env, i);

                if (!json_object_is_type(e, json_type_string))
                        continue;
                if (!(v[k++] = strdup(json_object_get_string(e)))) {
                        strv_free(v);
                        return -ENOMEM;
                }
        }
        *ret = v;
        return 0;
}

/* adopt_or_remove(): proven, but its owner has no place left (put_adopted()). */
#define ADOPT_OVER_LIMIT 2

/* An owner-labelled container without a row (its name's lock held): adopted when it
 * provably passed verification — its final name, and a spec rebuilt from it whose
 * fingerprint is its label (attested.h) — and its owner is below the limit, else
 * removed (docs/lifecycle.md). Returns 1 if adopted, 0 if removed or gone,
 * ADOPT_OVER_LIMIT if left as it is. */
static int adopt_or_remove(SbxLifecycle *l, const char *name, const char *id, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_free_ char *json = NULL;
        _cleanup_strv_free_ char **env = NULL;
        gid_t gid;
        int r;

        r = inspect_container(l, id, &o, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        if (o->name && !has_suffix(o->name, PENDING_SUFFIX) && o->image_digest) {
                if ((r = image_env(l, o->image_digest, &env, error)) < 0)
                        return r;
                r = sbx_spec_from_container(o, env, &spec);
                if (r < 0)
                        return r;
        }
        if (spec) {
                const char *missing = lacks(l, o);

                if ((r = sbx_spec_to_json_string(spec, &json)) < 0 || (r = user_gid(o, &gid, error)) < 0)
                        return r;
                /* Running, it is judged by what it has mounted and by its posture: only a
                 * hardened one whose mounts are what its sources name is recorded
                 * running, the row that lets its owner's processes in (exec.c); else the
                 * row says stopped and its owner's Start checks (and refuses one that is
                 * not hardened). */
                r = put_adopted(l, &(SbxSandboxRow) {
                        .name = (char *) name,
                        .owner_uid = o->owner,
                        .owner_gid = gid,
                        .container_id = o->id,
                        .spec_json = json,
                        .fingerprint = (char *) o->fingerprint_label,
                        .contract_version = SBX_CONTRACT_VERSION,
                        .state = o->state == SBX_STATE_RUNNING && (!missing || o->owner == 0) && mounts_truthful(l, o)
                                ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                }, o, error);
                if (r <= 0)
                        return r < 0 ? r : ADOPT_OVER_LIMIT;
                log_notice("Sandbox '%s' (container %s) had no row: its spec is proven by its fingerprint label; "
                           "recorded again%s%s%s", plain(name), o->id, missing ? " (it does not carry the current "
                           "posture, first: " : "", missing ?: "", missing ? "; hardened is false)" : "");
                return 1;
        }
        if ((r = remove_container(l, o->id, error)) < 0)
                return r;
        log_notice("Removed container %s of '%s': it had no row and nothing proves it passed verification",
                   o->id, plain(name));
        return 0;
}

/* One listed container of an owner (its owner label given): a row that names another
 * container or none → adopted or removed, under the lock, with the store read again. */
static int reconcile_container(SbxLifecycle *l, json_object *c, SbxSandboxRow **rows, size_t n_rows,
                               SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_intent_row_freep) SbxIntentRow *in = NULL;
        _cleanup_free_ char *name = NULL;
        json_object *labels, *label, *id, *state;
        SbxSandboxRow **listed;
        uid_t owner;
        int r;

        if (!json_object_object_get_ex(c, "Id", &id) || !json_object_object_get_ex(c, "Labels", &labels) ||
            !json_object_object_get_ex(labels, SBX_LABEL_SANDBOX_NAME, &label))
                return 0;
        /* Only this instance's own containers (the service label; xagent's and older
         * ones have none) are recorded again or removed. */
        if (!l->service_id || !(label = json_object_object_get(labels, SBX_LABEL_SERVICE)) ||
            !streq_ptr(json_object_get_string(label), l->service_id) ||
            !json_object_object_get_ex(labels, SBX_LABEL_OWNER, NULL) || listed_owner(c, &owner) < 0)
                return 0;       /* not ours, or nobody's: a blank owner is no sandbox (labels.h) */
        r = sbx_name_from_labels(json_object_get_string(json_object_object_get(labels, SBX_LABEL_SANDBOX_NAME)),
                                 owner, &name);
        if (r == -EBADMSG)
                return 0;               /* labels this service never writes: nobody's */
        if (r < 0)
                return r;
        st->owned++;
        listed = bsearch(name, rows, n_rows, sizeof(SbxSandboxRow *), row_cmp);
        if (listed && streq((*listed)->container_id, json_object_get_string(id))) {
                /* Known: a row that says running for a container that is not is put right. */
                state = json_object_object_get(c, "State");
                if ((*listed)->state == SBX_SANDBOX_RUNNING && !streq_ptr(json_object_get_string(state), "running") &&
                    sbx_store_update_sandbox_state(l->store, name, SBX_SANDBOX_STOPPED, error) > 0)
                        st->repaired++;
                return 0;
        }

        if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 ||
            (r = sbx_store_get_intent(l->store, name, &in, error)) < 0 ||
            (r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        /* Recorded meanwhile, or an interrupted create still to be settled (by its intent). */
        if (in || (row && streq(row->container_id, json_object_get_string(id))))
                return 0;
        r = adopt_or_remove(l, name, json_object_get_string(id), error);
        if (r == ADOPT_OVER_LIMIT)
                st->over_limit++;
        else if (r > 0)
                st->adopted++;
        else if (r == 0)
                st->removed++;
        return r;
}

/* A row whose container is not among those listed: dropped once Docker confirms it is
 * gone (under the lock, with the row read again). */
static int reconcile_row(SbxLifecycle *l, const SbxSandboxRow *listed, SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        int r;

        if ((r = sbx_lifecycle_lock(l, listed->name, &lock)) < 0 ||
            (r = sbx_store_get_sandbox(l->store, listed->name, &row, error)) <= 0)
                return r;
        if (!streq(row->container_id, listed->container_id))
                return 0;
        r = sbx_docker_container_inspect(l->docker, row->container_id, &attrs, error);
        if (r >= 0 || !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r < 0 ? r : 0;
        sbx_error_free(error);
        if ((r = sbx_store_delete_sandbox(l->store, row->name, error)) < 0)
                return r;
        st->dropped++;
        return 0;
}

static bool listed_id(json_object *list, const char *id) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i), *j;

                if (json_object_object_get_ex(c, "Id", &j) && streq_ptr(json_object_get_string(j), id))
                        return true;
        }
        return false;
}

int sbx_lifecycle_reconcile(SbxLifecycle *l, SbxReconcileStats *ret, SbxError *error) {
        static const char *const managed[] = { SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE, NULL };
        _cleanup_(sbx_intent_row_list_freep) SbxIntentRow **intents = NULL;
        _cleanup_(sbx_sandbox_row_list_freep) SbxSandboxRow **rows = NULL;
        _cleanup_(json_object_putp) json_object *list = NULL;
        SbxReconcileStats st = {};
        int r, n_rows;

        /* Interrupted creates first: afterwards, a container without a row is not one
         * that an intent explains. */
        if ((r = sbx_store_list_intents(l->store, &intents, error)) < 0)
                return r;
        for (SbxIntentRow **in = intents; *in; in++) {
                _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
                _cleanup_(sbx_intent_row_freep) SbxIntentRow *again = NULL;

                if ((r = sbx_lifecycle_lock(l, (*in)->name, &lock)) < 0 ||
                    (r = sbx_store_get_intent(l->store, (*in)->name, &again, error)) < 0)
                        return r;
                if (r > 0 && (r = settle_intent(l, again, error)) < 0)
                        return r;
                if (r == SETTLE_IN_FLIGHT)
                        st.in_flight++;
                else
                        st.settled++;
        }

        if ((n_rows = sbx_store_list_sandboxes(l->store, SBX_STORE_ANY_OWNER, &rows, error)) < 0 ||
            (r = sbx_docker_container_list(l->docker, managed, &list, error)) < 0)
                return n_rows < 0 ? n_rows : r;
        for (size_t i = 0; i < json_object_array_length(list); i++)
                if ((r = reconcile_container(l, json_object_array_get_idx(list, i), rows, (size_t) n_rows, &st,
                                             error)) < 0)
                        return r;
        for (int i = 0; i < n_rows; i++)
                if (!listed_id(list, rows[i]->container_id) && (r = reconcile_row(l, rows[i], &st, error)) < 0)
                        return r;
        if ((r = settle_snapshot_intents(l, &st, error)) < 0)
                return r;

        if (n_rows == 0 && st.owned > 0)
                log_warning("The store %s held no sandboxes, but %u containers of this service exist: rows rebuilt "
                            "from the containers (%u recorded again, %u removed without proof of verification)",
                            sbx_store_path(l->store), st.owned, st.adopted, st.removed);
        if (ret)
                *ret = st;
        return 0;
}

int sbx_lifecycle_forget(SbxLifecycle *l, const char *name, const char *container_id, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r;

        if ((r = sbx_lifecycle_lock(l, name, &lock)) < 0 || (r = sbx_store_get_sandbox(l->store, name, &row, error)) <= 0)
                return r;
        if (!streq(row->container_id, container_id))
                return 0;
        return sbx_store_delete_sandbox(l->store, name, error);
}

int sbx_lifecycle_container_id(SbxLifecycle *l, const char *name, char **ret, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r = sbx_store_get_sandbox(l->store, name, &row, error);

        if (r < 0)
                return r;
        if (r > 0) {            /* what this service made: no Docker call */
                *ret = TAKE_PTR(row->container_id);
                return 0;
        }
        r = find_container(l, name, false, ret, error);
        if (r < 0)
                return r;
        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", plain(name));
        return 0;
}

int sbx_lifecycle_usage(SbxLifecycle *l, const char *name, SbxUsage *ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *stats = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        r = sbx_lifecycle_container_id(l, name, &id, error);
        if (r < 0)
                return r;
        r = sbx_docker_container_stats(l->docker, id, &stats, error);
        if (r < 0)
                return r;
        return sbx_usage_from_json(stats, ret, error);
}
