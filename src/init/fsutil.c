/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"

#define PATH_MAX_LEN 4096U

int fs_write_all(int fd, const uint8_t *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

int fs_open_dirs(int root, const char *path, bool make) {
        char part[PATH_MAX_LEN + 1];
        size_t n = strlen(path);

        if (n > PATH_MAX_LEN) {
                errno = ENAMETOOLONG;
                return -1;
        }
        memcpy(part, path, n + 1);
        for (char *c = part + (part[0] == '/'); make && *part; c++) {
                char was = *c;

                if (was != '/' && was != 0)
                        continue;
                *c = 0;
                if (*part && mkdirat(root, part, 0755) < 0 && errno != EEXIST)
                        return -1;
                *c = was;
                if (was == 0)
                        break;
        }
        return openat(root, *part ? part : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

void fs_tmp_name(char tmp[FS_TMP_NAME_MAX]) {
        static unsigned long counter;

        snprintf(tmp, FS_TMP_NAME_MAX, ".xagent-copy.%ld.%lu", (long) getpid(), ++counter);
}

int fs_create_hidden(int dir, char tmp[FS_TMP_NAME_MAX], bool *unnamed) {
        int fd;

        fs_tmp_name(tmp);
        fd = openat(dir, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
        *unnamed = fd >= 0;
        if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
                fd = openat(dir, tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
        return fd;
}

void fs_discard(int dir, int fd, bool unnamed, const char *tmp) {
        int saved = errno;

        close(fd);
        if (!unnamed)
                (void) unlinkat(dir, tmp, 0);
        errno = saved;
}

int fs_rename_into_place(int dir, const char *tmp, const char *base) {
        int saved;

        if (renameat(dir, tmp, dir, base) == 0)
                return 0;
        saved = errno;
        (void) unlinkat(dir, tmp, 0);
        errno = saved;
        return -1;
}

int fs_publish(int dir, int fd, bool unnamed, const char *tmp, const char *base) {
        char proc[64];

        /* The unnamed file gets its temporary name only once complete. */
        if (unnamed) {
                snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
                if (linkat(AT_FDCWD, proc, dir, tmp, AT_SYMLINK_FOLLOW) < 0) {
                        fs_discard(dir, fd, true, tmp);
                        return -1;
                }
        }
        close(fd);
        return fs_rename_into_place(dir, tmp, base);
}

uint64_t fs_disk_bytes(const struct stat *st) {
        return (uint64_t) st->st_blocks * 512U;
}

uint64_t fs_released_by(int dir, const char *name) {
        struct stat st;

        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || (!S_ISDIR(st.st_mode) && st.st_nlink > 1))
                return 0;
        return fs_disk_bytes(&st);
}

const char *fs_split(const char *path, char *dir) {
        const char *slash = strrchr(path, '/');

        if (!slash || slash[1] == 0)
                return NULL;
        if (slash == path)
                strcpy(dir, "/");
        else {
                memcpy(dir, path, (size_t) (slash - path));
                dir[slash - path] = 0;
        }
        return slash + 1;
}
