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
 * to it are reaped. Static, no allocation.
 *
 * The same program, run by the service through an exec as the sandbox's owner
 * as `xagent-sandbox-init --kill SIGNAL TOKEN`, signals every process of the
 * container whose environment carries XAGENT_SANDBOX_EXEC=TOKEN: the processes
 * of one exec and their descendants (kill.c; docs/security.md, "Exec"). Docker has no
 * way to signal an exec'd process, and the service may neither see the
 * container's processes nor signal another uid's. Running as the owner, it can
 * signal only what the owner could.
 *
 * `xagent-sandbox-init --kill-leftovers SIGNAL INSTANCE`, run the same way by a
 * service instance after its start, signals the execs an earlier instance left
 * running (it died without killing them): every token whose exec's own process — a
 * process with no parent in the container, as every exec's first process has — still
 * runs, and whose value does not begin with "INSTANCE.", is killed as above. What a
 * finished exec left behind (re-parented to this init) is not an exec left running
 * and stays. Tokens are read from processes the owner controls: a forged one can
 * only make the owner's own processes, in the owner's own sandbox, be signalled.
 *
 * Run as `xagent-sandbox-init --unpack DIR`, again as the owner, it unpacks a
 * CopyToSandbox stream below DIR (unpack.c); as `--pack DIR NAME` it writes the
 * CopyFromSandbox stream of DIR/NAME (pack.c): copies need no tar in the image;
 * as `--serve` it is the service's kept channel for file requests and detached
 * processes' output (serve.c); as
 * `--detach DIR CAP -- ARGV…` it starts ARGV detached, supervised, its output kept
 * in a ring file in DIR, CAP bytes per stream (detach.c); as `--attach DIR` it
 * copies that process's output out and its input in, for Attach (attach.c; with
 * `--attach DIR CURSOR FOLLOW` its output alone, for StreamOutput); as
 * `--cat PATH OFFSET LENGTH` and `--put PATH MODE FLAGS MAX` it moves a file's bytes
 * for ReadFile's and WriteFile's option fd (stream.c). */

#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "detach.h"
#include "kill.h"
#include "pack.h"
#include "serve.h"
#include "stream.h"
#include "unpack.h"

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

int main(int argc, char *argv[]) {
        sigset_t all;
        int sig;

        if (argc == 4 && strcmp(argv[1], "--kill") == 0)
                return sbx_init_kill(argv[2], argv[3]);
        if (argc == 4 && strcmp(argv[1], "--kill-leftovers") == 0)
                return sbx_init_kill_leftovers(argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], "--unpack") == 0)
                return sbx_init_unpack(argv[2]);
        if (argc == 2 && strcmp(argv[1], "--serve") == 0)
                return sbx_init_serve();
        if (argc == 4 && strcmp(argv[1], "--pack") == 0)
                return sbx_init_pack(argv[2], argv[3]);
        if (argc >= 6 && strcmp(argv[1], "--detach") == 0 && strcmp(argv[4], "--") == 0)
                return sbx_init_detach(argv[2], argv[3], argv + 5, argc - 5);
        if (argc == 5 && strcmp(argv[1], "--cat") == 0)
                return sbx_init_cat(argv[2], argv[3], argv[4]);
        if (argc == 6 && strcmp(argv[1], "--put") == 0)
                return sbx_init_put(argv[2], argv[3], argv[4], argv[5]);
        if (argc == 3 && strcmp(argv[1], "--attach") == 0)
                return sbx_init_attach(argv[2], NULL, NULL);
        if (argc == 5 && strcmp(argv[1], "--attach") == 0)
                return sbx_init_attach(argv[2], argv[3], argv[4]);
        if (argc >= 7 && strcmp(argv[1], "--supervise") == 0 && strcmp(argv[5], "--") == 0)
                return sbx_init_supervise(argv[2], argv[3], argv[4], argv + 6);
        if (argc != 1)
                return 2;
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
