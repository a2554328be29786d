/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A registry's manifest, read by the service itself over TLS verified with the
 * policy's CA for that registry (docs/security.md, "Images"): what a reference names
 * (the digest the engine then pulls by, the image id, the size), before the engine
 * pulls a byte. Anonymous: a registry that asks for credentials is refused.
 *
 * Errors: RegistryUntrusted (its certificate is signed by another CA; it does not
 * name the host), NoSuchImage (no such repository or tag), BackendUnavailable (not
 * reachable), BackendError (anything else, named). */

#include <stdint.h>

#include "error.h"
#include "image-ref.h"

typedef struct SbxRegistryImage {
        char *digest;           /* of what the reference names (a list of platforms, or a manifest) */
        char *image_id;         /* the config's digest: Docker's image id */
        uint64_t size;          /* the config and the layers, as sent (compressed) */
} SbxRegistryImage;

void sbx_registry_image_done(SbxRegistryImage *i);

/* https://REGISTRY/v2/REPOSITORY/manifests/(TAG|DIGEST), verified with the CA file
 * ca_path; a list of platforms is followed to linux/arch ("amd64", "arm64"…). Every
 * manifest read is hashed: one asked for by digest must have it. timeout_s bounds
 * each request. */
int sbx_registry_resolve(const SbxImageRef *ref, const char *ca_path, const char *arch, unsigned timeout_s,
                         SbxRegistryImage *ret, SbxError *error);

/* Docker's name for this machine's architecture ("amd64" for x86_64…). */
const char *sbx_registry_host_arch(void);
