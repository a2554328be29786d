/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The first process of every sandbox (docs/security.md, "What is mounted is what
 * was checked"). It is not the image's code and not the owner's: dockerd mounts it
 * read-only from the host (a Docker volume bound to this program's directory), so
 * nothing the owner controls runs in a container before the service has checked
 * its mounts. It runs as an unprivileged uid that is not the owner's and makes
 * itself non-dumpable, so neither the owner nor another process of that uid can
 * enter the container through /proc/<pid>/root or write to its output.
 *
 * At start it writes the container's mount table, between two marker lines, to
 * standard output (the container's log): that is what the service compares with
 * the directories it checked, wherever the service runs. Then it only waits:
 * SIGTERM, SIGINT or SIGHUP end it (and, being PID 1 of the container's PID
 * namespace, everything else in it), so a stop is immediate; orphans re-parented
 * to it are reaped. Static, no allocation. */

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARKER "xagent-sandbox-init: mounts "

static int write_all(const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(STDOUT_FILENO, p, n);

                if (k < 0)
                        return -1;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* Copies /proc/self/mountinfo between "begin" and "end"; "error" if it cannot. */
static void report_mounts(void) {
        static char buf[65536];
        int fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0 || write_all(MARKER "begin\n", strlen(MARKER "begin\n")) < 0)
                goto fail;
        while ((n = read(fd, buf, sizeof buf)) > 0)
                if (write_all(buf, (size_t) n) < 0)
                        goto fail;
        if (n == 0 && write_all(MARKER "end\n", strlen(MARKER "end\n")) == 0) {
                close(fd);
                return;
        }
fail:
        (void) write_all(MARKER "error\n", strlen(MARKER "error\n"));
        if (fd >= 0)
                close(fd);
}

int main(void) {
        sigset_t all;
        int sig;

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return 1;
        sigfillset(&all);
        if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
                return 1;
        report_mounts();

        for (;;) {
                if (sigwait(&all, &sig) != 0)
                        continue;
                switch (sig) {
                case SIGCHLD:
                        while (waitpid(-1, NULL, WNOHANG) > 0)
                                ;
                        break;
                case SIGTERM:
                case SIGINT:
                case SIGHUP:
                        return 0;
                default:
                        break;
                }
        }
}
