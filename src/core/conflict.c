/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "conflict.h"
#include "path.h"

/* Python's repr() of a str for the message: the quote choice and the escapes of
 * ASCII control characters. Non-ASCII is copied as is (Python would escape the
 * non-printable code points); the text is for people, not for hashing. */
static void fput_repr(FILE *f, const char *s) {
        char q = strchr(s, '\'') && !strchr(s, '"') ? '"' : '\'';

        fputc(q, f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                if (*p == '\\' || *p == (unsigned char) q)
                        fprintf(f, "\\%c", *p);
                else if (*p == '\t')
                        fputs("\\t", f);
                else if (*p == '\n')
                        fputs("\\n", f);
                else if (*p == '\r')
                        fputs("\\r", f);
                else if (*p < 0x20 || *p == 0x7f)
                        fprintf(f, "\\x%02x", *p);
                else
                        fputc(*p, f);
        }
        fputc(q, f);
}

/* The message "Conflicting desired volume mounts for <side> path <p>: (<a>, <m>) vs (<b>, <n>)". */
static int volume_conflict(SbxError *error, const char *side, const char *path, const char *prior_path,
                           const char *prior_mode, const char *path2, const char *mode) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "Conflicting desired volume mounts for %s path ", side);
        fput_repr(f, path);
        fputs(": (", f);
        fput_repr(f, prior_path);
        fputs(", ", f);
        fput_repr(f, prior_mode);
        fputs(") vs (", f);
        fput_repr(f, path2);
        fputs(", ", f);
        fput_repr(f, mode);
        fputc(')', f);
        if (fclose(f) != 0)
                return -ENOMEM;
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "%s", text);
}

static void strv_free_n(char **l, size_t n) {
        if (!l)
                return;
        for (size_t i = 0; i < n; i++)
                free(l[i]);
        free(l);
}

static int canonicalize_all(const SbxVolume *volumes, size_t n, char ***ret_hosts, char ***ret_guests) {
        char **hosts = calloc(n, sizeof(char *)), **guests = calloc(n, sizeof(char *));

        if (!hosts || !guests)
                goto fail;
        for (size_t i = 0; i < n; i++) {
                hosts[i] = sbx_canonical_path(volumes[i].host);
                guests[i] = sbx_canonical_path(volumes[i].guest);
                if (!hosts[i] || !guests[i])
                        goto fail;
        }
        *ret_hosts = hosts;
        *ret_guests = guests;
        return 0;
fail:
        strv_free_n(hosts, hosts ? n : 0);
        strv_free_n(guests, guests ? n : 0);
        return -ENOMEM;
}

/* xagent keeps a dict per side whose entry, once set, never changes without
 * raising; so "the prior value" is that of the first earlier item with the key. */
static ssize_t first_with(char **keys, size_t before, const char *key) {
        for (size_t j = 0; j < before; j++)
                if (streq(keys[j], key))
                        return (ssize_t) j;
        return -1;
}

int sbx_check_volume_conflicts(const SbxVolume *volumes, size_t n, SbxError *error) {
        char **hosts = NULL, **guests = NULL;
        int r = 0;

        if (n == 0)
                return 0;
        if (canonicalize_all(volumes, n, &hosts, &guests) < 0)
                return -ENOMEM;

        for (size_t i = 0; i < n && r == 0; i++) {
                const char *mode = volumes[i].mode;
                ssize_t j;

                j = first_with(hosts, i, hosts[i]);
                if (j >= 0 && !(streq(guests[j], guests[i]) && streq(volumes[j].mode, mode))) {
                        r = volume_conflict(error, "host", hosts[i], guests[j], volumes[j].mode, guests[i], mode);
                        break;
                }
                j = first_with(guests, i, guests[i]);
                if (j >= 0 && !(streq(hosts[j], hosts[i]) && streq(volumes[j].mode, mode)))
                        r = volume_conflict(error, "guest", guests[i], hosts[j], volumes[j].mode, hosts[i], mode);
        }

        strv_free_n(hosts, n);
        strv_free_n(guests, n);
        return r;
}

int sbx_check_port_conflicts(const SbxPort *ports, size_t n, SbxError *error) {
        for (size_t i = 0; i < n; i++) {
                const SbxPort *p = &ports[i];

                for (size_t j = 0; j < i; j++)
                        if (ports[j].guest == p->guest && ports[j].host != p->host)
                                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                                     "Conflicting desired port mappings for guest port %" PRIi64
                                                     ": host %" PRIi64 " vs %" PRIi64,
                                                     p->guest, ports[j].host, p->host);
                if (p->host == 0)
                        continue;
                for (size_t j = 0; j < i; j++)
                        if (ports[j].host == p->host && ports[j].guest != p->guest)
                                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                                     "Conflicting desired port mappings for host port %" PRIi64
                                                     ": guest %" PRIi64 " vs %" PRIi64,
                                                     p->host, ports[j].guest, p->guest);
        }
        return 0;
}

int sbx_check_spec_conflicts(const SbxSpec *spec, SbxError *error) {
        int r;

        r = sbx_check_volume_conflicts(spec->volumes, spec->n_volumes, error);
        if (r < 0)
                return r;
        return sbx_check_port_conflicts(spec->ports, spec->n_ports, error);
}
