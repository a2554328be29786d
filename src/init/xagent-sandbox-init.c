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

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attach.h"
#include "detach.h"
#include "exec-serve.h"
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

#define EXEC_TOKEN_VAR "XAGENT_SANDBOX_EXEC="
#define TOKEN_MAX 64

/* /proc/<pid>/<file>, whole up to the buffer's size (the environment is bounded by
 * the kernel's limit: ARG_MAX-sized reads); its length, or -1. */
static ssize_t read_proc(const char *pid, const char *file, char *buf, size_t size) {
        char path[96] = "/proc/";
        size_t n = 0;
        ssize_t k;
        int fd;

        if (strlen(pid) > 32 || strlen(file) > 32)
                return -1;
        strcat(strcat(strcat(path, pid), "/"), file);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        while (n < size - 1 && (k = read(fd, buf + n, size - 1 - n)) > 0)
                n += (size_t) k;
        close(fd);
        buf[n] = 0;
        return (ssize_t) n;
}

static char environ_buf[4 * 1024 * 1024];

/* The value of the process's last token entry — the service's, which comes after
 * any the request gave — in environ_buf until the next read; or NULL. With entry,
 * whether any entry equals it instead (NULL: none). */
static const char *token_of(const char *pid, const char *entry) {
        ssize_t n = read_proc(pid, "environ", environ_buf, sizeof environ_buf);
        size_t len = strlen(EXEC_TOKEN_VAR);
        const char *last = NULL;

        for (ssize_t i = 0; i < n; i += (ssize_t) strlen(environ_buf + i) + 1) {
                if (entry && strcmp(environ_buf + i, entry) == 0)
                        return environ_buf + i + len;
                if (strncmp(environ_buf + i, EXEC_TOKEN_VAR, len) == 0)
                        last = environ_buf + i + len;
        }
        return entry ? NULL : last;
}

/* Whether the process's parent is outside the container's PID namespace ("PPid:
 * 0"): an exec's own first process. */
static int is_exec_root(const char *pid) {
        static char buf[4096];
        const char *p;

        if (read_proc(pid, "status", buf, sizeof buf) < 0 || !(p = strstr(buf, "\nPPid:")))
                return 0;
        p += strlen("\nPPid:");
        while (*p == ' ' || *p == '\t')
                p++;
        return p[0] == '0' && p[1] == '\n';
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
                    token_of(de->d_name, entry) && kill(atoi(de->d_name), sig) == 0)
                        n++;
        closedir(d);
        return n;
}

int sbx_init_kill_token(int sig, const char *token) {
        static char entry[128];
        int total = 0, n;

        strcpy(entry, EXEC_TOKEN_VAR);
        strcat(entry, token);
        for (int pass = 0; pass < 8 && (n = kill_pass(sig, entry)) > 0; pass++)
                total += n;
        return total;
}

static int parse_signal(const char *signal_number) {
        int sig = atoi(signal_number);

        return sig > 0 && sig < 65 ? sig : -1;
}

/* Exit 0 when something was signalled, 1 when nothing carried the token, 2 on a
 * usage error. Repeated passes catch children forked during a pass. */
static int kill_exec(const char *signal_number, const char *token) {
        int sig = parse_signal(signal_number);

        if (sig < 0 || strlen(token) == 0 || strlen(token) > TOKEN_MAX)
                return 2;
        return sbx_init_kill_token(sig, token) > 0 ? 0 : 1;
}

#define LEFTOVERS_MAX 1024

/* Exit 0 when something was signalled, 1 when no exec of another instance runs, 2
 * on a usage error. The tokens are collected first, then each is killed. */
static int kill_leftovers(const char *signal_number, const char *instance) {
        static char tokens[LEFTOVERS_MAX][TOKEN_MAX + 1];
        size_t n = 0, len = strlen(instance);
        int sig = parse_signal(signal_number), total = 0;
        struct dirent *de;
        DIR *d;

        if (sig < 0 || len == 0 || len >= TOKEN_MAX)
                return 2;
        d = opendir("/proc");
        if (!d)
                return 2;
        while ((de = readdir(d)) && n < LEFTOVERS_MAX) {
                const char *v;
                size_t i;

                if (de->d_name[0] < '1' || de->d_name[0] > '9' || atoi(de->d_name) == getpid() ||
                    !is_exec_root(de->d_name) || !(v = token_of(de->d_name, NULL)) || strlen(v) == 0 ||
                    strlen(v) > TOKEN_MAX || (strncmp(v, instance, len) == 0 && v[len] == '.'))
                        continue;
                for (i = 0; i < n && strcmp(tokens[i], v) != 0; i++)
                        ;
                if (i == n)
                        strcpy(tokens[n++], v);
        }
        closedir(d);
        for (size_t i = 0; i < n; i++)
                total += sbx_init_kill_token(sig, tokens[i]);
        return total > 0 ? 0 : 1;
}

int main(int argc, char *argv[]) {
        sigset_t all;
        int sig;

        if (argc == 4 && strcmp(argv[1], "--kill") == 0)
                return kill_exec(argv[2], argv[3]);
        if (argc == 4 && strcmp(argv[1], "--kill-leftovers") == 0)
                return kill_leftovers(argv[2], argv[3]);
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
