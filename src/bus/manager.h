/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's set-up, its signals and its idle exit: builds the Manager
 * (manager-state.h), connects to the bus, registers the objects, takes the name and
 * runs the loop. */

#include "manager-state.h"

typedef struct ManagerConfig {
        const char *config_path;
        const char *state_dir;
        const char *docker_host;        /* unix:///… */
        const char *init_dir;           /* the directory of xagent-sandbox-init */
        unsigned idle_timeout_s;        /* 0 = never */
        /* For tests only (SBX_TEST_DEADLINE_TICK_MS, SBX_TEST_DETACHED_POLL_MS in
         * xagent-sandboxd(8)); 0: the defaults */
        uint64_t deadline_tick_usec;
        uint64_t detached_poll_usec;
        uint64_t pool_tick_usec;        /* warm pools' refill period (bus-pool.h); 0: the default */
} ManagerConfig;

int manager_new(const ManagerConfig *config, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Connects to the bus, registers the objects, reconciles store and Docker, takes
 * the name, then runs until SIGTERM or the idle exit. */
int manager_run(Manager *m);

/* Reads a host policy file: a missing file is the built-in defaults; a malformed
 * one is an error naming the key (also for --check-config). */
int manager_load_policy(const char *path, SbxPolicy **ret, SbxError *error);
/* The policy's runtimes are registered with the engine at docker_host (GET /info):
 * InvalidArgs naming the first that is not; an engine that does not answer: not
 * checked (a warning). */
int manager_check_runtimes(const char *docker_host, const SbxPolicy *p, SbxError *error);
