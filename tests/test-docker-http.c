/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The Docker client's HTTP handling against a scripted fake daemon on a unix
 * socket: version negotiation, the persistent connection, escaping, error
 * mapping, timeouts and the body cap. No dockerd needed. */

#include "sbx-test.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "docker-container.h"
#include "docker-exec.h"
#include "docker-image.h"
#include "docker-volume.h"
#include "docker.h"

#define PING_OK "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Length: 2\r\n\r\nOK"
/* Answer nothing; wait for the client to give up. */
#define HANG "HANG"
/* 200 with a body one byte over the cap, announced by Content-Length / not. */
#define HUGE_LENGTH "HUGE_LENGTH"
#define HUGE_CLOSE "HUGE_CLOSE"
/* 200, a stream's head and one chunk, then nothing more until the client closes. */
#define STREAM "STREAM"
#define STREAM_HEAD "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nContent-Type: application/json\r\n" \
        "Transfer-Encoding: chunked\r\n\r\n3\r\n{}\n\r\n"
/* Read the request, close the connection without a byte of answer (the answer lost). */
#define DROP "DROP"
#define MAX_REQUESTS 32

typedef struct Fake {
        char socket[128];
        char url[160];
        int listen_fd;
        pthread_t thread;
        const char *const *script;
        char requests[MAX_REQUESTS][512];
        char content_types[MAX_REQUESTS][64];  /* "" when the request had none */
        unsigned conn_of[MAX_REQUESTS];         /* which connection (1, 2, …) it came on */
        size_t n_requests;
        unsigned accepts;
} Fake;

static char fake_dir[64];

static bool wait_readable(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };

        return poll(&p, 1, 20000) == 1;
}

/* Reads one request (headers plus Content-Length body), keeping its request line
 * and Content-Type. Returns false on EOF. */
static bool read_request(int fd, char *line, size_t line_size, char *ct, size_t ct_size) {
        char buf[65536];
        size_t n = 0;
        char *end, *cl;
        size_t want;

        for (;;) {
                ssize_t k;

                buf[n] = 0;
                end = strstr(buf, "\r\n\r\n");
                if (end)
                        break;
                if (n >= sizeof(buf) - 1 || !wait_readable(fd))
                        return false;
                k = read(fd, buf + n, sizeof(buf) - 1 - n);
                if (k <= 0)
                        return false;
                n += (size_t) k;
        }
        snprintf(line, line_size, "%.*s", (int) strcspn(buf, "\r\n"), buf);
        cl = strcasestr(buf, "\r\nContent-Type:");
        if (cl && cl < end)
                snprintf(ct, ct_size, "%.*s", (int) strcspn(cl + 15, "\r\n"), cl + 15);
        else
                ct[0] = 0;
        cl = strcasestr(buf, "Content-Length:");
        want = (size_t) (end + 4 - buf) + (cl && cl < end ? strtoul(cl + 15, NULL, 10) : 0);
        while (n < want) {
                ssize_t k;

                if (!wait_readable(fd))
                        return false;
                k = read(fd, buf, sizeof(buf) - 1 < want - n ? sizeof(buf) - 1 : want - n);
                if (k <= 0)
                        return false;
                n += (size_t) k;
        }
        return true;
}

static void send_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

                if (k <= 0)
                        return;
                p += k;
                n -= (size_t) k;
        }
}

static void send_huge(int fd, bool with_length) {
        size_t size = SBX_DOCKER_BODY_MAX + 1;
        char head[256];
        char *body = malloc(size);

        ck_assert_ptr_nonnull(body);
        memset(body, ' ', size);
        body[0] = '[';
        body[size - 1] = ']';
        if (with_length)
                snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n\r\n", size);
        else
                snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        send_all(fd, head, strlen(head));
        send_all(fd, body, size);
        free(body);
}

/* The connection the next request comes on: the current one, or a new one the
 * client opened meanwhile (a POST's fresh connection; the idle one is let go). -1
 * when nothing comes. */
static int next_connection(Fake *f, int fd) {
        struct pollfd p[2] = { { .fd = f->listen_fd, .events = POLLIN }, { .fd = fd, .events = POLLIN } };
        int n;

        if (poll(p, fd >= 0 ? 2 : 1, 20000) <= 0)
                return -1;
        if (!(p[0].revents & POLLIN))
                return fd;
        n = accept(f->listen_fd, NULL, NULL);
        if (n < 0)
                return -1;
        if (fd >= 0)
                close(fd);
        f->accepts++;
        return n;
}

static void *fake_run(void *userdata) {
        Fake *f = userdata;
        const char *const *step = f->script;
        int fd = -1;

        while (*step) {
                fd = next_connection(f, fd);
                if (fd < 0)
                        break;
                if (f->n_requests >= MAX_REQUESTS ||
                    !read_request(fd, f->requests[f->n_requests], sizeof(f->requests[0]),
                                  f->content_types[f->n_requests], sizeof(f->content_types[0]))) {
                        close(fd);
                        fd = -1;
                        continue;
                }
                f->conn_of[f->n_requests++] = f->accepts;

                if (streq(*step, HANG) || streq(*step, STREAM)) {
                        char c;

                        if (streq(*step, STREAM))
                                send_all(fd, STREAM_HEAD, strlen(STREAM_HEAD));
                        /* the client times out (or stops) and closes */
                        while (wait_readable(fd) && read(fd, &c, 1) > 0)
                                ;
                } else if (streq(*step, HUGE_LENGTH) || streq(*step, HUGE_CLOSE))
                        send_huge(fd, streq(*step, HUGE_LENGTH));
                else if (!streq(*step, DROP))
                        send_all(fd, *step, strlen(*step));
                if (!streq(*step, HANG) && !streq(*step, STREAM) && !strstr(*step, "Connection: close") &&
                    !streq(*step, HUGE_CLOSE) && !streq(*step, DROP)) {
                        step++;
                        continue;
                }
                close(fd);
                fd = -1;
                step++;
        }
        /* keep the last connection until the client lets go */
        if (fd >= 0) {
                char c;

                while (wait_readable(fd) && read(fd, &c, 1) > 0)
                        ;
                close(fd);
        }
        return NULL;
}

static Fake *fake_start(const char *const *script) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        Fake *f = calloc(1, sizeof(*f));

        ck_assert_ptr_nonnull(f);
        /* one socket per test process, in the directory the parent removes */
        snprintf(f->socket, sizeof(f->socket), "%s/%d.sock", fake_dir, (int) getpid());
        snprintf(f->url, sizeof(f->url), "unix://%s", f->socket);
        strcpy(sa.sun_path, f->socket);
        f->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(f->listen_fd, 0);
        ck_assert_int_eq(bind(f->listen_fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(f->listen_fd, 4), 0);
        f->script = script;
        ck_assert_int_eq(pthread_create(&f->thread, NULL, fake_run, f), 0);
        return f;
}

static void fake_finish(Fake *f) {
        ck_assert_int_eq(pthread_join(f->thread, NULL), 0);
        close(f->listen_fd);
        unlink(f->socket);
        free(f);
}

static SbxDocker *client(const Fake *f) {
        SbxDocker *d = NULL;

        ck_assert_int_eq(sbx_docker_new(f->url, &d, NULL), 0);
        return d;
}

static void assert_error(const SbxError *e, SbxErrorKind kind, const char *needle) {
        ck_assert_msg(e->kind == kind, "kind %s, expected %s (%s)",
                      sbx_error_kind_name(e->kind), sbx_error_kind_name(kind), e->message);
        ck_assert_msg(e->message && strstr(e->message, needle), "message \"%s\" lacks \"%s\"", e->message, needle);
}

START_TEST(test_host_urls) {
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;
        char long_url[200];

        /* tcp:// is mutual TLS only: refused without the credentials */
        ck_assert_int_eq(sbx_docker_new("tcp://127.0.0.1:2375", &d, &e), -EINVAL);
        ck_assert_ptr_null(d);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "mutual TLS only");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_new("http://127.0.0.1:2375", &d, &e), -EINVAL);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "only unix:// and (mutual TLS) tcp://");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_new("unix://relative.sock", &d, &e), -EINVAL);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "absolute");
        sbx_error_free(&e);

        snprintf(long_url, sizeof(long_url), "unix:///%0150d", 0);
        ck_assert_int_eq(sbx_docker_new(long_url, &d, &e), -EINVAL);
        assert_error(&e, SBX_ERROR_INVALID_ARGS, "too long");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_new(NULL, &d, &e), 0);
        ck_assert_str_eq(sbx_docker_host(d), SBX_DOCKER_DEFAULT_HOST);
        ck_assert_ptr_null(sbx_docker_api_version(d));
        d = sbx_docker_free(d);
        ck_assert_int_eq(e.kind, SBX_ERROR_NONE);
}
END_TEST

START_TEST(test_unreachable) {
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;
        json_object *j = NULL;

        ck_assert_int_eq(sbx_docker_new("unix:///tmp/sbx-test-nonexistent.sock", &d, NULL), 0);
        ck_assert_int_eq(sbx_docker_ping(d, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "unix:///tmp/sbx-test-nonexistent.sock");
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_container_inspect(d, "x", &j, &e), -EHOSTDOWN);
        ck_assert_ptr_null(j);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "cannot reach Docker");
        sbx_error_free(&e);
}
END_TEST

/* One connection for all requests; the negotiated version prefixes every path;
 * names and filters are escaped. */
START_TEST(test_persistent_versioned_escaped) {
        static const char *const script[] = {
                PING_OK,
                "HTTP/1.1 200 OK\r\nContent-Length: 13\r\n\r\n{\"Id\":\"abc\"}\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]",
                "HTTP/1.1 304 Not Modified\r\n\r\n",
                "HTTP/1.1 204 No Content\r\n\r\n",
                NULL,
        };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        _cleanup_(json_object_putp) json_object *j = NULL;
        const char *const labels[] = { "a=b c", NULL };
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        ck_assert_str_eq(sbx_docker_api_version(d), "1.41");
        ck_assert_int_eq(sbx_docker_container_inspect(d, "a/b&c", &j, &e), 0);
        ck_assert_str_eq(json_object_get_string(json_object_object_get(j, "Id")), "abc");
        json_object_put(TAKE_PTR(j));
        ck_assert_int_eq(sbx_docker_container_list(d, labels, &j, &e), 0);
        ck_assert(json_object_is_type(j, json_type_array));
        ck_assert_int_eq(sbx_docker_container_start(d, "x", &e), 1);
        ck_assert_int_eq(sbx_docker_container_stop(d, "x", 7, &e), 0);
        ck_assert_int_eq(e.kind, SBX_ERROR_NONE);
        d = sbx_docker_free(d);

        /* the reads share one connection; each POST has a fresh one */
        ck_assert_uint_eq(f->accepts, 3);
        ck_assert_uint_eq(f->n_requests, 5);
        ck_assert_uint_eq(f->conn_of[2], 1);
        ck_assert_uint_eq(f->conn_of[3], 2);
        ck_assert_uint_eq(f->conn_of[4], 3);
        ck_assert_str_eq(f->requests[0], "GET /_ping HTTP/1.1");
        ck_assert_str_eq(f->requests[1], "GET /v1.41/containers/a%2Fb%26c/json HTTP/1.1");
        ck_assert_str_eq(f->requests[2],
                         "GET /v1.41/containers/json?all=1&filters=%7B%22label%22%3A%5B%22a%3Db%20c%22%5D%7D HTTP/1.1");
        ck_assert_str_eq(f->requests[3], "POST /v1.41/containers/x/start HTTP/1.1");
        ck_assert_str_eq(f->requests[4], "POST /v1.41/containers/x/stop?t=7 HTTP/1.1");
        fake_finish(f);
}
END_TEST

START_TEST(test_ping_versions) {
        static const char *const script[] = {
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK",
                "HTTP/1.1 200 OK\r\nApi-Version: 1.24\r\nContent-Length: 2\r\n\r\nOK",
                "HTTP/1.1 200 OK\r\nApi-Version: 1.41/../x\r\nContent-Length: 2\r\n\r\nOK",
                "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 9\r\n\r\nbroken\r\nx",
                "HTTP/1.1 200 OK\r\napi-version:   1.47  \r\nContent-Length: 2\r\n\r\nOK",
                NULL,
        };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_ping(d, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "without an Api-Version");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_ping(d, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "\"1.24\", this service needs 1.40");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_ping(d, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "1.41/../x");
        sbx_error_free(&e);
        ck_assert_ptr_null(sbx_docker_api_version(d));
        /* a non-JSON refusal: its first line is the message */
        ck_assert_int_eq(sbx_docker_ping(d, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "Docker: broken");
        ck_assert_ptr_null(strstr(e.message, "x"));
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        ck_assert_str_eq(sbx_docker_api_version(d), "1.47");
        d = sbx_docker_free(d);
        fake_finish(f);
}
END_TEST

START_TEST(test_status_mapping) {
        static const char *const script[] = {
                PING_OK,
                "HTTP/1.1 404 Not Found\r\nContent-Length: 38\r\n\r\n{\"message\":\"No such container: nope\"}\n",
                "HTTP/1.1 409 Conflict\r\nContent-Length: 25\r\n\r\n{\"message\":\"name taken\"}\n",
                "HTTP/1.1 400 Bad Request\r\nContent-Length: 20\r\n\r\n{\"message\":\"nope!\"}\n",
                "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{\"a\":",
                "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{} junk",
                "HTTP/1.1 201 Created\r\nContent-Length: 9\r\n\r\n{\"Id\":1}\n",
                NULL,
        };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        _cleanup_(json_object_putp) json_object *body = json_object_new_object();
        json_object *j = NULL;
        char *id = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_container_inspect(d, "nope", &j, &e), -ENODATA);
        ck_assert_ptr_null(j);
        assert_error(&e, SBX_ERROR_DOCKER_NOT_FOUND, "Docker: No such container: nope");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_create(d, "n", body, &id, &e), -EBUSY);
        ck_assert_ptr_null(id);
        assert_error(&e, SBX_ERROR_DOCKER_CONFLICT, "Docker: name taken");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_remove(d, "n", &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "Docker: nope!");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_image_remove(d, "i", false, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "HTTP 500");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_image_inspect(d, "i", &j, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "not valid JSON");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_info(d, &j, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "not valid JSON");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_commit(d, "c", "r", "t", NULL, &id, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "lacks the string \"Id\"");
        sbx_error_free(&e);
        ck_assert_ptr_null(id);
        ck_assert_ptr_null(j);
        d = sbx_docker_free(d);
        ck_assert_str_eq(f->requests[3], "DELETE /v1.41/containers/n?force=1&v=1 HTTP/1.1");
        ck_assert_str_eq(f->requests[4], "DELETE /v1.41/images/i HTTP/1.1");
        ck_assert_str_eq(f->requests[7], "POST /v1.41/commit?container=c&repo=r&tag=t HTTP/1.1");
        /* a JSON body is labelled so; a bodyless POST carries no (form) Content-Type */
        ck_assert_str_eq(f->content_types[2], " application/json");
        ck_assert_str_eq(f->content_types[7], "");
        fake_finish(f);
}
END_TEST

START_TEST(test_timeout) {
        static const char *const script[] = { PING_OK, HANG, PING_OK, NULL };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        ck_assert_int_eq(sbx_docker_request(d, "GET", "/info", NULL, 1, NULL, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "did not answer GET /info within 1 s");
        sbx_error_free(&e);
        /* the handle recovers with a new connection */
        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        d = sbx_docker_free(d);
        ck_assert_uint_eq(f->accepts, 2);
        fake_finish(f);
}
END_TEST

/* An operation's budget bounds its calls in all: a hung call ends when it runs out,
 * and a call after that fails at once, without a connection. */
START_TEST(test_deadline) {
        static const char *const script[] = { PING_OK, HANG, NULL };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        SbxError e = SBX_ERROR_NULL;
        unsigned long n;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        sbx_docker_set_deadline(d, 1);
        ck_assert_int_eq(sbx_docker_request(d, "GET", "/info", NULL, 30, NULL, &e), -EHOSTDOWN);
        /* the caller waited for the operation: its budget is named, not the request's rest */
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "did not finish within the operation's 1 s (no answer to GET /info)");
        sbx_error_free(&e);
        n = sbx_docker_n_requests(d);
        ck_assert_uint_eq(n, 2);
        ck_assert_int_eq(sbx_docker_request(d, "GET", "/info", NULL, 30, NULL, &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "did not finish within the operation's 1 s");
        sbx_error_free(&e);
        ck_assert_uint_eq(sbx_docker_n_requests(d), n);
        d = sbx_docker_free(d);
        fake_finish(f);
}
END_TEST

/* A stop's operation has its timeout and a margin, never less than any other's. */
START_TEST(test_stop_budget) {
        ck_assert_uint_eq(sbx_docker_stop_budget(20, 10), 20);
        ck_assert_uint_eq(sbx_docker_stop_budget(20, 0), 20);
        ck_assert_uint_eq(sbx_docker_stop_budget(6, 10), 10 + SBX_DOCKER_STOP_MARGIN_S);
        ck_assert_uint_eq(sbx_docker_stop_budget(20, 60), 60 + SBX_DOCKER_STOP_MARGIN_S);
        ck_assert_uint_le(sbx_docker_stop_budget(SBX_DOCKER_TIMEOUT_DEFAULT_S, 10), 20);
}
END_TEST

/* A POST whose answer was lost is not sent again (Docker may have done it): it is
 * BackendUnavailable, and Docker saw it once. A read is retried on a fresh
 * connection as before. */
START_TEST(test_post_not_resent) {
        static const char *const script[] = {
                PING_OK,
                DROP,                           /* the GET's answer lost: sent again */
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
                DROP,                           /* the rename's */
                "HTTP/1.1 204 No Content\r\n\r\n",
                NULL,
        };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        SbxError e = SBX_ERROR_NULL;
        json_object *j = NULL;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        ck_assert_int_eq(sbx_docker_info(d, &j, &e), 0);
        json_object_put(j);
        ck_assert_int_eq(sbx_docker_container_rename(d, "x", "y", &e), -EHOSTDOWN);
        assert_error(&e, SBX_ERROR_BACKEND_UNAVAILABLE, "lost Docker's answer to POST /containers/x/rename at unix://");
        ck_assert_ptr_nonnull(strstr(e.message, "(not sent again: Docker may have done it)"));
        sbx_error_free(&e);
        /* the next one is answered: the 204 was not taken by a second rename */
        ck_assert_int_eq(sbx_docker_container_rename(d, "x", "y", &e), 0);
        d = sbx_docker_free(d);
        ck_assert_uint_eq(f->n_requests, 5);
        ck_assert_str_eq(f->requests[1], "GET /v1.41/info HTTP/1.1");
        ck_assert_str_eq(f->requests[2], "GET /v1.41/info HTTP/1.1");
        ck_assert_str_eq(f->requests[3], "POST /v1.41/containers/x/rename?name=y HTTP/1.1");
        ck_assert_str_eq(f->requests[4], "POST /v1.41/containers/x/rename?name=y HTTP/1.1");
        ck_assert_uint_ne(f->conn_of[3], f->conn_of[4]);
        fake_finish(f);
}
END_TEST

#define GARBAGE_200 "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\ngar\x01" "bage"
#define NO_CONTENT "HTTP/1.1 204 No Content\r\n\r\n"

/* Every state change checks Docker's answer: the status Docker answers it with and
 * the body's shape; anything else is BackendError naming the request and what came. */
START_TEST(test_state_change_answers) {
        static const char *const script[] = {
                PING_OK,
                GARBAGE_200,                                            /* start */
                GARBAGE_200,                                            /* stop */
                GARBAGE_200,                                            /* remove */
                GARBAGE_200,                                            /* rename */
                "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",         /* start: 200, no body */
                NO_CONTENT,                                             /* image remove */
                "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"Id\":\"abc\"}", /* create: 200 */
                "HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\n[\"v\"]",   /* volume create */
                "HTTP/1.1 201 Created\r\nContent-Length: 14\r\n\r\n{\"Name\":\"w\"}\r\n",
                "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{\"Id\":\"e\"}", /* exec create */
                /* what Docker answers */
                "HTTP/1.1 304 Not Modified\r\n\r\n",
                NO_CONTENT,
                NO_CONTENT,
                NO_CONTENT,
                "HTTP/1.1 200 OK\r\nContent-Length: 25\r\n\r\n[{\"Deleted\":\"sha256:1\"}]\n",
                "HTTP/1.1 201 Created\r\nContent-Length: 26\r\n\r\n{\"Id\":\"abc\",\"Warnings\":[]}",
                "HTTP/1.1 201 Created\r\nContent-Length: 12\r\n\r\n{\"Name\":\"v\"}",
                "HTTP/1.1 201 Created\r\nContent-Length: 10\r\n\r\n{\"Id\":\"e\"}",
                NULL,
        };
        static char *const argv[] = { (char *) "true", NULL };
        const SbxExecConfig exec = { .argv = argv, .user = "1000" };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        _cleanup_(json_object_putp) json_object *config = json_object_new_object(), *opts = json_object_new_object();
        SbxError e = SBX_ERROR_NULL;
        char *id = NULL;

        ck_assert_int_eq(sbx_docker_ping(d, &e), 0);
        ck_assert_int_eq(sbx_docker_container_start(d, "x", &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "Docker answered POST /containers/x/start with HTTP 200 and 8 "
                     "bytes (\"gar?bage\"), not 204 or 304 without a body");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_stop(d, "x", 3, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "POST /containers/x/stop?t=3 with HTTP 200");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_remove(d, "x", &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "DELETE /containers/x?force=1&v=1 with HTTP 200 and 8 bytes "
                     "(\"gar?bage\"), not 204 without a body");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_rename(d, "x", "y", &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "POST /containers/x/rename?name=y with HTTP 200");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_start(d, "x", &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "with HTTP 200 and no body, not 204 or 304");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_image_remove(d, "i", false, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "DELETE /images/i with HTTP 204 and no body, not 200 with a JSON array");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_create(d, "n", config, &id, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "POST /containers/create?name=n with HTTP 200 and 12 bytes "
                     "(\"{\"Id\":\"abc\"}\"), not 201 with a JSON object");
        ck_assert_ptr_null(id);
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_volume_create_local(d, "v", opts, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "POST /volumes/create with HTTP 201");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_volume_create_local(d, "v", opts, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "for \"v\" with the volume \"w\"");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_exec_create(d, "x", &exec, &id, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "POST /containers/x/exec with HTTP 200");
        ck_assert_ptr_null(id);
        sbx_error_free(&e);

        ck_assert_int_eq(sbx_docker_container_start(d, "x", &e), 1);
        ck_assert_int_eq(sbx_docker_container_stop(d, "x", 3, &e), 0);
        ck_assert_int_eq(sbx_docker_container_remove(d, "x", &e), 0);
        ck_assert_int_eq(sbx_docker_container_rename(d, "x", "y", &e), 0);
        ck_assert_int_eq(sbx_docker_image_remove(d, "i", false, &e), 0);
        ck_assert_int_eq(sbx_docker_container_create(d, "n", config, &id, &e), 0);
        ck_assert_str_eq(id, "abc");
        free(TAKE_PTR(id));
        ck_assert_int_eq(sbx_docker_volume_create_local(d, "v", opts, &e), 0);
        ck_assert_int_eq(sbx_docker_exec_create(d, "x", &exec, &id, &e), 0);
        ck_assert_str_eq(id, "e");
        free(id);
        ck_assert(!sbx_error_is_set(&e));
        d = sbx_docker_free(d);
        ck_assert_uint_eq(f->n_requests, 19);
        fake_finish(f);
}
END_TEST

START_TEST(test_body_cap) {
        static const char *const script[] = { PING_OK, HUGE_LENGTH, HUGE_CLOSE, NULL };
        Fake *f = fake_start(script);
        SbxDocker *d = client(f);
        json_object *j = NULL;
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_docker_container_list(d, NULL, &j, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "exceeds 16777216 bytes");
        sbx_error_free(&e);
        ck_assert_int_eq(sbx_docker_container_list(d, NULL, &j, &e), -EPROTO);
        assert_error(&e, SBX_ERROR_BACKEND_ERROR, "exceeds 16777216 bytes");
        sbx_error_free(&e);
        ck_assert_ptr_null(j);
        d = sbx_docker_free(d);
        ck_assert_str_eq(f->requests[1], "GET /v1.41/containers/json?all=1 HTTP/1.1");
        fake_finish(f);
}
END_TEST

/* Runs in the parent around all tests, also when one failed. */
typedef struct Follower {
        SbxDocker *d;
        SbxDockerStop stop;
        atomic_bool got_data;
        int r;
        SbxError e;
} Follower;

static bool follower_data(const char *data, size_t size, void *userdata) {
        atomic_store(&((Follower *) userdata)->got_data, true);
        return true;
}

static void *follower_run(void *userdata) {
        Follower *fl = userdata;

        fl->r = sbx_docker_get_stream(fl->d, "/events", follower_data, NULL, fl, &fl->stop, &fl->e);
        return NULL;
}

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A stream that waits for Docker ends as soon as a stop is asked for from another
 * thread, not at its next look a second later (the daemon's exit waits for it). */
START_TEST(test_stream_stop) {
        /* the stream has a connection of its own: the fake serves one at a time */
        static const char *const script[] = {
                "HTTP/1.1 200 OK\r\nApi-Version: 1.41\r\nConnection: close\r\nContent-Length: 2\r\n\r\nOK",
                STREAM, NULL };
        Fake *f = fake_start(script);
        Follower fl = { .d = client(f), .stop = SBX_DOCKER_STOP_INIT };
        pthread_t thread;
        double t0;

        ck_assert_int_eq(pthread_create(&thread, NULL, follower_run, &fl), 0);
        for (int i = 0; i < 500 && !atomic_load(&fl.got_data); i++)
                usleep(10000);
        ck_assert(atomic_load(&fl.got_data));
        usleep(10000);                  /* inside the wait for more */
        t0 = now_s();
        sbx_docker_stop(&fl.stop);
        ck_assert_int_eq(pthread_join(thread, NULL), 0);
        ck_assert_msg(now_s() - t0 < 0.06, "the stream ended %.3f s after the stop", now_s() - t0);
        ck_assert_int_eq(fl.r, 0);
        ck_assert(!sbx_error_is_set(&fl.e));
        /* asked for before the stream begins: it ends at once too */
        t0 = now_s();
        ck_assert_int_eq(sbx_docker_get_stream(fl.d, "/events", follower_data, NULL, &fl, &fl.stop, &fl.e), 0);
        ck_assert(now_s() - t0 < 0.5);
        fl.d = sbx_docker_free(fl.d);
        fake_finish(f);
}
END_TEST

static void make_fake_dir(void) {
        strcpy(fake_dir, "/tmp/sbx-test-fake.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(fake_dir));
}

static void remove_fake_dir(void) {
        DIR *dir = opendir(fake_dir);
        struct dirent *de;

        if (!dir)
                return;
        while ((de = readdir(dir)))
                if (de->d_name[0] != '.')
                        (void) unlinkat(dirfd(dir), de->d_name, 0);
        closedir(dir);
        (void) rmdir(fake_dir);
}

static void global_setup(void) {
        ck_assert_int_eq(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
}

static void global_teardown(void) {
        curl_global_cleanup();
}

static Suite *make_suite(void) {
        Suite *s = suite_create("docker-http");
        TCase *tc = tcase_create("client");

        tcase_add_unchecked_fixture(tc, make_fake_dir, remove_fake_dir);
        tcase_add_checked_fixture(tc, global_setup, global_teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_host_urls);
        tcase_add_test(tc, test_unreachable);
        tcase_add_test(tc, test_persistent_versioned_escaped);
        tcase_add_test(tc, test_ping_versions);
        tcase_add_test(tc, test_status_mapping);
        tcase_add_test(tc, test_timeout);
        tcase_add_test(tc, test_deadline);
        tcase_add_test(tc, test_stop_budget);
        tcase_add_test(tc, test_post_not_resent);
        tcase_add_test(tc, test_state_change_answers);
        tcase_add_test(tc, test_body_cap);
        tcase_add_test(tc, test_stream_stop);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
