/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A remote engine over mutual TLS (docs/engines.md), GnuTLS for every byte.
 *
 * The credentials are set once at start-up, before any thread exists
 * (sbx_docker_tls_setup(), as curl_global_init()): the service has one client
 * certificate, and every SbxDocker of a tcp:// host uses it — libcurl's GnuTLS
 * flavour for the requests, a gnutls session of this module for the hijacked
 * streams (exec start). Such a stream reaches its caller as one end of a local
 * socket pair, a thread of its own moving the bytes between it and the TLS
 * session, so that the framing code polls, reads, writes and half-closes a plain
 * descriptor whichever the engine (a half-close becomes TLS close_notify). */

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define SBX_DOCKER_TLS_FINGERPRINT_MAX 80U

typedef struct SbxDockerTls {
        const char *ca;                 /* the engine's CA, PEM */
        const char *cert;               /* the service's client certificate, PEM */
        const char *key;                /* its key, PEM: root's alone */
        const char *server_name;        /* the name the engine's certificate carries; NULL: the host's */
} SbxDockerTls;

/* Checks the files (regular, owned by root, not writable by others; the key not
 * readable by others either) and that they load (a key that matches the
 * certificate, at least one CA). InvalidArgs naming the policy key and what is
 * wrong. */
int sbx_docker_tls_check_files(const SbxDockerTls *tls, SbxError *error);

/* Checks as above and keeps the credentials for every tcp:// engine from now on. */
int sbx_docker_tls_setup(const SbxDockerTls *tls, SbxError *error);

/* The credentials set up, or NULL. */
const SbxDockerTls *sbx_docker_tls(void);

/* The client certificate is valid now: else BackendUnavailable naming it and
 * whether it expired or is not valid yet (noted for host, below). */
int sbx_docker_tls_check_validity(const char *host, SbxError *error);

/* Connects to host:port, handshakes with the credentials, verifies the engine's
 * chain, validity and name; then *ret_fd is the caller's end of the local stream
 * (O_CLOEXEC, O_NONBLOCK). Every failure is BackendUnavailable naming it. The
 * engine certificate's SHA-256 fingerprint ("sha256:…") goes to ret_fingerprint
 * when non-NULL (SBX_DOCKER_TLS_FINGERPRINT_MAX bytes). With ret_fd NULL, a probe:
 * after the handshake it waits a moment for the engine's verdict on the client
 * certificate (TLS 1.3 sends it then), so that a failed request can be named. */
int sbx_docker_tls_connect(const char *host, const char *port, uint64_t deadline_ms, int *ret_fd,
                           char *ret_fingerprint, SbxError *error);

/* The engine's state as the service last saw it, logged once per change (not per
 * call): a TLS failure (its message), or a handshake that succeeded, with the
 * engine certificate's fingerprint (NULL when not known). */
void sbx_docker_tls_note_failure(const char *host, const char *message);
void sbx_docker_tls_note_success(const char *host, const char *fingerprint);

/* The fingerprint of the engine's certificate last seen ("sha256:…"), or "" before
 * the first handshake; into buf of SBX_DOCKER_TLS_FINGERPRINT_MAX bytes. */
const char *sbx_docker_tls_engine_identity(char *buf);

/* The fingerprint of the peer of a gnutls session (libcurl's, through
 * CURLINFO_TLS_SSL_PTR, or this module's) into buf. */
int sbx_docker_tls_session_fingerprint(void *gnutls_session, char *buf);
