/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "docker-container.h"
#include "docker-dialect.h"
#include "mount-check.h"
#include "time-util.h"

/* One entry of a mount table per mount: a container has Docker's few plus its
 * volumes (at most 64); the tail is bounded well above that. */
#define LOG_TAIL_LINES 1024U

typedef struct MountIdentity {
        unsigned major, minor;  /* the device of its file system */
        char *fs_path;          /* its path within that file system */
} MountIdentity;

static void mount_identity_done(MountIdentity *id) {
        free(id->fs_path);
}

void sbx_mount_table_done(SbxMountTable *t) {
        sbx_mountinfo_free(t->m, t->n);
        *t = (SbxMountTable) {};
}

static int read_file(const char *path, char **ret) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        size_t size = 0, allocated = 0;

        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n;

                if (allocated - size < 4096) {
                        char *grown;

                        if (allocated >= 64U * 1024U * 1024U)
                                return -EFBIG;
                        grown = realloc(buf, allocated + 65536);
                        if (!grown)
                                return -ENOMEM;
                        buf = grown;
                        allocated += 65536;
                }
                n = read(fd, buf + size, allocated - size - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                size += (size_t) n;
        }
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The identity of what fd (an O_PATH descriptor) refers to, in this process's mount
 * namespace: its mount (statx) and that mount's entry in our own mountinfo. */
static int identity_of_fd(int fd, MountIdentity *ret, SbxError *error) {
        _cleanup_(sbx_mount_table_done) SbxMountTable self = {};
        _cleanup_free_ char *text = NULL;
        char link[64], path[PATH_MAX];
        const SbxMountInfo *mount;
        struct statx stx;
        ssize_t n;
        int r;

        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: cannot stat a checked path: %m");
        if (!(stx.stx_mask & STATX_MNT_ID))
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: the kernel does not report mount ids");
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        n = readlink(link, path, sizeof path - 1);
        if (n < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: cannot resolve a checked path: %m");
        path[n] = 0;
        if ((r = read_file("/proc/self/mountinfo", &text)) < 0 ||
            (r = sbx_mountinfo_parse(text, &self.m, &self.n)) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: cannot read this process's mounts: %s",
                                     strerror(-r));
        mount = sbx_mountinfo_by_id(self.m, self.n, (int) stx.stx_mnt_id);
        if (!mount || path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s' lies on no mount of this process", path);
        *ret = (MountIdentity) { .major = stx.stx_dev_major, .minor = stx.stx_dev_minor };
        if ((r = sbx_mountinfo_fs_path(mount, path, &ret->fs_path)) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s' is not below its mount point '%s'", path,
                                     mount->mount_point);
        return 0;
}


int sbx_container_mounts(SbxDocker *d, const char *id, uint64_t since_us, unsigned timeout_ms, SbxMountTable *ret,
                         SbxError *error) {
        uint64_t deadline = sbx_now_realtime_us() + timeout_ms * 1000ULL;
        long delay_ms = 2;
        int r;

        /* Negotiated first: the engine's dialect says how its log lines are stamped. */
        if ((r = sbx_docker_negotiate(d, error)) < 0)
                return r;
        since_us = sbx_dialect_report_since(sbx_docker_dialect(d), since_us);

        for (;;) {
                _cleanup_free_ char *log = NULL, *table = NULL;

                if ((r = sbx_docker_container_log_tail(d, id, LOG_TAIL_LINES, &log, error)) < 0)
                        return r;
                r = sbx_mountinfo_from_init_log(log, since_us, &table);
                if (r > 0)
                        r = sbx_mountinfo_parse(table, &ret->m, &ret->n) ?: 1;
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                             "volumes: the sandbox's first process reported no readable mount table");
                if (r > 0)
                        return 0;
                if (sbx_now_realtime_us() >= deadline)
                        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                             "volumes: the sandbox's first process did not report its mounts "
                                             "within %u ms", timeout_ms);
                (void) nanosleep(&(struct timespec) { .tv_nsec = delay_ms * 1000000L }, NULL);
                if (delay_ms < 50)
                        delay_ms *= 2;
        }
}

void sbx_mount_report_new_second(SbxDocker *d) {
        struct timespec next;

        if (sbx_docker_negotiate(d, NULL) < 0 || sbx_docker_dialect(d)->kind != SBX_ENGINE_PODMAN ||
            clock_gettime(CLOCK_REALTIME, &next) < 0)
                return;
        next = (struct timespec) { .tv_sec = next.tv_sec + 1 };
        while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &next, NULL) == EINTR)
                ;
}

static bool same(const SbxMountInfo *mount, const MountIdentity *id, const char *mode) {
        return mount && mount->major == id->major && mount->minor == id->minor && streq(mount->root, id->fs_path) &&
                mount->read_only == streq(mode, "ro");
}

int sbx_mounts_verify(const SbxMountTable *t, const SbxVolume *volumes, const int *fds, size_t n,
                      SbxError *error) {
        int r;

        for (size_t i = 0; i < n; i++) {
                _cleanup_(mount_identity_done) MountIdentity id = {};
                const SbxMountInfo *mount = sbx_mountinfo_at(t->m, t->n, volumes[i].guest);

                if ((r = identity_of_fd(fds[i], &id, error)) < 0)
                        return r;
                if (same(mount, &id, volumes[i].mode))
                        continue;
                if (!mount)
                        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                             "volumes: nothing is mounted at '%s' in the sandbox", volumes[i].guest);
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "volumes: '%s' in the sandbox is not the checked '%s' (mounted: device %u:%u "
                                     "path '%s' %s; checked: device %u:%u path '%s' %s)",
                                     volumes[i].guest, volumes[i].host, mount->major, mount->minor, mount->root,
                                     mount->read_only ? "ro" : "rw", id.major, id.minor, id.fs_path,
                                     volumes[i].mode);
        }
        return 0;
}

bool sbx_mounts_truthful(const SbxMountTable *t, const SbxVolume *volumes, size_t n) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_(mount_identity_done) MountIdentity id = {};
                _cleanup_close_ int fd = open(volumes[i].host, O_PATH | O_CLOEXEC);

                if (fd < 0 || identity_of_fd(fd, &id, NULL) < 0 ||
                    !same(sbx_mountinfo_at(t->m, t->n, volumes[i].guest), &id, volumes[i].mode))
                        return false;
        }
        return true;
}
