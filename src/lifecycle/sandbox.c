/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Locating a sandbox's container and describing it (shared by every verb family):
 * the look-ups by label and by the row's id, inspect, verify, list and usage, the
 * judgement of a container (verdict, posture, what is mounted), the volume pins. */

#include <gnutls/crypto.h>
#include <limits.h>
#include <stdio.h>

#include "config.h"
#include "docker-container.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "egress-apply.h"
#include "mount-check.h"
#include "posture.h"
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
        free(s->labels_json);
        free(s->egress_json);
        lc_sandbox_drop_observed(s);
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

/* An observation's facts are the observation's (a reference), others the sandbox's. */
void lc_sandbox_drop_observed(SbxSandbox *s) {
        if (s->seen)
                s->seen = sbx_seen_unref(s->seen);
        else
                sbx_observed_free(s->observed);
        s->observed = NULL;
}

void sbx_sandbox_list_free(SbxSandbox **list, size_t n) {
        for (size_t i = 0; i < n; i++)
                sbx_sandbox_free(list[i]);
        free(list);
}

/* Sandbox names and snapshot ids share one registry; the prefixes keep them apart. */
int lc_lock_key(SbxLifecycle *l, const char *prefix, const char *key, SbxKeyedLockHandle **ret) {
        _cleanup_free_ char *k = NULL;

        if (asprintf(&k, "%s:%s", prefix, key) < 0)
                return -ENOMEM;
        return sbx_keyed_lock_acquire(l->locks, k, ret);
}

int sbx_lifecycle_lock(SbxLifecycle *l, const char *name, SbxKeyedLockHandle **ret) {
        return lc_lock_key(l, "sandbox", name, ret);
}

int lc_remap(SbxError *error, SbxErrorKind kind, const char *fmt, ...) {
        va_list ap;
        int r;

        sbx_error_free(error);
        va_start(ap, fmt);
        r = sbx_error_setv(error, kind, fmt, ap);
        va_end(ap);
        return r;
}

static const char *listed_label(json_object *c, const char *key) {
        json_object *labels = json_object_object_get(c, "Labels"), *v;

        return labels && json_object_object_get_ex(labels, key, &v) ? json_object_get_string(v) : NULL;
}

/* Whether a listed container is this instance's and still under its provisional
 * name: a create that never passed verification — one being made, one whose undo
 * failed, or one Docker carried out after the create had given up — or (pool) a warm
 * pool's member. Never a sandbox: it does not block its name and is not listed. */
static bool listed_provisional(SbxLifecycle *l, json_object *c, bool pool) {
        json_object *names = json_object_object_get(c, "Names");

        if (!l->service_id || !streq_ptr(listed_label(c, SBX_LABEL_SERVICE), l->service_id) ||
            !json_object_is_type(names, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(names); i++) {
                const char *n = json_object_get_string(json_object_array_get_idx(names, i));

                if (n && (lc_has_suffix(n, PENDING_SUFFIX) || (pool && lc_is_pool_name(n))))
                        return true;
        }
        return false;
}

/* Whose a listed container is (sbx_label_parse_owner_of()). */
int lc_listed_owner(json_object *c, uid_t *ret) {
        return sbx_label_parse_owner_of(listed_label(c, SBX_LABEL_OWNER), listed_label(c, SBX_LABEL_SERVICE), ret);
}

/* Whether the listed container's owner label is owner's (missing or blank: root's,
 * unless it carries a service label: nobody's) and, unless name_label is NULL, its
 * name label is name_label. */
static bool listed_as(json_object *c, uid_t owner, const char *name_label) {
        uid_t uid;

        return lc_listed_owner(c, &uid) >= 0 && uid == owner &&
                (!name_label || streq_ptr(listed_label(c, SBX_LABEL_SANDBOX_NAME), name_label));
}

/* This instance's provisional containers of the name (name_label NULL: the list is
 * the name's already) are removed: nothing of this service's is creating the name
 * now, its lock being held, so none of them will ever be verified. */
static int sweep_pending(SbxLifecycle *l, json_object *list, uid_t owner, const char *name_label,
                         SbxError *error) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *c = json_object_array_get_idx(list, i);
                const char *id = json_object_get_string(json_object_object_get(c, "Id"));
                int r;

                if (!id || !listed_provisional(l, c, false) || !listed_as(c, owner, name_label))
                        continue;
                if ((r = lc_remove_container(l, id, error)) < 0)
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

                if (!listed_as(c, owner, name_label) || listed_provisional(l, c, true))
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
int lc_find_container(SbxLifecycle *l, const char *name, bool sweep, char **ret_id, SbxError *error) {
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

int lc_inspect_container(SbxLifecycle *l, const char *id, SbxObserved **ret, SbxError *error) {
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
int lc_load_row(SbxLifecycle *l, const char *name, const char *container_id, SbxSandboxRow *given,
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

/* A running container's bind mounts, judged by what is mounted rather than by what
 * was asked (docs/security.md): each must show the directory its source names now. Only
 * a container whose first process is this service's init reports its mounts; for
 * others (xagent's own) there is nothing to judge by. The report is the one given
 * (read already, by the start that made it), else the last one logged since shortly
 * before the container's start. */
/* Paused, its mounts are those it runs with: a pause changes no verdict
 * (observation-cache.h). */
static bool judged_by_report(const SbxObserved *o) {
        return sbx_observed_checks_host(o);
}

/* The last report logged since shortly before the container's start; false if none. */
static bool read_report(SbxLifecycle *l, const SbxObserved *o, SbxMountTable *ret) {
        SbxError e = SBX_ERROR_NULL;
        uint64_t started = 0;
        int r;

        if (!o->started_at || sbx_parse_rfc3339_usec(o->started_at, &started) < 0)
                return false;
        r = sbx_container_mounts(l->docker, o->id, started > MOUNT_REPORT_SLACK_US ? started - MOUNT_REPORT_SLACK_US : 0,
                                 0, ret, &e);
        sbx_error_free(&e);
        return r >= 0;
}

bool lc_mounts_truthful(SbxLifecycle *l, const SbxObserved *o, const SbxMountTable *report) {
        _cleanup_(sbx_mount_table_done) SbxMountTable t = {};

        if (!judged_by_report(o))
                return true;
        if (report)
                return sbx_mounts_truthful(report, o->volumes, o->n_volumes);
        return read_report(l, o, &t) && sbx_mounts_truthful(&t, o->volumes, o->n_volumes);
}

static uint64_t observation_max_age_us(SbxLifecycle *l) {
        if (!l->observations || !l->policy)
                return 0;
        return (uint64_t) l->policy->observation_max_age * UINT64_C(1000000);
}

/* A read's look at a container (docs/api.md#reads-from-observations): the observation while the rule lets it
 * stand, else Docker's answer now — kept as the observation, with the mount report
 * its init logged (what a start logged does not change until the next start, an
 * event). What the report is compared with, the host's directories, is looked at
 * by every read (lc_seen_truthful()). */
int lc_observe(SbxLifecycle *l, const char *id, SbxSeen **ret, SbxError *error) {
        uint64_t max_age = observation_max_age_us(l);
        SbxObservationTicket ticket = {};
        SbxObserved *o = NULL;
        SbxSeen *seen;
        int r;

        if (max_age > 0) {
                if ((*ret = sbx_observation_cache_get(l->observations, id, max_age)))
                        return 0;
                ticket = sbx_observation_cache_ticket(l->observations);
        }
        if ((r = lc_inspect_container(l, id, &o, error)) < 0)
                return r;
        if (!(seen = sbx_seen_new(o)))
                return -ENOMEM;
        if (judged_by_report(o))
                seen->has_report = read_report(l, o, &seen->report);
        if (max_age > 0)
                sbx_observation_cache_put(l->observations, o->id ?: id, ticket, max_age, seen);
        *ret = seen;
        return 0;
}

bool lc_seen_truthful(SbxLifecycle *l, const SbxSeen *seen) {
        return lc_mounts_truthful(l, seen->observed, seen->has_report ? &seen->report : NULL);
}

void lc_changed(SbxLifecycle *l, const char *container_id) {
        sbx_observation_cache_changed(l->observations, container_id);
}

int lc_make_sandbox(SbxLifecycle *l, const char *name, SbxObserved *o, const SbxSandboxRow *row,
                    const SbxSpec *stored, const SbxFingerprints *fps, const SbxMountTable *report,
                    SbxSandbox **ret) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *s = calloc(1, sizeof(SbxSandbox));
        bool truthful = lc_mounts_truthful(l, o, report);

        if (!s)
                return -ENOMEM;
        s->name = strdup(name);
        s->container_id = strdup(o->id ?: "");
        s->status = strdup(o->raw_status);
        s->image = strdup(o->image_ref ?: "");
        s->fingerprint = strdup(o->fingerprint_label ?: "");
        s->labels_json = strdup(row && row->labels_json ? row->labels_json : "{}");
        s->egress_json = strdup(row && row->egress_json ? row->egress_json : "");
        s->egress_enforced = -1;        /* read back by inspect and verify only */
        if (!s->name || !s->container_id || !s->status || !s->image || !s->fingerprint || !s->labels_json ||
            !s->egress_json || !(s->egress_effective = lc_egress_effective(l, s->egress_json, o->network_isolated)))
                return -ENOMEM;
        s->owner_valid = o->owner_valid;
        s->owner = o->owner;
        s->state = o->state;
        s->has_row = row != NULL;
        s->verdict = SBX_VERDICT_UNVERIFIED;
        if (stored && row)
                s->verdict = sbx_verdict(stored, fps, o, SBX_CONTRACT_VERSION);
        /* What VerifySandbox with the stored spec would name (the inspection's
         * mismatched_fields). */
        if (s->verdict == SBX_VERDICT_MISMATCH)
                s->mismatched = sbx_verify_mismatched_fields(stored, stored, row->fingerprint, o);
        if (!truthful && s->verdict == SBX_VERDICT_MATCH) {
                s->verdict = SBX_VERDICT_MISMATCH;
                s->mismatched = SBX_SPEC_FIELD_VOLUMES;
        }
        if (row && row->created_us > 0)
                s->created_us = (uint64_t) row->created_us;
        else if (o->created_at)
                (void) sbx_parse_rfc3339_usec(o->created_at, &s->created_us);
        /* Network and memory values themselves are the verdict's business, not the
         * posture's. */
        s->hardened = o->owner_valid && truthful &&
                      lc_posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0) == 0;
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

        if ((r = lc_load_row(l, name, o->id, given, &row, &stored, &fps, error)) < 0)
                return r;
        r = lc_make_sandbox(l, name, o, row, stored, fps, NULL, ret);
        if (r >= 0)
                TAKE_PTR(owned);
        return r;
}

/* The sandbox of an observation (the sandbox takes a reference). */
static int describe_seen(SbxLifecycle *l, const char *name, SbxSeen *seen, SbxSandboxRow *given, SbxSandbox **ret,
                         SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        const SbxFingerprints *fps = NULL;
        const SbxSpec *stored = NULL;
        int r;

        if ((r = lc_load_row(l, name, seen->observed->id, given, &row, &stored, &fps, error)) < 0 ||
            (r = lc_make_sandbox(l, name, seen->observed, row, stored, fps, seen->has_report ? &seen->report : NULL,
                                 ret)) < 0)
                return r;
        (*ret)->seen = sbx_seen_ref(seen);
        return 0;
}

static int describe(SbxLifecycle *l, const char *name, const char *id, SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_seen_unrefp) SbxSeen *seen = NULL;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = lc_observe(l, id, &seen, error)) < 0)
                return sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)
                        ? lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown) : r;
        return describe_seen(l, name, seen, NULL, ret, error);
}

/* Whether the container carries the Docker-level name in its owner's namespace. */
bool lc_names_it(const SbxObserved *o, const char *name) {
        _cleanup_free_ char *q = NULL;

        return o->owner_valid &&
                sbx_name_from_labels(sbx_observed_get_label(o, SBX_LABEL_SANDBOX_NAME), o->owner, &q) >= 0 &&
                streq_ptr(q, name);
}

/* The sandbox's container as Docker reports it now: by the id its row records — one
 * inspect, its labels checked — and only without a row, or when that container is
 * gone, by the label-filtered list (which makes dockerd look at every container).
 * Returns 1 and *ret, or 0 when there is none. */
int lc_locate(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        if ((r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        if (r > 0) {
                r = lc_inspect_container(l, row->container_id, &o, error);
                if (r >= 0 && lc_names_it(o, name)) {
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
        if ((r = lc_find_container(l, name, false, &id, error)) <= 0)
                return r;
        r = lc_inspect_container(l, id, &o, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {  /* removed since the listing */
                sbx_error_free(error);
                return 0;
        }
        if (r < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 1;
}

/* lc_locate(), with none being NoSuchSandbox. */
int lc_locate_existing(SbxLifecycle *l, const char *name, SbxObserved **ret, SbxSandboxRow **ret_row,
                       SbxError *error) {
        int r = lc_locate(l, name, ret, ret_row, error);
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        return r;
}

int lc_describe_by_name(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error) {
        SbxSandboxRow *row = NULL;
        SbxObserved *o = NULL;
        int r = lc_locate_existing(l, name, &o, &row, error);

        return r < 0 ? r : describe_observed(l, name, o, row, ret, error);
}

/* lc_locate() for a read: from observations (lc_observe()), none being
 * NoSuchSandbox. */
static int locate_seen(SbxLifecycle *l, const char *name, SbxSeen **ret, SbxSandboxRow **ret_row, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        _cleanup_(sbx_seen_unrefp) SbxSeen *seen = NULL;
        _cleanup_free_ char *id = NULL;
        const char *shown;
        int r;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = sbx_store_get_sandbox(l->store, name, &row, error)) < 0)
                return r;
        if (r > 0) {
                r = lc_observe(l, row->container_id, &seen, error);
                if (r >= 0 && lc_names_it(seen->observed, name)) {
                        *ret = TAKE_PTR(seen);
                        *ret_row = TAKE_PTR(row);
                        return 0;
                }
                if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                        return r;
                sbx_error_free(error);
                seen = sbx_seen_unref(seen);
        }
        if ((r = lc_find_container(l, name, false, &id, error)) < 0)
                return r;
        if (r > 0 && (r = lc_observe(l, id, &seen, error)) < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        if (!seen) {            /* none, or removed since the listing */
                sbx_error_free(error);
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        }
        *ret = TAKE_PTR(seen);
        return 0;
}

int sbx_lifecycle_inspect(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_seen_unrefp) SbxSeen *seen = NULL;
        SbxSandboxRow *row = NULL;
        int r = locate_seen(l, name, &seen, &row, error);

        if (r >= 0 && (r = describe_seen(l, name, seen, row, ret, error)) >= 0)
                lc_egress_describe(l, *ret);    /* the rules in force, read back */
        return r < 0 ? r : 0;
}

int sbx_lifecycle_refresh(SbxLifecycle *l, const char *name, SbxSandbox **ret, SbxError *error) {
        _cleanup_free_ char *id = NULL;
        int r = sbx_lifecycle_container_id(l, name, &id, error);

        if (r < 0)
                return r;
        lc_changed(l, id);
        return sbx_lifecycle_inspect(l, name, ret, error);
}

/* Removes the container; 1 if it was there, 0 if it was gone already. */
int lc_remove_container(SbxLifecycle *l, const char *id, SbxError *error) {
        int r = sbx_docker_container_remove(l->docker, id, error);

        lc_changed(l, id);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);          /* gone meanwhile: that is what was asked */
                return 0;
        }
        return r < 0 ? r : 1;
}

int sbx_lifecycle_verify(SbxLifecycle *l, const char *name, const SbxSpec *desired, SbxVerdict *ret_verdict,
                         unsigned *ret_fields, SbxSandbox **ret_described, SbxError *error) {
        _cleanup_(sbx_seen_unrefp) SbxSeen *seen = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *found = NULL, *row = NULL;
        const SbxSpec *stored = NULL;
        const SbxObserved *o;
        SbxFingerprints fps;
        bool in_force;
        int r;

        if ((r = sbx_spec_fingerprints(desired, &fps)) < 0 || (r = locate_seen(l, name, &seen, &found, error)) < 0)
                return r;
        o = seen->observed;

        *ret_verdict = sbx_verdict(desired, &fps, o, SBX_CONTRACT_VERSION);
        *ret_fields = 0;
        /* Which fields differ is told by the stored spec: read only for a mismatch. */
        if (*ret_verdict == SBX_VERDICT_MISMATCH) {
                if ((r = lc_load_row(l, name, o->id, TAKE_PTR(found), &row, &stored, NULL, error)) < 0)
                        return r;
                *ret_fields = sbx_verify_mismatched_fields(desired, stored, row ? row->fingerprint : NULL, o);
        }
        /* Judged by what is mounted, not by what was asked (docs/security.md). */
        if (*ret_verdict == SBX_VERDICT_MATCH && !lc_seen_truthful(l, seen)) {
                *ret_verdict = SBX_VERDICT_MISMATCH;
                *ret_fields = SBX_SPEC_FIELD_VOLUMES;
        }
        /* … and by the egress rules in force (a start behind the back has none yet). */
        in_force = *ret_verdict == SBX_VERDICT_UNVERIFIED || lc_egress_in_force(l, o, row ?: found);
        *ret_verdict = in_force ? *ret_verdict : SBX_VERDICT_MISMATCH;
        *ret_fields |= in_force ? 0 : SBX_VERIFY_FIELD_EGRESS;
        /* … and by the runtime it runs under (docs/security.md, "Runtimes"). */
        if (*ret_verdict != SBX_VERDICT_UNVERIFIED && !lc_runtime_as_asked(l, o)) {
                *ret_verdict = SBX_VERDICT_MISMATCH;
                *ret_fields |= SBX_VERIFY_FIELD_RUNTIME;
        }
        if (ret_described) {
                SbxError ignored = SBX_ERROR_NULL;

                *ret_described = NULL;
                (void) describe_seen(l, name, seen, row ? TAKE_PTR(row) : TAKE_PTR(found), ret_described, &ignored);
                if (*ret_described && *ret_verdict != SBX_VERDICT_UNVERIFIED)
                        (*ret_described)->egress_enforced = in_force;
                sbx_error_free(&ignored);
        }
        return 0;
}

/* The first posture item the container lc_lacks, or NULL: it is hardened. */
const char *lc_lacks(SbxLifecycle *l, const SbxObserved *o) {
        const char *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned posture = lc_posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0);

        if (posture == 0)
                return NULL;
        sbx_posture_items_to_names(posture, items);
        return items[0];
}

int lc_row_cmp(const void *key, const void *elem) {
        return strcmp(key, (*(SbxSandboxRow *const *) elem)->name);
}

/* A listed container's sandbox from the list's answer, its row and the judgement of
 * its observation while that stands (the rule of docs/api.md, "Reads from
 * observations", as for every read); without one, from the observation or an
 * inspect, the judgement then kept — or, lazy, from the list and the row alone
 * (unjudged: verdict unverified, Docker's Config.Image as the list gives it). */
static int list_one(SbxLifecycle *l, json_object *c, const char *name, SbxSandboxRow *const *rows, size_t n_rows,
                    bool lazy, SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *s = NULL;
        _cleanup_(sbx_seen_unrefp) SbxSeen *seen = NULL;
        SbxSandboxRow *const *found = bsearch(name, rows, n_rows, sizeof(SbxSandboxRow *), lc_row_cmp);
        const char *id = json_object_get_string(json_object_object_get(c, "Id"));
        const SbxSandboxRow *row = found && streq((*found)->container_id, id) ? *found : NULL;
        const char *row_fp = row ? row->fingerprint : "";
        json_object *labels = json_object_object_get(c, "Labels");
        uint64_t max_age = observation_max_age_us(l);
        SbxJudgement j = {};
        bool judged;
        int r;

        if (max_age > 0)
                seen = sbx_observation_cache_get(l->observations, id, max_age);
        judged = l->judgements && sbx_verdict_cache_get(l->judgements, id, row_fp, seen, &j);
        if (!judged && !lazy) {
                r = seen ? describe_seen(l, name, seen, NULL, &s, error) : describe(l, name, id, &s, error);
                if (r >= 0 && l->judgements && max_age > 0)
                        sbx_verdict_cache_put(l->judgements, id, row_fp, s->seen, &(SbxJudgement) {
                                .verdict = s->verdict, .hardened = s->hardened, .image = s->image,
                                .created_us = s->created_us });
                if (r >= 0)
                        lc_sandbox_drop_observed(s);
                *ret = TAKE_PTR(s);
                return r;
        }
        s = calloc(1, sizeof(SbxSandbox));
        if (!s) {
                free(j.image);
                return -ENOMEM;
        }
        if (!judged) {          /* from the list and the row alone */
                s->unjudged = true;
                j = (SbxJudgement) { .verdict = SBX_VERDICT_UNVERIFIED, .created_us = row && row->created_us > 0 ?
                                     (uint64_t) row->created_us : 0,
                                     .image = strdup(json_object_get_string(json_object_object_get(c, "Image")) ?: "") };
        }
        s->image = j.image;
        s->verdict = j.verdict;
        s->hardened = j.hardened;
        s->created_us = j.created_us;
        s->owner_valid = lc_listed_owner(c, &s->owner) >= 0;
        s->status = strdup(json_object_get_string(json_object_object_get(c, "State")) ?: "");
        s->state = sbx_state_from_status(s->status);
        s->name = strdup(name);
        s->container_id = strdup(id);
        s->fingerprint = strdup(sbx_label_attestation(json_object_get_string(
                json_object_object_get(labels, SBX_LABEL_SPEC_FINGERPRINT))) ?: "");
        s->has_row = row != NULL;
        s->labels_json = strdup(row && row->labels_json ? row->labels_json : "{}");
        if (!s->status || !s->name || !s->container_id || !s->fingerprint || !s->image || !s->labels_json)
                return -ENOMEM;
        *ret = TAKE_PTR(s);
        return 0;
}

static int list(SbxLifecycle *l, uid_t owner, bool lazy, SbxSandbox ***ret, size_t *ret_n, SbxError *error) {
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
                r = lc_listed_owner(c, &uid);
                if (r == -ENOENT)
                        continue;       /* no sandbox at all (labels.h) */
                if (r < 0 && owner != SBX_STORE_ANY_OWNER)
                        continue;       /* nobody's: only in everyone's list */
                if (owner != SBX_STORE_ANY_OWNER && uid != owner)
                        continue;
                if (listed_provisional(l, c, true))
                        continue;       /* a create not verified (yet): no sandbox */
                r = sbx_name_from_labels(json_object_get_string(name), uid, &qualified);
                if (r == -EBADMSG)
                        continue;       /* a name in nobody's namespace: no one's sandbox */
                if (r < 0) {
                        sbx_sandbox_list_free(out, n);
                        return r;
                }
                r = list_one(l, c, qualified, rows, (size_t) MAX(n_rows, 0), lazy, &out[n], error);
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

int sbx_lifecycle_list(SbxLifecycle *l, uid_t owner, SbxSandbox ***ret, size_t *ret_n, SbxError *error) {
        return list(l, owner, l->lists_judged && !atomic_load(l->lists_judged), ret, ret_n, error);
}

int sbx_lifecycle_list_judged(SbxLifecycle *l, uid_t owner, SbxSandbox ***ret, size_t *ret_n, SbxError *error) {
        return list(l, owner, false, ret, ret_n, error);
}

int sbx_lifecycle_container_id(SbxLifecycle *l, const char *name, char **ret, SbxError *error) {
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *row = NULL;
        int r = sbx_store_get_sandbox(l->store, name, &row, error);
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (r < 0)
                return r;
        if (r > 0) {            /* what this service made: no Docker call */
                *ret = TAKE_PTR(row->container_id);
                return 0;
        }
        r = lc_find_container(l, name, false, ret, error);
        if (r < 0)
                return r;
        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
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
