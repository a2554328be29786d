/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Images pulled through the policy (docs/security.md, "Images"). */

#include <stdio.h>

#include "json-util.h"
#include "lifecycle.h"
#include "log.h"
#include "registry.h"

/* The image pulled by digest is the one the manifest named, within max_image_mib as
 * the engine stores it; else it is removed (unless the host had it before). */
static int check_pulled(SbxLifecycle *l, const char *by_digest, const SbxRegistryImage *img, bool had,
                        uint64_t max_bytes, SbxError *error) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        const char *id;
        int64_t size;
        int r;

        if ((r = sbx_docker_image_inspect(l->docker, by_digest, &j, error)) < 0)
                return r;
        id = json_object_get_string(json_object_object_get(j, "Id"));
        size = json_object_get_int64(json_object_object_get(j, "Size"));
        if (!streq_ptr(id, img->image_id))
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                  "The engine pulled %s as image %s, not %s as its manifest says", by_digest,
                                  id ?: "(none)", img->image_id);
        else if (size < 0 || (uint64_t) size > max_bytes)
                r = sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                  "Image %s takes %" PRIi64 " MiB, over the host policy's max_image_mib %" PRIu64
                                  " (removed)", by_digest, size >> 20, max_bytes >> 20);
        if (r < 0 && !had) {
                SbxError ignored = SBX_ERROR_NULL;

                if (sbx_docker_image_remove(l->docker, id ?: by_digest, false, &ignored) < 0)
                        log_warning("Could not remove the refused image %s: %s", by_digest, ignored.message);
                sbx_error_free(&ignored);
        }
        return r;
}

static bool image_present(SbxLifecycle *l, const char *image) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        SbxError ignored = SBX_ERROR_NULL;
        int r = sbx_docker_image_inspect(l->docker, image, &j, &ignored);

        sbx_error_free(&ignored);
        return r >= 0;
}

int sbx_lifecycle_pull(SbxLifecycle *l, const char *reference, SbxDockerPullProgress progress, void *userdata,
                       char **ret_image_id, SbxError *error) {
        _cleanup_free_ char *by_digest = NULL, *repo = NULL;
        uint64_t max_bytes = (uint64_t) l->policy->max_image_mib << 20;
        const SbxPolicyRegistry *reg;
        SbxRegistryImage img = {};
        SbxImageRef ref = {};
        bool had;
        int r;

        if ((r = sbx_policy_check_pull(l->policy, reference, &ref, &reg, error)) < 0)
                return r;
        r = sbx_registry_resolve(&ref, reg->ca, sbx_registry_host_arch(), (unsigned) l->policy->docker_timeout, &img,
                                 error);
        if (r >= 0 && img.size > max_bytes)
                r = sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                  "Image %s: its layers are %" PRIu64 " MiB, over the host policy's max_image_mib %"
                                  PRIu64, reference, img.size >> 20, max_bytes >> 20);
        if (r >= 0 && (asprintf(&repo, "%s/%s", ref.registry, ref.repository) < 0 ||
                       asprintf(&by_digest, "%s@%s", repo, img.digest) < 0))
                r = -ENOMEM;
        if (r >= 0) {
                had = image_present(l, img.image_id);
                r = sbx_docker_image_pull(l->docker, by_digest, max_bytes, progress, userdata, error);
        }
        if (r >= 0)
                r = check_pulled(l, by_digest, &img, had, max_bytes, error);
        /* A tag names what the service verified, not what the registry's tag says later. */
        if (r >= 0 && ref.tag)
                r = sbx_docker_image_tag(l->docker, img.image_id, repo, ref.tag, error);
        if (r >= 0) {
                *ret_image_id = TAKE_PTR(img.image_id);
                log_info("Pulled %s (%s) as image %s", reference, by_digest, *ret_image_id);
        }
        sbx_registry_image_done(&img);
        sbx_image_ref_done(&ref);
        return r;
}

int sbx_lifecycle_pull_missing(SbxLifecycle *l, const char *image, SbxError *error) {
        _cleanup_free_ char *id = NULL;
        int r;

        if (image_present(l, image))
                return 0;
        r = sbx_lifecycle_pull(l, image, NULL, NULL, &id, error);
        return r < 0 ? r : 1;
}
