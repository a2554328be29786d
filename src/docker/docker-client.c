/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Docker client (docker.h): the connection to the engine, the API version
 * negotiated and the engine recognised (docker-dialect.c), and the calls made
 * through the HTTP exchange (docker-http.c, declared in docker-internal.h). */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <sys/un.h>

#include "docker.h"
#include "docker-dialect.h"
#include "docker-internal.h"
#include "docker-tls.h"
#include "time-util.h"

#define UNIX_PREFIX "unix://"
#define TCP_PREFIX "tcp://"
/* Of an answer that is not what was expected, this much is quoted. */
#define EXCERPT_MAX 64U

static int new_unix(SbxDocker *d, const char *host_url, SbxError *error) {
        const char *path = host_url + strlen(UNIX_PREFIX);

        if (path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "docker host: \"%s\" does not name an absolute socket path", host_url);
        if (strlen(path) >= sizeof(((struct sockaddr_un *) NULL)->sun_path))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "docker host: socket path of \"%s\" is too long", host_url);
        d->socket_path = strdup(path);
        d->url_base = strdup("http://localhost");
        return d->socket_path && d->url_base ? 0 : -ENOMEM;
}

/* tcp://HOST:PORT: TLS only, with the credentials of sbx_docker_tls_setup(). */
static int new_tcp(SbxDocker *d, const char *host_url, SbxError *error) {
        const SbxDockerTls *tls = sbx_docker_tls();
        const char *hp = host_url + strlen(TCP_PREFIX), *colon = strrchr(hp, ':');
        _cleanup_free_ char *to = NULL;
        const char *name;

        if (!tls)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "docker host: \"%s\" is a tcp:// engine, which is mutual TLS only: the host "
                                     "policy's engine names no tls_ca, tls_cert, tls_key", host_url);
        if (!colon || colon == hp || !colon[1])
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "docker host: \"%s\" is not tcp://HOST:PORT",
                                     host_url);
        d->tcp_host = hp[0] == '[' && colon[-1] == ']' ? strndup(hp + 1, (size_t) (colon - hp) - 2)
                                                       : strndup(hp, (size_t) (colon - hp));
        d->tcp_port = strdup(colon + 1);
        if (!d->tcp_host || !d->tcp_port)
                return -ENOMEM;
        name = tls->server_name ?: NULL;
        if (asprintf(&d->url_base, "https://%s%.*s:%s", name ?: "", name ? 0 : (int) (colon - hp), hp,
                     d->tcp_port) < 0) {
                d->url_base = NULL;
                return -ENOMEM;
        }
        if (name) {
                if (asprintf(&to, "%s:%s:%.*s:%s", name, d->tcp_port, (int) (colon - hp), hp, d->tcp_port) < 0)
                        return -ENOMEM;
                d->connect_to = curl_slist_append(NULL, to);
                if (!d->connect_to)
                        return -ENOMEM;
        }
        return 0;
}

int sbx_docker_new(const char *host_url, SbxDocker **ret, SbxError *error) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        if (!host_url)
                host_url = SBX_DOCKER_DEFAULT_HOST;
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        if (strncmp(host_url, UNIX_PREFIX, strlen(UNIX_PREFIX)) == 0)
                r = new_unix(d, host_url, error);
        else if (strncmp(host_url, TCP_PREFIX, strlen(TCP_PREFIX)) == 0)
                r = new_tcp(d, host_url, error);
        else
                r = sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                  "docker host: only unix:// and (mutual TLS) tcp:// endpoints are supported, got "
                                  "\"%s\"", host_url);
        if (r < 0)
                return r;
        d->host = strdup(host_url);
        if (!d->host)
                return -ENOMEM;
        d->curl = curl_easy_init();
        if (!d->curl)
                return -ENOMEM;

        *ret = TAKE_PTR(d);
        return 0;
}

bool sbx_docker_remote(const SbxDocker *d) {
        return d && d->tcp_host;
}

const char *sbx_docker_tcp_host(const SbxDocker *d) {
        return d ? d->tcp_host : NULL;
}

const char *sbx_docker_tcp_port(const SbxDocker *d) {
        return d ? d->tcp_port : NULL;
}

SbxDocker *sbx_docker_free(SbxDocker *d) {
        if (!d)
                return NULL;
        if (d->curl)
                curl_easy_cleanup(d->curl);
        free(d->host);
        free(d->socket_path);
        free(d->tcp_host);
        free(d->tcp_port);
        free(d->url_base);
        curl_slist_free_all(d->connect_to);
        free(d->api_version);
        sbx_dialect_done(&d->dialect);
        free(d);
        return NULL;
}

void sbx_docker_set_deadline(SbxDocker *d, unsigned budget_s) {
        d->budget_s = budget_s;
        d->deadline_us = budget_s > 0 ? sbx_now_monotonic_us() + (uint64_t) budget_s * 1000000U : 0;
}

unsigned long sbx_docker_n_requests(const SbxDocker *d) {
        return d ? d->n_requests : 0;
}

unsigned long sbx_docker_n_lists(const SbxDocker *d) {
        return d ? d->n_lists : 0;
}

const char *sbx_docker_host(const SbxDocker *d) {
        return d ? d->host : NULL;
}

const char *sbx_docker_api_version(const SbxDocker *d) {
        return d ? d->api_version : NULL;
}

int sbx_docker_escape(SbxDocker *d, const char *s, char **ret) {
        char *e, *copy;

        if (!d || !s || !ret)
                return -EINVAL;
        e = curl_easy_escape(d->curl, s, 0);
        if (!e)
                return -ENOMEM;
        copy = strdup(e);
        curl_free(e);
        if (!copy)
                return -ENOMEM;
        *ret = copy;
        return 0;
}

const char *sbx_docker_socket_path(const SbxDocker *d) {
        return d ? d->socket_path : NULL;
}

int sbx_docker_negotiate(SbxDocker *d, SbxError *error) {
        if (!d)
                return -EINVAL;
        return d->api_version ? 0 : sbx_docker_ping(d, error);
}

static bool version_supported(const char *v) {
        unsigned long minor;
        char *end;

        if (strncmp(v, "1.", 2) != 0 || v[2] < '0' || v[2] > '9')
                return false;
        errno = 0;
        minor = strtoul(v + 2, &end, 10);
        return errno == 0 && *end == 0 && minor >= SBX_DOCKER_API_MIN_MINOR && minor < 1000;
}

int sbx_docker_ping(SbxDocker *d, SbxError *error) {
        _cleanup_(docker_response_done) DockerResponse resp = {};
        long status = 0;
        char *v;
        int r;

        if (!d)
                return -EINVAL;
        resp.tls_of = d->tcp_host ? d->curl : NULL;
        r = docker_http_perform(d, "GET", "/_ping", NULL, 0, &resp, &status, error);
        if (r < 0)
                return r;
        if (d->tcp_host)
                sbx_docker_tls_note_success(d->host, resp.fingerprint);
        if (status != 200)
                return docker_map_status(status, &resp, error);
        if (!resp.api_version)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker at %s answered /_ping without an Api-Version header", d->host);
        if (!version_supported(resp.api_version))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker at %s speaks API \"%.32s\", this service needs 1.%u or newer",
                                     d->host, resp.api_version, SBX_DOCKER_API_MIN_MINOR);

        v = TAKE_PTR(resp.api_version);
        free(d->api_version);
        d->api_version = v;
        /* Which engine, asked again at every ping: one that is refused stays so. */
        if ((r = docker_detect_dialect(d, resp.libpod, error)) < 0)
                d->api_version = mfree(d->api_version);
        return r;
}

int sbx_docker_request_raw(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                char **ret_data,
                size_t *ret_size,
                SbxError *error) {

        _cleanup_(docker_response_done) DockerResponse resp = {};
        const char *body_text = NULL;
        int r;

        if (!d || !method || !path || path[0] != '/')
                return -EINVAL;
        r = sbx_docker_negotiate(d, error);
        if (r < 0)
                return r;
        if (body) {
                body_text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
                if (!body_text)
                        return -ENOMEM;
        }

        r = docker_http_request(d, method, path,
                                body_text ? &(const DockerBody) { body_text, strlen(body_text),
                                                                  "Content-Type: application/json" } : NULL,
                                timeout_s, &resp, error);
        if (r >= 0 && ret_data) {
                *ret_data = TAKE_PTR(resp.data);
                *ret_size = resp.size;
        }
        return r;
}

int sbx_docker_request(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                json_object **ret,
                SbxError *error) {

        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int status, r;

        status = sbx_docker_request_raw(d, method, path, body, timeout_s, ret ? &data : NULL, &size, error);
        if (status < 0)
                return status;
        if (ret && (r = docker_parse_answer(method, path, data, size, ret, error)) < 0)
                return r;
        return status;
}

/* A state change answered with what Docker never answers it: BackendError naming the
 * request, what came back (the start of the body, printable) and what was expected. */
static int unexpected_answer(const char *method, const char *path, int status, const char *data, size_t size,
                             const char *expected, SbxError *error) {
        char excerpt[EXCERPT_MAX + 1];
        size_t n = MIN(size, (size_t) EXCERPT_MAX);

        if (size == 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker answered %s %s with HTTP %d and no body, not %s", method, path,
                                     status, expected);
        for (size_t i = 0; i < n; i++)
                excerpt[i] = isprint((unsigned char) data[i]) ? data[i] : '?';
        excerpt[n] = 0;
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                             "Docker answered %s %s with HTTP %d and %zu bytes (\"%s\"%s), not %s", method, path,
                             status, size, excerpt, size > n ? " …" : "", expected);
}

int sbx_docker_request_no_content(SbxDocker *d, const char *method, const char *path, unsigned timeout_s,
                                  bool not_modified_ok, SbxError *error) {
        _cleanup_free_ char *data = NULL;
        size_t size = 0;
        int status;

        status = sbx_docker_request_raw(d, method, path, NULL, timeout_s, &data, &size, error);
        if (status < 0)
                return status;
        if (size == 0 && (status == 204 || (status == 304 && not_modified_ok)))
                return status == 304;
        return unexpected_answer(method, path, status, data, size,
                                 not_modified_ok ? "204 or 304 without a body" : "204 without a body", error);
}

int sbx_docker_request_expect(
                SbxDocker *d,
                const char *method,
                const char *path,
                json_object *body,
                unsigned timeout_s,
                int expected_status,
                json_type type,
                json_object **ret,
                SbxError *error) {

        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_free_ char *data = NULL, *expected = NULL;
        size_t size = 0;
        int status, r;

        if (!ret)
                return -EINVAL;
        status = sbx_docker_request_raw(d, method, path, body, timeout_s, &data, &size, error);
        if (status < 0)
                return status;
        if (status == expected_status && size > 0) {
                r = docker_parse_json(data, size, &j);
                if (r == -ENOMEM)
                        return r;
                if (r >= 0 && json_object_is_type(j, type)) {
                        *ret = TAKE_PTR(j);
                        return 0;
                }
        }
        if (asprintf(&expected, "%d with a JSON %s", expected_status, json_type_to_name(type)) < 0)
                return -ENOMEM;
        return unexpected_answer(method, path, status, data, size, expected, error);
}

int sbx_docker_json_string(json_object *j, const char *key, char **ret, SbxError *error) {
        json_object *v;
        char *s;

        if (!json_object_object_get_ex(j, key, &v) || !json_object_is_type(v, json_type_string))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker's answer lacks the string \"%s\"", key);
        s = strdup(json_object_get_string(v));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int sbx_docker_get_object(SbxDocker *d, const char *path, json_object **ret, SbxError *error) {
        int r;

        if (!ret || !d || !path || path[0] != '/')
                return -EINVAL;
        if ((r = sbx_docker_negotiate(d, error)) < 0)
                return r;
        return docker_http_get_object(d, path, ret, error);
}

int sbx_docker_version(SbxDocker *d, json_object **ret, SbxError *error) {
        return sbx_docker_get_object(d, "/version", ret, error);
}

int sbx_docker_info(SbxDocker *d, json_object **ret, SbxError *error) {
        return sbx_docker_get_object(d, "/info", ret, error);
}

int sbx_docker_put_archive(SbxDocker *d, const char *path, const void *tar, size_t size, unsigned timeout_s,
                           SbxError *error) {
        _cleanup_(docker_response_done) DockerResponse resp = {};
        _cleanup_free_ char *url_path = NULL;
        long status = 0;
        int r;

        if (!d || !path || path[0] != '/' || !tar)
                return -EINVAL;
        if ((r = sbx_docker_negotiate(d, error)) < 0)
                return r;
        if (asprintf(&url_path, "/v%s%s", d->api_version, path) < 0)
                return -ENOMEM;
        r = docker_http_perform(d, "PUT", url_path,
                                &(const DockerBody) { tar, size, "Content-Type: application/x-tar" }, timeout_s,
                                &resp, &status, error);
        if (r < 0)
                return r;
        if (status != 200)
                return docker_map_status(status, &resp, error);
        return 0;
}

/* docker-dialect.h: they ping, which recognises the engine (docker-dialect.c). */
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
