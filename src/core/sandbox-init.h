/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Where the sandboxes' first process is and who it runs as: what the container
 * body gives Docker (container-body.c), and the entrypoint a snapshot's commit
 * leaves out (labels.c). */

/* The first process (src/init/xagent-sandbox-init.c): mounted read-only from the
 * host through a Docker volume whose name starts with SBX_INIT_VOLUME_PREFIX, run
 * as SBX_INIT_USER (not the owner), so nothing of the owner's runs and nothing can
 * be reached in the container before the service has checked its mounts
 * (docs/security.md). The guest directory is reserved: no volume and no working
 * directory may lie in it. */
#define SBX_INIT_GUEST_DIR "/.xagent-sandbox"
#define SBX_INIT_PATH SBX_INIT_GUEST_DIR "/xagent-sandbox-init"
#define SBX_INIT_VOLUME_PREFIX "xagent-sandbox-init"
#define SBX_INIT_USER "65534:65534"
