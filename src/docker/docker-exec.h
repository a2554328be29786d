/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Docker's exec API: a process started in a running container, its standard
 * streams carried on a hijacked HTTP connection.
 *
 * The start uses its own AF_UNIX connection, not the client's libcurl handle:
 * after "101 UPGRADED" the connection is a raw byte stream that the caller polls
 * together with other descriptors (its own thread or loop), half-closes to give
 * the process end-of-file on its standard input, and closes when done.
 * CURLOPT_CONNECT_ONLY would yield the same socket, but the request and the
 * response head would still be written and parsed here, and the easy handle
 * would have to outlive the call on the relay's thread; a plain socket is that
 * without the indirection. Results and errors as in docker.h. */

#include <stdbool.h>
#include <stdint.h>

#include "docker.h"

typedef struct SbxExecConfig {
        char *const *argv;              /* non-empty, NULL-terminated */
        char *const *env;               /* "KEY=VALUE", NULL-terminated; NULL for none */
        const char *working_dir;        /* NULL: the container's */
        const char *user;               /* "uid:gid" */
        bool tty;
        bool attach_stdin;
} SbxExecConfig;

typedef struct SbxExecState {
        bool running;
        bool exited;                    /* exit_code is valid */
        int exit_code;                  /* Docker's: 128+N after signal N */
        int64_t pid;                    /* on the host; 0 when not running */
} SbxExecState;

/* The deadline of one exec API exchange, well below the bus's 25 s. */
#define SBX_DOCKER_EXEC_CALL_TIMEOUT_S 20U

/* POST /containers/{id}/exec: never privileged; the process's streams are all
 * attached. A stopped container is DockerConflict. */
int sbx_docker_exec_create(SbxDocker *d, const char *container, const SbxExecConfig *c, char **ret_id,
                           SbxError *error);

/* POST /exec/{id}/start, hijacked: *ret_fd is the connected socket (O_CLOEXEC,
 * O_NONBLOCK), positioned at the first byte of the process's stream (raw with a
 * terminal, multiplexed without: docker-stream.h). */
int sbx_docker_exec_start(SbxDocker *d, const char *exec_id, bool tty, int *ret_fd, SbxError *error);

/* GET /exec/{id}/json. */
int sbx_docker_exec_inspect(SbxDocker *d, const char *exec_id, SbxExecState *ret, SbxError *error);

/* After the stream ended: waits (up to about 2 s) for Docker to record the exit
 * and returns the code. */
int sbx_docker_exec_wait(SbxDocker *d, const char *exec_id, int *ret_code, SbxError *error);

/* POST /exec/{id}/resize?h=&w=. */
int sbx_docker_exec_resize(SbxDocker *d, const char *exec_id, unsigned rows, unsigned cols, SbxError *error);
