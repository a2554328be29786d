/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* xagent-sandbox-mcp: a Model Context Protocol server on stdio (newline-delimited
 * JSON-RPC) whose tools are calls of org.xagent.Sandbox1 on the system bus, made as
 * the user running it. One thread, one sd-event loop: stdin, stdout, the bus and the
 * pipes of streamed runs are its sources. See docs/mcp.md.
 *
 * The files, bottom up: mcp-server (the server's state, its output, the calls in
 * flight), mcp-json (JSON helpers), mcp-run and mcp-files (the tools that stream or
 * move data), mcp-spec (the spec arguments of create/ensure/verify), mcp-tools (the
 * tool table and the simple tools), mcp.c (the protocol: reading requests, the two
 * revisions, main). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>


#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

#define new0(t, n) ((t *) calloc((n), sizeof(t)))


/* The bounds (man page: LIMITS). */
#define MCP_LINE_MAX ((size_t) 8 << 20)                 /* bytes of one message read */
#define MCP_DEPTH_MAX 64                                /* JSON nesting of one message */
#define MCP_CALLS_MAX 32U                               /* tool calls in flight */
#define MCP_OUT_HIGH ((size_t) 16 << 20)                /* queued output that pauses reading */
#define MCP_OUTPUT_LIMIT_DEFAULT ((uint64_t) 1 << 20)   /* run output kept, a stream */
#define MCP_OUTPUT_LIMIT_MAX ((uint64_t) 4 << 20)
#define MCP_FILE_MAX ((size_t) 4 << 20)                 /* a file read or written */

#define MCP_REVISION_LEGACY "2025-11-25"
#define MCP_REVISION_MODERN "2026-07-28"
#define MCP_META_VERSION "io.modelcontextprotocol/protocolVersion"

#define MCP_BUS_SERVICE "org.xagent.Sandbox1"
#define MCP_BUS_MANAGER_PATH "/org/xagent/Sandbox1"
#define MCP_BUS_MANAGER "org.xagent.Sandbox1.Manager"
#define MCP_BUS_EXEC "org.xagent.Sandbox1.Exec"

/* JSON-RPC's error codes, and MCP's for a revision it does not serve. */
#define JSONRPC_PARSE_ERROR (-32700)
#define JSONRPC_INVALID_REQUEST (-32600)
#define JSONRPC_METHOD_NOT_FOUND (-32601)
#define JSONRPC_INVALID_PARAMS (-32602)
#define JSONRPC_INTERNAL_ERROR (-32603)
#define MCP_UNSUPPORTED_VERSION (-32022)

typedef enum McpEra {
        MCP_ERA_NONE,           /* nothing era-specific seen yet */
        MCP_ERA_LEGACY,         /* began with initialize */
        MCP_ERA_MODERN,         /* requests carry their revision in _meta */
} McpEra;

typedef struct Server Server;
typedef struct Call Call;
typedef struct Tool Tool;

/* One tools/call in flight. */
struct Call {
        Server *server;
        Call *next, *prev;
        json_object *id;                /* the request's id */
        json_object *progress_token;    /* _meta.progressToken, or NULL */
        json_object *args;              /* the arguments object */
        bool modern;
        bool cancelled;                 /* notifications/cancelled: no reply goes out */
        uint64_t started_usec;
        uint64_t timeout_usec;          /* of its bus call (0: the tool's) */
        const Tool *tool;
        sd_bus_slot *slot;              /* the bus call being waited for */
        void *state;                    /* the tool's own (a run, a file read) */
        void (*free_state)(void *state);
        void (*cancel)(Call *c);        /* what cancelling does besides dropping the reply */
        void (*resume)(Call *c);        /* output drained: a paused reader goes on */
        /* An exec object's Exited signal (every one, the call checks the path and
         * that sender is the service instance that answered it: a unicast signal
         * can come from any client); may finish the call. */
        void (*exited)(Call *c, const char *sender, const char *path, int status);
};

struct Tool {
        const char *name;
        const char *title;
        const char *description;
        const char *input_schema;       /* JSON text */
        const char *output_schema;      /* JSON text */
        bool read_only, destructive, idempotent;
        /* Starts the call: either finishes it at once (call_finish…) or leaves a bus
         * call pending in c->slot, whose reply reaches on_reply. */
        int (*start)(Call *c);
        /* A successful reply: the structured result. */
        int (*on_reply)(Call *c, sd_bus_message *reply, json_object **ret);
        /* An error reply: 0 for the usual isError result, 1 for a result made of it
         * (*ret), 2 when the tool has finished the call itself. */
        int (*on_error)(Call *c, const sd_bus_error *e, json_object **ret);
        /* The text rendering of a structured result (NULL: the JSON itself). */
        char *(*render)(json_object *structured);
        uint64_t timeout_usec;          /* of the bus call (0: 120 s) */
};

struct Server {
        sd_event *event;
        sd_bus *bus;
        sd_event_source *in_source, *out_source;
        char *in_buf;
        size_t in_len, in_alloc;
        bool discarding;                /* inside a line longer than MCP_LINE_MAX */
        bool in_eof;
        bool paused;                    /* reading stopped until the client reads our output */
        sd_event_source *resume_source; /* handles the lines read before a pause */
        char *out_buf;
        size_t out_len, out_off, out_alloc;
        bool out_broken;
        McpEra era;
        bool initialized;
        char legacy_revision[16];
        int log_level;                  /* -1: no notifications/message */
        Call *calls;
        unsigned n_calls;
        json_object *tools_cache;       /* the tools/list array, built once */
        int *lease_fds;                 /* leases held for the session (the sandbox tool's lease) */
        char **lease_names;             /* … on these sandboxes */
        size_t n_leases;
};

/* Output. server_flush() writes what stdout takes now (-errno when it is broken);
 * server_on_stdout() is the event source's callback for a stdout that can take more. */
int server_flush(Server *s);
int server_on_stdout(sd_event_source *source, int fd, uint32_t revents, void *userdata);
int server_send(Server *s, json_object *message);      /* takes message */
int server_reply(Server *s, json_object *id, bool modern, json_object *result);        /* takes result */
int server_reply_error(Server *s, json_object *id, int code, const char *message, json_object *data);
void server_log(Server *s, int level, const char *logger, const char *format, ...) _printf_(4, 5);
bool server_output_congested(const Server *s);
void server_output_drained(Server *s);                  /* lets paused readers go on */
/* The syslog-style level of a logging/setLevel name ("debug" … "emergency"), or -1. */
int server_log_level(const char *name);
/* After the end of stdin: once every line is handled and every call answered, the
 * loop ends. */
void server_maybe_exit(Server *s);

/* Calls. */
void call_finish(Call *c, json_object *structured);     /* a result; takes structured */
void call_fail(Call *c, const char *name, const char *message);  /* an isError result */
void call_fail_bus(Call *c, const sd_bus_error *e);
void call_fail_errno(Call *c, const char *what, int r);
int call_send_async(Call *c, sd_bus_message *m);        /* sends m, its reply goes to the tool */
int call_progress(Call *c, double progress, const char *message, size_t len, const char *stream);
Call *call_free(Call *c);
