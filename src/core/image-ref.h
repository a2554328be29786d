/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* An image reference as Docker reads one ("[REGISTRY/]REPOSITORY[:TAG][@sha256:HEX]"),
 * taken apart for a pull (docs/api.md, PullImage): the first component is a registry
 * when it holds a '.' or a ':' or is "localhost", else the reference is Docker Hub's. */

#include "error.h"

#define SBX_IMAGE_REF_MAX 512U
#define SBX_IMAGE_REF_DEFAULT_REGISTRY "docker.io"

typedef struct SbxImageRef {
        char *registry;         /* "host[:port]", SBX_IMAGE_REF_DEFAULT_REGISTRY when none is named */
        char *repository;       /* the path in the registry: lowercase components joined by '/' */
        char *tag;              /* "latest" when neither a tag nor a digest is given; NULL with a digest alone */
        char *digest;           /* "sha256:" and 64 lowercase hexadecimal digits, or NULL */
} SbxImageRef;

/* InvalidArgs naming what is wrong with ref. */
int sbx_image_ref_parse(const char *ref, SbxImageRef *ret, SbxError *error);
void sbx_image_ref_done(SbxImageRef *r);

/* "sha256:" and 64 lowercase hexadecimal digits. */
bool sbx_image_digest_valid(const char *s);
