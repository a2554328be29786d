/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker-tls.h"
#include "log.h"
#include "time-util.h"

#define PUMP_BUFFER 16384U
/* How long a probe waits for the engine's verdict on the client certificate. */
#define PROBE_WAIT_MS 1000U

static struct {
        SbxDockerTls paths;
        char *ca, *cert, *key, *server_name;
        gnutls_certificate_credentials_t creds;
        time_t not_before, not_after;
} engine;

/* ---- the engine's state ------------------------------------------------------------ */

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static char state_identity[SBX_DOCKER_TLS_FINGERPRINT_MAX];
static char *state_failure;             /* the last failure's message; NULL while fine */

void sbx_docker_tls_note_failure(const char *host, const char *message) {
        pthread_mutex_lock(&state_lock);
        if (!streq_ptr(state_failure, message)) {
                free(state_failure);
                state_failure = strdup(message);
                log_warning("Engine %s: %s", host, message);
        }
        pthread_mutex_unlock(&state_lock);
}

void sbx_docker_tls_note_success(const char *host, const char *fingerprint) {
        pthread_mutex_lock(&state_lock);
        if (state_failure) {
                log_notice("Engine %s: TLS works again", host);
                state_failure = mfree(state_failure);
        }
        if (!isempty(fingerprint) && !streq(state_identity, fingerprint)) {
                if (state_identity[0])
                        log_warning("Engine %s: its certificate changed from %s to %s", host, state_identity,
                                    fingerprint);
                else
                        log_info("Engine %s: mutual TLS, the engine's certificate %s", host, fingerprint);
                snprintf(state_identity, sizeof state_identity, "%s", fingerprint);
        }
        pthread_mutex_unlock(&state_lock);
}

const char *sbx_docker_tls_engine_identity(char *buf) {
        pthread_mutex_lock(&state_lock);
        snprintf(buf, SBX_DOCKER_TLS_FINGERPRINT_MAX, "%s", state_identity);
        pthread_mutex_unlock(&state_lock);
        return buf;
}

/* ---- the files -------------------------------------------------------------------- */

static int check_file(const char *what, const char *path, bool secret, SbxError *error) {
        struct stat st;

        if (!path)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.%s: missing", what);
        if (stat(path, &st) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.%s %s: %s", what, path,
                                     strerror(errno));
        if (!S_ISREG(st.st_mode))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.%s %s: not a regular file", what,
                                     path);
        if (st.st_uid != 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.%s %s: owned by uid %u, not root",
                                     what, path, (unsigned) st.st_uid);
        if (st.st_mode & (secret ? 0077 : 0022))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "engine.%s %s: mode %04o, %s (chmod %s)", what, path,
                                     (unsigned) (st.st_mode & 07777),
                                     secret ? "the key must be readable by root only" : "writable by others than root",
                                     secret ? "0600" : "go-w");
        if (access(path, R_OK) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.%s %s: unreadable: %s", what, path,
                                     strerror(errno));
        return 0;
}

/* The client certificate's validity window. */
static int cert_times(const char *path, time_t *ret_not_before, time_t *ret_not_after, SbxError *error) {
        gnutls_datum_t data = {};
        gnutls_x509_crt_t crt;
        int r;

        if ((r = gnutls_load_file(path, &data)) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.tls_cert %s: %s", path,
                                     gnutls_strerror(r));
        if ((r = gnutls_x509_crt_init(&crt)) < 0) {
                gnutls_free(data.data);
                return -ENOMEM;
        }
        r = gnutls_x509_crt_import(crt, &data, GNUTLS_X509_FMT_PEM);
        gnutls_free(data.data);
        if (r < 0) {
                gnutls_x509_crt_deinit(crt);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.tls_cert %s: not a PEM certificate: %s",
                                     path, gnutls_strerror(r));
        }
        *ret_not_before = gnutls_x509_crt_get_activation_time(crt);
        *ret_not_after = gnutls_x509_crt_get_expiration_time(crt);
        gnutls_x509_crt_deinit(crt);
        return 0;
}

static int load_credentials(const SbxDockerTls *tls, gnutls_certificate_credentials_t *ret, SbxError *error) {
        gnutls_certificate_credentials_t c;
        int r;

        if (gnutls_certificate_allocate_credentials(&c) < 0)
                return -ENOMEM;
        r = gnutls_certificate_set_x509_trust_file(c, tls->ca, GNUTLS_X509_FMT_PEM);
        if (r <= 0) {
                gnutls_certificate_free_credentials(c);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "engine.tls_ca %s: no PEM CA certificate%s%s",
                                     tls->ca, r < 0 ? ": " : "", r < 0 ? gnutls_strerror(r) : "");
        }
        r = gnutls_certificate_set_x509_key_file(c, tls->cert, tls->key, GNUTLS_X509_FMT_PEM);
        if (r < 0) {
                gnutls_certificate_free_credentials(c);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "engine.tls_cert %s with engine.tls_key %s: %s", tls->cert, tls->key,
                                     gnutls_strerror(r));
        }
        *ret = c;
        return 0;
}

int sbx_docker_tls_check_files(const SbxDockerTls *tls, SbxError *error) {
        gnutls_certificate_credentials_t c;
        time_t nb, na;
        int r;

        if ((r = check_file("tls_ca", tls->ca, false, error)) < 0 ||
            (r = check_file("tls_cert", tls->cert, false, error)) < 0 ||
            (r = check_file("tls_key", tls->key, true, error)) < 0 ||
            (r = cert_times(tls->cert, &nb, &na, error)) < 0 ||
            (r = load_credentials(tls, &c, error)) < 0)
                return r;
        gnutls_certificate_free_credentials(c);
        return 0;
}

static int dup_or_null(const char *s, char **ret) {
        *ret = s ? strdup(s) : NULL;
        return !s || *ret ? 0 : -ENOMEM;
}

int sbx_docker_tls_setup(const SbxDockerTls *tls, SbxError *error) {
        int r;

        if (engine.creds)
                return -EBUSY;
        if ((r = sbx_docker_tls_check_files(tls, error)) < 0 ||
            (r = cert_times(tls->cert, &engine.not_before, &engine.not_after, error)) < 0 ||
            (r = load_credentials(tls, &engine.creds, error)) < 0)
                return r;
        if (dup_or_null(tls->ca, &engine.ca) < 0 || dup_or_null(tls->cert, &engine.cert) < 0 ||
            dup_or_null(tls->key, &engine.key) < 0 || dup_or_null(tls->server_name, &engine.server_name) < 0)
                return -ENOMEM;
        engine.paths = (SbxDockerTls) {
                .ca = engine.ca, .cert = engine.cert, .key = engine.key, .server_name = engine.server_name,
        };
        return 0;
}

const SbxDockerTls *sbx_docker_tls(void) {
        return engine.creds ? &engine.paths : NULL;
}

int sbx_docker_tls_check_validity(const char *host, SbxError *error) {
        _cleanup_free_ char *m = NULL;
        time_t now = time(NULL);
        char when[64];
        struct tm tm;

        if (!engine.creds || (now >= engine.not_before && now <= engine.not_after))
                return 0;
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ",
                 gmtime_r(now < engine.not_before ? &engine.not_before : &engine.not_after, &tm));
        if (asprintf(&m, now < engine.not_before
                         ? "the service's client certificate %s (engine.tls_cert) is not valid yet: from %s"
                         : "the service's client certificate %s (engine.tls_cert) expired at %s",
                     engine.cert, when) < 0)
                return -ENOMEM;
        sbx_docker_tls_note_failure(host, m);
        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "%s", m);
}

/* ---- the connection --------------------------------------------------------------- */

static int connect_tcp(const char *host, const char *port, uint64_t deadline_ms, int *ret, SbxError *error) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
        int r, fd = -1, err = ECONNREFUSED;

        r = getaddrinfo(host, port, &hints, &ai);
        if (r != 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "cannot resolve Docker's host %s: %s",
                                     host, gai_strerror(r));
        for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
                socklen_t len = sizeof err;

                fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0) {
                        err = errno;
                        continue;
                }
                if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
                    (errno == EINPROGRESS && sbx_fd_wait(fd, POLLOUT, deadline_ms) > 0 &&
                     getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0))
                        break;
                if (errno != EINPROGRESS)
                        err = errno;
                else if (err == 0)
                        err = ETIMEDOUT;
                close(fd);
                fd = -1;
        }
        freeaddrinfo(ai);
        if (fd < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "cannot reach Docker at tcp://%s:%s: %s",
                                     host, port, strerror(err));
        /* The handshake and the pump block; the poll bounds their waits. */
        (void) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        *ret = fd;
        return 0;
}

static bool is_address(const char *s) {
        return strspn(s, "0123456789.") == strlen(s) || strchr(s, ':');
}

static int handshake_error(gnutls_session_t s, int r, const char *host, const char *port, SbxError *error) {
        gnutls_datum_t out = {};
        int k;

        if (r == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR &&
            gnutls_certificate_verification_status_print(gnutls_session_get_verify_cert_status(s), GNUTLS_CRT_X509,
                                                         &out, 0) >= 0) {
                k = sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                  "TLS with Docker at tcp://%s:%s: the engine's certificate is refused: %s", host,
                                  port, out.data);
                gnutls_free(out.data);
                return k;
        }
        if (r == GNUTLS_E_UNEXPECTED_PACKET_LENGTH || r == GNUTLS_E_UNSUPPORTED_VERSION_PACKET ||
            r == GNUTLS_E_UNEXPECTED_PACKET)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "TLS with Docker at tcp://%s:%s: the server does not speak TLS (%s)", host,
                                     port, gnutls_strerror(r));
        if (r == GNUTLS_E_WARNING_ALERT_RECEIVED || r == GNUTLS_E_FATAL_ALERT_RECEIVED)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "TLS with Docker at tcp://%s:%s: the engine refused the handshake: %s "
                                     "(does it accept the service's client certificate?)", host, port,
                                     gnutls_alert_get_name(gnutls_alert_get(s)));
        return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "TLS with Docker at tcp://%s:%s failed: %s", host,
                             port, gnutls_strerror(r));
}

int sbx_docker_tls_session_fingerprint(void *session, char *ret) {
        gnutls_session_t s = session;
        const gnutls_datum_t *certs;
        unsigned n = 0;
        uint8_t digest[32];
        size_t size = sizeof digest;

        certs = gnutls_certificate_get_peers(s, &n);
        if (!certs || n == 0 || gnutls_fingerprint(GNUTLS_DIG_SHA256, &certs[0], digest, &size) < 0)
                return -EIO;
        strcpy(ret, "sha256:");
        for (size_t i = 0; i < size; i++)
                sprintf(ret + 7 + 2 * i, "%02x", digest[i]);
        return 0;
}

static int open_session(int fd, const char *host, const char *port, uint64_t deadline_ms, gnutls_session_t *ret,
                        char *ret_fingerprint, SbxError *error) {
        const char *name = engine.server_name ?: host;
        uint64_t now = sbx_now_monotonic_us() / 1000U;
        gnutls_session_t s;
        int r;

        if (gnutls_init(&s, GNUTLS_CLIENT) < 0)
                return -ENOMEM;
        if (gnutls_set_default_priority(s) < 0 ||
            gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, engine.creds) < 0 ||
            (!is_address(name) && gnutls_server_name_set(s, GNUTLS_NAME_DNS, name, strlen(name)) < 0)) {
                gnutls_deinit(s);
                return -ENOMEM;
        }
        /* Chain, validity and name, inside the handshake. */
        gnutls_session_set_verify_cert(s, name, 0);
        gnutls_transport_set_int(s, fd);
        gnutls_handshake_set_timeout(s, (unsigned) MAX(deadline_ms > now ? deadline_ms - now : 1, (uint64_t) 1));
        do
                r = gnutls_handshake(s);
        while (r < 0 && !gnutls_error_is_fatal(r));
        if (r < 0) {
                r = handshake_error(s, r, host, port, error);
                gnutls_deinit(s);
                return r;
        }
        if (ret_fingerprint && sbx_docker_tls_session_fingerprint(s, ret_fingerprint) < 0)
                ret_fingerprint[0] = 0;
        *ret = s;
        return 0;
}

/* TLS 1.3: the engine judges the client certificate after the handshake; its
 * refusal is an alert that follows at once. */
static int probe_after_handshake(gnutls_session_t s, const char *host, const char *port, SbxError *error) {
        char byte;
        ssize_t k;

        gnutls_record_set_timeout(s, PROBE_WAIT_MS);
        k = gnutls_record_recv(s, &byte, 1);
        if (k == GNUTLS_E_FATAL_ALERT_RECEIVED || k == GNUTLS_E_WARNING_ALERT_RECEIVED)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "TLS with Docker at tcp://%s:%s: the engine refused the handshake: %s (it does "
                                     "not accept the service's client certificate %s, engine.tls_cert)", host, port,
                                     gnutls_alert_get_name(gnutls_alert_get(s)), engine.cert);
        return 0;
}

/* ---- the pump --------------------------------------------------------------------- */

typedef struct Pump {
        gnutls_session_t session;
        int tcp;
        int local;
} Pump;

static bool write_local(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return false;
                p += k;
                n -= (size_t) k;
        }
        return true;
}

static bool send_tls(gnutls_session_t s, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = gnutls_record_send(s, p, n);

                if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED)
                        continue;
                if (k < 0)
                        return false;
                p += k;
                n -= (size_t) k;
        }
        return true;
}

/* Engine → caller: false when the stream ended (close_notify, an error, or the
 * caller gone). */
static bool pump_from_engine(Pump *p, char *buf) {
        ssize_t k = gnutls_record_recv(p->session, buf, PUMP_BUFFER);

        if (k == GNUTLS_E_AGAIN || k == GNUTLS_E_INTERRUPTED)
                return true;
        if (k <= 0)
                return false;
        return write_local(p->local, buf, (size_t) k);
}

/* Caller → engine; the caller's half-close is TLS close_notify (the process's
 * end-of-file on its standard input). */
static bool pump_to_engine(Pump *p, char *buf, bool *local_eof) {
        ssize_t k = read(p->local, buf, PUMP_BUFFER);

        if (k < 0 && errno == EINTR)
                return true;
        if (k < 0)
                return false;
        if (k == 0) {
                *local_eof = true;
                (void) gnutls_bye(p->session, GNUTLS_SHUT_WR);
                return true;
        }
        return send_tls(p->session, buf, (size_t) k);
}

static void *pump_run(void *userdata) {
        Pump *p = userdata;
        char *buf = malloc(PUMP_BUFFER);
        bool local_eof = false;

        while (buf) {
                struct pollfd fds[2] = {
                        { .fd = p->tcp, .events = POLLIN },
                        { .fd = p->local, .events = local_eof ? 0 : POLLIN },
                };

                if (gnutls_record_check_pending(p->session) > 0) {
                        if (!pump_from_engine(p, buf))
                                break;
                        continue;
                }
                if (poll(fds, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) && !pump_from_engine(p, buf))
                        break;
                if (fds[1].revents & POLLIN) {
                        if (!pump_to_engine(p, buf, &local_eof))
                                break;
                } else if (fds[1].revents & (POLLHUP | POLLERR))
                        break;          /* the caller closed its end */
        }
        free(buf);
        gnutls_deinit(p->session);
        close(p->tcp);
        close(p->local);
        free(p);
        return NULL;
}

static int start_pump(gnutls_session_t session, int tcp, int *ret_fd) {
        pthread_attr_t attr;
        pthread_t t;
        Pump *p;
        int sv[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        p = malloc(sizeof *p);
        if (!p) {
                close(sv[0]);
                close(sv[1]);
                return -ENOMEM;
        }
        *p = (Pump) { .session = session, .tcp = tcp, .local = sv[1] };
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = -pthread_create(&t, &attr, pump_run, p);
        pthread_attr_destroy(&attr);
        if (r < 0) {
                close(sv[0]);
                close(sv[1]);
                free(p);
                return r;
        }
        (void) fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
        *ret_fd = sv[0];
        return 0;
}

static int tls_connect(const char *host, const char *port, uint64_t deadline_ms, int *ret_fd,
                       char *ret_fingerprint, SbxError *error);

int sbx_docker_tls_connect(const char *host, const char *port, uint64_t deadline_ms, int *ret_fd,
                           char *ret_fingerprint, SbxError *error) {
        char fp[SBX_DOCKER_TLS_FINGERPRINT_MAX] = "", where[512];
        SbxError e = SBX_ERROR_NULL;
        int r = tls_connect(host, port, deadline_ms, ret_fd, fp, &e);

        snprintf(where, sizeof where, "tcp://%s:%s", host, port);
        if (r < 0 && e.kind == SBX_ERROR_BACKEND_UNAVAILABLE && e.message)
                sbx_docker_tls_note_failure(where, e.message);
        else if (r >= 0 && ret_fd)
                sbx_docker_tls_note_success(where, fp);
        if (ret_fingerprint)
                strcpy(ret_fingerprint, fp);
        if (r < 0 && e.kind != SBX_ERROR_NONE)
                sbx_error_set(error, e.kind, "%s", e.message ?: "out of memory");
        sbx_error_free(&e);
        return r;
}

static int tls_connect(const char *host, const char *port, uint64_t deadline_ms, int *ret_fd,
                       char *ret_fingerprint, SbxError *error) {
        gnutls_session_t s = NULL;
        int fd = -1, r;

        if (!engine.creds)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "Docker at tcp://%s:%s: no TLS credentials (policy engine.tls_*)", host, port);
        if ((r = sbx_docker_tls_check_validity(host, error)) < 0 ||
            (r = connect_tcp(host, port, deadline_ms, &fd, error)) < 0)
                return r;
        r = open_session(fd, host, port, deadline_ms, &s, ret_fingerprint, error);
        if (r < 0) {
                close(fd);
                return r;
        }
        if (!ret_fd) {
                r = probe_after_handshake(s, host, port, error);
                (void) gnutls_bye(s, GNUTLS_SHUT_WR);
                gnutls_deinit(s);
                close(fd);
                return r;
        }
        r = start_pump(s, fd, ret_fd);
        if (r < 0) {
                gnutls_deinit(s);
                close(fd);
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "TLS stream to Docker: %s", strerror(-r));
        }
        return 0;
}
