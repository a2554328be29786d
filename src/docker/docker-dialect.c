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

        if ((r = sbx_docker_get_object(d, "/libpod/info", &info, error)) < 0)
                return r;
        if (sbx_engine_rootless(info))
                return refuse(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "engine at %s refused: it is a rootless Podman (host.security.rootless), "
                                     "administered by its user, so no check of this service would hold there",
                                     d->host);
        return sbx_dialect_set_default_caps(dialect, info, error);
}

int docker_detect_dialect(SbxDocker *d, bool libpod, SbxError *error) {
        _cleanup_(json_object_putp) json_object *version = NULL;
        _cleanup_(sbx_dialect_done) SbxDialect dialect = {};
        int r;

        if ((r = check_socket_owner(d, error)) < 0 ||
            (libpod && (r = sbx_docker_version(d, &version, error)) < 0))
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

int sbx_docker_engine_kind(SbxDocker *d, SbxEngineKind *ret, SbxError *error) {
        int r = sbx_docker_negotiate(d, error);

        if (r < 0)
                return r;
        *ret = d->dialect.kind;
        return 0;
}

int sbx_docker_check_engine(const char *host, SbxError *error) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if ((r = sbx_docker_new(host, &d, error)) < 0)
                return r;
        sbx_docker_set_deadline(d, SBX_DOCKER_CONNECT_TIMEOUT_S);
        r = sbx_docker_ping(d, &e);
        if (r == -EPERM && error && !sbx_error_is_set(error)) {
                *error = e;
                return r;
        }
        sbx_error_free(&e);
        return r < 0 ? 0 : 1;
}
