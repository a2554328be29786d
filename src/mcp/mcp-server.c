/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The server's output (messages queued on a non-blocking stdout) and the tool calls
 * in flight: their results, errors, progress and bus calls. */

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syslog.h>
#include <unistd.h>

#include "bus-error.h"
#include "mcp-json.h"
#include "mcp-server.h"

/* ---- output ---------------------------------------------------------------------- */

static void stop_reading(Server *s, bool stop) {
        s->paused = stop;
        if (s->in_source && !s->in_eof)
                (void) sd_event_source_set_enabled(s->in_source, stop ? SD_EVENT_OFF : SD_EVENT_ON);
}

bool server_output_congested(const Server *s) {
        return s->out_len - s->out_off > MCP_OUT_HIGH;
}

int server_flush(Server *s) {
        while (s->out_off < s->out_len) {
                ssize_t n = write(STDOUT_FILENO, s->out_buf + s->out_off, s->out_len - s->out_off);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                break;
                        s->out_broken = true;
                        return log_error_errno(errno, "Writing to stdout failed: %m");
                }
                s->out_off += (size_t) n;
        }
        if (s->out_off == s->out_len)
                s->out_off = s->out_len = 0;
        /* None for a regular file: it took everything. */
        if (s->out_source)
                (void) sd_event_source_set_enabled(s->out_source, s->out_len ? SD_EVENT_ON : SD_EVENT_OFF);
        if (!server_output_congested(s))
                server_output_drained(s);
        return 0;
}

int server_on_stdout(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Server *s = userdata;

        if (server_flush(s) < 0)
                return sd_event_exit(s->event, 1);
        return 0;
}

int server_send(Server *s, json_object *message) {
        _cleanup_(json_object_putp) json_object *owned = message;
        const char *text;
        size_t len;

        if (!message)
                return log_oom();
        if (s->out_broken)
                return -EPIPE;
        text = json_object_to_json_string_length(message, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE,
                                                 &len);
        if (!text)
                return log_oom();
        if (s->out_len + len + 1 > s->out_alloc) {
                size_t want = MAX(s->out_alloc * 2, s->out_len + len + 1);
                char *b;

                /* Compact first: what was written is gone. */
                if (s->out_off) {
                        memmove(s->out_buf, s->out_buf + s->out_off, s->out_len - s->out_off);
                        s->out_len -= s->out_off;
                        s->out_off = 0;
                }
                if (s->out_len + len + 1 > s->out_alloc) {
                        b = realloc(s->out_buf, want);
                        if (!b)
                                return log_oom();
                        s->out_buf = b;
                        s->out_alloc = want;
                }
        }
        memcpy(s->out_buf + s->out_len, text, len);
        s->out_buf[s->out_len + len] = '\n';
        s->out_len += len + 1;
        if (server_flush(s) < 0)
                return -EPIPE;
        if (server_output_congested(s))
                stop_reading(s, true);
        return 0;
}

static json_object *new_message(json_object *id) {
        json_object *m = json_object_new_object();

        if (!m)
                return NULL;
        if (sbx_json_put(m, "jsonrpc", json_object_new_string("2.0")) < 0 ||
            (id && sbx_json_put(m, "id", json_object_get(id)) < 0))
                return json_object_put(m), NULL;
        return m;
}

int server_reply(Server *s, json_object *id, bool modern, json_object *result) {
        _cleanup_(json_object_putp) json_object *r = result, *m = new_message(id);

        if (!m || !r)
                return log_oom();
        if (modern && sbx_json_put(r, "resultType", json_object_new_string("complete")) < 0)
                return log_oom();
        if (sbx_json_put(m, "result", TAKE_PTR(r)) < 0)
                return log_oom();
        return server_send(s, TAKE_PTR(m));
}

int server_reply_error(Server *s, json_object *id, int code, const char *message, json_object *data) {
        _cleanup_(json_object_putp) json_object *d = data, *m = NULL, *e = json_object_new_object();

        m = json_object_new_object();
        if (!m || !e ||
            sbx_json_put(m, "jsonrpc", json_object_new_string("2.0")) < 0 ||
            json_object_object_add(m, "id", id ? json_object_get(id) : NULL) < 0 ||
            sbx_json_put(e, "code", json_object_new_int(code)) < 0 ||
            sbx_json_put(e, "message", json_object_new_string(message)) < 0 ||
            (d && sbx_json_put(e, "data", TAKE_PTR(d)) < 0) ||
            sbx_json_put(m, "error", TAKE_PTR(e)) < 0)
                return log_oom();
        return server_send(s, TAKE_PTR(m));
}

/* MCP's log levels are syslog's, by name. */
static const char *const log_levels[] = {
        [LOG_EMERG] = "emergency", [LOG_ALERT] = "alert", [LOG_CRIT] = "critical", [LOG_ERR] = "error",
        [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice", [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

void server_log(Server *s, int level, const char *logger, const char *format, ...) {
        _cleanup_free_ char *text = NULL;
        json_object *m, *p;
        va_list ap;

        va_start(ap, format);
        if (vasprintf(&text, format, ap) < 0)
                text = NULL;
        va_end(ap);
        if (!text)
                return;
        log_debug("%s: %s", logger, text);
        if (s->era != MCP_ERA_LEGACY || level > s->log_level)
                return;
        m = new_message(NULL);
        p = json_object_new_object();
        if (!m || !p || sbx_json_put(m, "method", json_object_new_string("notifications/message")) < 0 ||
            sbx_json_put(p, "level", json_object_new_string(log_levels[level])) < 0 ||
            sbx_json_put(p, "logger", json_object_new_string(logger)) < 0 ||
            sbx_json_put(p, "data", json_object_new_string(text)) < 0) {
                json_object_put(m);
                json_object_put(p);
                return;
        }
        if (sbx_json_put(m, "params", p) < 0)
                return (void) json_object_put(m);
        (void) server_send(s, m);
}

/* ---- calls ----------------------------------------------------------------------- */

/* After the end of stdin: every line handled, every call answered. */
void server_maybe_exit(Server *s) {
        if (s->in_eof && s->in_len == 0 && s->n_calls == 0)
                (void) sd_event_exit(s->event, 0);
}

Call *call_free(Call *c) {
        Server *s;

        if (!c)
                return NULL;
        s = c->server;
        if (c->prev)
                c->prev->next = c->next;
        else if (s->calls == c)
                s->calls = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_calls--;
        sd_bus_slot_unref(c->slot);
        if (c->free_state)
                c->free_state(c->state);
        json_object_put(c->id);
        json_object_put(c->progress_token);
        json_object_put(c->args);
        free(c);
        /* A call's end may be what an EOF on stdin was waiting for. */
        server_maybe_exit(s);
        return NULL;
}

static json_object *text_content(const char *text) {
        json_object *content = json_object_new_array(), *item = json_object_new_object();

        if (!content || !item || sbx_json_put(item, "type", json_object_new_string("text")) < 0 ||
            sbx_json_put(item, "text", json_object_new_string(text)) < 0 ||
            sbx_json_push(content, TAKE_PTR(item)) < 0) {
                json_object_put(content);
                json_object_put(item);
                return NULL;
        }
        return content;
}

static void call_send_result(Call *c, json_object *result) {
        Server *s = c->server;

        if (!c->cancelled)
                (void) server_reply(s, c->id, c->modern, result);
        else
                json_object_put(result);
        call_free(c);
}

void call_finish(Call *c, json_object *structured) {
        _cleanup_(json_object_putp) json_object *st = structured, *result = json_object_new_object();
        _cleanup_free_ char *rendered = NULL;
        json_object *content;

        if (!st || !result) {
                call_fail(c, "org.freedesktop.DBus.Error.NoMemory", "out of memory");
                return;
        }
        if (c->tool->render)
                rendered = c->tool->render(st);
        content = text_content(rendered ? rendered
                               : json_object_to_json_string_ext(st, JSON_C_TO_STRING_PRETTY |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
        if (sbx_json_put(result, "content", content) < 0 ||
            sbx_json_put(result, "structuredContent", TAKE_PTR(st)) < 0 ||
            sbx_json_put(result, "isError", json_object_new_boolean(false)) < 0) {
                call_fail(c, "org.freedesktop.DBus.Error.NoMemory", "out of memory");
                return;
        }
        server_log(c->server, LOG_INFO, c->tool->name, "done in %.1f ms",
                   (double) (sbx_now_monotonic_us() - c->started_usec) / 1000.0);
        call_send_result(c, TAKE_PTR(result));
}

/* An error as a tool result: the model sees it and may act on it. The D-Bus name and
 * message also come in _meta, for programs. */
void call_fail(Call *c, const char *name, const char *message) {
        _cleanup_free_ char *text = NULL;
        json_object *result = json_object_new_object(), *meta = json_object_new_object(),
                    *err = json_object_new_object();

        if (asprintf(&text, "%s: %s", name, message) < 0)
                text = NULL;
        if (!result || !meta || !err || !text ||
            sbx_json_put(err, "name", json_object_new_string(name)) < 0 ||
            sbx_json_put(err, "message", json_object_new_string(message)) < 0 ||
            sbx_json_put(meta, "org.xagent.sandbox/error", TAKE_PTR(err)) < 0 ||
            sbx_json_put(result, "content", text_content(text)) < 0 ||
            sbx_json_put(result, "isError", json_object_new_boolean(true)) < 0 ||
            sbx_json_put(result, "_meta", TAKE_PTR(meta)) < 0) {
                json_object_put(result);
                json_object_put(meta);
                json_object_put(err);
                (void) log_oom();
                if (!c->cancelled)
                        (void) server_reply_error(c->server, c->id, JSONRPC_INTERNAL_ERROR, "out of memory", NULL);
                call_free(c);
                return;
        }
        server_log(c->server, LOG_WARNING, c->tool->name, "%s", text);
        call_send_result(c, result);
}

void call_fail_bus(Call *c, const sd_bus_error *e) {
        call_fail(c, e->name ?: "org.freedesktop.DBus.Error.Failed", e->message ?: "(no message)");
}

void call_fail_errno(Call *c, const char *what, int r) {
        _cleanup_free_ char *text = NULL;

        if (asprintf(&text, "%s: %s", what, strerror(-r)) < 0)
                text = NULL;
        call_fail(c, "org.freedesktop.DBus.Error.Failed", text ?: what);
}

static int on_call_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Call *c = userdata;
        json_object *structured = NULL;
        int r;

        c->slot = sd_bus_slot_unref(c->slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                r = c->tool->on_error ? c->tool->on_error(c, sd_bus_message_get_error(reply), &structured) : 0;
                if (r == 1)
                        call_finish(c, structured);
                else if (r != 2)
                        call_fail_bus(c, sd_bus_message_get_error(reply));
                return 0;
        }
        r = c->tool->on_reply(c, reply, &structured);
        if (r < 0)
                call_fail_errno(c, "reading the service's reply", r);
        else if (r == 0)
                call_finish(c, structured);
        /* r > 0: the tool goes on (a streamed run waits for its process). */
        return 0;
}

int call_send_async(Call *c, sd_bus_message *m) {
        return sd_bus_call_async(c->server->bus, &c->slot, m, on_call_reply, c,
                                 c->timeout_usec ?: c->tool->timeout_usec ?: 120ULL * 1000 * 1000);
}

int call_progress(Call *c, double progress, const char *message, size_t len, const char *stream) {
        json_object *m, *p, *meta;
        size_t consumed;

        if (!c->progress_token || c->cancelled)
                return 0;
        m = new_message(NULL);
        p = json_object_new_object();
        meta = json_object_new_object();
        if (!m || !p || !meta || sbx_json_put(m, "method", json_object_new_string("notifications/progress")) < 0 ||
            sbx_json_put(p, "progressToken", json_object_get(c->progress_token)) < 0 ||
            sbx_json_put(p, "progress", json_object_new_double(progress)) < 0 ||
            sbx_json_put(p, "message", json_string_from_bytes(message, len, &consumed)) < 0 ||
            sbx_json_put(meta, "org.xagent.sandbox/stream", json_object_new_string(stream)) < 0 ||
            sbx_json_put(p, "_meta", TAKE_PTR(meta)) < 0 || sbx_json_put(m, "params", TAKE_PTR(p)) < 0) {
                json_object_put(m);
                json_object_put(p);
                json_object_put(meta);
                return log_oom();
        }
        return server_send(c->server, m);
}

/* ---- requests -------------------------------------------------------------------- */

void server_output_drained(Server *s) {
        for (Call *c = s->calls; c; c = c->next)
                if (c->resume)
                        c->resume(c);
        if (!s->paused)
                return;
        stop_reading(s, false);
        /* Lines read before the pause may wait in the buffer. */
        if (s->in_len && s->resume_source)
                (void) sd_event_source_set_enabled(s->resume_source, SD_EVENT_ONESHOT);
}

int server_log_level(const char *name) {
        for (size_t i = 0; name && i < ELEMENTSOF(log_levels); i++)
                if (streq(log_levels[i], name))
                        return (int) i;
        return -1;
}
