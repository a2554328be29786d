/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "docker-exec.h"
#include "docker-tls.h"
#include "time-util.h"

/* A response head longer than this is not Docker's. */
#define HEAD_MAX 8192U
/* Nor is an error body. */
#define ERROR_BODY_MAX 65536U

static json_object *string_array(char *const *strv) {
        json_object *a = json_object_new_array();

        for (char *const *s = strv; a && s && *s; s++) {
                json_object *v = json_object_new_string(*s);

                if (!v || json_object_array_add(a, v) < 0) {
                        json_object_put(v);
                        json_object_put(a);
                        return NULL;
                }
        }
        return a;
}

static int add(json_object *o, const char *key, json_object *v) {
        if (!v || json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int exec_body(const SbxExecConfig *c, json_object **ret) {
        _cleanup_(json_object_putp) json_object *b = json_object_new_object();

        if (!b)
                return -ENOMEM;
        if (add(b, "Cmd", string_array(c->argv)) < 0 ||
            add(b, "Env", string_array(c->env)) < 0 ||
            add(b, "User", json_object_new_string(c->user)) < 0 ||
            add(b, "Privileged", json_object_new_boolean(false)) < 0 ||
            add(b, "Tty", json_object_new_boolean(c->tty)) < 0 ||
            add(b, "AttachStdin", json_object_new_boolean(c->attach_stdin)) < 0 ||
            add(b, "AttachStdout", json_object_new_boolean(true)) < 0 ||
            add(b, "AttachStderr", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        if (c->working_dir && add(b, "WorkingDir", json_object_new_string(c->working_dir)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(b);
        return 0;
}

static int escaped_path(SbxDocker *d, const char *prefix, const char *id, const char *suffix, char **ret,
                        SbxError *error) {
        _cleanup_free_ char *e = NULL;
        int r;

        if (isempty(id))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "exec: an empty id");
        if ((r = sbx_docker_escape(d, id, &e)) < 0)
                return r;
        return asprintf(ret, "%s%s%s", prefix, e, suffix) < 0 ? -ENOMEM : 0;
}

int sbx_docker_exec_create(SbxDocker *d, const char *container, const SbxExecConfig *c, char **ret_id,
                           SbxError *error) {
        _cleanup_(json_object_putp) json_object *body = NULL, *answer = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        if (!c || !c->argv || !c->argv[0] || !c->user || !ret_id)
                return -EINVAL;
        if ((r = escaped_path(d, "/containers/", container, "/exec", &path, error)) < 0 ||
            (r = exec_body(c, &body)) < 0)
                return r;
        r = sbx_docker_request_expect(d, "POST", path, body, SBX_DOCKER_EXEC_CALL_TIMEOUT_S, 201, json_type_object,
                                      &answer, error);
        if (r < 0)
                return r;
        return sbx_docker_json_string(answer, "Id", ret_id, error);
}

static int send_all(int fd, const char *p, size_t n, uint64_t deadline_ms) {
        while (n > 0) {
                ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);

                if (k < 0 && errno == EAGAIN) {
                        int r = sbx_fd_wait(fd, POLLOUT, deadline_ms);
                        if (r <= 0)
                                return r < 0 ? r : -ETIMEDOUT;
                        continue;
                }
                if (k < 0 && errno != EINTR)
                        return -errno;
                if (k > 0) {
                        p += k;
                        n -= (size_t) k;
                }
        }
        return 0;
}

static int connect_unix(const char *path, int *ret) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        /* A local stream socket connects at once or not at all. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        *ret = TAKE_FD(fd);
        return 0;
}

/* Reads the response head, and nothing beyond it: peeked first, then consumed
 * up to its blank line, so the stream's first byte stays in the socket. */
static int read_head(int fd, uint64_t deadline_ms, char *buf, size_t size, size_t *ret_len) {
        for (;;) {
                ssize_t k = recv(fd, buf, size - 1, MSG_PEEK | MSG_DONTWAIT);
                char *end;
                int r;

                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (k == 0)
                        return -ECONNRESET;
                if (k > 0) {
                        buf[k] = 0;
                        end = strstr(buf, "\r\n\r\n");
                        if (end) {
                                size_t len = (size_t) (end - buf) + 4;
                                if (recv(fd, buf, len, MSG_DONTWAIT) != (ssize_t) len)
                                        return -EIO;
                                buf[len] = 0;
                                *ret_len = len;
                                return 0;
                        }
                        if ((size_t) k >= size - 1)
                                return -EMSGSIZE;
                }
                /* Not all of it yet: wait for more than what is there. */
                r = sbx_fd_wait(fd, POLLIN, deadline_ms);
                if (r <= 0)
                        return r < 0 ? r : -ETIMEDOUT;
                if (k > 0) {
                        /* POLLIN stays set while the peeked bytes are unread. */
                        struct timespec ts = { .tv_nsec = 1000000 };
                        nanosleep(&ts, NULL);
                }
        }
}

static long head_status(const char *head) {
        int status;

        if (sscanf(head, "HTTP/1.%*[01] %3d", &status) != 1)
                return -1;
        return status;
}

static size_t head_content_length(const char *head) {
        const char *p = strcasestr(head, "\r\nContent-Length:");

        return p ? strtoul(p + strlen("\r\nContent-Length:"), NULL, 10) : 0;
}

/* A refusal: the body (bounded) becomes Docker's message. */
static int refusal(int fd, long status, const char *head, uint64_t deadline_ms, SbxError *error) {
        size_t want = MIN(head_content_length(head), (size_t) ERROR_BODY_MAX), have = 0;
        _cleanup_free_ char *body = malloc(want + 1);

        if (!body)
                return -ENOMEM;
        while (have < want && sbx_fd_wait(fd, POLLIN, deadline_ms) > 0) {
                ssize_t k = recv(fd, body + have, want - have, MSG_DONTWAIT);
                if (k <= 0 && !(k < 0 && (errno == EAGAIN || errno == EINTR)))
                        break;
                if (k > 0)
                        have += (size_t) k;
        }
        return sbx_docker_http_error(status, body, have, error);
}

int sbx_docker_exec_start(SbxDocker *d, const char *exec_id, bool tty, int *ret_fd, SbxError *error) {
        _cleanup_free_ char *path = NULL, *request = NULL;
        _cleanup_close_ int fd = -EBADF;
        uint64_t deadline = sbx_now_monotonic_us() / 1000U + SBX_DOCKER_EXEC_CALL_TIMEOUT_S * 1000U;
        char head[HEAD_MAX];
        const char *body = tty ? "{\"Detach\":false,\"Tty\":true}" : "{\"Detach\":false,\"Tty\":false}";
        size_t len;
        long status;
        int r;

        if (!ret_fd)
                return -EINVAL;
        if ((r = sbx_docker_negotiate(d, error)) < 0 ||
            (r = escaped_path(d, "/exec/", exec_id, "/start", &path, error)) < 0)
                return r;
        if (asprintf(&request,
                     "POST /v%s%s HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\n"
                     "Connection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: %zu\r\n\r\n%s",
                     sbx_docker_api_version(d), path, strlen(body), body) < 0)
                return -ENOMEM;

        /* A remote engine's stream is a local descriptor too (docker-tls.h). */
        if (sbx_docker_remote(d) &&
            (r = sbx_docker_tls_connect(sbx_docker_tcp_host(d), sbx_docker_tcp_port(d), deadline, &fd, NULL,
                                        error)) < 0)
                return r;
        if (!sbx_docker_remote(d))
                r = connect_unix(sbx_docker_socket_path(d), &fd);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "cannot reach Docker at %s: %s",
                                     sbx_docker_host(d), strerror(-r));
        r = send_all(fd, request, strlen(request), deadline);
        if (r >= 0)
                r = read_head(fd, deadline, head, sizeof head, &len);
        if (r == -ETIMEDOUT)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE,
                                     "Docker at %s did not start the exec within %u s", sbx_docker_host(d),
                                     SBX_DOCKER_EXEC_CALL_TIMEOUT_S);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "exec start at Docker %s failed: %s",
                                     sbx_docker_host(d), strerror(-r));

        status = head_status(head);
        if (status != 101 && status != 200)
                return status < 0 ? sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker: a malformed response head")
                                  : refusal(fd, status, head, deadline, error);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int sbx_docker_exec_inspect(SbxDocker *d, const char *exec_id, SbxExecState *ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_free_ char *path = NULL;
        json_object *v;
        int r;

        if (!ret)
                return -EINVAL;
        if ((r = escaped_path(d, "/exec/", exec_id, "/json", &path, error)) < 0 ||
            (r = sbx_docker_get_object(d, path, &j, error)) < 0)
                return r;
        *ret = (SbxExecState) {};
        if (!json_object_object_get_ex(j, "Running", &v) || !json_object_is_type(v, json_type_boolean))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker's exec state lacks \"Running\"");
        ret->running = json_object_get_boolean(v);
        if (json_object_object_get_ex(j, "ExitCode", &v) && json_object_is_type(v, json_type_int)) {
                ret->exited = !ret->running;
                ret->exit_code = (int) json_object_get_int64(v);
        }
        if (json_object_object_get_ex(j, "Pid", &v) && json_object_is_type(v, json_type_int))
                ret->pid = json_object_get_int64(v);
        return 0;
}

int sbx_docker_exec_wait(SbxDocker *d, const char *exec_id, int *ret_code, SbxError *error) {
        SbxExecState s;

        for (unsigned i = 0; i < 200; i++) {
                int r = sbx_docker_exec_inspect(d, exec_id, &s, error);

                if (r < 0)
                        return r;
                if (s.exited) {
                        *ret_code = s.exit_code;
                        return 0;
                }
                /* The stream can end a moment before Docker records the exit. */
                nanosleep(&(struct timespec) { .tv_nsec = 10 * 1000000 }, NULL);
        }
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker did not record the exec's exit");
}

int sbx_docker_exec_resize(SbxDocker *d, const char *exec_id, unsigned rows, unsigned cols, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        char suffix[64];
        int r;

        snprintf(suffix, sizeof suffix, "/resize?h=%u&w=%u", rows, cols);
        if ((r = escaped_path(d, "/exec/", exec_id, suffix, &path, error)) < 0)
                return r;
        r = sbx_docker_request(d, "POST", path, NULL, SBX_DOCKER_EXEC_CALL_TIMEOUT_S, NULL, error);
        return r < 0 ? r : 0;
}
