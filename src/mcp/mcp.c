/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The protocol: reading messages from stdin, answering them on stdout, the two
 * revisions (2025-11-25 with its initialize handshake, 2026-07-28 with the
 * revision in every request's _meta), and the calls in flight. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syslog.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus-error.h"
#include "config.h"
#include "mcp-json.h"
#include "mcp-run.h"
#include "mcp-server.h"
#include "mcp-tools.h"

#define READ_CHUNK ((size_t) 64 << 10)
#define MCP_INSTRUCTIONS \
        "Sandboxes of the calling user, served by xagent-sandboxd over the system bus: " \
        "make one with sandbox_ensure, run commands in it with run, move files with " \
        "file_read and file_write. Every call acts as this user; the host's policy applies."

static json_object *params_meta(json_object *params) {
        json_object *meta;

        if (!params || !json_object_object_get_ex(params, "_meta", &meta) || !json_object_is_type(meta, json_type_object))
                return NULL;
        return meta;
}

static int handle_initialize(Server *s, json_object *id, json_object *params) {
        json_object *asked = NULL, *result, *caps, *tools, *info;
        const char *revision = MCP_REVISION_LEGACY;

        if (s->era == MCP_ERA_MODERN)
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST,
                                          "initialize: this connection speaks " MCP_REVISION_MODERN
                                          " (its requests carry " MCP_META_VERSION ")", NULL);
        if (s->era == MCP_ERA_LEGACY)
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST, "initialize: already initialized", NULL);
        if (!params || !json_object_object_get_ex(params, "protocolVersion", &asked) ||
            !json_object_is_type(asked, json_type_string))
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS,
                                          "initialize: params.protocolVersion must be a string", NULL);
        /* The client's revision when this server speaks it, else ours (the client decides). */
        if (streq(json_object_get_string(asked), "2025-06-18"))
                revision = "2025-06-18";
        snprintf(s->legacy_revision, sizeof s->legacy_revision, "%s", revision);
        s->era = MCP_ERA_LEGACY;

        result = json_object_new_object();
        caps = json_object_new_object();
        tools = json_object_new_object();
        info = json_object_new_object();
        if (!result || !caps || !tools || !info ||
            sbx_json_put(tools, "listChanged", json_object_new_boolean(false)) < 0 ||
            sbx_json_put(caps, "tools", TAKE_PTR(tools)) < 0 ||
            sbx_json_put(caps, "logging", json_object_new_object()) < 0 ||
            sbx_json_put(info, "name", json_object_new_string("xagent-sandbox-mcp")) < 0 ||
            sbx_json_put(info, "title", json_object_new_string("xagent sandboxes")) < 0 ||
            sbx_json_put(info, "version", json_object_new_string(PACKAGE_VERSION)) < 0 ||
            sbx_json_put(result, "protocolVersion", json_object_new_string(revision)) < 0 ||
            sbx_json_put(result, "capabilities", TAKE_PTR(caps)) < 0 ||
            sbx_json_put(result, "serverInfo", TAKE_PTR(info)) < 0 ||
            sbx_json_put(result, "instructions", json_object_new_string(MCP_INSTRUCTIONS)) < 0) {
                json_object_put(result);
                json_object_put(caps);
                json_object_put(tools);
                json_object_put(info);
                return log_oom();
        }
        return server_reply(s, id, false, result);
}

static json_object *server_info(void) {
        json_object *info = json_object_new_object();

        if (!info || sbx_json_put(info, "name", json_object_new_string("xagent-sandbox-mcp")) < 0 ||
            sbx_json_put(info, "version", json_object_new_string(PACKAGE_VERSION)) < 0)
                return json_object_put(info), NULL;
        return info;
}

static int handle_discover(Server *s, json_object *id) {
        json_object *result = json_object_new_object(), *versions = json_object_new_array(),
                    *caps = json_object_new_object(), *meta = json_object_new_object();

        if (!result || !versions || !caps || !meta ||
            sbx_json_push(versions, json_object_new_string(MCP_REVISION_MODERN)) < 0 ||
            sbx_json_put(caps, "tools", json_object_new_object()) < 0 ||
            sbx_json_put(result, "supportedVersions", TAKE_PTR(versions)) < 0 ||
            sbx_json_put(result, "capabilities", TAKE_PTR(caps)) < 0 ||
            sbx_json_put(result, "serverInfo", server_info()) < 0 ||
            sbx_json_put(result, "instructions", json_object_new_string(MCP_INSTRUCTIONS)) < 0 ||
            sbx_json_put(result, "ttlMs", json_object_new_int(3600 * 1000)) < 0 ||
            sbx_json_put(result, "cacheScope", json_object_new_string("public")) < 0 ||
            sbx_json_put(meta, "io.modelcontextprotocol/serverInfo", server_info()) < 0 ||
            sbx_json_put(result, "_meta", TAKE_PTR(meta)) < 0) {
                json_object_put(result);
                json_object_put(versions);
                json_object_put(caps);
                json_object_put(meta);
                return log_oom();
        }
        return server_reply(s, id, true, result);
}

static int handle_tools_list(Server *s, json_object *id, bool modern) {
        json_object *result = json_object_new_object();
        int r;

        if (!s->tools_cache && (r = mcp_tools_list(&s->tools_cache)) < 0)
                return server_reply_error(s, id, JSONRPC_INTERNAL_ERROR, "cannot build the tool list", NULL);
        /* A deep copy: the cache stays ours, whatever the reply does with its tree. */
        if (!result || sbx_json_put(result, "tools", json_object_get(s->tools_cache)) < 0)
                return json_object_put(result), log_oom();
        if (modern && (sbx_json_put(result, "ttlMs", json_object_new_int(3600 * 1000)) < 0 ||
                       sbx_json_put(result, "cacheScope", json_object_new_string("public")) < 0))
                return json_object_put(result), log_oom();
        return server_reply(s, id, modern, result);
}

static int handle_set_level(Server *s, json_object *id, json_object *params) {
        json_object *level;
        int n;

        if (!params || !json_object_object_get_ex(params, "level", &level) || !json_object_is_type(level, json_type_string))
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS, "logging/setLevel: params.level must be a string",
                                          NULL);
        if ((n = server_log_level(json_object_get_string(level))) >= 0) {
                s->log_level = n;
                return server_reply(s, id, false, json_object_new_object());
        }
        return server_reply_error(s, id, JSONRPC_INVALID_PARAMS,
                                  "logging/setLevel: level must be one of debug, info, notice, warning, error, "
                                  "critical, alert, emergency", NULL);
}

static int handle_tools_call(Server *s, json_object *id, json_object *params, bool modern) {
        _cleanup_free_ char *bad = NULL;
        json_object *name, *args = NULL, *meta, *token = NULL;
        const Tool *t;
        Call *c;
        int r;

        if (!params || !json_object_object_get_ex(params, "name", &name) || !json_object_is_type(name, json_type_string))
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS, "tools/call: params.name must be a string", NULL);
        t = mcp_tool_find(json_object_get_string(name));
        if (!t) {
                _cleanup_free_ char *text = NULL;

                if (asprintf(&text, "tools/call: no tool '%s'", json_object_get_string(name)) < 0)
                        return log_oom();
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS, text, NULL);
        }
        if (json_object_object_get_ex(params, "arguments", &args) && args &&
            !json_object_is_type(args, json_type_object))
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS, "tools/call: params.arguments must be an object",
                                          NULL);
        meta = params_meta(params);
        if (meta && json_object_object_get_ex(meta, "progressToken", &token) &&
            !json_object_is_type(token, json_type_string) && !json_object_is_type(token, json_type_int))
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS,
                                          "tools/call: _meta.progressToken must be a string or an integer", NULL);

        c = new0(Call, 1);
        if (!c)
                return log_oom();
        *c = (Call) {
                .server = s, .id = json_object_get(id), .modern = modern, .tool = t,
                .progress_token = token ? json_object_get(token) : NULL,
                .args = args ? json_object_get(args) : json_object_new_object(),
                .started_usec = sbx_now_monotonic_us(),
                .next = s->calls,
        };
        if (s->calls)
                s->calls->prev = c;
        s->calls = c;
        s->n_calls++;

        if (s->n_calls > MCP_CALLS_MAX) {
                call_fail(c, "org.freedesktop.DBus.Error.LimitsExceeded",
                          "too many tool calls in flight (at most 32): retry when one has ended");
                return 0;
        }
        bad = mcp_tool_check_args(t, c->args);
        if (bad) {
                call_fail(c, "org.freedesktop.DBus.Error.InvalidArgs", bad);
                return 0;
        }
        if (!s->bus) {
                call_fail(c, "org.freedesktop.DBus.Error.NoServer", "the system bus cannot be reached");
                return 0;
        }
        r = t->start(c);
        if (r < 0)
                call_fail_errno(c, t->name, r);
        return 0;
}

static void handle_cancelled(Server *s, json_object *params) {
        json_object *rid;

        if (!params || !json_object_object_get_ex(params, "requestId", &rid))
                return;
        for (Call *c = s->calls; c; c = c->next)
                if (!c->cancelled && json_object_equal(c->id, rid)) {
                        server_log(s, LOG_INFO, c->tool->name, "cancelled by the client");
                        c->cancelled = true;
                        if (c->cancel)
                                c->cancel(c);   /* a run kills its process, then ends */
                        else
                                call_free(c);   /* the reply is not waited for */
                        return;
                }
}

/* Which revision a request speaks: its _meta's, else the connection's. */
static int request_era(Server *s, json_object *id, json_object *params, bool *ret_modern) {
        json_object *meta = params_meta(params), *version, *data;

        if (!meta || !json_object_object_get_ex(meta, MCP_META_VERSION, &version)) {
                *ret_modern = false;
                return 1;
        }
        if (!json_object_is_type(version, json_type_string) || !streq(json_object_get_string(version), MCP_REVISION_MODERN)) {
                data = json_object_new_object();
                json_object *supported = json_object_new_array();

                if (!data || !supported || sbx_json_push(supported, json_object_new_string(MCP_REVISION_MODERN)) < 0 ||
                    sbx_json_push(supported, json_object_new_string(MCP_REVISION_LEGACY)) < 0 ||
                    sbx_json_put(data, "supported", TAKE_PTR(supported)) < 0 ||
                    sbx_json_put(data, "requested", json_object_get(version)) < 0) {
                        json_object_put(data);
                        json_object_put(supported);
                        return log_oom();
                }
                (void) server_reply_error(s, id, MCP_UNSUPPORTED_VERSION, "Unsupported protocol version", data);
                return 0;
        }
        if (s->era == MCP_ERA_LEGACY) {
                (void) server_reply_error(s, id, JSONRPC_INVALID_REQUEST,
                                          "this connection began with initialize (2025-11-25): its requests do not "
                                          "carry " MCP_META_VERSION, NULL);
                return 0;
        }
        s->era = MCP_ERA_MODERN;
        *ret_modern = true;
        return 1;
}

static int handle_request(Server *s, json_object *id, const char *method, json_object *params) {
        bool modern = false;
        int r;

        r = request_era(s, id, params, &modern);
        if (r <= 0)
                return r;
        if (streq(method, "server/discover"))
                return handle_discover(s, id);
        if (modern) {
                if (streq(method, "tools/list"))
                        return handle_tools_list(s, id, true);
                if (streq(method, "tools/call"))
                        return handle_tools_call(s, id, params, true);
                return server_reply_error(s, id, JSONRPC_METHOD_NOT_FOUND,
                                          streq(method, "initialize") || streq(method, "ping") ||
                                          streq(method, "logging/setLevel")
                                          ? "Method not found in " MCP_REVISION_MODERN : "Method not found", NULL);
        }
        if (streq(method, "initialize"))
                return handle_initialize(s, id, params);
        if (streq(method, "ping"))
                return server_reply(s, id, false, json_object_new_object());
        if (!streq(method, "tools/list") && !streq(method, "tools/call") && !streq(method, "logging/setLevel"))
                return server_reply_error(s, id, JSONRPC_METHOD_NOT_FOUND, "Method not found", NULL);
        if (s->era != MCP_ERA_LEGACY)
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST,
                                          "send initialize first (2025-11-25), or carry " MCP_META_VERSION
                                          " in each request's _meta (2026-07-28)", NULL);
        if (streq(method, "tools/list"))
                return handle_tools_list(s, id, false);
        if (streq(method, "tools/call"))
                return handle_tools_call(s, id, params, false);
        return handle_set_level(s, id, params);
}

static void handle_notification(Server *s, const char *method, json_object *params) {
        if (streq(method, "notifications/initialized"))
                s->initialized = true;
        else if (streq(method, "notifications/cancelled"))
                handle_cancelled(s, params);
        /* Anything else (progress, roots…) asks nothing of this server. */
}

static int handle_message(Server *s, json_object *msg) {
        json_object *v, *id = NULL, *params = NULL;
        const char *method;

        if (!json_object_is_type(msg, json_type_object))
                return server_reply_error(s, NULL, JSONRPC_INVALID_REQUEST,
                                          json_object_is_type(msg, json_type_array)
                                          ? "Invalid Request: batches are not part of MCP"
                                          : "Invalid Request: a message is a JSON object", NULL);
        if (json_object_object_get_ex(msg, "id", &id) &&
            (!id || (!json_object_is_type(id, json_type_string) && !json_object_is_type(id, json_type_int))))
                return server_reply_error(s, NULL, JSONRPC_INVALID_REQUEST,
                                          "Invalid Request: id must be a string or an integer", NULL);
        if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
            !streq(json_object_get_string(v), "2.0"))
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST, "Invalid Request: jsonrpc must be \"2.0\"",
                                          NULL);
        if (!json_object_object_get_ex(msg, "method", &v)) {
                /* A response: this server sends no requests, so there is nothing to match. */
                if (id && (json_object_object_get_ex(msg, "result", NULL) || json_object_object_get_ex(msg, "error", NULL)))
                        return 0;
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST, "Invalid Request: no method", NULL);
        }
        if (!json_object_is_type(v, json_type_string))
                return server_reply_error(s, id, JSONRPC_INVALID_REQUEST, "Invalid Request: method must be a string",
                                          NULL);
        method = json_object_get_string(v);
        if (json_object_object_get_ex(msg, "params", &params) && params && !json_object_is_type(params, json_type_object)) {
                if (!id)
                        return 0;
                return server_reply_error(s, id, JSONRPC_INVALID_PARAMS, "Invalid params: params must be an object", NULL);
        }
        if (!id) {
                handle_notification(s, method, params);
                return 0;
        }
        return handle_request(s, id, method, params);
}

static int handle_line(Server *s, const char *line, size_t len) {
        _cleanup_(json_object_putp) json_object *msg = NULL;
        struct json_tokener *tok;
        enum json_tokener_error jerr;

        while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
                len--;
        if (len == 0)
                return 0;
        tok = json_tokener_new_ex(MCP_DEPTH_MAX);
        if (!tok)
                return log_oom();
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
        msg = json_tokener_parse_ex(tok, line, (int) len);
        jerr = json_tokener_get_error(tok);
        if (jerr == json_tokener_success && json_tokener_get_parse_end(tok) < len)
                jerr = json_tokener_error_parse_unexpected;
        json_tokener_free(tok);
        if (jerr != json_tokener_success) {
                json_object_put(TAKE_PTR(msg));
                if (jerr == json_tokener_error_depth)
                        return server_reply_error(s, NULL, JSONRPC_PARSE_ERROR,
                                                  "Parse error: nested deeper than 64 levels", NULL);
                if (jerr == json_tokener_continue)
                        return server_reply_error(s, NULL, JSONRPC_PARSE_ERROR, "Parse error: the message ends early",
                                                  NULL);
                return server_reply_error(s, NULL, JSONRPC_PARSE_ERROR, "Parse error: not JSON", NULL);
        }
        return handle_message(s, msg);
}

/* ---- input ----------------------------------------------------------------------- */

static int read_input(Server *s) {
        ssize_t n;

        if (s->in_alloc - s->in_len < READ_CHUNK) {
                size_t want = s->in_len + READ_CHUNK;
                char *b = realloc(s->in_buf, want);

                if (!b)
                        return log_oom();
                s->in_buf = b;
                s->in_alloc = want;
        }
        n = read(STDIN_FILENO, s->in_buf + s->in_len, READ_CHUNK);
        if (n < 0)
                return errno == EAGAIN || errno == EINTR ? 1 : log_error_errno(errno, "Reading stdin failed: %m");
        if (n == 0)
                return 0;
        s->in_len += (size_t) n;
        return 1;
}

/* Handles the complete lines in the buffer; a line beyond MCP_LINE_MAX is dropped
 * (up to its newline) and answered with one parse error. */
static void process_lines(Server *s) {
        size_t start = 0;

        for (;;) {
                char *nl = memchr(s->in_buf + start, '\n', s->in_len - start);

                if (!nl)
                        break;
                if (s->discarding)
                        s->discarding = false;
                else
                        (void) handle_line(s, s->in_buf + start, (size_t) (nl - (s->in_buf + start)));
                start = (size_t) (nl - s->in_buf) + 1;
                if (server_output_congested(s) || s->out_broken)
                        break;  /* the rest waits until the client reads */
        }
        memmove(s->in_buf, s->in_buf + start, s->in_len - start);
        s->in_len -= start;
        if (s->in_len > MCP_LINE_MAX && !memchr(s->in_buf, '\n', s->in_len)) {
                if (!s->discarding)
                        (void) server_reply_error(s, NULL, JSONRPC_PARSE_ERROR,
                                                  "Parse error: a message longer than 8388608 bytes", NULL);
                s->discarding = true;
                s->in_len = 0;
        }
        /* Keep the buffer small between messages. */
        if (s->in_len == 0 && s->in_alloc > 4 * READ_CHUNK) {
                free(s->in_buf);
                s->in_buf = NULL;
                s->in_alloc = 0;
        }
}

/* The last line may lack its newline. */
static void input_rest(Server *s) {
        if (!s->in_eof || s->paused || memchr(s->in_buf, '\n', s->in_len))
                return;
        if (s->in_len > 0 && !s->discarding)
                (void) handle_line(s, s->in_buf, s->in_len);
        s->in_len = 0;
        server_maybe_exit(s);
}

static int on_stdin(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        Server *s = userdata;
        int r;

        r = read_input(s);
        if (r < 0)
                return sd_event_exit(s->event, 1);
        process_lines(s);
        if (s->out_broken)
                return sd_event_exit(s->event, 1);
        if (r == 0) {
                s->in_eof = true;
                s->in_source = sd_event_source_disable_unref(s->in_source);
                input_rest(s);
        }
        return 0;
}

/* Only re-enables sources: it runs inside server_send(), where handling more input
 * would re-enter the line loop. */
static int on_resume(sd_event_source *source, void *userdata) {
        Server *s = userdata;

        if (!s->paused && !s->out_broken)
                process_lines(s);
        input_rest(s);
        return 0;
}

/* ---- main ------------------------------------------------------------------------ */

static void server_done(Server *s) {
        while (s->calls) {
                s->calls->cancelled = true;
                call_free(s->calls);
        }
        sd_event_source_disable_unref(s->in_source);
        sd_event_source_disable_unref(s->out_source);
        sd_event_source_disable_unref(s->resume_source);
        json_object_put(s->tools_cache);
        mcp_leases_done(s);
        sd_bus_flush_close_unref(s->bus);
        sd_event_unref(s->event);
        free(s->in_buf);
        free(s->out_buf);
}

/* Makes fd non-blocking without touching whoever shares it: a pipe or a terminal is
 * opened again (a file description of our own); a socket, which cannot be, is ours
 * alone anyway. */
static int own_nonblocking(int fd, int mode) {
        char path[32];
        int flags, nfd;

        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        nfd = open(path, mode | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (nfd >= 0) {
                int r = dup2(nfd, fd) < 0 ? -errno : 0;

                (void) close(nfd);
                return r;
        }
        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

/* A regular file cannot be watched (epoll refuses it: EPERM) and never blocks: stdout
 * to one is written synchronously, as it is, its flags (O_APPEND) kept. */
static bool is_regular_file(int fd) {
        struct stat st;

        return fstat(fd, &st) >= 0 && S_ISREG(st.st_mode);
}

static int help(void) {
        printf("xagent-sandbox-mcp [--help] [--version]\n\n"
               "A Model Context Protocol server on stdin/stdout whose tools act on the calling\n"
               "user's sandboxes through org.xagent.Sandbox1 on the system bus. See\n"
               "xagent-sandbox-mcp(1).\n");
        return 0;
}

int main(int argc, char *argv[]) {
        Server s = { .log_level = -1 };
        bool stdout_file;
        int r;

        log_setup();
        if (argc > 1) {
                if (streq(argv[1], "--help") || streq(argv[1], "-h"))
                        return help();
                if (streq(argv[1], "--version")) {
                        printf("xagent-sandbox-mcp %s\n", PACKAGE_VERSION);
                        return 0;
                }
                fprintf(stderr, "xagent-sandbox-mcp: unknown argument '%s' (--help)\n", argv[1]);
                return 2;
        }
        (void) signal(SIGPIPE, SIG_IGN);
        (void) own_nonblocking(STDERR_FILENO, O_WRONLY);
        /* stderr too: a client that never reads it must not stop the server (a log
         * line that does not fit is dropped). */
        stdout_file = is_regular_file(STDOUT_FILENO);
        if (own_nonblocking(STDIN_FILENO, O_RDONLY) < 0 ||
            (!stdout_file && own_nonblocking(STDOUT_FILENO, O_WRONLY) < 0)) {
                fprintf(stderr, "xagent-sandbox-mcp: stdin and stdout must be open\n");
                return 1;
        }
        r = sd_event_default(&s.event);
        if (r < 0)
                return log_error_errno(r, "sd_event_default: %m"), 1;
        {
                sigset_t mask;

                sigemptyset(&mask);
                sigaddset(&mask, SIGTERM);
                sigaddset(&mask, SIGINT);
                (void) sigprocmask(SIG_BLOCK, &mask, NULL);
                (void) sd_event_add_signal(s.event, NULL, SIGTERM, NULL, NULL);
                (void) sd_event_add_signal(s.event, NULL, SIGINT, NULL, NULL);
        }
        if ((r = sd_event_add_io(s.event, &s.in_source, STDIN_FILENO, EPOLLIN, on_stdin, &s)) < 0 ||
            (!stdout_file &&
             (r = sd_event_add_io(s.event, &s.out_source, STDOUT_FILENO, EPOLLOUT, server_on_stdout, &s)) < 0) ||
            (!stdout_file && (r = sd_event_source_set_enabled(s.out_source, SD_EVENT_OFF)) < 0) ||
            (r = sd_event_add_defer(s.event, &s.resume_source, on_resume, &s)) < 0 ||
            (r = sd_event_source_set_enabled(s.resume_source, SD_EVENT_OFF)) < 0) {
                log_error_errno(r, "Watching stdin/stdout failed: %m");
                server_done(&s);
                return 1;
        }
        (void) sd_bus_error_add_map(sbx_bus_error_map);
        r = sd_bus_open_system(&s.bus);
        if (r >= 0)
                r = sd_bus_attach_event(s.bus, s.event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = mcp_bus_setup(&s);
        if (r < 0) {
                log_warning_errno(r, "The system bus cannot be reached (%m): every tool call will say so");
                s.bus = sd_bus_flush_close_unref(s.bus);
        }
        r = sd_event_loop(s.event);
        /* What is queued still goes out (a client that stopped reading gets nothing). */
        while (!s.out_broken && s.out_len > s.out_off) {
                struct pollfd p = { .fd = STDOUT_FILENO, .events = POLLOUT };

                if (poll(&p, 1, 10000) <= 0 || server_flush(&s) < 0)
                        break;
        }
        server_done(&s);
        return r < 0 ? 1 : r;
}
