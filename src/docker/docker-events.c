/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "docker-events.h"
#include "labels.h"

static const char *member_string(json_object *j, const char *key) {
        json_object *v;

        return json_object_object_get_ex(j, key, &v) && json_object_is_type(v, json_type_string)
                ? json_object_get_string(v) : NULL;
}

/* Docker's word for Podman's (docs/engines.md): its container's removal is
 * "remove", and some versions name an exit "died". Docker sends neither. */
static const char *docker_action(const char *action) {
        return streq_ptr(action, "remove") ? "destroy" : streq_ptr(action, "died") ? "die" : action;
}

static void parse_line(SbxEventParser *p, const char *line, size_t size) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        json_tokener *tok = json_tokener_new();
        json_object *actor, *attributes = NULL;
        SbxDockerEvent e;

        if (!tok)
                return;
        j = json_tokener_parse_ex(tok, line, (int) size);
        json_tokener_free(tok);
        if (!j || !json_object_is_type(j, json_type_object) || !streq_ptr(member_string(j, "Type"), "container") ||
            !json_object_object_get_ex(j, "Actor", &actor))
                return;
        (void) json_object_object_get_ex(actor, "Attributes", &attributes);
        e = (SbxDockerEvent) {
                .action = docker_action(member_string(j, "Action")),
                .id = member_string(actor, "ID"),
                .name_label = attributes ? member_string(attributes, SBX_LABEL_SANDBOX_NAME) : NULL,
                .owner_label = attributes ? member_string(attributes, SBX_LABEL_OWNER) : NULL,
        };
        if (e.action && e.id)
                p->callback(&e, p->userdata);
}

bool sbx_event_parser_feed(SbxEventParser *p, const char *data, size_t size) {
        while (size > 0) {
                const char *nl = memchr(data, '\n', size);
                size_t n = nl ? (size_t) (nl - data) : size;

                if (!p->skipping && p->size + n > SBX_DOCKER_EVENT_LINE_MAX)
                        p->skipping = true;
                if (!p->skipping) {
                        if (p->size + n + 1 > p->allocated) {
                                size_t a = MIN(MAX(p->allocated * 2, p->size + n + 1), SBX_DOCKER_EVENT_LINE_MAX + 1);
                                char *l = realloc(p->line, a);

                                if (!l)
                                        return false;
                                p->line = l;
                                p->allocated = a;
                        }
                        memcpy(p->line + p->size, data, n);
                        p->size += n;
                }
                if (nl) {
                        if (!p->skipping && p->size > 0)
                                parse_line(p, p->line, p->size);
                        p->size = 0;
                        p->skipping = false;
                        n++;
                }
                data += n;
                size -= n;
        }
        return true;
}

void sbx_event_parser_done(SbxEventParser *p) {
        free(p->line);
        *p = (SbxEventParser) {};
}

static bool on_data(const char *data, size_t size, void *userdata) {
        return sbx_event_parser_feed(userdata, data, size);
}

static void on_connected_trampoline(void *userdata) {
        SbxEventParser *p = userdata;

        if (p->on_connected)
                p->on_connected(p->userdata);
}

int sbx_docker_follow_events(SbxDocker *d, SbxDockerEventCallback callback, void (*on_connected)(void *userdata),
                             void *userdata, SbxDockerStop *stop, SbxError *error) {
        static const char filters[] =
                "{\"type\":[\"container\"],"
                "\"label\":[\"" SBX_LABEL_MANAGED "=" SBX_LABEL_MANAGED_VALUE "\"]}";
        _cleanup_free_ char *escaped = NULL, *path = NULL;
        SbxEventParser p = { .callback = callback, .on_connected = on_connected, .userdata = userdata };
        int r;

        if ((r = sbx_docker_escape(d, filters, &escaped)) < 0)
                return r;
        if (asprintf(&path, "/events?filters=%s", escaped) < 0)
                return -ENOMEM;
        r = sbx_docker_get_stream(d, path, on_data, on_connected_trampoline, &p, stop, error);
        sbx_event_parser_done(&p);
        return r;
}
