/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "docker-volume.h"

int sbx_docker_volume_inspect(SbxDocker *d, const char *name, json_object **ret, SbxError *error) {
        _cleanup_free_ char *e = NULL, *path = NULL;
        int r;

        if (isempty(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "volume: name must not be empty");
        if ((r = sbx_docker_escape(d, name, &e)) < 0)
                return r;
        if (asprintf(&path, "/volumes/%s", e) < 0)
                return -ENOMEM;
        return sbx_docker_get_object(d, path, ret, error);
}

int sbx_docker_volume_create_local(SbxDocker *d, const char *name, json_object *driver_opts, SbxError *error) {
        _cleanup_(json_object_putp) json_object *body = json_object_new_object(), *answer = NULL;
        _cleanup_free_ char *made = NULL;
        int r;

        if (!body)
                return -ENOMEM;
        if (isempty(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "volume: name must not be empty");
        if ((r = sbx_json_put(body, "Name", json_object_new_string(name))) < 0 ||
            (r = sbx_json_put(body, "Driver", json_object_new_string("local"))) < 0 ||
            (r = sbx_json_put(body, "DriverOpts", json_object_get(driver_opts))) < 0)
                return r;
        /* 201 with the volume, also when it existed already */
        r = sbx_docker_request_expect(d, "POST", "/volumes/create", body, 0, 201, json_type_object, &answer, error);
        if (r < 0 || (r = sbx_docker_json_string(answer, "Name", &made, error)) < 0)
                return r;
        if (!streq(made, name))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker answered POST /volumes/create for \"%s\" with the volume \"%.64s\"",
                                     name, made);
        return 0;
}
