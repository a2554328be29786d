/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "naming.h"

static bool is_safe_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '.' || c == '-';
}

/* The regex works on code points, this on bytes: every byte of a multi-byte UTF-8
 * sequence lies outside the class, so a run of unsafe code points is exactly a run
 * of unsafe bytes and both become the same single "-". */
static char *replace_unsafe_runs(const char *name) {
        char *base = malloc(strlen(name) + 1), *p = base;

        if (!base)
                return NULL;
        for (const char *s = name; *s;) {
                if (is_safe_char(*s)) {
                        *p++ = *s++;
                        continue;
                }
                *p++ = '-';
                while (*s && !is_safe_char(*s))
                        s++;
        }
        *p = '\0';
        return base;
}

int sbx_make_safe_name(const char *name, char **ret) {
        _cleanup_free_ char *base = replace_unsafe_runs(name);
        unsigned char digest[20];
        const char *start;
        size_t len;
        char *out;

        if (!base)
                return -ENOMEM;

        start = base + strspn(base, "-.");
        len = strlen(start);
        while (len > 0 && strchr("-.", start[len - 1]))
                len--;
        if (len == 0) {
                start = "sandbox";
                len = strlen(start);
        }

        if (gnutls_hash_fast(GNUTLS_DIG_SHA1, name, strlen(name), digest) < 0)
                return -EIO;

        /* The first 10 hex digits are the first five bytes. */
        if (asprintf(&out, "%.*s-%02x%02x%02x%02x%02x", (int) len, start,
                     digest[0], digest[1], digest[2], digest[3], digest[4]) < 0)
                return -ENOMEM;

        /* Only [a-zA-Z0-9_.-] is left, so ASCII lowercasing is Python's lower(). */
        for (char *p = out; p < out + len; p++)
                if (*p >= 'A' && *p <= 'Z')
                        *p += 'a' - 'A';

        *ret = out;
        return 0;
}

static int prefixed_safe_name(const char *prefix, const char *name, char **ret) {
        _cleanup_free_ char *safe = NULL;
        int r;

        r = sbx_make_safe_name(name, &safe);
        if (r < 0)
                return r;
        if (asprintf(ret, "%s%s", prefix, safe) < 0)
                return -ENOMEM;
        return 0;
}

int sbx_container_name(const char *name, char **ret) {
        return prefixed_safe_name(SBX_CONTAINER_NAME_PREFIX, name, ret);
}

int sbx_snapshot_image_tag(const char *snapshot_id, char **ret) {
        return sbx_make_safe_name(snapshot_id, ret);
}

int sbx_snapshot_image_ref(const char *snapshot_id, char **ret) {
        return prefixed_safe_name(SBX_SNAPSHOT_REPOSITORY ":", snapshot_id, ret);
}

bool sbx_name_is_reserved(const char *name) {
        size_t digits;

        if (!name || name[0] != '~')
                return false;
        digits = strspn(name + 1, "0123456789");
        return digits > 0 && name[1 + digits] == ':';
}

int sbx_name_qualify(uid_t owner, const char *name, char **ret) {
        if (owner == 0)
                return (*ret = strdup(name)) ? 0 : -ENOMEM;
        return asprintf(ret, "~%u:%s", (unsigned) owner, name) < 0 ? -ENOMEM : 0;
}

uid_t sbx_name_unqualify(const char *qualified, const char **ret_name) {
        unsigned long uid;
        char *end;

        *ret_name = qualified;
        if (!sbx_name_is_reserved(qualified))
                return 0;
        errno = 0;
        uid = strtoul(qualified + 1, &end, 10);
        if (errno != 0 || uid == 0 || uid >= (uid_t) -1 || qualified[1] == '0')
                return 0;       /* not a canonical uid: root's odd name, taken literally */
        *ret_name = end + 1;
        return (uid_t) uid;
}

int sbx_name_from_labels(const char *name_label, uid_t owner, char **ret) {
        const char *plain;

        if (!name_label) {
                *ret = NULL;
                return 0;
        }
        /* "~<uid>:…" is the form of uid's names alone: on root's container (one
         * without an owner label) or another owner's it names nobody's sandbox. */
        if (sbx_name_is_reserved(name_label))
                return owner != 0 && sbx_name_unqualify(name_label, &plain) == owner
                        ? (*ret = strdup(name_label)) ? 0 : -ENOMEM
                        : -EBADMSG;
        if (owner == 0)
                return (*ret = strdup(name_label)) ? 0 : -ENOMEM;
        return sbx_name_qualify(owner, name_label, ret);
}
