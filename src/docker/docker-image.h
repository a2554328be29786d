/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Typed wrappers for the image calls of the Engine API. Results and errors as
 * described in docker.h; `image` is an id or a reference ("repo:tag"). */

#include <stdbool.h>

#include "docker.h"

/* POST /commit?container=&repo=&tag= with config (may be NULL) as the body.
 * Docker merges config into the container's own: a key given in config's
 * "Labels" replaces the container's value (set it to "" to blank it), labels
 * not named keep theirs. The container is paused while committing. Returns the
 * image id ("sha256:…") in *ret_image_id. A missing container is -ENODATA (DockerNotFound). */
int sbx_docker_commit(
                SbxDocker *d,
                const char *container,
                const char *repo,
                const char *tag,
                json_object *config,
                char **ret_image_id,
                SbxError *error);

/* GET /images/json?filters={"label":["<label>"]}: the summaries (Id, RepoTags,
 * Labels, Created…) of the images carrying label ("key" or "key=value"), dangling
 * ones included, as a JSON array. */
int sbx_docker_image_list(SbxDocker *d, const char *label, json_object **ret, SbxError *error);

/* GET /images/{name}/json. */
int sbx_docker_image_inspect(SbxDocker *d, const char *image, json_object **ret, SbxError *error);

/* DELETE /images/{name}[?force=1]. An image used by a container is -EBUSY
 * unless force. */
int sbx_docker_image_remove(SbxDocker *d, const char *image, bool force, SbxError *error);

/* A pull's progress: bytes of the layers fetched so far, of those whose size is known. */
typedef void (*SbxDockerPullProgress)(uint64_t done, uint64_t total, void *userdata);

/* POST /images/create?fromImage=REF (the engine's pull), its stream of progress read
 * to its end: progress (may be NULL) at each change. The layers' announced sizes
 * beyond max_bytes (0: no bound) stop it (PolicyViolation naming max_image_mib): the
 * engine drops what it had fetched. An error the engine reports in the stream is
 * NoSuchImage (no such image), RegistryUntrusted (a refused certificate) or
 * BackendError, each with the engine's words. */
int sbx_docker_image_pull(SbxDocker *d, const char *ref, uint64_t max_bytes, SbxDockerPullProgress progress,
                          void *userdata, SbxError *error);

/* POST /images/{image}/tag?repo=&tag= (201). */
int sbx_docker_image_tag(SbxDocker *d, const char *image, const char *repo, const char *tag, SbxError *error);
