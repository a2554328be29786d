/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Signalling an exec's processes by their token (docs/security.md, "Exec"): every
 * process of the container whose environment carries XAGENT_SANDBOX_EXEC=TOKEN —
 * the processes of one exec and their descendants. Docker has no way to signal an
 * exec'd process, and the service may neither see the container's processes nor
 * signal another uid's: this runs as the sandbox's owner, so it can signal only
 * what the owner could. Used by the modes --kill and --kill-leftovers
 * (xagent-sandbox-init.c) and by a command over the channel whose service went away
 * (exec-serve.c). Tokens are read from processes the owner controls: a forged one
 * can only make the owner's own processes, in the owner's own sandbox, be
 * signalled. */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kill.h"

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
int sbx_init_kill(const char *signal_number, const char *token) {
        int sig = parse_signal(signal_number);

        if (sig < 0 || strlen(token) == 0 || strlen(token) > TOKEN_MAX)
                return 2;
        return sbx_init_kill_token(sig, token) > 0 ? 0 : 1;
}

#define LEFTOVERS_MAX 1024

/* Exit 0 when something was signalled, 1 when no exec of another instance runs, 2
 * on a usage error. The tokens are collected first, then each is killed. */
int sbx_init_kill_leftovers(const char *signal_number, const char *instance) {
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
