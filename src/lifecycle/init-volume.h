/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The Docker volume that carries every sandbox's first process (src/init): a local
 * volume bound read-only to the directory of xagent-sandbox-init, mounted at
 * SBX_INIT_GUEST_DIR. A volume rather than a bind mount, so that neither this
 * service's verdict nor xagent's counts it among the sandbox's volumes. Its name
 * is SBX_INIT_VOLUME_PREFIX plus a hash of the directory, so daemons using
 * different directories (an installation and a build tree) never share one. */

#include "docker.h"

/* Checks that init_dir holds the program, a regular executable file: the daemon
 * refuses to start without it (IO, naming the path and --init-dir). */
int sbx_init_program_check(const char *init_dir, SbxError *error);

/* Makes sure the volume for init_dir exists with exactly these options, and that
 * the program is there; returns its name. A volume of that name bound elsewhere is
 * a BackendError (it is never silently replaced). */
int sbx_init_volume_ensure(SbxDocker *d, const char *init_dir, char **ret_name, SbxError *error);

/* On a remote engine (tcp://): the volume SBX_INIT_VOLUME_PREFIX-remote-HASH (the
 * program's SHA-256) on the engine, created there and filled with the program
 * through a helper container made from image that is created, never started, and
 * removed (init-volume-remote.c); its content is read back and compared first. */
int sbx_init_volume_ensure_remote(SbxDocker *d, const char *init_dir, const char *image, char **ret_name,
                                  SbxError *error);
