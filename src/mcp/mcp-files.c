/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* file_read and file_write: a tar stream of one file through CopyFromSandbox and
 * CopyToSandbox, which pack and unpack it in the sandbox as its owner (the service
 * filters what enters). As the Python module does (docs/python.md). */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "mcp-files.h"
#include "mcp-json.h"

#define BLOCK 512
#define READ_MAX (MCP_FILE_MAX + 64 * 1024)     /* the file and its headers */

/* ---- paths ----------------------------------------------------------------------- */

/* An absolute file path split into its directory and its name. */
static int split_path(const char *path, char **ret_dir, const char **ret_name, char **error) {
        const char *slash = strrchr(path, '/');

        if (path[0] != '/' || !slash || !slash[1] || streq(slash + 1, ".") || streq(slash + 1, ".."))
                return asprintf(error, "argument 'path': '%s' is not an absolute path of a file", path), -EINVAL;
        *ret_dir = slash == path ? strdup("/") : strndup(path, (size_t) (slash - path));
        if (!*ret_dir)
                return -ENOMEM;
        *ret_name = slash + 1;
        return 0;
}

/* ---- writing --------------------------------------------------------------------- */

/* width - 1 octal digits and a NUL (the values here always fit). */
static void put_octal(char *field, size_t width, uint64_t v) {
        for (size_t i = width - 1; i-- > 0; v >>= 3)
                field[i] = (char) ('0' + (v & 7));
        field[width - 1] = '\0';
}

static void header(char *h, const char *name, uint64_t size, unsigned mode, char type) {
        unsigned sum = 0;

        memset(h, 0, BLOCK);
        snprintf(h, 100, "%s", name);
        put_octal(h + 100, 8, mode);
        put_octal(h + 108, 8, 0);
        put_octal(h + 116, 8, 0);
        put_octal(h + 124, 12, size);
        put_octal(h + 136, 12, (uint64_t) time(NULL));
        h[156] = type;
        memcpy(h + 257, "ustar", 6);
        memcpy(h + 263, "00", 2);
        memset(h + 148, ' ', 8);
        for (size_t i = 0; i < BLOCK; i++)
                sum += (unsigned char) h[i];
        snprintf(h + 148, 8, "%06o", sum);
        h[155] = ' ';
}

static int write_all(int fd, const void *data, size_t len) {
        const char *p = data;

        while (len > 0) {
                ssize_t n = write(fd, p, len);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

static int write_padded(int fd, const void *data, size_t len) {
        static const char zeros[BLOCK];
        int r = write_all(fd, data, len);

        if (r >= 0 && len % BLOCK)
                r = write_all(fd, zeros, BLOCK - len % BLOCK);
        return r;
}

/* A tar stream of the one file `name` in a memfd, read from its start. A name
 * beyond ustar's 100 bytes goes in a pax header. */
static int tar_file(const char *name, const void *data, size_t size, unsigned mode, int *ret_fd) {
        _cleanup_close_ int fd = memfd_create("xagent-mcp-write", MFD_CLOEXEC);
        char h[BLOCK], end[2 * BLOCK] = {};
        int r;

        if (fd < 0)
                return -errno;
        if (strlen(name) >= 100) {
                _cleanup_free_ char *record = NULL;
                size_t len = strlen(name) + strlen(" path=\n"), digits = 1;

                /* The record's length counts its own digits. */
                while (snprintf(NULL, 0, "%zu", len + digits) > (int) digits)
                        digits++;
                if (asprintf(&record, "%zu path=%s\n", len + digits, name) < 0)
                        return -ENOMEM;
                header(h, "PaxHeader", strlen(record), 0644, 'x');
                if ((r = write_all(fd, h, BLOCK)) < 0 || (r = write_padded(fd, record, strlen(record))) < 0)
                        return r;
        }
        header(h, name, size, mode, '0');
        if ((r = write_all(fd, h, BLOCK)) < 0 || (r = write_padded(fd, data, size)) < 0 ||
            (r = write_all(fd, end, sizeof end)) < 0)
                return r;
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int content_bytes(Call *c, void **ret, size_t *ret_len, char **error) {
        const char *content = NULL, *encoding = "text";

        if (arg_string(c->args, "content", true, &content, error) < 0 ||
            arg_string(c->args, "encoding", false, &encoding, error) < 0)
                return -EINVAL;
        if (streq(encoding, "base64")) {
                if (base64_decode(content, ret, ret_len) < 0)
                        return asprintf(error, "argument 'content': not base64"), -EINVAL;
        } else if (streq(encoding, "text")) {
                *ret = strdup(content);
                if (!*ret)
                        return -ENOMEM;
                *ret_len = strlen(content);
        } else
                return asprintf(error, "argument 'encoding': text or base64"), -EINVAL;
        if (*ret_len > MCP_FILE_MAX) {
                free(*ret);
                return asprintf(error, "argument 'content': larger than %zu bytes", MCP_FILE_MAX), -EINVAL;
        }
        return 0;
}

int file_write_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL, *dir = NULL;
        _cleanup_free_ void *data = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *sandbox = NULL, *path = NULL, *name = NULL;
        uint64_t mode = 0644;
        size_t size = 0;
        int r;

        if (arg_string(c->args, "sandbox", true, &sandbox, &error) < 0 ||
            arg_string(c->args, "path", true, &path, &error) < 0 ||
            arg_uint(c->args, "mode", 0777, &mode, &error) < 0 ||
            (r = split_path(path, &dir, &name, &error)) == -EINVAL ||
            (r = content_bytes(c, &data, &size, &error)) == -EINVAL) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "invalid arguments");
                return 0;
        }
        if (r < 0)
                return r;
        r = tar_file(name, data, size, (unsigned) mode, &fd);
        if (r < 0)
                return r;
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH, MCP_BUS_MANAGER,
                                           "CopyToSandbox");
        if (r >= 0)
                r = sd_bus_message_append(m, "ssha{sv}", sandbox, dir, fd, 0);
        if (r < 0) {
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        return call_send_async(c, m);
}

int file_write_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        const char *path = NULL, *content = NULL, *encoding = "text";
        char *ignored = NULL;
        json_object *o = json_object_new_object();
        size_t size;

        (void) arg_string(c->args, "path", false, &path, &ignored);
        (void) arg_string(c->args, "content", false, &content, &ignored);
        (void) arg_string(c->args, "encoding", false, &encoding, &ignored);
        free(ignored);
        size = content ? strlen(content) : 0;
        if (content && streq(encoding, "base64")) {
                void *data = NULL;

                if (base64_decode(content, &data, &size) < 0)
                        size = 0;
                free(data);
        }
        if (!o || sbx_json_put(o, "path", json_object_new_string(path ?: "")) < 0 ||
            sbx_json_put(o, "size", json_object_new_int64((int64_t) size)) < 0)
                return json_object_put(o), -ENOMEM;
        *ret = o;
        return 0;
}

/* ---- reading --------------------------------------------------------------------- */

typedef struct FileRead {
        Call *call;
        int fd;
        sd_event_source *source;
        char *data;
        size_t len;
        bool eof, replied, too_big;
} FileRead;

static void file_read_free(void *p) {
        FileRead *f = p;

        if (!f)
                return;
        sd_event_source_disable_unref(f->source);
        safe_close(f->fd);
        free(f->data);
        free(f);
}

static uint64_t tar_number(const unsigned char *field, size_t width) {
        uint64_t v = 0;

        if (field[0] & 0x80) {          /* base-256 */
                for (size_t i = 1; i < width; i++)
                        v = v << 8 | field[i];
                return v;
        }
        for (size_t i = 0; i < width && field[i] >= '0' && field[i] <= '7'; i++)
                v = v * 8 + (uint64_t) (field[i] - '0');
        return v;
}

/* The first entry of the stream: a regular file's bytes, or why not. */
static int tar_first_file(const char *tar, size_t len, const char **ret, size_t *ret_size, const char **why) {
        static const char zero[BLOCK];

        for (size_t off = 0; off + BLOCK <= len;) {
                const unsigned char *h = (const unsigned char *) tar + off;
                uint64_t size = tar_number(h + 124, 12);
                char type = (char) h[156];

                if (memcmp(h, zero, BLOCK) == 0)
                        break;
                if (size > len - off - BLOCK)
                        return *why = "the archive is cut short", -EBADMSG;
                if (strchr("xgLK", type)) {     /* headers of the next entry */
                        off += BLOCK + (size + BLOCK - 1) / BLOCK * BLOCK;
                        continue;
                }
                if (type == '0' || type == '\0' || type == '7') {
                        *ret = tar + off + BLOCK;
                        *ret_size = size;
                        return 0;
                }
                *why = type == '5' ? "is a directory" : type == '2' ? "is a symbolic link" : "is not a regular file";
                return -EISDIR;
        }
        return *why = "nothing came back", -ENOENT;
}

static void file_read_finish(FileRead *f) {
        Call *c = f->call;
        const char *path = NULL, *encoding = "text", *why = NULL, *data;
        _cleanup_free_ char *message = NULL;
        char *ignored = NULL;
        json_object *o, *content;
        size_t size;

        (void) arg_string(c->args, "path", false, &path, &ignored);
        (void) arg_string(c->args, "encoding", false, &encoding, &ignored);
        free(ignored);
        if (f->too_big) {
                (void) asprintf(&message, "path: '%s' is larger than %zu bytes", path, MCP_FILE_MAX);
                call_fail(c, "org.freedesktop.DBus.Error.LimitsExceeded", message ?: "too large");
                return;
        }
        if (tar_first_file(f->data, f->len, &data, &size, &why) < 0) {
                (void) asprintf(&message, "path: '%s' %s", path, why);
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", message ?: why);
                return;
        }
        if (streq(encoding, "base64")) {
                _cleanup_free_ char *b = base64_encode(data, size);

                content = b ? json_object_new_string(b) : NULL;
        } else
                content = json_string_from_bytes(data, size, NULL);
        o = json_object_new_object();
        if (!o || sbx_json_put(o, "path", json_object_new_string(path)) < 0 ||
            sbx_json_put(o, "size", json_object_new_int64((int64_t) size)) < 0 ||
            sbx_json_put(o, "encoding", json_object_new_string(streq(encoding, "base64") ? "base64" : "text")) < 0 ||
            sbx_json_put(o, "content", content) < 0) {
                json_object_put(o);
                call_fail(c, "org.freedesktop.DBus.Error.NoMemory", "out of memory");
                return;
        }
        call_finish(c, o);
}

static int on_tar(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        FileRead *f = userdata;
        ssize_t n;

        if (f->len == READ_MAX) {       /* one byte beyond what may come: too big */
                f->too_big = true;
                n = 0;
        } else
                n = read(fd, f->data + f->len, READ_MAX - f->len);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n > 0) {
                f->len += (size_t) n;
                return 0;
        }
        /* End (or too much: closing makes the service's copy fail). */
        f->source = sd_event_source_disable_unref(f->source);
        f->fd = safe_close(f->fd);
        f->eof = true;
        if (f->replied)
                file_read_finish(f);
        return 0;
}

int file_read_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        FileRead *f = c->state;

        f->replied = true;
        if (f->eof)
                file_read_finish(f);
        return 1;       /* else the end of the stream finishes it */
}

int file_read_on_error(Call *c, const sd_bus_error *e, json_object **ret) {
        FileRead *f = c->state;

        if (!f->too_big)
                return 0;
        f->replied = true;
        file_read_finish(f);    /* our own refusal, not the service's EPIPE */
        return 2;
}

int file_read_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        const char *sandbox = NULL, *path = NULL, *encoding = "text";
        FileRead *f;
        int p[2], r;

        if (arg_string(c->args, "sandbox", true, &sandbox, &error) < 0 ||
            arg_string(c->args, "path", true, &path, &error) < 0 ||
            arg_string(c->args, "encoding", false, &encoding, &error) < 0 ||
            (!streq(encoding, "text") && !streq(encoding, "base64") &&
             asprintf(&error, "argument 'encoding': text or base64") >= 0) ||
            (path[0] != '/' && asprintf(&error, "argument 'path': '%s' is not absolute", path) >= 0)) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", error ?: "invalid arguments");
                return 0;
        }
        f = new0(FileRead, 1);
        if (!f)
                return -ENOMEM;
        *f = (FileRead) { .call = c, .fd = -EBADF };
        c->state = f;
        c->free_state = file_read_free;
        f->data = malloc(READ_MAX);
        if (!f->data)
                return -ENOMEM;
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        f->fd = p[0];
        (void) fcntl(f->fd, F_SETFL, O_NONBLOCK);
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH, MCP_BUS_MANAGER,
                                           "CopyFromSandbox");
        if (r >= 0)
                r = sd_bus_message_append(m, "ssha{sv}", sandbox, path, p[1], 0);
        safe_close(p[1]);
        if (r >= 0)
                r = sd_event_add_io(c->server->event, &f->source, f->fd, EPOLLIN, on_tar, f);
        if (r < 0) {
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        return call_send_async(c, m);
}
