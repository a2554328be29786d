/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A Docker Engine API client over the daemon's unix socket, or a remote engine's
 * TCP port over mutual TLS (libcurl's GnuTLS flavour; docker-tls.h).
 *
 * One SbxDocker is one CURL easy handle whose connection is kept and reused
 * between requests, except by a POST: it changes something, so it is sent on a
 * fresh connection, which libcurl never sends a request twice on (a reused one that
 * died before any answer byte it would, after Docker may have acted on it). It is
 * not thread-safe: each worker owns its own. The daemon
 * calls curl_global_init() once at start-up, before any thread exists.
 *
 * The API version is negotiated lazily: the first request pings /_ping and takes
 * the daemon's Api-Version header (refusing one older than SBX_DOCKER_API_MIN);
 * every path is then prefixed with /v<version>.
 *
 * Results. Every call returns a negative errno on failure and fills the optional
 * SbxError (first error wins, see error.h); callers branch on the kind, never on
 * the errno:
 *   SBX_ERROR_BACKEND_UNAVAILABLE  cannot connect, connection lost, or no answer
 *                                  within the timeout;
 *   SBX_ERROR_DOCKER_NOT_FOUND     HTTP 404: no such container, image or volume;
 *   SBX_ERROR_DOCKER_CONFLICT      HTTP 409: name in use, image in use, …;
 *   SBX_ERROR_BACKEND_ERROR        any other refusal, or a malformed or oversized
 *                                  answer;
 *   SBX_ERROR_INVALID_ARGS         a bad argument (e.g. a non-unix:// host).
 * The message is Docker's own where it gave one. DockerNotFound and
 * DockerConflict are results only the caller can name (NoSuchSandbox,
 * SandboxExists, success for an idempotent delete, …): it replaces them with
 * sbx_error_free() and its own kind; passed on unnamed they are sent as
 * BackendError. Success is ≥ 0. */

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "json-util.h"
#include "macro.h"

#define SBX_DOCKER_DEFAULT_HOST "unix:///var/run/docker.sock"
/* The oldest Engine API this client is written for (Docker 19.03). */
#define SBX_DOCKER_API_MIN_MINOR 40
#define SBX_DOCKER_CONNECT_TIMEOUT_S 5U
/* A call's default limit, and the default of policy docker_timeout: well under the
 * 25 s every D-Bus client waits by default. */
#define SBX_DOCKER_TIMEOUT_DEFAULT_S 20U
/* A stop waits for the container's own timeout, then for the kill and the exit: its
 * request may take that much longer than the timeout, and so may the stop's whole
 * operation (sbx_docker_stop_budget()). */
#define SBX_DOCKER_STOP_MARGIN_S 10U
/* A commit copies the container's file system changes. */
#define SBX_DOCKER_COMMIT_TIMEOUT_S 600U
/* A broken daemon must not exhaust our memory. */
#define SBX_DOCKER_BODY_MAX ((size_t) 16U * 1024U * 1024U)

typedef struct SbxDocker SbxDocker;


/* Creates a client for host_url ("unix:///path", or "tcp://HOST:PORT" once
 * sbx_docker_tls_setup() gave the TLS credentials; NULL = SBX_DOCKER_DEFAULT_HOST).
 * No I/O happens here. Any other scheme is SBX_ERROR_INVALID_ARGS. */
int sbx_docker_new(const char *host_url, SbxDocker **ret, SbxError *error);
SbxDocker *sbx_docker_free(SbxDocker *d);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxDocker *, sbx_docker_free);

/* Gives the calls from now on budget_s seconds in all (0: no common limit, each call
 * its own): a call's limit is what is left of it, and a call made after it ran out
 * fails at once with SBX_ERROR_BACKEND_UNAVAILABLE. Also the default limit of a call
 * made with timeout_s = 0. Set at the start of every operation. */
void sbx_docker_set_deadline(SbxDocker *d, unsigned budget_s);

/* The budget of a stop's operation (its inspect and the stop): timeout_s plus
 * SBX_DOCKER_STOP_MARGIN_S, and never less than any operation's docker_timeout_s —
 * with the defaults (timeout 10 s, docker_timeout 20 s) 20 s, under the bus's 25 s. */
static inline unsigned sbx_docker_stop_budget(unsigned docker_timeout_s, unsigned timeout_s) {
        return MAX(docker_timeout_s, timeout_s + SBX_DOCKER_STOP_MARGIN_S);
}

/* The number of HTTP requests made so far (the version ping included). */
unsigned long sbx_docker_n_requests(const SbxDocker *d);
/* Of them, the container lists (each makes dockerd look at every container). */
unsigned long sbx_docker_n_lists(const SbxDocker *d);

/* The endpoint as given (normalized to the default when NULL was passed). */
const char *sbx_docker_host(const SbxDocker *d);

/* Pings /_ping and (re)negotiates the API version from its Api-Version header. */
int sbx_docker_ping(SbxDocker *d, SbxError *error);

/* The unix socket's path (NULL for a tcp:// engine). */
const char *sbx_docker_socket_path(const SbxDocker *d);

/* A tcp:// engine (mutual TLS, docker-tls.h), its host and port; NULL for unix://. */
bool sbx_docker_remote(const SbxDocker *d);
const char *sbx_docker_tcp_host(const SbxDocker *d);
const char *sbx_docker_tcp_port(const SbxDocker *d);

/* Pings once unless a version was negotiated already. */
int sbx_docker_negotiate(SbxDocker *d, SbxError *error);

/* A refusal (HTTP status and body) as the typed error every call reports. */
int sbx_docker_http_error(long status, const char *body, size_t size, SbxError *error);

/* The negotiated API version ("1.41"), or NULL before the first successful ping. */
const char *sbx_docker_api_version(const SbxDocker *d);

/* The one generic primitive. method is "GET", "POST" or "DELETE"; path is the
 * versioned part after /v<version>, starting with '/', query included, with
 * every inserted component already escaped (sbx_docker_escape()). body, if
 * non-NULL, is sent as JSON. timeout_s = 0 means the operation's budget
 * (sbx_docker_set_deadline), else SBX_DOCKER_TIMEOUT_DEFAULT_S.
 * On success returns the HTTP status (2xx, or 304 "not modified") and, if ret
 * is non-NULL, the parsed JSON answer (NULL for an empty one). */
int sbx_docker_request(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                json_object **ret,
                SbxError *error);

/* The same, for an answer that is not JSON: *ret_data (NUL-terminated, may be
 * NULL for an empty answer) and its size, if ret_data is non-NULL. */
int sbx_docker_request_raw(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                char **ret_data,
                size_t *ret_size,
                SbxError *error);

/* A state change whose answer has no body (start, stop, kill, rename, remove): HTTP
 * 204, or 304 ("already so") where not_modified_ok, which returns 1 (204: 0). Any
 * other answer — another 2xx, a body — is SBX_ERROR_BACKEND_ERROR naming the request
 * and what came back: it was not done, as far as anyone can tell. */
int sbx_docker_request_no_content(SbxDocker *d, const char *method, const char *path, unsigned timeout_s,
                                  bool not_modified_ok, SbxError *error);

/* A call whose answer is JSON of the given type with HTTP status expected_status (a
 * create's 201 with an object, an image delete's 200 with an array); any other is
 * SBX_ERROR_BACKEND_ERROR as above. */
int sbx_docker_request_expect(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                int expected_status,
                json_type type,
                json_object **ret,
                SbxError *error);

/* PUT path (versioned part) with a tar archive as the body, answered 200 (PUT
 * /containers/{id}/archive?path=…). Never sent twice, as a POST. */
int sbx_docker_put_archive(SbxDocker *d, const char *path, const void *tar, size_t size, unsigned timeout_s,
                           SbxError *error);

/* GET path, whose answer must be a JSON object. */
int sbx_docker_get_object(SbxDocker *d, const char *path, json_object **ret, SbxError *error);

/* Copies the string member key of the JSON object j into *ret; a missing or
 * non-string member is SBX_ERROR_BACKEND_ERROR naming key. */
int sbx_docker_json_string(json_object *j, const char *key, char **ret, SbxError *error);

/* URL-escapes s for a path component or query value (RFC 3986 unreserved kept). */
int sbx_docker_escape(SbxDocker *d, const char *s, char **ret);

/* A streamed answer's bytes as they arrive; false aborts the stream. */
typedef bool (*SbxDockerStreamData)(const char *data, size_t size, void *userdata);

/* A stream's stop, asked for from any thread with sbx_docker_stop(): a stream that
 * waits for Docker wakes at once to end (a service that exits is not held up by a
 * quiet event stream). Initialise with SBX_DOCKER_STOP_INIT, or zeroed with its lock
 * made by pthread_mutex_init(). */
typedef struct SbxDockerStop {
        atomic_bool requested;
        pthread_mutex_t lock;
        void *multi;                    /* the running stream's CURLM, under lock */
} SbxDockerStop;

#define SBX_DOCKER_STOP_INIT { .lock = PTHREAD_MUTEX_INITIALIZER }

void sbx_docker_stop(SbxDockerStop *stop);
bool sbx_docker_stop_requested(SbxDockerStop *stop);

/* GET path (versioned part, as for sbx_docker_request) as a stream with no time
 * limit: on_connected once Docker answered 200, then every piece of the body to
 * on_data, until a stop is asked for (returns 0), Docker ends it or the connection
 * breaks (SBX_ERROR_BACKEND_UNAVAILABLE), or Docker refuses (its typed error).
 * -ENOMEM when on_data aborted. */
int sbx_docker_get_stream(SbxDocker *d, const char *path, SbxDockerStreamData on_data,
                          void (*on_connected)(void *userdata), void *userdata, SbxDockerStop *stop,
                          SbxError *error);

/* POST path with no body, its answer a stream (a pull's progress): as
 * sbx_docker_get_stream, but the end of the stream is success (0). */
int sbx_docker_post_stream(SbxDocker *d, const char *path, SbxDockerStreamData on_data, void *userdata,
                           SbxDockerStop *stop, SbxError *error);

/* GET /version and GET /info. */
int sbx_docker_version(SbxDocker *d, json_object **ret, SbxError *error);
int sbx_docker_info(SbxDocker *d, json_object **ret, SbxError *error);
