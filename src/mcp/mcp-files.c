/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* file_read, file_write, file_list, file_remove: the service's ReadFile, WriteFile,
 * ListFiles and RemoveFile, which its own program in the sandbox does as the
 * sandbox's owner (docs/api.md). Content is text (UTF-8; undecodable bytes U+FFFD on
 * reading) or base64, at most MCP_FILE_MAX bytes. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-files.h"
#include "mcp-json.h"

#define INVALID_ARGS "org.freedesktop.DBus.Error.InvalidArgs"

static int fail_args(Call *c, const char *error) {
        call_fail(c, INVALID_ARGS, error ?: "invalid arguments");
        return 0;
}

/* METHOD(s sandbox, s path, …) of the Manager, its arguments after the path left to
 * the caller. */
static int new_file_call(Call *c, const char *method, sd_bus_message **ret, char **error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        const char *sandbox = NULL, *path = NULL;
        int r;

        if (arg_string(c->args, "sandbox", true, &sandbox, error) < 0 ||
            arg_string(c->args, "path", true, &path, error) < 0)
                return -EINVAL;
        r = sd_bus_message_new_method_call(c->server->bus, &m, MCP_BUS_SERVICE, MCP_BUS_MANAGER_PATH,
                                           MCP_BUS_MANAGER, method);
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", sandbox, path);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int send_or_fail(Call *c, sd_bus_message *m, int r, const char *error) {
        if (r == -EINVAL)
                return fail_args(c, error);
        if (r < 0) {
                call_fail_errno(c, "building the bus call", r);
                return 0;
        }
        return call_send_async(c, m);
}

static const char *path_arg(Call *c) {
        _cleanup_free_ char *ignored = NULL;
        const char *path = NULL;

        (void) arg_string(c->args, "path", false, &path, &ignored);
        return path ?: "";
}

/* ---- file_read -------------------------------------------------------------------- */

int file_read_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        const char *encoding = "text";
        int r;

        if (arg_string(c->args, "encoding", false, &encoding, &error) < 0 ||
            (!streq(encoding, "text") && !streq(encoding, "base64")))
                return fail_args(c, error ?: "argument 'encoding': text or base64");
        r = new_file_call(c, "ReadFile", &m, &error);
        /* One byte more than the tool gives: a larger file is refused, not cut. */
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 1, "length", "t", (uint64_t) MCP_FILE_MAX + 1);
        return send_or_fail(c, m, r, error);
}

static int read_info_size(sd_bus_message *reply, uint64_t *ret) {
        const char *key;
        int r;

        if ((r = sd_bus_message_enter_container(reply, 'a', "{sv}")) < 0)
                return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                if ((r = sd_bus_message_read(reply, "s", &key)) < 0)
                        return r;
                if (streq(key, "size"))
                        r = sd_bus_message_read(reply, "v", "t", ret);
                else
                        r = sd_bus_message_skip(reply, "v");
                if (r < 0 || (r = sd_bus_message_exit_container(reply)) < 0)
                        return r;
        }
        if (r < 0)
                return r;
        return sd_bus_message_exit_container(reply);
}

int file_read_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_free_ char *error = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL, *content = NULL;
        const char *encoding = "text";
        const void *data;
        size_t n;
        uint64_t size = 0;
        int r;

        (void) arg_string(c->args, "encoding", false, &encoding, &error);
        if ((r = sd_bus_message_read_array(reply, 'y', &data, &n)) < 0 || (r = read_info_size(reply, &size)) < 0)
                return r;
        if (n > MCP_FILE_MAX) {
                char message[128];

                snprintf(message, sizeof message, "'%s' is larger than %zu bytes, the limit of file_read",
                         path_arg(c), MCP_FILE_MAX);
                call_fail(c, "org.freedesktop.DBus.Error.LimitsExceeded", message);
                return 1;               /* answered */
        }
        if (streq(encoding, "base64")) {
                _cleanup_free_ char *b64 = base64_encode(data, n);
                content = b64 ? json_object_new_string(b64) : NULL;
        } else
                content = json_string_from_bytes(data, n, NULL);
        o = json_object_new_object();
        if (!o || !content || sbx_json_put(o, "path", json_object_new_string(path_arg(c))) < 0 ||
            sbx_json_put(o, "size", json_object_new_int64((int64_t) size)) < 0 ||
            sbx_json_put(o, "encoding", json_object_new_string(encoding)) < 0 ||
            sbx_json_put(o, "content", TAKE_PTR(content)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- file_write ------------------------------------------------------------------- */

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
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ void *data = NULL;
        uint64_t mode = 0644;
        size_t n = 0;
        int r;

        if ((r = content_bytes(c, &data, &n, &error)) < 0 || (r = arg_uint(c->args, "mode", 0777, &mode, &error)) < 0)
                return r == -EINVAL ? fail_args(c, error) : r;
        r = new_file_call(c, "WriteFile", &m, &error);
        if (r >= 0)
                r = sd_bus_message_append_array(m, 'y', data, n);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 1, "mode", "u", (uint32_t) mode);
        return send_or_fail(c, m, r, error);
}

int file_write_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_free_ char *error = NULL;
        _cleanup_free_ void *data = NULL;
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        size_t n = 0;

        (void) content_bytes(c, &data, &n, &error);
        if (!o || sbx_json_put(o, "path", json_object_new_string(path_arg(c))) < 0 ||
            sbx_json_put(o, "size", json_object_new_int64((int64_t) n)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- file_list -------------------------------------------------------------------- */

int file_list_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        uint64_t depth = 1, limit = 1000;
        int r;

        if (arg_uint(c->args, "depth", 32, &depth, &error) < 0 || arg_uint(c->args, "limit", 100000, &limit, &error) < 0)
                return fail_args(c, error);
        if (depth == 0 || limit == 0)
                return fail_args(c, depth == 0 ? "argument 'depth': at least 1" : "argument 'limit': at least 1");
        r = new_file_call(c, "ListFiles", &m, &error);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 2, "depth", "u", (uint32_t) depth, "limit", "u",
                                          (uint32_t) limit);
        return send_or_fail(c, m, r, error);
}

int file_list_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *entries = json_object_new_array();
        const char *name, *kind;
        uint64_t size, mtime;
        uint32_t mode;
        int truncated, r;

        if (!o || !entries)
                return -ENOMEM;
        if ((r = sd_bus_message_enter_container(reply, 'a', "(ssttu)")) < 0)
                return r;
        while ((r = sd_bus_message_read(reply, "(ssttu)", &name, &kind, &size, &mtime, &mode)) > 0) {
                _cleanup_(json_object_putp) json_object *e = json_object_new_object();

                if (!e || sbx_json_put(e, "name", json_object_new_string(name)) < 0 ||
                    sbx_json_put(e, "kind", json_object_new_string(kind)) < 0 ||
                    sbx_json_put(e, "size", json_object_new_int64((int64_t) size)) < 0 ||
                    sbx_json_put(e, "mtime_us", json_object_new_int64((int64_t) mtime)) < 0 ||
                    sbx_json_put(e, "mode", json_object_new_int64(mode)) < 0 ||
                    sbx_json_push(entries, TAKE_PTR(e)) < 0)
                        return -ENOMEM;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(reply)) < 0 || (r = sd_bus_message_read(reply, "b", &truncated)) < 0)
                return r;
        if (sbx_json_put(o, "path", json_object_new_string(path_arg(c))) < 0 ||
            sbx_json_put(o, "entries", TAKE_PTR(entries)) < 0 ||
            sbx_json_put(o, "truncated", json_object_new_boolean(truncated)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}

/* ---- file_remove ------------------------------------------------------------------ */

int file_remove_start(Call *c) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *error = NULL;
        bool recursive = false;
        int r;

        if (arg_bool(c->args, "recursive", &recursive, &error) < 0)
                return fail_args(c, error);
        r = new_file_call(c, "RemoveFile", &m, &error);
        if (r >= 0)
                r = sd_bus_message_append(m, "a{sv}", 1, "recursive", "b", (int) recursive);
        return send_or_fail(c, m, r, error);
}

int file_remove_on_reply(Call *c, sd_bus_message *reply, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || sbx_json_put(o, "path", json_object_new_string(path_arg(c))) < 0 ||
            sbx_json_put(o, "removed", json_object_new_boolean(true)) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(o);
        return 0;
}
