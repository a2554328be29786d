/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Commands over the kept channel (docs/architecture.md, "Commands over the channel";
 * proto.h): the channel's program forks a supervisor per command and answers with
 * its descriptor of a socket pair; the service takes it with pidfd_getfd(2) from the
 * program it started (its pidfd, made when the channel opened: channel-fd.c), sends
 * the start byte, reads the start frame and then relays the stream as a Docker
 * exec's.
 *
 * Everything the sandbox says is hostile: the descriptor must be a connected
 * AF_UNIX stream socket whose peer is the owner (channel-fd.c); every wait has the
 * request's deadline. */

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "channel.h"
#include "docker-exec.h"
#include "exec.h"
#include "lifecycle-internal.h"

static int wait_sock(int fd, short events, uint64_t deadline_us) {
        uint64_t now = sbx_now_monotonic_us();
        int n;

        if (now >= deadline_us)
                return -ETIME;
        n = poll(&(struct pollfd) { .fd = fd, .events = events }, 1, (int) ((deadline_us - now + 999) / 1000));
        return n < 0 ? (errno == EINTR ? 0 : -errno) : n == 0 ? -ETIME : 0;
}

/* The start frame (16 bytes, maybe with a terminal's master): its kind and value. */
static int read_start(int fd, uint64_t deadline_us, unsigned *ret_kind, uint32_t *ret_value, int *ret_master) {
        uint8_t b[SBX_DOCKER_FRAME_HEADER_SIZE + SBX_EXEC_STATUS_SIZE];
        size_t got = 0;
        int r;

        *ret_master = -1;
        while (got < sizeof b) {
                union { struct cmsghdr h; char buf[CMSG_SPACE(4 * sizeof(int))]; } c;
                struct iovec iov = { .iov_base = b + got, .iov_len = sizeof b - got };
                struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf,
                                    .msg_controllen = sizeof c.buf };
                ssize_t k = recvmsg(fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

                for (struct cmsghdr *h = k >= 0 ? CMSG_FIRSTHDR(&m) : NULL; h; h = CMSG_NXTHDR(&m, h)) {
                        size_t n = h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS ?
                                   (h->cmsg_len - CMSG_LEN(0)) / sizeof(int) : 0;

                        for (size_t i = 0; i < n; i++) {
                                int x;

                                memcpy(&x, CMSG_DATA(h) + i * sizeof(int), sizeof x);
                                if (*ret_master < 0 && got == 0)
                                        *ret_master = x;
                                else
                                        safe_close(x);  /* more than the one it may send */
                        }
                }
                if (k == 0)
                        return -EPIPE;
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (k < 0 && (r = wait_sock(fd, POLLIN, deadline_us)) < 0)
                        return r;
                if (k > 0)
                        got += (size_t) k;
        }
        if (b[0] != SBX_EXEC_STREAM_STATUS || b[1] || b[2] || b[3] || b[4] || b[5] || b[6] ||
            b[7] != SBX_EXEC_STATUS_SIZE || sbx_exec_status_parse(b + SBX_DOCKER_FRAME_HEADER_SIZE, ret_kind,
                                                                  ret_value) < 0)
                return -EBADMSG;
        return 0;
}

static int start_refused(const SbxExecRequest *req, unsigned kind, uint32_t err, SbxError *error) {
        if (kind == SBX_EXEC_NO_WORKING_DIR)
                return lc_exec_start_refused(req, true, NULL, error);
        if (kind == SBX_EXEC_NOT_EXECUTED)
                return lc_exec_start_refused(req, false, err == ENOENT && !strchr(req->argv[0], '/') ?
                                             "no such command in PATH" : err == ENOENT ? "no such file" :
                                             err == EACCES ? "permission denied" : "it could not be started", error);
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox could not set "
                             "the command up: %s", strerror((int) err));
}

int lc_exec_start_channel(SbxLifecycle *l, const char *name, SbxExecProcess *p, const SbxExecRequest *req,
                          const char *working_dir, SbxError *error) {
        uint64_t deadline_us = sbx_now_monotonic_us() + (uint64_t) SBX_DOCKER_EXEC_CALL_TIMEOUT_S * 1000000U;
        SbxProtoExec x = { .argv = req->argv, .env = req->env, .working_dir = req->working_dir ?: working_dir,
                           .token = p->token, .tty = req->tty, .rows = req->rows, .cols = req->cols };
        int fd = -1, master = -1, r;
        unsigned kind = 0;
        uint32_t value = 0;

        if (!l->channels || sbx_docker_remote(l->docker))
                return 0;
        r = sbx_lifecycle_channel_exec(l, name, &x, deadline_us, &fd, error);
        if (r == -EOPNOTSUPP)
                return 0;
        if (r < 0)
                return r;
        if ((r = wait_sock(fd, POLLOUT, deadline_us)) >= 0 &&
            send(fd, &(char) { SBX_EXEC_GO }, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
                r = -EPIPE;
        if (r >= 0)
                r = read_start(fd, deadline_us, &kind, &value, &master);
        if (r >= 0 && kind != SBX_EXEC_STARTED)
                r = start_refused(req, kind, value, error);
        else if (r >= 0 && req->tty && (master < 0 || !isatty(master)))
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The service's program in the sandbox gave no "
                                  "terminal");
        else if (r == -ETIME)
                r = sbx_error_set(error, SBX_ERROR_TIMED_OUT, "The command did not start within %u s",
                                  SBX_DOCKER_EXEC_CALL_TIMEOUT_S);
        else if (r < 0)
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "The command's stream failed before it started: "
                                  "%s", strerror(-r));
        if (r < 0) {
                safe_close(fd);
                safe_close(master);
                return r;
        }
        if (!req->tty)
                master = safe_close(master);
        p->channel = true;
        p->tty_master = master;
        p->relay.sock = fd;
        p->relay.tty = req->tty;
        p->relay.status_frames = true;
        return 1;
}
