/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker's event stream (GET /events), for the containers of this service: what
 * happens to a sandbox outside the service (docs/lifecycle.md). */

#include <stdatomic.h>

#include "docker.h"

/* One container event. Strings point into the parsed event: valid during the
 * callback only. name_label and owner_label are the container's labels (NULL when
 * absent). */
typedef struct SbxDockerEvent {
        const char *action;             /* "start", "die", "destroy", "update", "rename" */
        const char *id;                 /* the container */
        const char *name_label;         /* xagent.sandbox.name */
        const char *owner_label;        /* xagent.sandbox.owner */
} SbxDockerEvent;

typedef void (*SbxDockerEventCallback)(const SbxDockerEvent *event, void *userdata);

/* The longest line of the stream that is parsed; a longer one is skipped. */
#define SBX_DOCKER_EVENT_LINE_MAX ((size_t) 1024U * 1024U)

/* Splits the stream into lines (any chunking) and hands each container event with
 * an id and an action to a callback. */
typedef struct SbxEventParser {
        char *line;
        size_t size, allocated;
        bool skipping;                  /* inside an overlong line */
        SbxDockerEventCallback callback;
        void (*on_connected)(void *userdata);
        void *userdata;
} SbxEventParser;

/* Consumes data; false only when out of memory. */
bool sbx_event_parser_feed(SbxEventParser *p, const char *data, size_t size);
void sbx_event_parser_done(SbxEventParser *p);

/* Follows the events start, die (exited, killed, out of memory), destroy, update and
 * rename of containers labelled
 * xagent.managed=true until sbx_docker_stop(stop) (returns 0), Docker goes away or ends the
 * stream (SBX_ERROR_BACKEND_UNAVAILABLE) or refuses. on_connected is called once
 * Docker accepted the stream (from then on no event is missed). */
int sbx_docker_follow_events(SbxDocker *d, SbxDockerEventCallback callback, void (*on_connected)(void *userdata),
                             void *userdata, SbxDockerStop *stop, SbxError *error);
