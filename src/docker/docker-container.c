/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "docker-cgroup.h"
#include "docker-container.h"
#include "docker-dialect.h"
#include "docker-stream.h"

/* "/containers/<escaped container><suffix>" */
static int container_path(SbxDocker *d, const char *container, const char *suffix, char **ret, SbxError *error) {
        _cleanup_free_ char *e = NULL;
        int r;

        if (isempty(container))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "container: must not be empty");
        r = sbx_docker_escape(d, container, &e);
        if (r < 0)
                return r;
        if (asprintf(ret, "/containers/%s%s", e, suffix) < 0)
                return -ENOMEM;
        return 0;
}

int sbx_docker_container_create(
                SbxDocker *d,
                const char *name,
                json_object *config,
                char **ret_id,
                SbxError *error) {

        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_free_ char *e = NULL, *path = NULL;
        int r;

        if (!config || !ret_id)
                return -EINVAL;
        if (name) {
                r = sbx_docker_escape(d, name, &e);
                if (r < 0)
                        return r;
        }
        if (asprintf(&path, "/containers/create%s%s", e ? "?name=" : "", e ?: "") < 0)
                return -ENOMEM;

        r = sbx_docker_request_expect(d, "POST", path, config, 0, 201, json_type_object, &answer, error);
        if (r < 0)
                return r;
        return sbx_docker_json_string(answer, "Id", ret_id, error);
}

/* start and stop answer 204 when done, 304 when the container was already so. */
static int post_state(SbxDocker *d, const char *container, const char *suffix, unsigned timeout_s, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = container_path(d, container, suffix, &path, error);
        if (r < 0)
                return r;
        return sbx_docker_request_no_content(d, "POST", path, timeout_s, true, error);
}

int sbx_docker_container_start(SbxDocker *d, const char *container, SbxError *error) {
        return post_state(d, container, "/start", 0, error);
}

int sbx_docker_container_stop(SbxDocker *d, const char *container, unsigned timeout_s, SbxError *error) {
        char suffix[32];

        snprintf(suffix, sizeof(suffix), "/stop?t=%u", timeout_s);
        return post_state(d, container, suffix, timeout_s + SBX_DOCKER_STOP_MARGIN_S, error);
}

int sbx_docker_container_pause(SbxDocker *d, const char *container, bool pause, SbxError *error) {
        int r = post_state(d, container, pause ? "/pause" : "/unpause", 0, error);

        return r < 0 ? r : 0;
}

int sbx_docker_container_remove(SbxDocker *d, const char *container, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = container_path(d, container, "?force=1&v=1", &path, error);
        if (r < 0)
                return r;
        r = sbx_docker_request_no_content(d, "DELETE", path, 0, false, error);
        return r < 0 ? r : 0;
}

int sbx_docker_container_rename(SbxDocker *d, const char *container, const char *name, SbxError *error) {
        _cleanup_free_ char *e = NULL, *suffix = NULL, *path = NULL;
        int r;

        if (isempty(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "name: must not be empty");
        if ((r = sbx_docker_escape(d, name, &e)) < 0)
                return r;
        if (asprintf(&suffix, "/rename?name=%s", e) < 0)
                return -ENOMEM;
        if ((r = container_path(d, container, suffix, &path, error)) < 0)
                return r;
        r = sbx_docker_request_no_content(d, "POST", path, 0, false, error);
        return r < 0 ? r : 0;
}

/* The first process of a running container of a local engine (its cgroups are this
 * host's) and the container's id, from its inspect answer; 0 when not so. */
static pid_t local_pid(SbxDocker *d, json_object *inspect, const char **ret_id) {
        json_object *state = json_object_object_get(inspect, "State"), *pid = json_object_object_get(state, "Pid");
        int64_t n;

        *ret_id = json_object_get_string(json_object_object_get(inspect, "Id"));
        if (!sbx_docker_socket_path(d) || !pid || !json_object_is_type(pid, json_type_int))
                return 0;
        n = json_object_get_int64(pid);
        return n > 0 && n <= INT32_MAX ? (pid_t) n : 0;
}

/* A running local container's limits as the kernel enforces them: Podman 4.3.1
 * answers those it was created with after `podman update` changed them. */
static int apply_kernel_limits(SbxDocker *d, json_object *inspect) {
        const char *id;
        pid_t pid = local_pid(d, inspect, &id);
        SbxKernelLimits k;

        if (pid == 0 || sbx_cgroup_limits(pid, id, &k) <= 0)
                return 0;
        return sbx_dialect_apply_kernel_limits(inspect, &k);
}

int sbx_docker_container_oom_kills(SbxDocker *d, json_object *inspect) {
        const char *id;
        pid_t pid = local_pid(d, inspect, &id);

        return pid == 0 ? 0 : sbx_cgroup_oom_kills(pid, id);
}

/* Podman's answer in Docker's words (dialect.h); its log bound is in the libpod
 * answer only. */
static int normalize_podman(SbxDocker *d, const char *container, json_object *inspect, SbxError *error) {
        _cleanup_(json_object_putp) json_object *libpod = NULL;
        _cleanup_free_ char *compat = NULL, *path = NULL;
        int r;

        if ((r = container_path(d, container, "/json", &compat, error)) < 0)
                return r;
        if (asprintf(&path, "/libpod%s", compat) < 0)
                return -ENOMEM;
        if ((r = sbx_docker_get_object(d, path, &libpod, error)) < 0)
                return r;
        if ((r = apply_kernel_limits(d, inspect)) < 0)
                return r;
        return sbx_dialect_normalize_inspect(sbx_docker_dialect(d), inspect, libpod);
}

int sbx_docker_container_inspect(SbxDocker *d, const char *container, json_object **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *j = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        r = container_path(d, container, "/json", &path, error);
        if (r < 0)
                return r;
        if ((r = sbx_docker_get_object(d, path, &j, error)) < 0)
                return r;
        if (sbx_docker_dialect(d)->kind == SBX_ENGINE_PODMAN &&
            (r = normalize_podman(d, container, j, error)) < 0)
                return r;
        *ret = TAKE_PTR(j);
        return 0;
}

/* {"label":["k=v",…]}, JSON-encoded then URL-escaped, as Docker wants filters. */
static int label_filters(SbxDocker *d, const char *const *labels, char **ret) {
        _cleanup_(json_object_putp) json_object *filters = NULL;
        json_object *list;
        const char *text;

        filters = json_object_new_object();
        list = json_object_new_array();
        if (!filters || !list || json_object_object_add(filters, "label", list) < 0) {
                json_object_put(list);
                return -ENOMEM;
        }
        for (const char *const *l = labels; *l; l++) {
                json_object *s = json_object_new_string(*l);

                if (!s || json_object_array_add(list, s) < 0) {
                        json_object_put(s);
                        return -ENOMEM;
                }
        }
        text = json_object_to_json_string_ext(filters, JSON_C_TO_STRING_PLAIN);
        if (!text)
                return -ENOMEM;
        return sbx_docker_escape(d, text, ret);
}

int sbx_docker_container_list(SbxDocker *d, const char *const *labels, json_object **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *answer = NULL;
        _cleanup_free_ char *filters = NULL, *path = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        if (labels && labels[0]) {
                r = label_filters(d, labels, &filters);
                if (r < 0)
                        return r;
        }
        if (asprintf(&path, "/containers/json?all=1%s%s", filters ? "&filters=" : "", filters ?: "") < 0)
                return -ENOMEM;

        r = sbx_docker_request(d, "GET", path, NULL, 0, &answer, error);
        if (r < 0)
                return r;
        if (!json_object_is_type(answer, json_type_array))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker's container list is not a JSON array");
        *ret = TAKE_PTR(answer);
        return 0;
}

int sbx_docker_container_log_tail(SbxDocker *d, const char *container, unsigned tail, char **ret,
                                  SbxError *error) {
        _cleanup_free_ char *path = NULL, *suffix = NULL, *data = NULL;
        size_t size = 0;
        int r;

        if (asprintf(&suffix, "/logs?stdout=1&timestamps=1&tail=%u", tail) < 0)
                return -ENOMEM;
        if ((r = container_path(d, container, suffix, &path, error)) < 0)
                return r;
        r = sbx_docker_request_raw(d, "GET", path, NULL, 0, &data, &size, error);
        if (r < 0)
                return r;
        return sbx_demux_all(data ?: "", size, ret, error);
}

int sbx_docker_container_stats(SbxDocker *d, const char *container, json_object **ret, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        int r;

        r = container_path(d, container, "/stats?stream=false&one-shot=true", &path, error);
        if (r < 0)
                return r;
        return sbx_docker_get_object(d, path, ret, error);
}
