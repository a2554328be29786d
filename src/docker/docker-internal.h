/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the client's own files share, private, nothing outside src/docker includes
 * it: the client's state, and the HTTP exchange (docker-http.c) below the requests
 * (docker-client.c), the engine recognition (docker-dialect.c) and the streamed
 * answers (docker-get-stream.c). docker-client.c negotiates the API version and
 * then recognises the engine, which asks with the exchange directly: nothing here
 * calls up. */

#include <curl/curl.h>

#include "dialect.h"
#include "docker.h"
#include "docker-tls.h"

/* Docker's error text is quoted into our messages; keep a runaway one short. */
#define DOCKER_MESSAGE_MAX 1024U

struct SbxDocker {
        CURL *curl;
        char *host;
        char *socket_path;              /* unix:// only */
        char *tcp_host, *tcp_port;      /* tcp:// only: mutual TLS (docker-tls.h) */
        char *url_base;                 /* "http://localhost", or "https://NAME:PORT" */
        struct curl_slist *connect_to;  /* NAME:PORT to HOST:PORT, when the name is not the host */
        char *api_version;
        SbxDialect dialect;             /* the engine's, found with the version (docker-dialect.c) */
        unsigned budget_s;              /* the operation's time for Docker (sbx_docker_set_deadline) */
        uint64_t deadline_us;           /* CLOCK_MONOTONIC; 0 = none */
        unsigned long n_requests;
        unsigned long n_lists;          /* of them, container lists */
        char errbuf[CURL_ERROR_SIZE];
};

DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all);

/* An answer as it arrives. */
typedef struct DockerResponse {
        char *data;
        size_t size;
        size_t allocated;
        bool too_large;
        bool oom;
        char *api_version;      /* the Api-Version header, if any */
        bool libpod;            /* a Libpod-Api-Version header: Podman (docker-dialect.c) */
        CURL *tls_of;           /* non-NULL: take the engine's fingerprint from this transfer */
        char fingerprint[SBX_DOCKER_TLS_FINGERPRINT_MAX];
} DockerResponse;

void docker_response_done(DockerResponse *r);

/* A request's body: JSON, or a tar archive (PUT …/archive). */
typedef struct DockerBody {
        const char *data;
        size_t size;
        const char *type;       /* the Content-Type header line */
} DockerBody;

/* Where a transfer goes: the unix socket, or the engine over verified mutual TLS. */
CURLcode docker_set_transport(SbxDocker *d, CURL *c);

/* One HTTP exchange on the persistent connection. url_path is absolute
 * (versioned or not). Transport failures become typed errors; any HTTP status
 * is returned in *ret_status for the caller to judge. */
int docker_http_perform(SbxDocker *d, const char *method, const char *url_path, const DockerBody *body,
                        unsigned timeout_s, DockerResponse *resp, long *ret_status, SbxError *error);

/* A refusal's HTTP status as the typed error (sbx_docker_http_error). */
int docker_map_status(long status, const DockerResponse *resp, SbxError *error);

/* JSON with nothing but white space after it; -EBADMSG otherwise. */
int docker_parse_json(const char *data, size_t size, json_object **ret);

/* The JSON answer to method path, NULL when empty; BackendError when not JSON. */
int docker_parse_answer(const char *method, const char *path, const char *data, size_t size, json_object **ret,
                        SbxError *error);

/* method /v<version>path once the version is known (nothing negotiated here): the
 * HTTP status (2xx, or 304) and the answer in resp, or the typed error. */
int docker_http_request(SbxDocker *d, const char *method, const char *path, const DockerBody *body,
                        unsigned timeout_s, DockerResponse *resp, SbxError *error);

/* GET /v<version>path, whose answer must be a JSON object, as docker_http_request. */
int docker_http_get_object(SbxDocker *d, const char *path, json_object **ret, SbxError *error);

/* Recognises the engine (docker-dialect.h) once the API version is known; libpod:
 * the ping's answer had Podman's Libpod-Api-Version header (Docker's never does,
 * and is then asked nothing more). */
int docker_detect_dialect(SbxDocker *d, bool libpod, SbxError *error);
