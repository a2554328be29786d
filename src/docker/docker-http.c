/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The HTTP exchange with the engine (docker-internal.h): below the requests of
 * docker-client.c and the engine recognition of docker-dialect.c, it negotiates
 * nothing. */

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "docker-internal.h"
#include "docker-tls.h"
#include "time-util.h"

#define DEADLINE_SLACK_US 20000U

void docker_response_done(DockerResponse *r) {
        free(r->data);
        free(r->api_version);
}

CURLcode docker_set_transport(SbxDocker *d, CURL *c) {
        const SbxDockerTls *tls = sbx_docker_tls();
        CURLcode r = CURLE_OK;

#define SET(opt, val) do { if (r == CURLE_OK) r = curl_easy_setopt(c, opt, val); } while (0)
        if (!d->tcp_host) {
                SET(CURLOPT_UNIX_SOCKET_PATH, d->socket_path);
                return r;
        }
        SET(CURLOPT_PROTOCOLS_STR, "https");
        SET(CURLOPT_CAINFO, tls->ca);
        SET(CURLOPT_CAPATH, NULL);
        SET(CURLOPT_SSLCERT, tls->cert);
        SET(CURLOPT_SSLCERTTYPE, "PEM");
        SET(CURLOPT_SSLKEY, tls->key);
        SET(CURLOPT_SSLKEYTYPE, "PEM");
        SET(CURLOPT_SSL_VERIFYPEER, 1L);
        SET(CURLOPT_SSL_VERIFYHOST, 2L);
        if (d->connect_to)
                SET(CURLOPT_CONNECT_TO, d->connect_to);
#undef SET
        return r;
}

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata) {
        DockerResponse *r = userdata;
        size_t n = size * nmemb;

        if (n > SBX_DOCKER_BODY_MAX - r->size) {
                r->too_large = true;
                return 0;
        }
        if (r->size + n + 1 > r->allocated) {
                size_t a = r->allocated > 0 ? r->allocated * 2 : 16384;
                char *p;

                while (a < r->size + n + 1)
                        a *= 2;
                p = realloc(r->data, a);
                if (!p) {
                        r->oom = true;
                        return 0;
                }
                r->data = p;
                r->allocated = a;
        }
        memcpy(r->data + r->size, ptr, n);
        r->size += n;
        r->data[r->size] = 0;
        return n;
}

static size_t header_cb(char *buf, size_t size, size_t nitems, void *userdata) {
        static const char key[] = "Api-Version:";
        DockerResponse *r = userdata;
        size_t n = size * nitems, l;
        const char *v;

        /* While the transfer runs, its TLS session is libcurl's GnuTLS one. */
        if (r->tls_of && !r->fingerprint[0]) {
                const struct curl_tlssessioninfo *info = NULL;

                if (curl_easy_getinfo(r->tls_of, CURLINFO_TLS_SSL_PTR, &info) == CURLE_OK && info &&
                    info->backend == CURLSSLBACKEND_GNUTLS && info->internals &&
                    sbx_docker_tls_session_fingerprint(info->internals, r->fingerprint) < 0)
                        r->fingerprint[0] = 0;
        }
        if (n > strlen("Libpod-Api-Version:") && strncasecmp(buf, "Libpod-Api-Version:", 19) == 0)
                r->libpod = true;
        if (n < strlen(key) || strncasecmp(buf, key, strlen(key)) != 0)
                return n;
        v = buf + strlen(key);
        l = n - strlen(key);
        while (l > 0 && (*v == ' ' || *v == '\t')) {
                v++;
                l--;
        }
        while (l > 0 && strchr(" \t\r\n", v[l - 1]))
                l--;
        free(r->api_version);
        r->api_version = strndup(v, l);
        if (!r->api_version) {
                r->oom = true;
                return 0;
        }
        return n;
}

static int configure(SbxDocker *d, const char *method, const char *url, const DockerBody *body,
                     uint64_t timeout_ms, struct curl_slist *headers, DockerResponse *resp) {
        CURL *c = d->curl;
        CURLcode r = CURLE_OK;

        /* Keeps the live connection; clears every option of the previous request. */
        curl_easy_reset(c);

        r = docker_set_transport(d, c);
#define SET(opt, val) do { if (r == CURLE_OK) r = curl_easy_setopt(c, opt, val); } while (0)
        SET(CURLOPT_URL, url);
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_CONNECTTIMEOUT_MS, (long) MIN(timeout_ms, SBX_DOCKER_CONNECT_TIMEOUT_S * 1000ULL));
        SET(CURLOPT_TIMEOUT_MS, (long) timeout_ms);
        SET(CURLOPT_ERRORBUFFER, d->errbuf);
        SET(CURLOPT_WRITEFUNCTION, write_cb);
        SET(CURLOPT_WRITEDATA, resp);
        SET(CURLOPT_HEADERFUNCTION, header_cb);
        SET(CURLOPT_HEADERDATA, resp);
        SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t) SBX_DOCKER_BODY_MAX);
        SET(CURLOPT_HTTPHEADER, headers);
        /* One idle connection kept, not a pool (a POST's fresh one replaces it). */
        SET(CURLOPT_MAXCONNECTS, 1L);
        if (streq(method, "GET"))
                SET(CURLOPT_HTTPGET, 1L);
        else if (streq(method, "POST") || streq(method, "PUT")) {
                /* libcurl sends a request again on a fresh connection when the reused one
                 * died before any answer byte — also when Docker got it and acted on it
                 * (a create's answer lost would create twice, a rename's rename a renamed
                 * container). A POST that never was on a reused connection is never sent
                 * twice: its lost answer is BackendUnavailable. */
                SET(CURLOPT_FRESH_CONNECT, 1L);
                SET(CURLOPT_POST, 1L);
                SET(CURLOPT_POSTFIELDS, body ? body->data : "");
                SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) (body ? body->size : 0));
                if (streq(method, "PUT"))
                        SET(CURLOPT_CUSTOMREQUEST, "PUT");
        } else
                SET(CURLOPT_CUSTOMREQUEST, method);
#undef SET

        return r == CURLE_OK ? 0 : -EIO;
}

/* "/containers/x/stop" of "/v1.41/containers/x/stop?t=10": the request as a message names it. */
static size_t request_name(const char *url_path, const char **ret) {
        const char *p = url_path;

        if (p[0] == '/' && p[1] == 'v' && strchr("0123456789", p[2])) {
                p += 2 + strspn(p + 2, "0123456789.");
                if (*p != '/')
                        p = url_path;
        }
        *ret = p;
        return strcspn(p, "?");
}

/* A TLS failure, named: never a fallback to plain text. */
static int tls_error(SbxDocker *d, CURLcode c, const char *why, SbxError *error) {
        const char *what =
                c == CURLE_PEER_FAILED_VERIFICATION ? "the engine's certificate is refused" :
                c == CURLE_SSL_CERTPROBLEM || c == CURLE_SSL_CLIENTCERT ? "the service's client certificate" :
                c == CURLE_SSL_CACERT_BADFILE ? "the CA file (engine.tls_ca)" :
                strstr(why, "unexpected TLS packet") || strstr(why, "wrong version") ||
                strstr(why, "packet length") ? "the server does not speak TLS" :
                strstr(why, "alert") ? "the engine refused the handshake (does it accept the service's client "
                                      "certificate?)" :
                "the handshake failed";

        _cleanup_free_ char *m = NULL;

        if (asprintf(&m, "TLS with Docker at %s: %s: %s", d->host, what, why) < 0)
                return -ENOMEM;
        sbx_docker_tls_note_failure(d->host, m);
        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "%s", m);
}

static int map_curl_error(SbxDocker *d, CURLcode c, const char *method, const char *url_path, uint64_t timeout_ms,
                          bool deadline_cut, const DockerResponse *resp, SbxError *error) {
        const char *why = d->errbuf[0] ? d->errbuf : curl_easy_strerror(c), *name;
        int n = (int) request_name(url_path, &name), r;

        if (resp->oom || c == CURLE_OUT_OF_MEMORY)
                return -ENOMEM;
        if (resp->too_large || c == CURLE_FILESIZE_EXCEEDED)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker's answer exceeds %zu bytes", SBX_DOCKER_BODY_MAX);

        /* A remote engine that hung up: a TLS reason (TLS 1.3 refuses a client
         * certificate only after the handshake) is named, found by a probe. */
        if (d->tcp_host && (c == CURLE_RECV_ERROR || c == CURLE_SEND_ERROR || c == CURLE_GOT_NOTHING ||
                            c == CURLE_SSL_CONNECT_ERROR) &&
            (r = sbx_docker_tls_connect(d->tcp_host, d->tcp_port, sbx_now_monotonic_us() / 1000U +
                                        SBX_DOCKER_CONNECT_TIMEOUT_S * 1000U, NULL, NULL, error)) < 0)
                return r;
        /* Sent, and the connection ended without an answer. */
        if ((c == CURLE_GOT_NOTHING || c == CURLE_RECV_ERROR) && (streq(method, "POST") || streq(method, "PUT")))
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "lost Docker's answer to %s %.*s at %s: %s (not sent again: Docker may have "
                                     "done it)", method, n, name, d->host, why);

        switch (c) {
        case CURLE_OPERATION_TIMEDOUT:
                /* What the caller waited for is the operation, not its last request. */
                if (deadline_cut)
                        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                             "Docker at %s did not finish within the operation's %u s (no answer "
                                             "to %s %.*s)", d->host, d->budget_s, method, n, name);
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "Docker at %s did not answer %s %.*s within %g s", d->host, method, n, name,
                                     timeout_ms / 1000.0);
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
        case CURLE_SSL_CERTPROBLEM:
        case CURLE_SSL_CACERT_BADFILE:
        case CURLE_SSL_CIPHER:
        case CURLE_SSL_ISSUER_ERROR:
        case CURLE_SSL_ENGINE_INITFAILED:
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
        case CURLE_SSL_CLIENTCERT:
                return tls_error(d, c, why, error);
        case CURLE_COULDNT_CONNECT:
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_SEND_ERROR:
        case CURLE_RECV_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_PARTIAL_FILE:
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "cannot reach Docker at %s: %s", d->host, why);
        default:
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "request to Docker at %s failed: %s", d->host, why);
        }
}

int docker_http_perform(SbxDocker *d, const char *method, const char *url_path, const DockerBody *body,
                        unsigned timeout_s, DockerResponse *resp, long *ret_status, SbxError *error) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = NULL;
        _cleanup_free_ char *url = NULL;
        struct curl_slist *h;
        CURLcode c;
        long status = 0;
        bool deadline_cut = false;
        int r;

        uint64_t timeout_ms = (uint64_t) (timeout_s ?: d->budget_s ?: SBX_DOCKER_TIMEOUT_DEFAULT_S) * 1000U;

        /* The operation's deadline bounds every call, so a caller is answered before its
         * own D-Bus timeout however many calls a hung or slow Docker made wait. */
        if (d->deadline_us > 0) {
                uint64_t now = sbx_now_monotonic_us();

                /* Less than a moment left is nothing left: no request that cannot answer. */
                if (now + DEADLINE_SLACK_US >= d->deadline_us)
                        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                             "Docker at %s did not finish within the operation's %u s",
                                             d->host, d->budget_s);
                if ((d->deadline_us - now) / 1000U <= timeout_ms) {
                        timeout_ms = (d->deadline_us - now) / 1000U;
                        deadline_cut = true;
                }
        }
        if (d->tcp_host && (r = sbx_docker_tls_check_validity(d->host, error)) < 0)
                return r;
        if (asprintf(&url, "%s%s", d->url_base, url_path) < 0)
                return -ENOMEM;

        /* No "Expect: 100-continue" round trip before larger bodies. */
        h = curl_slist_append(NULL, "Expect:");
        if (!h)
                return -ENOMEM;
        headers = h;
        /* Without a body, no Content-Type at all: curl would claim a form, which
         * Docker refuses for endpoints that take optional JSON (commit). */
        h = curl_slist_append(headers, body ? body->type : "Content-Type:");
        if (!h)
                return -ENOMEM;
        headers = h;

        if (configure(d, method, url, body, timeout_ms, headers, resp) < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "cannot set up a request to Docker");

        d->errbuf[0] = 0;
        d->n_requests++;
        if (strstr(url_path, "/containers/json?"))
                d->n_lists++;
        c = curl_easy_perform(d->curl);
        if (c != CURLE_OK)
                return map_curl_error(d, c, method, url_path, timeout_ms, deadline_cut, resp, error);

        if (curl_easy_getinfo(d->curl, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker's answer carries no HTTP status");
        *ret_status = status;
        return 0;
}

int docker_parse_json(const char *data, size_t size, json_object **ret) {
        json_tokener *tok;
        json_object *j;
        size_t end;

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        j = json_tokener_parse_ex(tok, data, (int) size);
        end = json_tokener_get_parse_end(tok);
        json_tokener_free(tok);
        if (!j)
                return -EBADMSG;
        for (; end < size; end++)
                if (!strchr(" \t\r\n", data[end])) {
                        json_object_put(j);
                        return -EBADMSG;
                }
        *ret = j;
        return 0;
}

/* Docker's reason for a refusal: the "message" of its JSON body, else the body
 * text itself, else NULL. */
static char *docker_message(const DockerResponse *resp) {
        json_object *j = NULL, *m;
        char *s = NULL;

        if (resp->size == 0)
                return NULL;
        if (docker_parse_json(resp->data, resp->size, &j) >= 0 &&
            json_object_object_get_ex(j, "message", &m) && json_object_is_type(m, json_type_string))
                s = strndup(json_object_get_string(m), DOCKER_MESSAGE_MAX);
        else
                s = strndup(resp->data, MIN(resp->size, (size_t) DOCKER_MESSAGE_MAX));
        json_object_put(j);
        if (s)
                s[strcspn(s, "\r\n")] = 0;
        return s;
}

int docker_map_status(long status, const DockerResponse *resp, SbxError *error) {
        return sbx_docker_http_error(status, resp->data, resp->size, error);
}

int sbx_docker_http_error(long status, const char *body, size_t size, SbxError *error) {
        _cleanup_free_ char *m = docker_message(&(const DockerResponse) { .data = (char *) body, .size = size });
        SbxErrorKind kind = status == 404 ? SBX_ERROR_DOCKER_NOT_FOUND :
                            status == 409 ? SBX_ERROR_DOCKER_CONFLICT : SBX_ERROR_BACKEND_ERROR;

        if (m)
                return sbx_error_set(error, kind, "Docker: %s", m);
        return sbx_error_set(error, kind, "Docker answered HTTP %ld", status);
}

int docker_http_request(SbxDocker *d, const char *method, const char *path, const DockerBody *body,
                        unsigned timeout_s, DockerResponse *resp, SbxError *error) {
        _cleanup_free_ char *url_path = NULL;
        long status = 0;
        int r;

        if (asprintf(&url_path, "/v%s%s", d->api_version, path) < 0)
                return -ENOMEM;
        r = docker_http_perform(d, method, url_path, body, timeout_s, resp, &status, error);
        if (r < 0)
                return r;
        if (!((status >= 200 && status < 300) || status == 304))
                return docker_map_status(status, resp, error);
        return (int) status;
}

int docker_parse_answer(const char *method, const char *path, const char *data, size_t size, json_object **ret,
                        SbxError *error) {
        json_object *j = NULL;
        int r;

        if (size > 0) {
                r = docker_parse_json(data, size, &j);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                             "Docker's answer to %s %s is not valid JSON", method, path);
        }
        *ret = j;
        return 0;
}

int docker_http_get_object(SbxDocker *d, const char *path, json_object **ret, SbxError *error) {
        _cleanup_(docker_response_done) DockerResponse resp = {};
        json_object *j = NULL;
        int r;

        if ((r = docker_http_request(d, "GET", path, NULL, 0, &resp, error)) < 0 ||
            (r = docker_parse_answer("GET", path, resp.data, resp.size, &j, error)) < 0)
                return r;
        if (!json_object_is_type(j, json_type_object)) {
                json_object_put(j);
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker's answer to GET %s is not a JSON object", path);
        }
        *ret = j;
        return 0;
}
