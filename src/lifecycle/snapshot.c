/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Snapshot and delete-snapshot (docs/lifecycle.md), and the settling of an
 * interrupted snapshot by its intent. */

#include <stdio.h>
#include <sys/random.h>

#include "docker-container.h"
#include "docker-dialect.h"
#include "docker-image.h"
#include "labels.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "user-labels.h"

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
        const char *shown_id;

        (void) sbx_name_unqualify(in->id, &shown_id);
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
                log_notice("Removed image %s of an interrupted snapshot '%s' (never recorded)", id, shown_id);
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
                log_notice("Recorded snapshot '%s' (image %s) of an interrupted snapshot", shown_id, adopt);
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
        const char *shown_id;

        (void) sbx_name_unqualify(snapshot_id, &shown_id);
        if (r <= 0)
                return r;
        r = settle_snapshot_intent(l, in, false, NULL, error);
        if (r < 0 && (sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE) ||
                      sbx_error_is(error, SBX_ERROR_DOCKER_CONFLICT))) {
                _cleanup_free_ char *why = TAKE_PTR(error->message);
                return lc_remap(error, error->kind == SBX_ERROR_DOCKER_CONFLICT ? SBX_ERROR_BACKEND_ERROR
                                                                              : SBX_ERROR_BACKEND_UNAVAILABLE,
                             "An interrupted snapshot '%s' is still to be settled: %s", shown_id, why ?: "");
        }
        return r;
}

/* The commit's config (labels.h), from the image the container was made from. */
static int commit_config(SbxLifecycle *l, const char *container_id, const char *token, json_object **ret,
                         SbxError *error) {
        _cleanup_(json_object_putp) json_object *container = NULL, *image = NULL, *config = NULL;
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
        if ((r = sbx_labels_build_commit_config(image ? json_object_object_get(image, "Config") : NULL, token,
                                                &config)) < 0 ||
            (r = sbx_user_labels_blank_docker(json_object_object_get(json_object_object_get(container, "Config"),
                                                                     "Labels"), json_object_object_get(config, "Labels"))) < 0)
                return r;
        *ret = TAKE_PTR(config);
        return 0;
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
        const char *shown_id;
        const char *shown;

        (void) sbx_name_unqualify(in->id, &shown_id);
        (void) sbx_name_unqualify(name, &shown);

        if (k > 0) {
                log_notice("The commit of snapshot '%s' failed (%s), but Docker made its image %s: recorded",
                           shown_id, error->message ?: "unknown error", image_id);
                sbx_error_free(error);
                if (ret_image_id)
                        *ret_image_id = TAKE_PTR(image_id);
                return 0;
        }
        if (k < 0) {
                log_warning("Could not settle the failed commit of snapshot '%s' now, will retry: %s", shown_id,
                            e.message ?: "unknown error");
                sbx_error_free(&e);
                if (sbx_store_abandon_snapshot_intent(l->store, in->id, &e) < 0)
                        log_warning("Could not mark the snapshot '%s' failed in the store: %s", shown_id,
                                    e.message ?: "unknown error");
        }
        sbx_error_free(&e);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        return r;
}

/* The row could not be written: the image goes again, and with it the intent (which,
 * should the removal fail, removes it later). */
static void undo_snapshot(SbxLifecycle *l, const SbxSnapshotIntentRow *in, const char *image_id) {
        SbxError e = SBX_ERROR_NULL;
        const char *shown_id;

        (void) sbx_name_unqualify(in->id, &shown_id);
        (void) sbx_store_abandon_snapshot_intent(l->store, in->id, &e);
        sbx_error_free(&e);
        if (remove_image(l, image_id, &e) < 0)
                log_warning("Could not remove image %s of snapshot '%s' after a store failure, will retry: %s",
                            image_id, shown_id, e.message ?: "unknown error");
        else if (sbx_store_delete_snapshot_intent(l->store, in->id, &e) < 0)
                log_warning("Could not end the snapshot '%s' in the store: %s", shown_id,
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
        const char *shown_id;
        const char *shown;

        (void) sbx_name_unqualify(snapshot_id, &shown_id);
        (void) sbx_name_unqualify(name, &shown);

        /* Lock order: the sandbox, then the snapshot id. */
        if ((r = lc_lock_key(l, "sandbox", name, &lock)) < 0 || (r = lc_lock_key(l, "snapshot", snapshot_id, &snap_lock)) < 0 ||
            (r = sbx_lifecycle_container_id(l, name, &id, error)) < 0 ||
            (r = sbx_dialect_check_commit(sbx_docker_dialect(l->docker), error)) < 0 ||
            (r = settle_snapshot_id(l, snapshot_id, error)) < 0)
                return r;
        if ((r = sbx_store_get_snapshot(l->store, snapshot_id, &existing, error)) < 0)
                return r;
        if (r > 0)
                return sbx_error_set(error, SBX_ERROR_SNAPSHOT_EXISTS, "Snapshot already exists: %s",
                                     shown_id);

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
                return lc_remap(error, SBX_ERROR_NO_SUCH_SANDBOX, "Sandbox not found: %s", shown);
        if (r < 0)
                return r;

        /* The intent first: whatever the commit makes is found again by its token. */
        in = (SbxSnapshotIntentRow) {
                .id = (char *) snapshot_id,
                .owner_uid = sbx_name_unqualify(snapshot_id, &(const char *) { NULL }),
                .source_sandbox = (char *) name,
                .image_tag = ref,
                .token = token,
                .created_us = (int64_t) sbx_now_realtime_us(),
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
        const char *shown_id;

        (void) sbx_name_unqualify(snapshot_id, &shown_id);
        /* An interrupted snapshot of the id is settled first: recorded, its image then
         * removed below, or removed there. */
        if ((r = lc_lock_key(l, "snapshot", snapshot_id, &lock)) < 0 || (r = settle_snapshot_id(l, snapshot_id, error)) < 0)
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
                return lc_remap(error, SBX_ERROR_BACKEND_ERROR, "Snapshot '%s' is in use: %s", shown_id, why ?: "");
        } else if (r < 0)
                return r;
        if ((r = sbx_store_delete_snapshot(l->store, snapshot_id, error)) < 0)
                return r;
        return 1;
}

/* Every interrupted snapshot settled, each under its id's lock with the intent read
 * again. One that cannot be settled for now (its image in use) is logged and kept;
 * Docker gone stops the reconciliation. */
int lc_settle_snapshot_intents(SbxLifecycle *l, SbxReconcileStats *st, SbxError *error) {
        _cleanup_(sbx_snapshot_intent_row_list_freep) SbxSnapshotIntentRow **intents = NULL;
        int r;

        if ((r = sbx_store_list_snapshot_intents(l->store, &intents, error)) < 0)
                return r;
        for (SbxSnapshotIntentRow **in = intents; *in; in++) {
                _cleanup_(sbx_keyed_lock_handle_freep) SbxKeyedLockHandle *lock = NULL;
                _cleanup_(sbx_snapshot_intent_row_freep) SbxSnapshotIntentRow *again = NULL;

                if ((r = lc_lock_key(l, "snapshot", (*in)->id, &lock)) < 0 ||
                    (r = sbx_store_get_snapshot_intent(l->store, (*in)->id, &again, error)) < 0)
                        return r;
                if (r > 0 && (r = settle_snapshot_intent(l, again, false, NULL, error)) < 0) {
                        const char *shown_id;

                        if (sbx_error_is(error, SBX_ERROR_BACKEND_UNAVAILABLE) || r == -ENOMEM)
                                return r;
                        (void) sbx_name_unqualify((*in)->id, &shown_id);
                        log_warning("Could not settle the interrupted snapshot '%s' yet: %s", shown_id,
                                    error->message ?: "unknown error");
                        sbx_error_free(error);
                        continue;
                }
                st->snapshots += r >= 0;
        }
        return 0;
}
