/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The tokens of execs (exec.h): this service instance's id, random and made once
 * per process, and a random part. Every process the service starts in a sandbox
 * carries one in its environment, so the init can signal it and its descendants; an
 * instance that starts after another died finds the execs the dead one left running
 * by the instance id (sbx_lifecycle_exec_sweep). */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "exec.h"
#include "time-util.h"

static void hex(const uint8_t *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++)
                snprintf(out + 2 * i, 3, "%02x", b[i]);
}

static char instance_id[SBX_EXEC_INSTANCE_LEN + 1];
static pthread_once_t instance_once = PTHREAD_ONCE_INIT;

static void make_instance_id(void) {
        uint8_t b[SBX_EXEC_INSTANCE_LEN / 2];
        uint64_t t = sbx_now_monotonic_us() ^ ((uint64_t) getpid() << 40);

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                memcpy(b, &t, sizeof b);        /* unique enough among this host's instances */
        hex(b, sizeof b, instance_id);
}

const char *sbx_exec_instance_id(void) {
        (void) pthread_once(&instance_once, make_instance_id);
        return instance_id;
}

/* "<instance id>.<random>": the instance id tells the next instance which execs
 * were this one's (sbx_lifecycle_exec_sweep). */
int sbx_exec_make_token(char token[static SBX_EXEC_TOKEN_LEN + 1]) {
        uint8_t b[16];

        if (getrandom(b, sizeof b, 0) != (ssize_t) sizeof b)
                return -EIO;
        memcpy(token, sbx_exec_instance_id(), SBX_EXEC_INSTANCE_LEN);
        token[SBX_EXEC_INSTANCE_LEN] = '.';
        hex(b, sizeof b, token + SBX_EXEC_INSTANCE_LEN + 1);
        return 0;
}
