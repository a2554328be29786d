/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "docker-cgroup.h"

#define CGROUP_ROOT "/sys/fs/cgroup"
/* cgroup v1 says "no limit" with the largest page-aligned value, about 2^63. */
#define V1_UNLIMITED (INT64_C(1) << 62)
#define NANOS_PER_CPU INT64_C(1000000000)

static int read_small(const char *path, char *buf, size_t size) {
        FILE *f = fopen(path, "re");
        size_t n;

        if (!f)
                return -errno;
        n = fread(buf, 1, size - 1, f);
        fclose(f);
        buf[n] = 0;
        buf[strcspn(buf, "\n")] = 0;
        return n > 0 ? 0 : -ENODATA;
}

/* "max", or a decimal number; v1's near-2^63 is "max" too. 0 = unlimited. */
static bool parse_limit(const char *s, int64_t *ret) {
        char *end;
        long long v;

        if (streq(s, "max")) {
                *ret = 0;
                return true;
        }
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || end == s || (*end && *end != ' '))
                return false;
        *ret = v >= V1_UNLIMITED || v < 0 ? 0 : v;
        return true;
}

static bool read_limit(const char *dir, const char *file, int64_t *ret) {
        _cleanup_free_ char *path = NULL;
        char buf[64];

        return asprintf(&path, "%s/%s", dir, file) >= 0 && read_small(path, buf, sizeof buf) >= 0 &&
                parse_limit(buf, ret);
}

static bool has_controller(char *list, const char *controller) {
        for (char *c; (c = strsep(&list, ","));)
                if (streq(c, controller))
                        return true;
        return false;
}

/* The directory of pid's cgroup for controller (v1), or its unified one (v2,
 * controller NULL), from /proc/PID/cgroup; only a path naming container_id. */
static char *cgroup_dir(const char *table, const char *controller, const char *container_id) {
        for (const char *line = table; *line;) {
                size_t len = strcspn(line, "\n");
                _cleanup_free_ char *l = strndup(line, len);
                char *controllers, *path, *dir = NULL;

                line += len + (line[len] == '\n');
                if (!l || !(controllers = strchr(l, ':')) || !(path = strchr(++controllers, ':')))
                        continue;
                *path++ = 0;
                if (!strstr(path, container_id) ||
                    !(controller ? has_controller(controllers, controller) : *controllers == 0))
                        continue;
                return asprintf(&dir, "%s/%s%s", CGROUP_ROOT, controller ?: "", path) < 0 ? NULL : dir;
        }
        return NULL;
}

static void read_v1(const char *table, const char *id, SbxKernelLimits *k) {
        _cleanup_free_ char *memory = cgroup_dir(table, "memory", id), *pids = cgroup_dir(table, "pids", id),
                            *cpu = cgroup_dir(table, "cpu", id);
        int64_t quota, period;

        if (memory) {
                k->has_memory = read_limit(memory, "memory.limit_in_bytes", &k->memory);
                /* memory plus swap; none set is unlimited swap, Docker's -1 */
                k->has_memory_swap = read_limit(memory, "memory.memsw.limit_in_bytes", &k->memory_swap);
                if (k->has_memory_swap && k->memory_swap == 0)
                        k->memory_swap = -1;
        }
        if (pids)
                k->has_pids = read_limit(pids, "pids.max", &k->pids);
        if (cpu && read_limit(cpu, "cpu.cfs_quota_us", &quota) && read_limit(cpu, "cpu.cfs_period_us", &period) &&
            period > 0) {
                k->has_nano_cpus = true;
                k->nano_cpus = quota * NANOS_PER_CPU / period;
        }
}

static void read_v2(const char *dir, SbxKernelLimits *k) {
        _cleanup_free_ char *path = NULL;
        int64_t swap, quota, period;
        char buf[64], *space;

        k->has_memory = read_limit(dir, "memory.max", &k->memory);
        /* swap alone here: Docker's MemorySwap is memory plus swap, -1 unlimited */
        if (asprintf(&path, "%s/memory.swap.max", dir) >= 0 && read_small(path, buf, sizeof buf) >= 0 &&
            parse_limit(buf, &swap) && k->has_memory) {
                k->has_memory_swap = true;
                k->memory_swap = streq(buf, "max") || k->memory == 0 ? -1 : k->memory + swap;
        }
        path = mfree(path);
        k->has_pids = read_limit(dir, "pids.max", &k->pids);
        if (asprintf(&path, "%s/cpu.max", dir) >= 0 && read_small(path, buf, sizeof buf) >= 0 &&
            (space = strchr(buf, ' ')) && parse_limit(space + 1, &period) && period > 0) {
                *space = 0;
                if (parse_limit(buf, &quota)) {
                        k->has_nano_cpus = true;
                        k->nano_cpus = quota * NANOS_PER_CPU / period;
                }
        }
}

/* Whether any of its bounding, permitted or effective capabilities is held. */
static void read_caps(pid_t pid, SbxKernelLimits *k) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        unsigned found = 0;
        FILE *f;

        if (asprintf(&path, "/proc/%d/status", (int) pid) < 0 || !(f = fopen(path, "re")))
                return;
        while (getline(&line, &size, f) > 0) {
                const char *v = startswith(line, "CapBnd:") ?: startswith(line, "CapPrm:") ?: startswith(line, "CapEff:");

                if (!v)
                        continue;
                found++;
                if (strtoull(v, NULL, 16) != 0)
                        k->holds_caps = true;
        }
        fclose(f);
        k->has_caps = found == 3;
}

/* The count on the line "KEY N" of a flat-keyed file (v1 memory.oom_control, v2
 * memory.events); -1 when there is none or it is not a plain decimal number. */
static int64_t read_count(const char *dir, const char *file, const char *key) {
        _cleanup_free_ char *path = NULL, *line = NULL;
        size_t size = 0;
        int64_t n = -1;
        FILE *f;

        if (!dir || asprintf(&path, "%s/%s", dir, file) < 0 || !(f = fopen(path, "re")))
                return -1;
        while (n < 0 && getline(&line, &size, f) > 0) {
                const char *v = startswith(line, key);
                char *end;

                if (!v || *v++ != ' ' || !(*v >= '0' && *v <= '9'))
                        continue;
                errno = 0;
                n = strtoll(v, &end, 10);
                if (errno != 0 || (*end && *end != '\n'))
                        n = -1;
        }
        fclose(f);
        return n;
}

static char *proc_cgroup_table(pid_t pid) {
        _cleanup_free_ char *path = NULL;
        char *table = NULL;
        size_t size = 0;
        FILE *f;

        if (pid <= 0 || asprintf(&path, "/proc/%d/cgroup", (int) pid) < 0 || !(f = fopen(path, "re")))
                return NULL;
        if (getdelim(&table, &size, '\0', f) < 0)
                table = mfree(table);
        fclose(f);
        return table;
}

/* The container's unified cgroup directory when the host runs cgroup v2 alone (its
 * controllers there); NULL on v1 and hybrid hosts (the controllers' own hierarchies). */
static char *unified_dir(const char *table, const char *container_id) {
        char *dir = cgroup_dir(table, NULL, container_id);

        return dir && access(CGROUP_ROOT "/cgroup.controllers", F_OK) == 0 ? dir : mfree(dir);
}

int sbx_cgroup_oom_kills(pid_t pid, const char *container_id) {
        _cleanup_free_ char *table = NULL, *dir = NULL;
        int64_t n;

        if (isempty(container_id) || !(table = proc_cgroup_table(pid)))
                return 0;
        if ((dir = unified_dir(table, container_id)))
                n = read_count(dir, "memory.events", "oom_kill");
        else
                n = read_count(dir = cgroup_dir(table, "memory", container_id), "memory.oom_control", "oom_kill");
        return n > 0 ? (int) MIN(n, (int64_t) INT_MAX) : 0;
}

int sbx_cgroup_limits(pid_t pid, const char *container_id, SbxKernelLimits *ret) {
        _cleanup_free_ char *table = NULL, *unified = NULL;

        *ret = (SbxKernelLimits) {};
        if (isempty(container_id) || !(table = proc_cgroup_table(pid)))
                return 0;
        unified = unified_dir(table, container_id);
        if (unified)
                read_v2(unified, ret);
        else
                read_v1(table, container_id, ret);
        /* Only once its cgroups named the container: pid is then its first process. */
        if (unified || ret->has_memory || ret->has_pids || ret->has_nano_cpus)
                read_caps(pid, ret);
        return ret->has_memory || ret->has_pids || ret->has_nano_cpus || ret->has_caps;
}
