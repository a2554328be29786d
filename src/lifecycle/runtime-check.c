/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The posture of an observed container, with the runtime it asked for (its label,
 * through the policy's runtimes) against what the engine reports and, on a local
 * engine, what its first process on the host is (docs/security.md, "Runtimes"). */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "lifecycle-internal.h"
#include "log.h"
#include "posture.h"
#include "runtime.h"

#define PROC_TEXT_MAX 4096

static ssize_t read_proc(pid_t pid, const char *what, char *buf, size_t size) {
        char path[64];
        ssize_t n;
        int fd;

        snprintf(path, sizeof path, "/proc/%d/%s", (int) pid, what);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY)) < 0)
                return -1;
        n = read(fd, buf, size - 1);
        (void) close(fd);
        if (n >= 0)
                buf[n] = '\0';
        return n;
}

/* State.Pid, while it is in the container's cgroup (the pid is this host's, not one
 * of another PID namespace or reused): what its argv[0] says it is. */
static SbxHostProcess host_process(SbxLifecycle *l, const SbxObserved *o) {
        char cgroup[PROC_TEXT_MAX], cmdline[PROC_TEXT_MAX];

        if (sbx_docker_remote(l->docker) || o->pid <= 0 || !o->id || !sbx_state_is_up(o->state))
                return SBX_HOST_PROCESS_UNSEEN;
        if (read_proc((pid_t) o->pid, "cgroup", cgroup, sizeof cgroup) <= 0 || !strstr(cgroup, o->id) ||
            read_proc((pid_t) o->pid, "cmdline", cmdline, sizeof cmdline) <= 0)
                return SBX_HOST_PROCESS_UNSEEN;
        return streq(cmdline, SBX_RUNSC_SANDBOX_ARGV0) ? SBX_HOST_PROCESS_GVISOR : SBX_HOST_PROCESS_OTHER;
}

const char *lc_engine_runtime_of(SbxLifecycle *l, const SbxObserved *o, bool *ret_known) {
        const char *asked = sbx_observed_get_label(o, SBX_LABEL_RUNTIME);
        const char *engine = sbx_runtimes_engine(&l->policy->runtimes, asked);

        *ret_known = !asked || engine;
        return asked ? engine : NULL;
}

unsigned lc_posture_of(SbxLifecycle *l, const SbxObserved *o, bool isolated, int64_t memory_bytes) {
        bool known;
        const char *engine = lc_engine_runtime_of(l, o, &known);
        SbxHostProcess process = host_process(l, o);
        unsigned m;

        /* gVisor asked for on a local engine: its sandbox process must be seen. */
        if (sbx_runtime_engine_is_gvisor(engine) && process == SBX_HOST_PROCESS_UNSEEN &&
            !sbx_docker_remote(l->docker) && sbx_state_is_up(o->state))
                process = SBX_HOST_PROCESS_GONE;
        m = sbx_posture_check(o, &(SbxPostureExpect) {
                .pids_limit = sbx_runtime_pids_limit(engine, l->policy->pids_limit),
                .publish_address = l->policy->publish_address,
                .network_isolated = isolated,
                .memory_bytes = memory_bytes,
                .engine_runtime = engine,
                .host_process = process,
        });
        /* A runtime the policy no longer offers: nothing says what it should be. */
        return known ? m : m | SBX_POSTURE_RUNTIME;
}

bool lc_runtime_as_asked(SbxLifecycle *l, const SbxObserved *o) {
        return !(lc_posture_of(l, o, o->network_isolated, o->has_raw_memory_bytes ? o->raw_memory_bytes : 0) &
                 SBX_POSTURE_RUNTIME);
}

const char *lc_runtime_asked(const char *runtime) {
        return isempty(runtime) || streq(runtime, SBX_RUNTIME_DEFAULT) ? NULL : runtime;
}

/* The whole command line, its NULs made spaces. */
static bool cmdline_of(pid_t pid, char *buf, size_t size) {
        ssize_t n = read_proc(pid, "cmdline", buf, size);

        if (n <= 0)
                return false;
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        return true;
}

void lc_reap_runtime_strays(SbxLifecycle *l, const char *container_id) {
        DIR *d = NULL;
        char cmdline[PROC_TEXT_MAX];
        struct dirent *de;

        if (sbx_docker_remote(l->docker) || !container_id || strlen(container_id) != 64 || !(d = opendir("/proc")))
                return;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);

                if (pid <= 1 || *end || !cmdline_of((pid_t) pid, cmdline, sizeof cmdline) ||
                    !startswith(cmdline, "runsc") || !strstr(cmdline, container_id))
                        continue;
                log_notice("Container %s: runsc process %ld outlived its failed start: killed", container_id, pid);
                (void) kill((pid_t) pid, SIGKILL);
        }
        closedir(d);
}

int lc_check_runtime_kept(const char *shown, const SbxObserved *o, const char *runtime, SbxError *error) {
        const char *has = sbx_observed_get_label(o, SBX_LABEL_RUNTIME);

        if (streq_ptr(lc_runtime_asked(has), lc_runtime_asked(runtime)))
                return 0;
        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                             "Sandbox '%s' exists under another runtime (%s, asked for %s); mismatched fields: runtime",
                             shown, has ?: SBX_RUNTIME_DEFAULT, lc_runtime_asked(runtime) ?: SBX_RUNTIME_DEFAULT);
}
