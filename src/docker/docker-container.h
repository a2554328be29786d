/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Typed wrappers for the container calls of the Engine API. Results and errors as
 * described in docker.h; `container` is an id or a name. A state change's answer
 * is checked against what Docker answers it with (sbx_docker_request_no_content,
 * sbx_docker_request_expect): any other 2xx is BackendError. */

#include <stdbool.h>

#include "docker.h"

/* POST /containers/create?name=: config is the full create body (Config fields
 * plus "HostConfig"). Returns the new container's id in *ret_id. A taken name is
 * -EBUSY; a missing image is -ENODATA (DockerNotFound). */
int sbx_docker_container_create(
                SbxDocker *d,
                const char *name,
                json_object *config,
                char **ret_id,
                SbxError *error);

/* POST /containers/{id}/start. 0 when started, 1 when it was already running. */
int sbx_docker_container_start(SbxDocker *d, const char *container, SbxError *error);

/* POST /containers/{id}/stop?t=: SIGTERM, SIGKILL after timeout_s seconds. The
 * request itself waits timeout_s + SBX_DOCKER_STOP_MARGIN_S. 0 when stopped, 1
 * when it was not running. */
int sbx_docker_container_stop(SbxDocker *d, const char *container, unsigned timeout_s, SbxError *error);

/* POST /containers/{id}/pause or /unpause (the cgroup freezer): 0 when done. Docker
 * answers 409 (DockerConflict) for a container that is not running, or already so. */
int sbx_docker_container_pause(SbxDocker *d, const char *container, bool pause, SbxError *error);

/* DELETE /containers/{id}?force=1&v=1: kills it if running, removes anonymous
 * volumes. */
int sbx_docker_container_remove(SbxDocker *d, const char *container, SbxError *error);

/* POST /containers/{id}/rename?name=: DockerConflict when the name is taken. */
int sbx_docker_container_rename(SbxDocker *d, const char *container, const char *name, SbxError *error);

/* GET /containers/{id}/json. */
int sbx_docker_container_inspect(SbxDocker *d, const char *container, json_object **ret, SbxError *error);
/* How many of the container's processes the kernel's OOM killer killed, from its
 * memory cgroup (docker-cgroup.h), inspect its answer: Docker's State.OOMKilled says
 * so only once the container ended (20.10). 0 also when that cannot be told: the
 * engine is not local (TCP, TLS), the container does not run, its cgroup is not found. */
int sbx_docker_container_oom_kills(SbxDocker *d, json_object *inspect);

/* GET /containers/json?all=1&filters={"label":[…]}: every container, running or
 * not, carrying all of labels ("key" or "key=value"; NULL-terminated, NULL or
 * empty for no filter). *ret is Docker's JSON array of summaries. */
int sbx_docker_container_list(SbxDocker *d, const char *const *labels, json_object **ret, SbxError *error);

/* GET /containers/{id}/logs?stdout=1&timestamps=1&tail=N: the last tail lines the
 * container's first process wrote to its standard output (the container has no
 * terminal), each prefixed by Docker's RFC 3339 receive time and a space, Docker's
 * stream framing removed. */
int sbx_docker_container_log_tail(SbxDocker *d, const char *container, unsigned tail, char **ret,
                                  SbxError *error);

/* GET /containers/{id}/stats?stream=false&one-shot=true. */
int sbx_docker_container_stats(SbxDocker *d, const char *container, json_object **ret, SbxError *error);
