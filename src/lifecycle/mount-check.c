/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mount-check.h"
#include "mountinfo.h"

void sbx_mount_identity_done(SbxMountIdentity *id) {
        free(id->fs_path);
        id->fs_path = NULL;
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
                        char *grown = realloc(buf, allocated + 65536);
                        if (!grown)
                                return -ENOMEM;
                        buf = grown;
                        allocated += 65536;
                        if (allocated > 64U * 1024U * 1024U)
                                return -EFBIG;
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

typedef struct MountTable {
        SbxMountInfo *m;
        size_t n;
} MountTable;

static void mount_table_done(MountTable *t) {
        sbx_mountinfo_free(t->m, t->n);
}

static int read_mountinfo(const char *pid, MountTable *ret) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        int r;

        if (asprintf(&path, "/proc/%s/mountinfo", pid) < 0)
                return -ENOMEM;
        if ((r = read_file(path, &text)) < 0)
                return r;
        return sbx_mountinfo_parse(text, &ret->m, &ret->n);
}

int sbx_mount_identity_of_fd(int fd, SbxMountIdentity *ret, SbxError *error) {
        _cleanup_(mount_table_done) MountTable self = {};
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
        if ((r = read_mountinfo("self", &self)) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: cannot read this process's mounts: %s",
                                     strerror(-r));
        mount = sbx_mountinfo_by_id(self.m, self.n, (int) stx.stx_mnt_id);
        if (!mount || path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s' lies on no mount of this process", path);
        *ret = (SbxMountIdentity) { .major = stx.stx_dev_major, .minor = stx.stx_dev_minor };
        r = sbx_mountinfo_fs_path(mount, path, &ret->fs_path);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s' is not below its mount point '%s'", path,
                                     mount->mount_point);
        return 0;
}

static bool same(const SbxMountInfo *mount, const SbxMountIdentity *id, const char *mode) {
        return mount && mount->major == id->major && mount->minor == id->minor && streq(mount->root, id->fs_path) &&
                mount->read_only == streq(mode, "ro");
}

int sbx_mounts_verify(pid_t pid, const SbxVolume *volumes, const SbxMountIdentity *ids, size_t n,
                      SbxError *error) {
        _cleanup_(mount_table_done) MountTable t = {};
        char p[32];
        int r;

        if (n == 0)
                return 0;
        snprintf(p, sizeof p, "%d", (int) pid);
        if (pid <= 0 || (r = read_mountinfo(p, &t)) < 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "volumes: cannot see the mounts of the sandbox's first process (pid %d): %s; "
                                     "the service must run in dockerd's PID namespace", (int) pid,
                                     pid <= 0 ? "it is not running" : strerror(-r));
        for (size_t i = 0; i < n; i++) {
                const SbxMountInfo *mount = sbx_mountinfo_at(t.m, t.n, volumes[i].guest);

                if (same(mount, &ids[i], volumes[i].mode))
                        continue;
                if (!mount)
                        return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                             "volumes: nothing is mounted at '%s' in the sandbox", volumes[i].guest);
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "volumes: '%s' in the sandbox is not the checked '%s' (mounted: device %u:%u "
                                     "path '%s'%s; checked: device %u:%u path '%s' %s)",
                                     volumes[i].guest, volumes[i].host, mount->major, mount->minor, mount->root,
                                     mount->read_only ? " ro" : " rw", ids[i].major, ids[i].minor, ids[i].fs_path,
                                     volumes[i].mode);
        }
        return 0;
}

int sbx_mounts_truthful(pid_t pid, const SbxVolume *volumes, size_t n) {
        _cleanup_(mount_table_done) MountTable t = {};
        char p[32];
        int r;

        if (n == 0)
                return 1;
        snprintf(p, sizeof p, "%d", (int) pid);
        if (pid <= 0 || (r = read_mountinfo(p, &t)) < 0)
                return pid <= 0 ? -ESRCH : r;
        for (size_t i = 0; i < n; i++) {
                _cleanup_(sbx_mount_identity_done) SbxMountIdentity id = {};
                _cleanup_close_ int fd = open(volumes[i].host, O_PATH | O_CLOEXEC);

                if (fd < 0 || sbx_mount_identity_of_fd(fd, &id, NULL) < 0 ||
                    !same(sbx_mountinfo_at(t.m, t.n, volumes[i].guest), &id, volumes[i].mode))
                        return 0;
        }
        return 1;
}
