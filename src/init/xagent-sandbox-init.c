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
 * of one exec and their descendants (docs/security.md, "Exec"). Docker has no
 * way to signal an exec'd process, and the service may neither see the
 * container's processes nor signal another uid's. Running as the owner, it can
 * signal only what the owner could.
 *
 * Run as `xagent-sandbox-init --unpack DIR`, again as the owner, it unpacks a
 * CopyToSandbox stream below DIR (unpack.c); as `--pack DIR NAME` it writes the
 * CopyFromSandbox stream of DIR/NAME (pack.c): copies need no tar in the image;
 * as `--serve` it is the service's kept channel for file requests (serve.c). */

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pack.h"
#include "serve.h"
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

#define EXEC_TOKEN_VAR "XAGENT_SANDBOX_EXEC="

/* Whether /proc/<pid>/environ holds the entry (bounded by the kernel's limit on
 * the environment: ARG_MAX-sized reads). */
static int has_entry(const char *pid, const char *entry) {
        static char buf[4 * 1024 * 1024];
        char path[64] = "/proc/";
        size_t n = 0, len = strlen(entry);
        ssize_t k;
        int fd;

        if (strlen(pid) > 32)
                return 0;
        strcat(strcat(path, pid), "/environ");
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        while (n < sizeof buf - 1 && (k = read(fd, buf + n, sizeof buf - 1 - n)) > 0)
                n += (size_t) k;
        close(fd);
        buf[n] = 0;
        for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
                if (strncmp(buf + i, entry, len) == 0 && buf[i + len] == 0)
                        return 1;
        return 0;
}

/* One pass over /proc; the number of processes signalled. */
static int kill_pass(int sig, const char *entry) {
        DIR *d = opendir("/proc");
        struct dirent *de;
        int n = 0;

        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (de->d_name[0] >= '1' && de->d_name[0] <= '9' && atoi(de->d_name) != getpid() &&
                    has_entry(de->d_name, entry) && kill(atoi(de->d_name), sig) == 0)
                        n++;
        closedir(d);
        return n;
}

/* Exit 0 when something was signalled, 1 when nothing carried the token, 2 on a
 * usage error. Repeated passes catch children forked during a pass. */
static int kill_exec(const char *signal_number, const char *token) {
        static char entry[128] = EXEC_TOKEN_VAR;
        int sig = atoi(signal_number), total = 0, n;

        if (sig <= 0 || sig >= 65 || strlen(token) == 0 || strlen(token) > 64)
                return 2;
        strcat(entry, token);
        for (int pass = 0; pass < 8 && (n = kill_pass(sig, entry)) > 0; pass++)
                total += n;
        return total > 0 ? 0 : 1;
}

int main(int argc, char *argv[]) {
        sigset_t all;
        int sig;

        if (argc == 4 && strcmp(argv[1], "--kill") == 0)
                return kill_exec(argv[2], argv[3]);
        if (argc == 3 && strcmp(argv[1], "--unpack") == 0)
                return sbx_init_unpack(argv[2]);
        if (argc == 2 && strcmp(argv[1], "--serve") == 0)
                return sbx_init_serve();
        if (argc == 4 && strcmp(argv[1], "--pack") == 0)
                return sbx_init_pack(argv[2], argv[3]);
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
