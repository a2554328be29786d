/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The channel's program on this host and the descriptors taken from it
 * (docs/architecture.md, "Commands over the channel"): when the channel opens
 * (channel.c), a pidfd of the program, found by Docker's pid of its exec and checked
 * against what the program says of itself and its uid; for each command, the
 * descriptor its EXEC's answer names, taken with pidfd_getfd(2) and checked: a
 * connected AF_UNIX stream socket whose peer is the owner. Everything the sandbox
 * says is hostile. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "docker-exec.h"
#include "exec.h"
#include "lifecycle-internal.h"

/* /proc/PID/status's line key: its fields as numbers (at most max); how many. */
static size_t status_numbers(const char *status, const char *key, long long *v, size_t max) {
        const char *p = strstr(status, key);
        size_t n = 0;

        if (!p)
                return 0;
        p += strlen(key);
        while (n < max && *p && *p != '\n') {
                char *end;
                long long x = strtoll(p, &end, 10);

                if (end == p)
                        break;
                v[n++] = x;
                p = end;
        }
        return n;
}

static int read_status(int64_t pid, char *buf, size_t size) {
        char path[64];
        ssize_t n;
        int fd;

        snprintf(path, sizeof path, "/proc/%" PRIi64 "/status", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        safe_close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = 0;
        return 0;
}

/* Docker says an exec runs before it records its pid (dockerd sets Running, starts the
 * process, then stores the pid containerd gave back): a program that answered already
 * may be pid 0 in Docker's eyes for a moment, longer on a loaded host. Asked again
 * every PID_RETRY_NSEC until the request's deadline. */
#define PID_RETRY_NSEC (10L * 1000 * 1000)

static int64_t program_pid(SbxDocker *d, const char *exec_id, uint64_t deadline_us) {
        for (;;) {
                SbxExecState st;

                if (sbx_docker_exec_inspect(d, exec_id, &st, NULL) < 0 || !st.running)
                        return -1;
                if (st.pid > 0)
                        return st.pid;
                if (sbx_now_monotonic_us() >= deadline_us)
                        return -1;
                (void) nanosleep(&(struct timespec) { .tv_nsec = PID_RETRY_NSEC }, NULL);
        }
}

int lc_channel_pidfd(SbxDocker *d, const SbxExecProcess *channel, const SbxProtoFrame *hello,
                     uint64_t deadline_us, uid_t *ret_uid) {
        char status[8192];
        SbxProtoField f;
        uint64_t inner;
        long long ns[8], uid[4];
        int64_t pid;
        unsigned u;
        size_t k;
        int pidfd, probe;

        if (sbx_proto_find(hello->payload, hello->size, SBX_TAG_PID, &f) <= 0 || sbx_proto_u64(&f, &inner) < 0 ||
            sscanf(channel->user, "%u:", &u) != 1 || !channel->exec_id ||
            (pid = program_pid(d, channel->exec_id, deadline_us)) <= 0)
                return -1;
        pidfd = (int) syscall(SYS_pidfd_open, (pid_t) pid, 0);
        if (pidfd < 0)
                return -1;
        /* The process under that pid now is the program: the innermost of its pids is
         * the one it gave, its uid the owner's, and it still runs after the look. */
        if (read_status(pid, status, sizeof status) < 0 ||
            (k = status_numbers(status, "\nNSpid:", ns, ELEMENTSOF(ns))) < 2 || (uint64_t) ns[k - 1] != inner ||
            status_numbers(status, "\nUid:", uid, ELEMENTSOF(uid)) < 2 || uid[0] != u || uid[1] != u ||
            syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0)
                return safe_close(pidfd);
        /* May its descriptors be taken (CAP_SYS_PTRACE over another uid's process)? */
        if ((probe = (int) syscall(SYS_pidfd_getfd, pidfd, STDIN_FILENO, 0)) < 0)
                return safe_close(pidfd);
        safe_close(probe);
        *ret_uid = (uid_t) u;
        return pidfd;
}

static int not_ours(int fd, SbxError *error) {
        safe_close(fd);
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox named a "
                             "descriptor that is not the command's stream");
}

int lc_channel_take_fd(int pidfd, uid_t uid, const SbxProtoFrame *ok, int *ret_fd, SbxError *error) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        int domain = 0, type = 0, fd;
        SbxProtoField f;
        uint64_t target;

        if (sbx_proto_find(ok->payload, ok->size, SBX_TAG_FD, &f) <= 0 || sbx_proto_u64(&f, &target) < 0 ||
            target > INT32_MAX)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox answered "
                                     "garbage");
        fd = (int) syscall(SYS_pidfd_getfd, pidfd, (int) target, 0);
        if (fd < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The command's stream could not be taken "
                                     "from the sandbox: %s", strerror(errno));
        if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &(socklen_t) { sizeof domain }) < 0 ||
            getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &(socklen_t) { sizeof type }) < 0 ||
            domain != AF_UNIX || type != SOCK_STREAM ||
            getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != uid ||
            fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
                return not_ours(fd, error);
        *ret_fd = fd;
        return 0;
}
