/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "mountinfo.h"
#include "path.h"
#include "timestamp.h"

/* The kernel escapes space, tab, newline and backslash as \ooo. */
static char *unescape(const char *s, size_t len) {
        char *out = malloc(len + 1), *p = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] == '\\' && i + 3 < len &&
                    s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' && s[i + 2] <= '7' &&
                    s[i + 3] >= '0' && s[i + 3] <= '7') {
                        *p++ = (char) (((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
                        i += 3;
                } else
                        *p++ = s[i];
        }
        *p = 0;
        return out;
}

/* The next space-separated field of *s; NULL at the end of the line. */
static const char *field(const char **s, size_t *len) {
        const char *start = *s + strspn(*s, " ");

        if (!*start || *start == '\n')
                return NULL;
        *len = strcspn(start, " \n");
        *s = start + *len;
        return start;
}

static bool has_option(const char *opts, size_t len, const char *want) {
        size_t wl = strlen(want);

        for (const char *p = opts, *end = opts + len; p < end;) {
                size_t l = strcspn(p, ",");

                if (l > (size_t) (end - p))
                        l = (size_t) (end - p);
                if (l == wl && memcmp(p, want, l) == 0)
                        return true;
                p += l + 1;
        }
        return false;
}

static int parse_line(const char *line, SbxMountInfo *m) {
        const char *f[6], *s = line;
        size_t len[6];
        bool separator = false;

        for (size_t i = 0; i < ELEMENTSOF(f); i++)
                if (!(f[i] = field(&s, &len[i])))
                        return -EBADMSG;
        /* Optional fields up to "-", then the file system type, source, super options. */
        for (const char *x; (x = field(&s, &(size_t) { 0 }));)
                if (x[0] == '-' && (x[1] == ' ' || x[1] == '\n' || !x[1])) {
                        separator = true;
                        break;
                }
        if (!separator)
                return -EBADMSG;
        if (sscanf(f[0], "%d", &m->mount_id) != 1 || sscanf(f[2], "%u:%u", &m->major, &m->minor) != 2)
                return -EBADMSG;
        m->root = unescape(f[3], len[3]);
        m->mount_point = unescape(f[4], len[4]);
        if (!m->root || !m->mount_point)
                return -ENOMEM;
        m->read_only = has_option(f[5], len[5], "ro");
        return 0;
}

void sbx_mountinfo_free(SbxMountInfo *m, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(m[i].root);
                free(m[i].mount_point);
        }
        free(m);
}

int sbx_mountinfo_parse(const char *text, SbxMountInfo **ret, size_t *ret_n) {
        SbxMountInfo *m = NULL;
        size_t n = 0;

        for (const char *line = text; *line; line += strcspn(line, "\n") + (line[strcspn(line, "\n")] == '\n')) {
                SbxMountInfo *grown;
                int r;

                if (*line == '\n')
                        continue;
                grown = reallocarray(m, n + 1, sizeof(SbxMountInfo));
                if (!grown) {
                        sbx_mountinfo_free(m, n);
                        return -ENOMEM;
                }
                m = grown;
                m[n] = (SbxMountInfo) {};
                r = parse_line(line, &m[n]);
                n++;
                if (r < 0) {
                        sbx_mountinfo_free(m, n);
                        return r;
                }
        }
        *ret = m;
        *ret_n = n;
        return 0;
}

const SbxMountInfo *sbx_mountinfo_at(const SbxMountInfo *m, size_t n, const char *mount_point) {
        for (size_t i = n; i > 0; i--)
                if (streq(m[i - 1].mount_point, mount_point))
                        return &m[i - 1];
        return NULL;
}

const SbxMountInfo *sbx_mountinfo_by_id(const SbxMountInfo *m, size_t n, int mount_id) {
        for (size_t i = 0; i < n; i++)
                if (m[i].mount_id == mount_id)
                        return &m[i];
        return NULL;
}

int sbx_mountinfo_fs_path(const SbxMountInfo *m, const char *path, char **ret) {
        const char *rest;

        if (!sbx_path_is_root_or_descendant(path, m->mount_point))
                return -EINVAL;
        rest = path + strlen(m->mount_point);   /* "" or "/…" ("…" if the mount point is "/") */
        if (*rest == '/')
                rest++;
        if (!*rest)
                return (*ret = strdup(m->root)) ? 0 : -ENOMEM;
        if (asprintf(ret, "%s%s%s", m->root, streq(m->root, "/") ? "" : "/", rest) < 0)
                return -ENOMEM;
        return 0;
}

#define INIT_MARKER "xagent-sandbox-init: mounts "

int sbx_mountinfo_from_init_log(const char *log, uint64_t since_us, char **ret) {
        _cleanup_free_ char *table = NULL;
        FILE *f = NULL;
        size_t size = 0;
        bool inside = false;
        int found = 0;

        for (const char *line = log; *line;) {
                size_t len = strcspn(line, "\n");
                const char *space = memchr(line, ' ', len), *text;
                _cleanup_free_ char *ts = NULL;
                uint64_t t;

                if (!space || !(ts = strndup(line, (size_t) (space - line))) || sbx_parse_rfc3339_usec(ts, &t) < 0) {
                        if (f)
                                fclose(f);
                        return ts || !space ? -EBADMSG : -ENOMEM;
                }
                text = space + 1;
                len -= (size_t) (text - line);
                if (t >= since_us) {
                        if (len == strlen(INIT_MARKER "begin") && startswith(text, INIT_MARKER "begin")) {
                                if (f)
                                        fclose(f);
                                free(table);
                                table = NULL;
                                f = open_memstream(&table, &size);
                                if (!f)
                                        return -ENOMEM;
                                inside = true;
                                found = 0;
                        } else if (len == strlen(INIT_MARKER "end") && startswith(text, INIT_MARKER "end")) {
                                inside = false;
                                found = f != NULL;
                        } else if (startswith(text, INIT_MARKER)) {
                                if (f)
                                        fclose(f);
                                return -EBADMSG;
                        } else if (inside)
                                fprintf(f, "%.*s\n", (int) len, text);
                }
                line = text + len + (text[len] == '\n');
        }
        if (!f)
                return 0;
        if (fclose(f) != 0)
                return -ENOMEM;
        if (!found)
                return 0;
        *ret = TAKE_PTR(table);
        return 1;
}
