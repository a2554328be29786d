/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Create and ensure (docs/lifecycle.md, Create and Ensure): one pass per create. */

#include <stdio.h>
#include <sys/random.h>

#include "config.h"
#include "conflict.h"
#include "container-body.h"
#include "docker-container.h"
#include "docker-dialect.h"
#include "docker-image.h"
#include "init-volume.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "egress-apply.h"
#include "egress-arm.h"
#include "mount-check.h"
#include "posture.h"
#include "publish.h"
#include "spec-json.h"
#include "user-labels.h"

/* Removes the container a failed create made, and ends the create's intent. The
 * create's own error stays the one reported (first error wins): a remove that fails
 * (Docker gone) is logged and the intent kept, so the container is removed when
 * Docker answers again (sbx_lifecycle_reconcile) or before the name is created again. */
static void undo_create(SbxLifecycle *l, const char *name, const char *id) {
        SbxError e = SBX_ERROR_NULL;
        const char *shown;
        int r;

        (void) sbx_name_unqualify(name, &shown);
        r = lc_remove_container(l, id, &e);
        lc_reap_runtime_strays(l, id);
        if (r < 0)
                log_warning("Could not remove container %s after a failed create of '%s', will retry: %s", id,
                            shown, e.message ?: "unknown error");
        else if (sbx_store_delete_intent(l->store, name, &e) < 0)
                log_warning("Could not end the create of '%s' in the store: %s", shown,
                            e.message ?: "unknown error");
        sbx_error_free(&e);
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
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = sbx_docker_container_inspect(l->docker, container_id, &attrs, error)) < 0)
                return r;
        got = json_object_get_string(json_object_object_get(attrs, "Image"));
        if (streq_ptr(got, image_id))
                return 0;
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                             "Sandbox '%s' failed publish verification; mismatched fields: image (%s names %s now, "
                             "not the snapshot's image %s)", shown, ref, got ?: "nothing", image_id);
}

/* A warm pool's member is no sandbox of its owner's: not counted (docs/lifecycle.md). */
static int check_admissible(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, bool member, Pins *pins,
                            SbxError *error) {
        int r, n = member ? 0 : sbx_store_count_sandboxes(l->store, owner->uid, error);

        if (n < 0)
                return n;
        if ((r = sbx_policy_check_count(l->policy, (size_t) n, error)) < 0 ||
            (r = sbx_policy_check_spec(l->policy, owner, spec, l->docker_socket, error)) < 0 ||
            (r = sbx_check_spec_conflicts(spec, error)) < 0)
                return r;
        return lc_pin_volumes(l, spec, owner, pins, error);
}

/* Publish-before-verify (docs/lifecycle.md, Create; xagent's _find_publish_mismatches): the seven fields and the posture
 * as Docker reports them, before anything is recorded or announced. */
static int verify_published(SbxLifecycle *l, const char *name, const SbxSpec *spec, const char *image,
                            const SbxOwner *owner, const SbxObserved *o, SbxError *error) {
        const char *fields[SBX_PUBLISH_FIELD_COUNT + 1], *items[SBX_POSTURE_ITEM_COUNT + 1];
        unsigned mismatches = sbx_find_publish_mismatches(spec, image, o);
        unsigned posture = lc_posture_of(l, o, spec->network_isolated, spec->memory * 1048576);
        _cleanup_free_ char *list = NULL;
        size_t size = 0;
        FILE *f;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
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
                             "Sandbox '%s' failed publish verification; mismatched fields: %s", shown, list);
}

/* One create's work, done once and passed on: the spec serialized (for the intent and
 * the row), its fingerprint, one creation time (the intent's, the row's, the reply's),
 * the checked volumes and the start's mount report (verified, then judged by). */
typedef struct Creation {
        const char *name;
        const SbxSpec *spec;
        const SbxOwner *owner;
        json_object *labels;            /* the caller's (user-labels.h), or NULL */
        SbxNewLifetime lifetime;        /* stored with the row */
        char *labels_json;              /* … as the intent and the row store them */
        const SbxEgress *egress;        /* the caller's (egress.h), or NULL: the default */
        char *egress_json;              /* … as the row stores it */
        const char *runtime;            /* the caller's (runtime.h), NULL: the default */
        char *image;                    /* the reference the container is made from */
        char *image_id;                 /* a snapshot's recorded image id, else NULL */
        char *json;                     /* the spec serialized, once: the intent's and the row's */
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        char *final_name;
        char *pending;                  /* final_name PENDING_SUFFIX: until verified */
        bool member;                    /* a warm pool's (pool.c): no intent, no row, POOL_SUFFIX */
        int64_t created_us;
        Pins pins;
        SbxMountTable mounts;
} Creation;

static void creation_done(Creation *c) {
        free(c->image);
        free(c->image_id);
        free(c->json);
        free(c->labels_json);
        free(c->egress_json);
        free(c->final_name);
        free(c->pending);
        lc_pins_done(&c->pins);
        sbx_mount_table_done(&c->mounts);
}

/* Its lifetime as stored: the expiry counts from the creation, the idle time from now. */
bool lc_lifetime_row(const char *name, int64_t created_us, const SbxNewLifetime *t, SbxLifetimeRow *ret) {
        if (t->idle_timeout_s == 0 && t->expire_after_s == 0)
                return false;
        *ret = (SbxLifetimeRow) {
                .name = (char *) name, .idle_timeout_s = t->idle_timeout_s, .on_idle_pause = t->on_idle_pause,
                .expire_at_us = t->expire_after_s ? (uint64_t) created_us + (uint64_t) t->expire_after_s * 1000000U : 0,
                .counts_processes = t->counts_processes, .last_activity_us = sbx_now_realtime_us(),
        };
        return true;
}

static bool lifetime_row(const Creation *c, SbxLifetimeRow *ret) {
        return lc_lifetime_row(c->name, c->created_us, &c->lifetime, ret);
}

/* The row and its lifetime, in one transaction. */
static int record(SbxLifecycle *l, const Creation *c, const SbxObserved *o, SbxError *error) {
        SbxLifetimeRow lifetime;
        bool has_lifetime = lifetime_row(c, &lifetime);

        return sbx_store_put_sandbox_with_lifetime(l->store, &(SbxSandboxRow) {
                .name = (char *) c->name,
                .owner_uid = c->owner->uid,
                .owner_gid = c->owner->gid,
                .container_id = o->id,
                .spec_json = c->json,
                .fingerprint = (char *) c->fp,
                .contract_version = SBX_CONTRACT_VERSION,
                .state = o->state == SBX_STATE_RUNNING ? SBX_SANDBOX_RUNNING : SBX_SANDBOX_STOPPED,
                .created_us = c->created_us,
                .labels_json = c->labels_json,
                .egress_json = c->egress_json,
        }, has_lifetime ? &lifetime : NULL, error);
}

/* What the reply shows of it (the bus keeps it from here on). */
void lc_take_lifetime(const char *name, int64_t created_us, const SbxNewLifetime *lifetime, SbxSandbox *s) {
        SbxLifetimeRow t;

        if (!lc_lifetime_row(name, created_us, lifetime, &t))
                return;
        s->idle_timeout_s = t.idle_timeout_s;
        s->on_idle_pause = t.on_idle_pause;
        s->expire_at_us = t.expire_at_us;
        s->last_activity_us = t.last_activity_us;
        s->idle_counts_processes = t.counts_processes;
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
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        r = lc_inspect_container(l, final_name, &holder, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {         /* gone meanwhile */
                sbx_error_free(error);
                return sbx_docker_container_rename(l->docker, id, final_name, error);
        }
        if (r < 0)
                return r;
        if (lc_names_it(holder, name))
                return sbx_error_set(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", shown);
        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        if (asprintf(&aside, "%s.%02x%02x%02x%02x", final_name, b[0], b[1], b[2], b[3]) < 0)
                return -ENOMEM;
        log_notice("Container name %s is held by container %s, which is not '%s' (its name label: %s): it is "
                   "created as %s", final_name, holder->id, shown,
                   sbx_observed_get_label(holder, SBX_LABEL_SANDBOX_NAME) ?: "none", aside);
        return sbx_docker_container_rename(l->docker, id, aside, error);
}

/* Everything after the container exists: start, verify, rename, record (the row
 * ends the intent). The mount report stays in c, for the reply. On failure the
 * caller removes the container. */
static int start_verify_record(SbxLifecycle *l, Creation *c, const char *id, SbxObserved **ret, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        uint64_t t0 = sbx_now_realtime_us();
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
        if ((r = sbx_container_mounts(l->docker, id, t0, SBX_MOUNT_REPORT_TIMEOUT_MS, &c->mounts, error)) < 0 ||
            (r = sbx_mounts_verify(&c->mounts, c->spec->volumes, c->pins.fds, c->spec->n_volumes, error)) < 0 ||
            (r = lc_inspect_container(l, id, &o, error)) < 0 ||
            (r = verify_published(l, c->name, c->spec, c->image, c->owner, o, error)) < 0 ||
            (r = lc_egress_arm(l, id, o, c->egress ?: &(SbxEgress) {}, LC_EGRESS_NEW, error)) < 0)
                return r;
        /* A member is verified and held under its pool name (pool.c): no row. */
        if (c->member) {
                _cleanup_free_ char *pooled = NULL;

                if (asprintf(&pooled, "%s" POOL_SUFFIX, c->final_name) < 0)
                        return -ENOMEM;
                r = sbx_docker_container_rename(l->docker, id, pooled, error);
                lc_changed(l, id);
                if (r >= 0)
                        *ret = TAKE_PTR(o);
                return r;
        }
        /* Verified: the final name says so, should the row below never be written. */
        r = sbx_docker_container_rename(l->docker, id, c->final_name, error);
        lc_changed(l, id);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT)) {
                sbx_error_free(error);
                r = rename_aside(l, c->name, id, c->final_name, error);
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return lc_remap(error, SBX_ERROR_SANDBOX_EXISTS, "Container name '%s' is taken", c->final_name);
        if (r < 0 || (r = record(l, c, o, error)) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

/* Podman reports the port it chose for a host port 0 in the place of the request
 * (docs/engines.md): nothing could then tell that container from one asked to
 * publish on that very port, so such a spec is never verifiable there. */
static int check_engine_ports(SbxLifecycle *l, const SbxSpec *s, SbxError *error) {
        if (sbx_dialect_echoes_host_port_0(sbx_docker_dialect(l->docker)))
                return 0;
        for (size_t i = 0; i < s->n_ports; i++)
                if (s->ports[i].host == 0)
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "ports: host port 0 for guest port %lld cannot be verified on Podman (it "
                                             "reports the port it chose in the place of the request): name the host "
                                             "port", (long long) s->ports[i].guest);
        return 0;
}

/* What a create checks and prepares before anything is made: the image, the limits
 * and the policy, the volumes pinned, the body, the names, the spec serialized. */
static int prepare(SbxLifecycle *l, Creation *c, json_object **ret_body, SbxError *error) {
        _cleanup_free_ char *init_volume = NULL;
        int r;

        if ((c->runtime && (r = sbx_runtimes_check_sandbox(&l->policy->runtimes, c->runtime, c->spec->network_isolated,
                                                           c->spec->n_volumes, error)) < 0) ||
            (r = resolve_image(l, c->spec, c->owner, &c->image, &c->image_id, error)) < 0 ||
            (r = check_engine_ports(l, c->spec, error)) < 0 ||
            (r = check_admissible(l, c->spec, c->owner, c->member, &c->pins, error)) < 0 ||
            (r = sbx_docker_remote(l->docker)
                 ? sbx_init_volume_ensure_remote(l->docker, l->init_dir, c->image, &init_volume, error)
                 : sbx_init_volume_ensure(l->docker, l->init_dir, &init_volume, error)) < 0 ||
            (r = sbx_spec_fingerprint(c->spec, l->policy->python_version, c->fp)) < 0 ||
            (r = sbx_container_body(&(SbxContainerParams) {
                    .name = c->name, .spec = c->spec, .image = c->image, .fingerprint = c->fp,
                    .uid = c->owner->uid, .init_volume = init_volume,
                    .pids_limit = l->policy->pids_limit, .publish_address = l->policy->publish_address,
                    .service = l->service_id, .runtime = c->runtime,
                    .engine_runtime = c->runtime ? sbx_runtimes_engine(&l->policy->runtimes, c->runtime) : NULL,
            }, ret_body)) < 0 ||
            (r = sbx_user_labels_to_docker(c->labels, json_object_object_get(*ret_body, "Labels"))) < 0 ||
            (c->member && (r = lc_pool_label(l, json_object_object_get(*ret_body, "Labels"))) < 0) ||
            (r = sbx_user_labels_to_string(c->labels, &c->labels_json)) < 0 ||
            (r = sbx_egress_to_json(c->egress ?: &(SbxEgress) {}, &c->egress_json)) < 0 ||
            (r = sbx_container_name(c->name, &c->final_name)) < 0 ||
            (r = sbx_spec_to_json_string(c->spec, &c->json)) < 0)
                return r;
        if (asprintf(&c->pending, "%s" PENDING_SUFFIX, c->final_name) < 0)
                return -ENOMEM;
        c->created_us = (int64_t) sbx_now_realtime_us();
        return 0;
}

/* The intent, then the container under its provisional name. */
static int make_container(SbxLifecycle *l, const Creation *c, json_object *body, char **ret_id, SbxError *error) {
        int r;
        const char *shown;

        (void) sbx_name_unqualify(c->name, &shown);
        /* A member has no intent: under its provisional name it is removed by the
         * reconciliation should it be left (docs/lifecycle.md, "Warm pools"). */
        if (c->member)
                goto create;
        /* The intent first: whatever happens from here on, the container is found again.
         * It also counts against the owner's limit, with the other creates in flight. */
        r = sbx_store_put_intent(l->store, &(SbxIntentRow) {
                .name = (char *) c->name,
                .owner_uid = c->owner->uid,
                .owner_gid = c->owner->gid,
                .container_name = c->pending,
                .fingerprint = (char *) c->fp,
                .spec_json = c->json,
                .created_us = c->created_us,
                .labels_json = c->labels_json,
                .egress_json = c->egress_json,
        }, (unsigned) l->policy->max_sandboxes_per_user, error);
        if (r < 0 || (r = sbx_policy_check_count(l->policy, (size_t) r, error)) < 0)
                return r;
create:
#ifdef SBX_TEST_SEAMS
        if (l->seam_before_create)
                l->seam_before_create(l, c->pending, l->seam_userdata);
#endif
        r = sbx_docker_container_create(l->docker, c->pending, body, ret_id, error);
        /* No answer: Docker may have made it; the intent stays to settle that. */
        if (r < 0 && !c->member && !sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE)) {
                SbxError e = SBX_ERROR_NULL;

                if (sbx_store_delete_intent(l->store, c->name, &e) < 0)
                        log_warning("Could not end the create of '%s' in the store: %s", shown,
                                    e.message ?: "unknown error");
                sbx_error_free(&e);
        }
        if (sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))
                return lc_remap(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", shown);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return lc_remap(error, SBX_ERROR_BACKEND_ERROR, "Image not present on this host: %s", c->image);
        return r;
}

/* Create, with the name's lock held. */
static int create_locked(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         json_object *labels, const SbxNewLifetime *lifetime, const SbxEgress *egress,
                         const char *runtime, SbxSandbox **ret, SbxError *error) {
        _cleanup_(creation_done) Creation c = { .name = name, .spec = spec, .owner = owner, .labels = labels,
                                                .lifetime = *lifetime, .egress = egress,
                                                .runtime = lc_runtime_asked(runtime) };
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        _cleanup_free_ char *existing = NULL, *id = NULL;
        const SbxFingerprints *fps = NULL;
        const SbxSpec *stored = NULL;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if ((r = lc_settle_name(l, name, error)) < 0)
                return r;
        r = lc_find_container(l, name, true, &existing, error);
        if (r < 0)
                return r;
        if (r > 0)
                return sbx_error_set(error, SBX_ERROR_SANDBOX_EXISTS, "Sandbox already exists: '%s'", shown);
        /* A row without its container is stale (removed behind our back): drop it. */
        if ((r = sbx_store_delete_sandbox(l->store, name, error)) < 0 ||
            (r = prepare(l, &c, &body, error)) < 0 ||
            (r = make_container(l, &c, body, &id, error)) < 0)
                return r;
        if ((c.image_id && (r = check_snapshot_image(l, name, id, c.image, c.image_id, error)) < 0) ||
            (r = start_verify_record(l, &c, id, &o, error)) < 0) {
                undo_create(l, name, id);
                return r;
        }

        /* Judged like every later read of it: by the spec the row records, and by the
         * mount report the start made. */
        r = sbx_spec_memo_get(l->specs, c.json, &stored, &fps);
        if (r < 0)
                return r;
        r = lc_make_sandbox(l, name, o, &(SbxSandboxRow) { .owner_gid = owner->gid, .fingerprint = c.fp,
                                                           .created_us = c.created_us, .labels_json = c.labels_json },
                            stored, fps, &c.mounts, ret);
        if (r >= 0) {
                TAKE_PTR(o);
                lc_take_lifetime(c.name, c.created_us, &c.lifetime, *ret);
        }
        return r;
}

int lc_create_member(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                     const SbxEgress *egress, SbxObserved **ret, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        _cleanup_(creation_done) Creation c = { .name = name, .spec = spec, .owner = owner, .egress = egress,
                                                .member = true };
        _cleanup_(json_object_putp) json_object *body = NULL;
        _cleanup_free_ char *id = NULL;
        int r;

        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0 || (r = prepare(l, &c, &body, error)) < 0 ||
            (r = make_container(l, &c, body, &id, error)) < 0)
                return r;
        if ((r = start_verify_record(l, &c, id, ret, error)) < 0)
                undo_create(l, name, id);
        return r;
}

static int check_namespace(const char *name, const SbxOwner *owner, SbxError *error) {
        if (sbx_name_unqualify(name, &(const char *) { NULL }) != owner->uid)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "'%s' is not a name of uid %u", name,
                                     (unsigned) owner->uid);
        return 0;
}

int sbx_lifecycle_create_with(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                              const SbxCreateOptions *options, SbxSandbox **ret, SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        int r;

        if ((r = check_namespace(name, owner, error)) < 0 || (r = lc_lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        return create_locked(l, name, spec, owner, options ? options->labels : NULL,
                             options ? &options->lifetime : &(SbxNewLifetime) {}, options ? options->egress : NULL,
                             options ? options->runtime : NULL, ret, error);
}

int sbx_lifecycle_create(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         SbxSandbox **ret, SbxError *error) {
        return sbx_lifecycle_create_with(l, name, spec, owner, NULL, ret, error);
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

/* A verified container without its row (the row was lost, or it is xagent's own):
 * recorded again, within the owner's limit. Returns 1 if recorded, 0 if not. */
static int record_found(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                        const SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *json = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        const char *missing = lc_lacks(l, o);
        int r = sbx_spec_fingerprint(spec, l->policy->python_version, fp);
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        if (r < 0 || (r = sbx_spec_to_json_string(spec, &json)) < 0)
                return r;
        r = lc_put_adopted(l, &(SbxSandboxRow) {
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
                           "%s): hardened is false", shown, o->id, missing);
        return r;
}

/* What the desired spec makes of the sandbox there is: reuse it (starting it if need
 * be), or a mismatch naming the fields. */
/* Labels are set when a sandbox is made: an ensure that would change those of one
 * there is says so instead of changing them. */
static int check_labels_kept(const char *shown, const SbxSandboxRow *row, json_object *given, SbxError *error) {
        _cleanup_(json_object_putp) json_object *stored = NULL;
        int r;

        if (!given)
                return 0;
        if ((r = sbx_user_labels_from_string(row ? row->labels_json : NULL, &stored)) < 0)
                return r;
        if (!sbx_user_labels_equal(stored, given))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "labels: sandbox '%s' exists with other labels (%s); labels are set when a "
                                     "sandbox is created, never changed by an ensure", shown,
                                     json_object_to_json_string_ext(stored, JSON_C_TO_STRING_PLAIN));
        return 0;
}

static int ensure_existing(SbxLifecycle *l, const char *name, const SbxSpec *desired, const SbxOwner *owner,
                           json_object *labels, const char *runtime, bool *ret_reusable, SbxEnsureOutcome *ret_outcome,
                           SbxError *error) {
        _cleanup_(sbx_sandbox_freep) SbxSandbox *sb = NULL;
        _cleanup_(sbx_sandbox_row_freep) SbxSandboxRow *found = NULL, *row = NULL;
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        const SbxFingerprints *stored_fps = NULL;
        const SbxSpec *stored = NULL;
        SbxFingerprints fps;
        SbxVerdict verdict;
        int r;
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        /* The row located by is the row described and judged by: one store read. */
        if ((r = lc_locate(l, name, &o, &found, error)) <= 0 ||
            (r = lc_load_row(l, name, o->id, TAKE_PTR(found), &row, &stored, &stored_fps, error)) < 0 ||
            (r = lc_make_sandbox(l, name, o, row, stored, stored_fps, NULL, &sb)) < 0)
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
                                     shown, sbx_verdict_to_string(verdict), isempty(list) ? "unknown" : list);
        }
        if ((r = check_labels_kept(shown, row, labels, error)) < 0 ||
            (r = lc_check_runtime_kept(shown, sb->observed, runtime, error)) < 0)
                return r;
        if (verdict == SBX_VERDICT_MATCH && !row && (r = record_found(l, name, desired, owner, sb->observed, error)) < 0)
                return r;
        if (sb->state == SBX_STATE_RUNNING) {
                _cleanup_(sbx_egress_done) SbxEgress egress = {};

                /* Answered with its egress in force (a start behind the back lost it). */
                if ((r = lc_egress_of_row(row, &egress, error)) < 0 ||
                    (r = lc_egress_arm(l, sb->observed->id, sb->observed, &egress, LC_EGRESS_STOP_ON_FAILURE,
                                       error)) < 0)
                        return r;
                *ret_outcome = SBX_ENSURE_REUSED;
                return 1;
        }
        if (sb->state == SBX_STATE_PAUSED) {            /* an ensure wants it usable */
                if ((r = lc_pause_locked(l, name, false, error)) < 0)
                        return r;
                *ret_outcome = SBX_ENSURE_STARTED;
                return 1;
        }
        if ((r = lc_set_running_locked(l, name, true, 0, error)) < 0)
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
        const char *shown;

        (void) sbx_name_unqualify(name, &shown);
        r = lc_set_running_locked(l, name, false, stop_timeout_s, &e);
        if (r >= 0 && (r = lc_locate(l, name, &o, NULL, &e)) > 0 && o->state == SBX_STATE_RUNNING)
                r = sbx_error_set(&e, SBX_ERROR_IO, "it is still running");
        if (r < 0) {
                r = sbx_error_set(error, SBX_ERROR_RECOVERY_REQUIRED,
                                  "Sandbox '%s' does not match and could not be stopped: %s", shown,
                                  e.message ?: "unknown error");
                sbx_error_free(&e);
                return r;
        }
        return lc_delete_locked(l, name, error);
}

int sbx_lifecycle_ensure(SbxLifecycle *l, const char *name, const SbxSpec *spec, const SbxOwner *owner,
                         const SbxEnsureOptions *options, SbxSandbox **ret, SbxEnsureOutcome *ret_outcome,
                         SbxError *error) {
        _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
        SbxEnsureOutcome outcome = SBX_ENSURE_CREATED;
        SbxError mismatch = SBX_ERROR_NULL;
        bool reusable = false;
        int r;

        if ((r = check_namespace(name, owner, error)) < 0 || (r = lc_lock_key(l, "sandbox", name, &lock)) < 0)
                return r;
        r = ensure_existing(l, name, spec, owner, options->labels, options->runtime, &reusable, &outcome, &mismatch);
        if (r < 0 && !(sbx_error_is(&mismatch, SBX_ERROR_RUNTIME_CONFLICT) && options->recreate)) {
                sbx_error_move(error, &mismatch);
                return r;
        }
        if (r < 0 && options->busy_leases > 0) {
                const char *shown;

                (void) sbx_name_unqualify(name, &shown);
                sbx_error_free(&mismatch);
                return sbx_error_set(error, SBX_ERROR_SANDBOX_BUSY, "Sandbox '%s' does not match and is busy: %u "
                                     "lease%s held by other connections (option force revokes them)", shown,
                                     options->busy_leases, options->busy_leases == 1 ? "" : "s");
        }
        if (r < 0) {            /* a mismatch, to be replaced */
                sbx_error_free(&mismatch);
                if ((r = recreate_locked(l, name, spec, owner, options->stop_timeout_s, error)) < 0)
                        return r;
                outcome = SBX_ENSURE_RECREATED;
        } else if (r > 0) {
                *ret_outcome = outcome;
                return lc_describe_by_name(l, name, ret, error);
        }
        if ((r = create_locked(l, name, spec, owner, options->labels, &options->lifetime, options->egress,
                               options->runtime, ret, error)) < 0)
                return r;
        *ret_outcome = outcome;
        return 0;
}
