/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which engine answers (src/core/dialect.h): found when the client negotiates its
 * API version (the first request, and each ping). Podman's /_ping carries a
 * Libpod-Api-Version header, Docker's never does (and Docker is then asked nothing
 * more); on that header GET /version decides (a Components[] entry named "Podman
 * Engine"), and GET /libpod/info gives the default capability set that proves
 * CapDrop. An engine a user administers is refused there, for every call, with
 * BackendUnavailable naming why: a unix socket not owned by root (for a service
 * running as root), or a rootless Podman. The two calls that ping (engine kind, the
 * check) are docker-client.c's, which asks docker-dialect.c, never the other way
 * round. */

#include "dialect.h"
#include "docker.h"

/* The dialect of the engine negotiated with (Docker before any negotiation). */
const SbxDialect *sbx_docker_dialect(const SbxDocker *d);

/* Negotiates if nobody did yet, then tells whether the engine is Podman. */
int sbx_docker_engine_kind(SbxDocker *d, SbxEngineKind *ret, SbxError *error);

/* For --check-config: whether the engine at host is one this service refuses (the
 * error, -EPERM); 1 when it answered and is accepted, 0 when it did not answer (not
 * this check's business). */
int sbx_docker_check_engine(const char *host, SbxError *error);
