/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* nft run in a sandbox's network namespace by a short-lived child of the daemon
 * (docs/security.md, "Egress"): what egress-apply.c loads and reads back, and what the
 * names' resolver (resolvers.c) opens for an answer's TTL. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "error.h"
#include "macro.h"
#include "nft-run.h"

/* Long enough for a loaded machine; nft itself takes milliseconds. */
#define NFT_TIMEOUT_MS 10000
#define NFT_OUTPUT_MAX (4U << 20)

/* In the child: async-signal-safe calls only (the daemon has threads). */
__attribute__((noreturn)) static void run_child(int netns, int in, int out, char *const argv[]) {
        if (setns(netns, CLONE_NEWNET) < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
                _exit(126);
        execv(SBX_NFT_PATH, argv);
        _exit(127);
}

/* Feeds input (may be NULL) and collects stdout and stderr together, within the deadline. */
static int exchange(int in, int out, const char *input, char **ret, size_t *ret_size) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, done = 0, len = input ? strlen(input) : 0;
        int left = NFT_TIMEOUT_MS;

        if (!input || len == 0)
                in = safe_close(in);
        for (;;) {
                struct pollfd p[2] = { { .fd = out, .events = POLLIN }, { .fd = in, .events = POLLOUT } };
                int n = poll(p, in >= 0 ? 2 : 1, 100);
                ssize_t k;

                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n == 0 && (left -= 100) <= 0)
                        return -ETIMEDOUT;
                if (in >= 0 && p[1].revents) {
                        k = send(in, input + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
                        if (k < 0 && errno != EINTR && errno != EAGAIN)
                                in = safe_close(in);
                        else if (k > 0 && (done += (size_t) k) == len)
                                in = safe_close(in);
                }
                if (p[0].revents) {
                        char *nb = realloc(buf, size + 4097);

                        if (!nb)
                                return -ENOMEM;
                        buf = nb;
                        k = read(out, buf + size, 4096);
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k <= 0)
                                break;
                        size += (size_t) k;
                        if (size > NFT_OUTPUT_MAX)
                                return -EFBIG;
                }
        }
        safe_close(in);
        if (!buf && !(buf = strdup("")))
                return -ENOMEM;
        buf[size] = 0;
        *ret = TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

int lc_nft_run_in(int netns, char *const argv[], const char *input, char **ret, SbxError *error) {
        _cleanup_close_ int in_r = -1, in_w = -1, out_r = -1, out_w = -1;
        _cleanup_free_ char *output = NULL;
        size_t size = 0;
        int fds[2], status, r;
        pid_t pid;

        /* nft's input is a socket: a write to it after nft ended is EPIPE, not SIGPIPE. */
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
                return -errno;
        in_r = fds[0], in_w = fds[1];
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        out_r = fds[0], out_w = fds[1];
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                run_child(netns, in_r, out_w, argv);
        in_r = safe_close(in_r);
        out_w = safe_close(out_w);
        r = exchange(TAKE_FD(in_w), out_r, input, &output, &size);
        if (r < 0)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT, "egress: %s did not answer: %s",
                                     SBX_NFT_PATH, strerror(-r));
        *ret = TAKE_PTR(output);
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

