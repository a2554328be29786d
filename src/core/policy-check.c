/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The decisions made with a host policy on a normalized spec: image, limits, ports,
 * guest paths and volume roots (policy.h). Pure: the file-system checks live elsewhere. */

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "container-body.h"
#include "path.h"
#include "policy.h"
#include "policy-internal.h"

static const char *strempty(const char *s) {
        return s ?: "";
}

/* The rest of path after prefix, if path is prefix or lies below it; else NULL. */
static const char *startswith_path(const char *path, const char *prefix) {
        size_t l = strlen(prefix);

        if (strncmp(path, prefix, l) != 0 || (path[l] != 0 && path[l] != '/'))
                return NULL;
        return path + l;
}

static char *strjoin2(const char *a, const char *b) {
        char *s;

        return asprintf(&s, "%s%s", a, b) < 0 ? NULL : s;
}

bool policy_image_allowed(const SbxPolicy *p, const char *image) {
        for (size_t i = 0; i < p->n_allowed_images; i++)
                if (fnmatch(p->allowed_images[i], image, 0) == 0)
                        return true;
        return false;
}

int sbx_policy_check_image(const SbxPolicy *p, const char *image, SbxError *error) {
        if (isempty(image))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "image: must not be empty");
        if (!policy_image_allowed(p, image))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "image: '%s' is not matched by the host policy's allowed_images", image);
        return 0;
}

int sbx_policy_check_limits(const SbxPolicy *p, const SbxSpec *spec, SbxError *error) {
        if (spec->cpus > p->max_cpus)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "cpus: %" PRIi64 " is more than the host policy's max_cpus %" PRIi64,
                                     spec->cpus, p->max_cpus);
        if (spec->memory > p->max_memory_mib)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "memory: %" PRIi64 " MiB is more than the host policy's max_memory_mib %" PRIi64,
                                     spec->memory, p->max_memory_mib);
        return 0;
}

int sbx_policy_check_ports(const SbxPolicy *p, const SbxSpec *spec, SbxError *error) {
        for (size_t i = 0; i < spec->n_ports; i++) {
                int64_t h = spec->ports[i].host;

                if (h == 0)
                        continue;
                if (h < p->host_port_min || h > SBX_MAX_PORT)
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "ports: host port %" PRIi64 " is outside the host policy's "
                                             "host_port_min %" PRIi64 "–%d (0 asks for an ephemeral port)",
                                             h, p->host_port_min, SBX_MAX_PORT);
        }
        return 0;
}

/* Absolute and already canonical: the checked path must be the one that is used. */
static int check_canonical(const char *field, const char *what, const char *path, SbxError *error) {
        _cleanup_free_ char *c = NULL;

        if (!path || path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION, "%s: %s '%s' is not an absolute path",
                                     field, what, strempty(path));
        c = sbx_canonical_path(path);
        if (!c)
                return -ENOMEM;
        if (!streq(c, path))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "%s: %s '%s' is not canonical (it means '%s')", field, what, path, c);
        return 0;
}

static const char *const guest_forbidden[] = { "/proc", "/sys", "/dev" };

static int check_guest_path(const char *field, const char *what, const char *path, SbxError *error) {
        int r;

        if ((r = check_canonical(field, what, path, error)) < 0)
                return r;
        if (sbx_path_is_root_or_descendant(path, SBX_INIT_GUEST_DIR))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "%s: %s '%s' is or lies below %s, which the service reserves for the "
                                     "sandbox's first process", field, what, path, SBX_INIT_GUEST_DIR);
        for (size_t i = 0; i < ELEMENTSOF(guest_forbidden); i++)
                if (sbx_path_is_root_or_descendant(path, guest_forbidden[i]))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "%s: %s '%s' is or lies below %s, which is the kernel's in the sandbox",
                                             field, what, path, guest_forbidden[i]);
        return 0;
}

/* Docker would create the inner mount point as root inside the outer volume: in the
 * owner's directory, or wherever a swapped path pointed (docs/security.md). */
static int check_not_nested(const SbxSpec *spec, size_t i, SbxError *error) {
        const char *g = spec->volumes[i].guest;

        for (size_t j = 0; j < spec->n_volumes; j++) {
                const char *outer = spec->volumes[j].guest;

                if (!streq(outer, g) && sbx_path_is_root_or_descendant(g, outer))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: guest path '%s' lies inside the guest path '%s' of another "
                                             "volume (rule: volumes are not nested)", g, outer);
        }
        return 0;
}

int sbx_policy_check_guest_paths(const SbxSpec *spec, SbxError *error) {
        int r;

        if ((r = check_guest_path("working_dir", "the working directory", spec->working_dir, error)) < 0)
                return r;
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const char *g = spec->volumes[i].guest;

                if ((r = check_guest_path("volumes", "guest path", g, error)) < 0)
                        return r;
                if (streq(g, "/"))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: guest path '/' would cover the sandbox's root directory");
                if ((r = check_not_nested(spec, i, error)) < 0)
                        return r;
        }
        return 0;
}

ssize_t sbx_spec_working_dir_volume(const SbxSpec *spec, const char **ret_rest) {
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const char *g = spec->volumes[i].guest, *rest;

                if (streq(g, spec->working_dir) || !sbx_path_is_root_or_descendant(spec->working_dir, g))
                        continue;
                rest = spec->working_dir + strlen(g);
                *ret_rest = rest + (*rest == '/');
                return (ssize_t) i;
        }
        return -1;
}

/* Host paths never mounted, nor their ancestors, nor anything below them. /var/run
 * is /run on every current distribution and /bin, /sbin, /lib* are /usr's on a
 * merged-/usr system, so the aliases are listed too. */
static const char *const host_protected[] = {
        "/run/dbus", "/var/run/dbus",
        "/run/docker.sock", "/var/run/docker.sock",
        "/proc", "/sys", "/dev", "/etc", "/boot",
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
        "/var/lib/docker",
};

static int check_protected(const char *path, const char *prot, SbxError *error) {
        const char *how;

        if (streq(path, prot))
                how = "is";
        else if (sbx_path_is_root_or_descendant(prot, path))
                how = "is an ancestor of";
        else if (sbx_path_is_root_or_descendant(path, prot))
                how = "lies below";
        else
                return 0;
        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                             "volumes: host path '%s' %s %s, which is never mounted", path, how, prot);
}

/* The socket as given, and its twin across the /run ↔ /var/run symlink. */
static int docker_socket_paths(const char *docker_socket, char *ret[static 2]) {
        _cleanup_free_ char *c = NULL;
        const char *rest;

        ret[0] = ret[1] = NULL;
        if (isempty(docker_socket) || docker_socket[0] != '/')
                return 0;
        c = sbx_canonical_path(docker_socket);
        if (!c)
                return -ENOMEM;
        if ((rest = startswith_path(c, "/var/run")) && !(ret[1] = strjoin2("/run", rest)))
                return -ENOMEM;
        if ((rest = startswith_path(c, "/run")) && !(ret[1] = strjoin2("/var/run", rest)))
                return -ENOMEM;
        ret[0] = TAKE_PTR(c);
        return 0;
}

int sbx_policy_check_host_path(const char *path, const char *docker_socket, SbxError *error) {
        char *sockets[2];
        int r;

        if ((r = check_canonical("volumes", "host path", path, error)) < 0)
                return r;
        if (streq(path, "/"))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: host path '/' is the root directory, which is never mounted");

        for (size_t i = 0; i < ELEMENTSOF(host_protected); i++)
                if ((r = check_protected(path, host_protected[i], error)) < 0)
                        return r;

        if ((r = docker_socket_paths(docker_socket ?: SBX_DOCKER_SOCKET_DEFAULT, sockets)) < 0)
                return r;
        for (size_t i = 0; i < 2 && r >= 0; i++)
                if (sockets[i])
                        r = check_protected(path, sockets[i], error);
        free(sockets[0]);
        free(sockets[1]);
        return r;
}

/* %h: an absolute home other than "/" (a home of "/" would make the root the whole
 * file system); %u: a name that is a single path segment. */
static bool home_usable(const char *home) {
        _cleanup_free_ char *c = NULL;

        if (isempty(home) || home[0] != '/')
                return false;
        c = sbx_canonical_path(home);
        return c && !streq(c, "/");
}

static bool name_usable(const char *name) {
        return !isempty(name) && !strchr(name, '/') && !streq(name, ".") && !streq(name, "..");
}

int sbx_policy_expand_root(const char *pattern, const SbxOwner *owner, char **ret) {
        _cleanup_free_ char *buf = NULL, *c = NULL;
        size_t size = 0;
        FILE *f;
        bool ok = true;

        *ret = NULL;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;
        for (const char *s = pattern; *s && ok; s++) {
                if (*s != '%') {
                        fputc(*s, f);
                        continue;
                }
                switch (*++s) {
                case 'h':
                        if ((ok = home_usable(owner->home)))
                                fputs(owner->home, f);
                        break;
                case 'u':
                        if ((ok = name_usable(owner->name)))
                                fputs(owner->name, f);
                        break;
                case 'U':
                        fprintf(f, "%" PRIu32, (uint32_t) owner->uid);
                        break;
                case '%':
                        fputc('%', f);
                        break;
                default:        /* refused by the parser; a lone trailing '%' included */
                        ok = false;
                        s--;
                }
        }
        if (fclose(f) != 0 || !buf)
                return -ENOMEM;
        if (!ok || buf[0] != '/')
                return 0;

        c = sbx_canonical_path(buf);
        if (!c)
                return -ENOMEM;
        *ret = TAKE_PTR(c);
        return 1;
}

static int mode_from_string(const char *mode, unsigned *ret) {
        if (streq_ptr(mode, "ro"))
                *ret = SBX_VOLUME_MODE_RO;
        else if (streq_ptr(mode, "rw"))
                *ret = SBX_VOLUME_MODE_RW;
        else
                return -EINVAL;
        return 0;
}

static const char *modes_to_string(unsigned modes) {
        return (modes & SBX_VOLUME_MODE_RW) ? ((modes & SBX_VOLUME_MODE_RO) ? "ro, rw" : "rw") : "ro";
}

int sbx_policy_find_root(const SbxPolicy *p, const SbxOwner *owner, const char *host_path, const char *mode,
                         char **ret_root, SbxError *error) {
        _cleanup_free_ char *best = NULL, *containing = NULL;
        unsigned want, containing_modes = 0;
        int r;

        if (mode_from_string(mode, &want) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "volumes: mode of '%s' must be \"ro\" or \"rw\"", host_path);
        if ((r = check_canonical("volumes", "host path", host_path, error)) < 0)
                return r;

        for (size_t i = 0; i < p->n_volume_roots; i++) {
                _cleanup_free_ char *root = NULL;

                r = sbx_policy_expand_root(p->volume_roots[i].path, owner, &root);
                if (r < 0)
                        return r;
                if (r == 0 || !sbx_path_is_root_or_descendant(host_path, root))
                        continue;
                if (!(p->volume_roots[i].modes & want)) {
                        if (!containing) {
                                containing_modes = p->volume_roots[i].modes;
                                containing = TAKE_PTR(root);
                        }
                        continue;
                }
                if (!best || strlen(root) > strlen(best)) {
                        free(best);
                        best = TAKE_PTR(root);
                }
        }

        if (best) {
                if (ret_root)
                        *ret_root = TAKE_PTR(best);
                return 0;
        }
        if (containing)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: host path '%s' may not be mounted %s: its volume root %s allows only %s "
                                     "(volume_roots)", host_path, mode, containing, modes_to_string(containing_modes));
        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                             "volumes: host path '%s' is not inside any of the host policy's volume_roots",
                             host_path);
}

int sbx_policy_check_volumes(const SbxPolicy *p, const SbxOwner *owner, const SbxSpec *spec,
                             const char *docker_socket, SbxError *error) {
        int r;

        /* The service pins and attests a mount on its own host only (§10). */
        if (spec->n_volumes > 0 && sbx_policy_engine_remote(p))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: host volumes are not offered on the remote engine %s: the service "
                                     "can check, pin and attest a mount only on its own host (use copies or files)",
                                     p->engine.host);
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *v = &spec->volumes[i];

                if ((r = sbx_policy_check_host_path(v->host, docker_socket, error)) < 0 ||
                    (r = sbx_policy_find_root(p, owner, v->host, v->mode, NULL, error)) < 0)
                        return r;
        }
        return 0;
}

int sbx_policy_check_spec(const SbxPolicy *p, const SbxOwner *owner, const SbxSpec *spec,
                          const char *docker_socket, SbxError *error) {
        int r;

        if (spec->template_type == SBX_TEMPLATE_IMAGE &&
            (r = sbx_policy_check_image(p, spec->image, error)) < 0)
                return r;
        if ((r = sbx_policy_check_limits(p, spec, error)) < 0 ||
            (r = sbx_policy_check_ports(p, spec, error)) < 0 ||
            (r = sbx_policy_check_guest_paths(spec, error)) < 0 ||
            (r = sbx_policy_check_volumes(p, owner, spec, docker_socket, error)) < 0)
                return r;
        return 0;
}

int sbx_policy_check_count(const SbxPolicy *p, size_t current_count, SbxError *error) {
        if (current_count >= (uint64_t) p->max_sandboxes_per_user)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "max_sandboxes_per_user: the owner already has %zu sandboxes, "
                                     "the limit is %" PRIi64,
                                     current_count, p->max_sandboxes_per_user);
        return 0;
}
