/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The first process of every sandbox (docs/security.md, "What is mounted is what
 * was checked"). It is not the image's code and not the owner's: dockerd mounts it
 * read-only from the host (a Docker volume bound to this program's directory), so
 * nothing the owner controls runs in a container before the service has checked
 * its mounts. It runs as an unprivileged uid that is not the owner's and makes
 * itself non-dumpable, so neither the owner nor another process of that uid can
 * enter the container through /proc/<pid>/root.
 *
 * It does nothing but wait: SIGTERM, SIGINT or SIGHUP end it (and, being PID 1 of
 * the container's PID namespace, everything else in it), so a stop is immediate;
 * orphans re-parented to it are reaped. Static, no allocation, no output. */

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

int main(void) {
        sigset_t all;
        int sig;

        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return 1;
        sigfillset(&all);
        if (sigprocmask(SIG_BLOCK, &all, NULL) < 0)
                return 1;

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
