/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Typed wrappers for the volume calls of the Engine API. Results and errors as
 * described in docker.h. */

#include "docker.h"

/* GET /volumes/{name}. A missing volume is -ENODATA (DockerNotFound). */
int sbx_docker_volume_inspect(SbxDocker *d, const char *name, json_object **ret, SbxError *error);

/* POST /volumes/create with the local driver and driver_opts (a JSON object of
 * strings). Creating an existing volume with the same options succeeds. */
int sbx_docker_volume_create_local(SbxDocker *d, const char *name, json_object *driver_opts, SbxError *error);
