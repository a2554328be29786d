/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "docker-dialect.h"
#include "docker-internal.h"
#include "log.h"

/* A refusal: the typed error, and -EPERM, which only a refusal returns. */
#define refuse(error, kind, ...) (sbx_error_set(error, kind, __VA_ARGS__), -EPERM)

/* A unix socket whose owner is not root belongs to that user's engine: they
 * administer it, so nothing this service checks there would hold. */
static int check_socket_owner(SbxDocker *d, SbxError *error) {
        struct stat st;

        /* A root service's concern: an unprivileged one (the tests) talks to its own. */
        if (!d->socket_path || geteuid() != 0 || stat(d->socket_path, &st) < 0)
                return 0;       /* the request itself says why it cannot connect */
        if (st.st_uid != 0)
                return refuse(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "engine at %s refused: its socket is owned by uid %u, not root — a user's own "
                                     "engine (a rootless Podman?) is administered by that user, so no check of this "
                                     "service would hold there", d->host, (unsigned) st.st_uid);
        return 0;
}

static int read_podman(SbxDocker *d, SbxDialect *dialect, SbxError *error) {
        _cleanup_(json_object_putp) json_object *info = NULL;
        int r;

        if ((r = docker_http_get_object(d, "/libpod/info", &info, error)) < 0)
                return r;
        if (sbx_engine_rootless(info))
                return refuse(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "engine at %s refused: it is a rootless Podman (host.security.rootless), "
                                     "administered by its user, so no check of this service would hold there",
                                     d->host);
        return sbx_dialect_set_default_caps(dialect, info, error);
}

/* Asked from within the ping, the API version just set: the requests go out as they
 * are (docker-http.c), with nothing to negotiate. */
int docker_detect_dialect(SbxDocker *d, bool libpod, SbxError *error) {
        _cleanup_(json_object_putp) json_object *version = NULL;
        _cleanup_(sbx_dialect_done) SbxDialect dialect = {};
        int r;

        if ((r = check_socket_owner(d, error)) < 0 ||
            (libpod && (r = docker_http_get_object(d, "/version", &version, error)) < 0))
                return r;
        dialect.kind = sbx_engine_from_version(version);
        if (dialect.kind == SBX_ENGINE_PODMAN && (r = read_podman(d, &dialect, error)) < 0)
                return r;
        sbx_dialect_done(&d->dialect);
        d->dialect = dialect;
        dialect = (SbxDialect) {};
        return 0;
}

const SbxDialect *sbx_docker_dialect(const SbxDocker *d) {
        return &d->dialect;
}
