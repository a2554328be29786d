/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The engine's pull (POST /images/create) and its stream of progress: one JSON
 * object a line, per layer ("Downloading" with progressDetail current/total,
 * "Download complete", "Pull complete", "Already exists"), or {"error": …}. */

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "docker-image.h"
#include "json-util.h"

#define PULL_LAYERS_MAX 256U
#define PULL_LINE_MAX (64U << 10)

typedef struct Layer {
        char id[72];
        uint64_t current, total;
} Layer;

typedef struct Pull {
        const char *ref;
        uint64_t max_bytes;
        SbxDockerPullProgress progress;
        void *userdata;
        Layer layers[PULL_LAYERS_MAX];
        size_t n_layers;
        char line[PULL_LINE_MAX];
        size_t line_size;
        uint64_t done, total;
        SbxError error;
} Pull;

static Layer *layer_of(Pull *p, const char *id) {
        for (size_t i = 0; i < p->n_layers; i++)
                if (streq(p->layers[i].id, id))
                        return &p->layers[i];
        if (p->n_layers == PULL_LAYERS_MAX || strlen(id) >= sizeof p->layers[0].id)
                return NULL;
        snprintf(p->layers[p->n_layers].id, sizeof p->layers[0].id, "%s", id);
        return &p->layers[p->n_layers++];
}

static void pull_failed(Pull *p, const char *message) {
        SbxErrorKind kind = strstr(message, "manifest unknown") || strstr(message, "not found") ||
                                            strstr(message, "does not exist") ? SBX_ERROR_NO_SUCH_IMAGE :
                            strstr(message, "x509") || strstr(message, "certificate") ? SBX_ERROR_REGISTRY_UNTRUSTED :
                            SBX_ERROR_BACKEND_ERROR;

        sbx_error_set(&p->error, kind, "The engine's pull of %s failed: %.512s", p->ref, message);
}

/* One line of the stream; false stops it. */
static bool on_line(Pull *p, const char *line) {
        _cleanup_(json_object_putp) json_object *j = json_tokener_parse(line);
        json_object *v, *detail, *cur, *tot;
        const char *status, *id;
        uint64_t done = 0, total = 0;
        Layer *l;

        if (!j)
                return true;            /* not ours to judge: the image is checked after */
        if (json_object_object_get_ex(j, "error", &v)) {
                pull_failed(p, json_object_get_string(v) ?: "(no message)");
                return false;
        }
        if (!json_object_object_get_ex(j, "status", &v) || !(status = json_object_get_string(v)) ||
            !json_object_object_get_ex(j, "id", &v) || !(id = json_object_get_string(v)) || !(l = layer_of(p, id)))
                return true;
        if (streq(status, "Downloading") && json_object_object_get_ex(j, "progressDetail", &detail) &&
            json_object_object_get_ex(detail, "current", &cur) && json_object_object_get_ex(detail, "total", &tot)) {
                l->current = (uint64_t) MAX(json_object_get_int64(cur), 0);
                l->total = (uint64_t) MAX(json_object_get_int64(tot), 0);
        } else if (streq(status, "Download complete") || streq(status, "Pull complete") ||
                   streq(status, "Already exists"))
                l->current = l->total;
        for (size_t i = 0; i < p->n_layers; i++) {
                done += p->layers[i].current;
                total += p->layers[i].total;
        }
        if (p->max_bytes > 0 && total > p->max_bytes) {
                sbx_error_set(&p->error, SBX_ERROR_POLICY_VIOLATION,
                              "Image %s: its layers are over %" PRIu64 " MiB, the host policy's max_image_mib",
                              p->ref, p->max_bytes >> 20);
                return false;
        }
        if ((done != p->done || total != p->total) && p->progress)
                p->progress(done, total, p->userdata);
        p->done = done;
        p->total = total;
        return true;
}

static bool on_data(const char *data, size_t size, void *userdata) {
        Pull *p = userdata;

        for (size_t i = 0; i < size; i++) {
                if (data[i] != '\n') {
                        if (p->line_size + 1 < sizeof p->line)
                                p->line[p->line_size++] = data[i];
                        continue;
                }
                p->line[p->line_size] = 0;
                p->line_size = 0;
                if (!on_line(p, p->line))
                        return false;
        }
        return true;
}

int sbx_docker_image_pull(SbxDocker *d, const char *ref, uint64_t max_bytes, SbxDockerPullProgress progress,
                          void *userdata, SbxError *error) {
        _cleanup_free_ char *escaped = NULL, *path = NULL;
        _cleanup_free_ Pull *p = NULL;
        SbxDockerStop stop = SBX_DOCKER_STOP_INIT;
        int r;

        if (isempty(ref))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "reference: must not be empty");
        if ((r = sbx_docker_escape(d, ref, &escaped)) < 0)
                return r;
        if (asprintf(&path, "/images/create?fromImage=%s", escaped) < 0)
                return -ENOMEM;
        if (!(p = calloc(1, sizeof(Pull))))
                return -ENOMEM;
        *p = (Pull) { .ref = ref, .max_bytes = max_bytes, .progress = progress, .userdata = userdata };
        r = sbx_docker_post_stream(d, path, on_data, p, &stop, error);
        if (sbx_error_is_set(&p->error)) {
                r = sbx_error_set(error, p->error.kind, "%s", p->error.message);
                sbx_error_free(&p->error);
                return r;
        }
        return r;
}

int sbx_docker_image_tag(SbxDocker *d, const char *image, const char *repo, const char *tag, SbxError *error) {
        _cleanup_free_ char *i = NULL, *rp = NULL, *t = NULL, *path = NULL;
        int r;

        if ((r = sbx_docker_escape(d, image, &i)) < 0 || (r = sbx_docker_escape(d, repo, &rp)) < 0 ||
            (r = sbx_docker_escape(d, tag, &t)) < 0)
                return r;
        if (asprintf(&path, "/images/%s/tag?repo=%s&tag=%s", i, rp, t) < 0)
                return -ENOMEM;
        r = sbx_docker_request_raw(d, "POST", path, NULL, 0, NULL, NULL, error);
        if (r >= 0 && r != 201)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker answered HTTP %d to the tag of %s", r,
                                     image);
        return r < 0 ? r : 0;
}
