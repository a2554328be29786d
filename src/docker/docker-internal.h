/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What docker.c (requests) and docker-get-stream.c (streamed answers) share:
 * private, nothing outside them includes it. */

#include <curl/curl.h>

#include "dialect.h"
#include "docker.h"

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

/* Where a transfer goes: the unix socket, or the engine over verified mutual TLS. */
CURLcode docker_set_transport(SbxDocker *d, CURL *c);

/* Recognises the engine (docker-dialect.h) once the API version is known; libpod:
 * the ping's answer had Podman's Libpod-Api-Version header (Docker's never does,
 * and is then asked nothing more). */
int docker_detect_dialect(SbxDocker *d, bool libpod, SbxError *error);
