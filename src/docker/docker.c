/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <strings.h>
#include <sys/un.h>

#include "docker.h"
#include "docker-internal.h"
#include "docker-tls.h"
#include "time-util.h"

#define UNIX_PREFIX "unix://"
#define TCP_PREFIX "tcp://"
#define DEADLINE_SLACK_US 20000U
/* Of an answer that is not what was expected, this much is quoted. */
#define EXCERPT_MAX 64U

typedef struct Response {
        char *data;
        size_t size;
        size_t allocated;
        bool too_large;
        bool oom;
        char *api_version;      /* the Api-Version header, if any */
        bool libpod;            /* a Libpod-Api-Version header: Podman (docker-dialect.c) */
        CURL *tls_of;           /* non-NULL: take the engine's fingerprint from this transfer */
        char fingerprint[SBX_DOCKER_TLS_FINGERPRINT_MAX];
} Response;

static void response_done(Response *r) {
        free(r->data);
        free(r->api_version);
}

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

/* Where the requests go: the unix socket, or the engine over verified mutual TLS. */
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

static size_t write_cb(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Response *r = userdata;
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
        Response *r = userdata;
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

DEFINE_TRIVIAL_CLEANUP_FUNC(struct curl_slist *, curl_slist_free_all);

/* A request's body: JSON, or a tar archive (PUT …/archive). */
typedef struct Body {
        const char *data;
        size_t size;
        const char *type;       /* the Content-Type header line */
} Body;

static int configure(SbxDocker *d, const char *method, const char *url, const Body *body,
                     uint64_t timeout_ms, struct curl_slist *headers, Response *resp) {
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
                          bool deadline_cut, const Response *resp, SbxError *error) {
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

/* One HTTP exchange on the persistent connection. url_path is absolute
 * (versioned or not). Transport failures become typed errors; any HTTP status
 * is returned in *ret_status for the caller to judge. */
static int perform(SbxDocker *d, const char *method, const char *url_path, const Body *body,
                   unsigned timeout_s, Response *resp, long *ret_status, SbxError *error) {
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

static int parse_json(const char *data, size_t size, json_object **ret) {
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
static char *docker_message(const Response *resp) {
        json_object *j = NULL, *m;
        char *s = NULL;

        if (resp->size == 0)
                return NULL;
        if (parse_json(resp->data, resp->size, &j) >= 0 &&
            json_object_object_get_ex(j, "message", &m) && json_object_is_type(m, json_type_string))
                s = strndup(json_object_get_string(m), DOCKER_MESSAGE_MAX);
        else
                s = strndup(resp->data, MIN(resp->size, (size_t) DOCKER_MESSAGE_MAX));
        json_object_put(j);
        if (s)
                s[strcspn(s, "\r\n")] = 0;
        return s;
}

static int map_status(long status, const Response *resp, SbxError *error) {
        return sbx_docker_http_error(status, resp->data, resp->size, error);
}

int sbx_docker_http_error(long status, const char *body, size_t size, SbxError *error) {
        _cleanup_free_ char *m = docker_message(&(const Response) { .data = (char *) body, .size = size });
        SbxErrorKind kind = status == 404 ? SBX_ERROR_DOCKER_NOT_FOUND :
                            status == 409 ? SBX_ERROR_DOCKER_CONFLICT : SBX_ERROR_BACKEND_ERROR;

        if (m)
                return sbx_error_set(error, kind, "Docker: %s", m);
        return sbx_error_set(error, kind, "Docker answered HTTP %ld", status);
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
        _cleanup_(response_done) Response resp = {};
        long status = 0;
        char *v;
        int r;

        if (!d)
                return -EINVAL;
        resp.tls_of = d->tcp_host ? d->curl : NULL;
        r = perform(d, "GET", "/_ping", NULL, 0, &resp, &status, error);
        if (r < 0)
                return r;
        if (d->tcp_host)
                sbx_docker_tls_note_success(d->host, resp.fingerprint);
        if (status != 200)
                return map_status(status, &resp, error);
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

        _cleanup_(response_done) Response resp = {};
        _cleanup_free_ char *url_path = NULL;
        const char *body_text = NULL;
        long status = 0;
        int r;

        if (!d || !method || !path || path[0] != '/')
                return -EINVAL;
        r = sbx_docker_negotiate(d, error);
        if (r < 0)
                return r;
        if (asprintf(&url_path, "/v%s%s", d->api_version, path) < 0)
                return -ENOMEM;
        if (body) {
                body_text = json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN);
                if (!body_text)
                        return -ENOMEM;
        }

        r = perform(d, method, url_path,
                    body_text ? &(const Body) { body_text, strlen(body_text), "Content-Type: application/json" }
                              : NULL, timeout_s, &resp, &status, error);
        if (r < 0)
                return r;
        if (!((status >= 200 && status < 300) || status == 304))
                return map_status(status, &resp, error);
        if (ret_data) {
                *ret_data = TAKE_PTR(resp.data);
                *ret_size = resp.size;
        }
        return (int) status;
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
        json_object *j = NULL;
        size_t size = 0;
        int status, r;

        status = sbx_docker_request_raw(d, method, path, body, timeout_s, ret ? &data : NULL, &size, error);
        if (status < 0)
                return status;
        if (ret && size > 0) {
                r = parse_json(data, size, &j);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                             "Docker's answer to %s %s is not valid JSON", method, path);
        }
        if (ret)
                *ret = j;
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
                r = parse_json(data, size, &j);
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
        json_object *j = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        r = sbx_docker_request(d, "GET", path, NULL, 0, &j, error);
        if (r < 0)
                return r;
        if (!json_object_is_type(j, json_type_object)) {
                json_object_put(j);
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker's answer to GET %s is not a JSON object", path);
        }
        *ret = j;
        return 0;
}

int sbx_docker_version(SbxDocker *d, json_object **ret, SbxError *error) {
        return sbx_docker_get_object(d, "/version", ret, error);
}

int sbx_docker_info(SbxDocker *d, json_object **ret, SbxError *error) {
        return sbx_docker_get_object(d, "/info", ret, error);
}

int sbx_docker_put_archive(SbxDocker *d, const char *path, const void *tar, size_t size, unsigned timeout_s,
                           SbxError *error) {
        _cleanup_(response_done) Response resp = {};
        _cleanup_free_ char *url_path = NULL;
        long status = 0;
        int r;

        if (!d || !path || path[0] != '/' || !tar)
                return -EINVAL;
        if ((r = sbx_docker_negotiate(d, error)) < 0)
                return r;
        if (asprintf(&url_path, "/v%s%s", d->api_version, path) < 0)
                return -ENOMEM;
        r = perform(d, "PUT", url_path, &(const Body) { tar, size, "Content-Type: application/x-tar" }, timeout_s,
                    &resp, &status, error);
        if (r < 0)
                return r;
        if (status != 200)
                return map_status(status, &resp, error);
        return 0;
}
