/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "path.h"

char *sbx_canonical_path(const char *path) {
        size_t len = strlen(path), n = 0, initial_slashes = 0;
        _cleanup_free_ const char **comps = NULL;
        char *ret, *p;

        if (len == 0)
                return strdup(".");

        /* posixpath.normpath: exactly two leading slashes are kept, one or three
         * and more become one. */
        if (path[0] == '/')
                initial_slashes = (path[1] == '/' && path[2] != '/') ? 2 : 1;

        comps = calloc(len / 2 + 1, sizeof(char *));
        _cleanup_free_ size_t *lens = calloc(len / 2 + 1, sizeof(size_t));
        if (!comps || !lens)
                return NULL;

        for (const char *s = path; *s;) {
                size_t l = strcspn(s, "/");

                if (l == 0 || (l == 1 && s[0] == '.'))
                        ; /* empty or "." component */
                else if (!(l == 2 && s[0] == '.' && s[1] == '.') ||
                         (initial_slashes == 0 && n == 0) ||
                         (n > 0 && lens[n - 1] == 2 && strncmp(comps[n - 1], "..", 2) == 0)) {
                        comps[n] = s;
                        lens[n] = l;
                        n++;
                } else if (n > 0)
                        n--;

                s += l;
                if (*s == '/')
                        s++;
        }

        /* A result of two leading slashes is then collapsed to one (xagent-contract.md §1.3). */
        if (initial_slashes == 2)
                initial_slashes = 1;

        ret = p = malloc(len + 2);
        if (!ret)
                return NULL;
        for (size_t i = 0; i < initial_slashes; i++)
                *p++ = '/';
        for (size_t i = 0; i < n; i++) {
                if (i > 0)
                        *p++ = '/';
                memcpy(p, comps[i], lens[i]);
                p += lens[i];
        }
        if (p == ret)
                *p++ = '.';
        *p = 0;
        return ret;
}

bool sbx_path_is_root_or_descendant(const char *path, const char *root) {
        size_t l = strlen(root);

        if (streq(path, root))
                return true;
        if (l > 0 && root[l - 1] == '/')
                return strncmp(path, root, l) == 0;
        return strncmp(path, root, l) == 0 && path[l] == '/';
}

int sbx_path_normalize_absolute(const char *path, char *out, size_t size) {
        size_t o = 0;           /* the result's length so far: never past where path is read */

        if (path[0] != '/')
                return -EINVAL;
        if (size < 2)
                return -ENAMETOOLONG;
        for (const char *s = path; *s;) {
                size_t l;

                while (*s == '/')
                        s++;
                l = strcspn(s, "/");
                if (l == 0 || (l == 1 && s[0] == '.'))
                        ;
                else if (l == 2 && s[0] == '.' && s[1] == '.') {
                        while (o > 0 && out[o - 1] != '/')
                                o--;
                        if (o > 0)
                                o--;            /* the slash before it */
                } else {
                        if (o + 1 + l + 1 > size)
                                return -ENAMETOOLONG;
                        out[o++] = '/';
                        memmove(out + o, s, l);
                        o += l;
                }
                s += l;
        }
        if (o == 0)
                out[o++] = '/';
        out[o] = 0;
        return 0;
}
