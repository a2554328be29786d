/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* acquire: holds a lease on a sandbox while a command runs, or until killed (as
 * systemd-inhibit holds an inhibitor). */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctl-bus.h"
#include "ctl-verbs.h"

static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig) {
        stop_signal = sig;
}

/* The lease's descriptor, a copy of the reply's (close-on-exec: the command holds none). */
static int acquire(CtlOptions *o, const char *name, int *ret_fd) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int fd, r;

        if (ctl_bus_connect(o, &bus) < 0 || ctl_bus_new_sandbox_call(bus, o, "AcquireSandbox", name, &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append(m, "a{sv}", 0)) < 0)
                return ctl_bus_fail("AcquireSandbox", r);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "h", &fd)) < 0)
                return ctl_bus_fail("AcquireSandbox reply", r);
        if ((*ret_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
                return ctl_bus_fail("AcquireSandbox reply", -errno);
        return CTL_PROCEED;
}

/* No command: until SIGINT or SIGTERM (0), or until the service ends the lease (1). */
static int hold(int fd, const char *name) {
        struct sigaction sa = { .sa_handler = on_stop_signal };
        struct pollfd p = { .fd = fd, .events = 0 };

        sigemptyset(&sa.sa_mask);
        (void) sigaction(SIGINT, &sa, NULL);
        (void) sigaction(SIGTERM, &sa, NULL);
        (void) sigaction(SIGHUP, &sa, NULL);
        while (!stop_signal) {
                if (poll(&p, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return ctl_bus_fail("poll", -errno);
                }
                if (p.revents & (POLLERR | POLLHUP)) {
                        fprintf(stderr, "xagent-sandboxctl: the lease on '%s' was revoked, or the service ended\n",
                                name);
                        return CTL_EXIT_FAILURE;
                }
        }
        return 0;
}

static int reap(pid_t pid) {
        int status;

        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return ctl_bus_fail("waitpid", -errno);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The command, with the lease held by this process meanwhile: its exit status (128+N
 * for signal N), 127 if it could not be run. A lease that ends before it (revoked by a
 * stop --force, the sandbox deleted, the service gone) ends it too: SIGTERM, a message,
 * exit status 1 — the sandbox it relied on is going. */
static int run(int fd, const char *name, char **cmd) {
        _cleanup_close_ int pidfd = -1;
        struct pollfd p[2];
        pid_t pid = fork();

        if (pid < 0)
                return ctl_bus_fail("fork", -errno);
        if (pid == 0) {
                execvp(cmd[0], cmd);
                fprintf(stderr, "xagent-sandboxctl: %s: %s\n", cmd[0], strerror(errno));
                _exit(127);
        }
        /* As systemd-inhibit: the terminal's signals reach the command; this process
         * waits for it and lets the lease go after. */
        (void) signal(SIGINT, SIG_IGN);
        (void) signal(SIGQUIT, SIG_IGN);
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (pidfd < 0)
                return reap(pid);       /* no pidfd (an old kernel): the lease is not watched */
        p[0] = (struct pollfd) { .fd = pidfd, .events = POLLIN };
        p[1] = (struct pollfd) { .fd = fd, .events = 0 };
        for (;;) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return ctl_bus_fail("poll", -errno);
                }
                if (p[0].revents)
                        return reap(pid);
                if (p[1].revents & (POLLERR | POLLHUP))
                        break;
        }
        fprintf(stderr, "xagent-sandboxctl: the lease on '%s' was revoked, or the service ended: "
                "ending %s\n", name, cmd[0]);
        (void) kill(pid, SIGTERM);
        (void) reap(pid);
        return CTL_EXIT_FAILURE;
}

int verb_acquire(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        _cleanup_close_ int fd = -1;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 1, INT_MAX)) != CTL_PROCEED ||
            (r = acquire(o, argv[optind], &fd)) != CTL_PROCEED)
                return r;
        return optind + 1 < argc ? run(fd, argv[optind], argv + optind + 1) : hold(fd, argv[optind]);
}
