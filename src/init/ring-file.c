/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ring-file.h"

#define PROC_STAT_MAX 1024

int ring_file_open(const char *dir) {
        return ring_file_openat(AT_FDCWD, dir);
}

int ring_file_openat(int at, const char *dir) {
        struct stat st;
        int d = openat(at, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), fd;

        if (d < 0)
                return -1;
        fd = openat(d, SBX_RING_FILE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        close(d);
        if (fd >= 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
                close(fd);
                errno = EBADMSG;
                return -1;
        }
        return fd;
}

int ring_file_pread(void *userdata, uint64_t off, void *buf, size_t n) {
        int fd = *(const int *) userdata;
        size_t got = 0;

        if (off > INT64_MAX - n)
                return -EBADMSG;
        while (got < n) {
                ssize_t k = pread(fd, (char *) buf + got, n - got, (off_t) (off + got));

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -EBADMSG;        /* shorter than its header says */
                got += (size_t) k;
        }
        return 0;
}

uint64_t ring_file_start_time(const char *stat_path) {
        char buf[PROC_STAT_MAX + 1], *p;
        ssize_t n;
        int fd = open(stat_path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return 0;
        n = read(fd, buf, PROC_STAT_MAX);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        p = strrchr(buf, ')');
        for (int field = 2; p && field < 22; field++)
                p = strchr(p + 1, ' ');
        return p ? strtoull(p + 1, NULL, 10) : 0;
}

unsigned ring_file_state(const SbxRingHeader *h) {
        if (h->exited)
                return SBX_RING_STATE_EXITED;
        if (h->pid == 0 || h->pid > INT32_MAX)
                return SBX_RING_STATE_RUNNING;  /* not written yet: it is starting */
        char path[64];

        snprintf(path, sizeof path, "/proc/%llu/stat", (unsigned long long) h->pid);
        return ring_file_start_time(path) == h->start_time ? SBX_RING_STATE_RUNNING : SBX_RING_STATE_LOST;
}
