/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image-ref.h"

#define TAG_MAX 128U

void sbx_image_ref_done(SbxImageRef *r) {
        free(r->registry);
        free(r->repository);
        free(r->tag);
        free(r->digest);
        *r = (SbxImageRef) {};
}

bool sbx_image_digest_valid(const char *s) {
        if (!s || strncmp(s, "sha256:", 7) != 0 || strlen(s) != 7 + 64)
                return false;
        for (s += 7; *s; s++)
                if (!strchr("0123456789abcdef", *s))
                        return false;
        return true;
}

/* Docker's repository path: components of [a-z0-9] runs joined by '.', '_', '__' or
 * '-' runs, separated by '/'. */
static bool repository_valid(const char *s) {
        bool start = true;

        if (!*s)
                return false;
        for (; *s; s++) {
                bool alnum = (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9');

                if (start && !alnum)
                        return false;
                if (!alnum && !strchr("._-/", *s))
                        return false;
                if (*s == '/' && strchr("._-", s[-1]))
                        return false;
                start = *s == '/';
        }
        return !strchr("._-/", s[-1]);
}

static bool tag_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > TAG_MAX || *s == '.' || *s == '-')
                return false;
        for (; *s; s++)
                if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
                      strchr("_.-", *s)))
                        return false;
        return true;
}

/* host[:port]: letters, digits, '-', '.', or a bracketed IPv6 literal, then a port. */
static bool registry_valid(const char *s) {
        const char *end = s + strcspn(s, ":");

        if (*s == '[')
                end = strchr(s, ']') ? strchr(s, ']') + 1 : s;
        if (end == s)
                return false;
        for (const char *c = s; c < end && *s != '['; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr("-.", *c)))
                        return false;
        if (!*end)
                return true;
        if (*end != ':' || !end[1] || strlen(end + 1) > 5)
                return false;
        return strspn(end + 1, "0123456789") == strlen(end + 1);
}

static bool names_registry(const char *first, size_t n) {
        return memchr(first, '.', n) || memchr(first, ':', n) || (n == 9 && strncmp(first, "localhost", 9) == 0);
}

int sbx_image_ref_parse(const char *ref, SbxImageRef *ret, SbxError *error) {
        _cleanup_free_ char *copy = NULL;
        SbxImageRef r = {};
        char *at, *slash, *name, *colon;

        if (isempty(ref))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "reference: must not be empty");
        if (strlen(ref) > SBX_IMAGE_REF_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "reference: longer than %u bytes",
                                     SBX_IMAGE_REF_MAX);
        if (!(copy = strdup(ref)))
                return -ENOMEM;
        if ((at = strchr(copy, '@'))) {
                *at++ = 0;
                if (!sbx_image_digest_valid(at))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "reference: '%s': a digest is sha256: and 64 lowercase hexadecimal digits",
                                             ref);
        }
        slash = strchr(copy, '/');
        name = copy;
        if (slash && names_registry(copy, (size_t) (slash - copy))) {
                *slash = 0;
                name = slash + 1;
                if (!registry_valid(copy))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "reference: '%s': '%s' is not HOST[:PORT]",
                                             ref, copy);
        }
        colon = strrchr(name, ':');
        if (colon && strchr(colon, '/'))
                colon = NULL;
        if (colon)
                *colon++ = 0;
        if (!repository_valid(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "reference: '%s': the repository '%s' is not lowercase letters and digits in "
                                     "components separated by '/'", ref, name);
        if (colon && !tag_valid(colon))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "reference: '%s': '%s' is not a valid tag", ref,
                                     colon);
        r.registry = strdup(name == copy ? SBX_IMAGE_REF_DEFAULT_REGISTRY : copy);
        if (name == copy && !strchr(name, '/')) {
                if (asprintf(&r.repository, "library/%s", name) < 0)
                        r.repository = NULL;
        } else
                r.repository = strdup(name);
        r.tag = colon ? strdup(colon) : at ? NULL : strdup("latest");
        r.digest = at ? strdup(at) : NULL;
        if (!r.registry || !r.repository || (!r.tag && !at) || (at && !r.digest)) {
                sbx_image_ref_done(&r);
                return -ENOMEM;
        }
        *ret = r;
        return 0;
}
