/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "docker-image.h"
#include "json-util.h"

static int image_path(SbxDocker *d, const char *image, const char *suffix, char **ret, SbxError *error) {
        _cleanup_free_ char *e = NULL;
        int r;

        if (isempty(image))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "image: must not be empty");
        r = sbx_docker_escape(d, image, &e);
        if (r < 0)
                return r;
        if (asprintf(ret, "/images/%s%s", e, suffix) < 0)
                return -ENOMEM;
        return 0;
}

int sbx_docker_commit(
                SbxDocker *d,
                const char *container,
                const char *repo,
                const char *tag,
                json_object *config,
                char **ret_image_id,
                SbxError *error) {

        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_free_ char *c = NULL, *rp = NULL, *t = NULL, *path = NULL;
        int r;

        if (!ret_image_id)
                return -EINVAL;
        if (isempty(container))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "container: must not be empty");
        if (isempty(repo))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "repo: must not be empty");
        r = sbx_docker_escape(d, container, &c);
        if (r >= 0)
                r = sbx_docker_escape(d, repo, &rp);
        if (r >= 0 && !isempty(tag))
                r = sbx_docker_escape(d, tag, &t);
        if (r < 0)
                return r;
        if (asprintf(&path, "/commit?container=%s&repo=%s%s%s", c, rp, t ? "&tag=" : "", t ?: "") < 0)
                return -ENOMEM;

        r = sbx_docker_request_expect(d, "POST", path, config, SBX_DOCKER_COMMIT_TIMEOUT_S, 201, json_type_object,
                                      &answer, error);
        if (r < 0)
                return r;
        return sbx_docker_json_string(answer, "Id", ret_image_id, error);
}

int sbx_docker_image_list(SbxDocker *d, const char *label, json_object **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *filters = NULL, *answer = NULL;
        _cleanup_free_ char *escaped = NULL, *path = NULL;
        json_object *labels;
        int r;

        if (!ret || isempty(label))
                return -EINVAL;
        if (!(filters = json_object_new_object()) ||
            sbx_json_put(filters, "label", labels = json_object_new_array()) < 0 ||
            sbx_json_push(labels, json_object_new_string(label)) < 0)
                return -ENOMEM;
        r = sbx_docker_escape(d, json_object_to_json_string_ext(filters, JSON_C_TO_STRING_PLAIN), &escaped);
        if (r < 0)
                return r;
        if (asprintf(&path, "/images/json?filters=%s", escaped) < 0)
                return -ENOMEM;
        r = sbx_docker_request(d, "GET", path, NULL, 0, &answer, error);
        if (r < 0)
                return r;
        if (!json_object_is_type(answer, json_type_array))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker's image list is not a JSON array");
        *ret = TAKE_PTR(answer);
        return 0;
}

int sbx_docker_image_inspect(SbxDocker *d, const char *image, json_object **ret, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = image_path(d, image, "/json", &path, error);
        if (r < 0)
                return r;
        return sbx_docker_get_object(d, path, ret, error);
}

int sbx_docker_image_remove(SbxDocker *d, const char *image, bool force, SbxError *error) {
        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        r = image_path(d, image, force ? "?force=1" : "", &path, error);
        if (r < 0)
                return r;
        /* 200 with what was untagged and deleted */
        r = sbx_docker_request_expect(d, "DELETE", path, NULL, 0, 200, json_type_array, &answer, error);
        return r < 0 ? r : 0;
}
