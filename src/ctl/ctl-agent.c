/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-agent.h"
#include "macro.h"

/* How long to wait for the agent's registration before calling anyway. */
#define AGENT_REGISTER_TIMEOUT_MS (10 * 1000)

static _Noreturn void exec_agent(int notify_fd, pid_t parent) {
        sigset_t none;
        char fd_str[16];
        int fd;

        /* What `exec` blocks for forwarding is the agent's to take (Ctrl-C at a prompt). */
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);

        /* The agent must not outlive us, nor miss that we died before the prctl. */
        if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != parent)
                _exit(EXIT_FAILURE);
        /* A dup is without O_CLOEXEC: the one descriptor the agent inherits on purpose. */
        fd = fcntl(notify_fd, F_DUPFD, 3);
        if (fd < 0)
                _exit(EXIT_FAILURE);
        snprintf(fd_str, sizeof fd_str, "%d", fd);
        /* As systemctl: for our session; --fallback leaves a graphical agent in charge. */
        execl(CTL_PKTTYAGENT, CTL_PKTTYAGENT, "--notify-fd", fd_str, "--fallback", (char *) NULL);
        _exit(127);
}

int ctl_agent_open(pid_t *ret_pid) {
        _cleanup_close_ int rfd = -EBADF;
        struct pollfd p;
        int fds[2];
        pid_t parent = getpid(), pid;

        *ret_pid = 0;
        if (access(CTL_PKTTYAGENT, X_OK) < 0)
                return 0;
        if (pipe2(fds, O_CLOEXEC) < 0)
                return -errno;
        fflush(NULL);
        pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(fds[0]);
                close(fds[1]);
                return r;
        }
        if (pid == 0)
                exec_agent(fds[1], parent);
        close(fds[1]);
        rfd = fds[0];
        *ret_pid = pid;

        /* The agent closes its end once registered; if it fails, its exit closes it. */
        p = (struct pollfd) { .fd = rfd, .events = POLLIN };
        while (poll(&p, 1, AGENT_REGISTER_TIMEOUT_MS) < 0)
                if (errno != EINTR)
                        return -errno;
        return 0;
}

void ctl_agent_close(pid_t pid) {
        if (pid <= 0)
                return;
        (void) kill(pid, SIGTERM);
        (void) kill(pid, SIGCONT);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}
