/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* exec, shell, cp: using a sandbox.
 *
 * exec streams through StartExec with this process's own standard descriptors
 * (the terminal's, or whatever pipes it was given): the service relays them, this
 * process only waits for Exited and exits with the status. With a terminal (-t)
 * the local terminal is raw meanwhile and window-size changes go to Resize.
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process are forwarded (Kill);
 * if this process dies, its connection closes and the service kills the exec.
 *
 * With --detach, exec starts the command detached (StartExec's detach) and prints its
 * exec object; ctl-detached.c reads, follows and attaches to it.
 *
 * With --json, exec captures instead (ExecSandbox, like xagent's ExecResult): the
 * standard input that is not a terminal is read whole and sent along, the call's
 * timeout is the exec's plus a margin, and the result is printed as JSON.
 *
 * cp makes and reads its tar streams with /bin/tar (Debian: an Essential package,
 * so always there) rather than linking libarchive: the archive format is tar's own
 * business, and extraction on the host runs as the calling user with
 * --no-same-owner and --no-same-permissions. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "bus-spec.h"
#include "ctl-bus.h"
#include "ctl-exec.h"
#include "ctl-verbs.h"
#include "fileio.h"
#include "json-util.h"
#include "tar-filter.h"
#include "utf8.h"

#define EXEC_INTERFACE "org.xagent.Sandbox1.Exec"
/* ExecSandbox's exit status for a run killed at its timeout (on_timeout "result"). */
#define CTL_TIMED_OUT_STATUS 124
/* A copy may take the service's whole copy timeout (600 s). */
#define CP_CALL_TIMEOUT_USEC (660ULL * 1000 * 1000)

enum {
        ARG_TTY = 0x200,
        ARG_ENV,
        ARG_WORKDIR,
        ARG_TIMEOUT,
        ARG_DETACH,
};

typedef struct ExecArgs {
        const char *verb;
        bool tty;
        char **env;                     /* "K=V", as given */
        size_t n_env;
        const char *workdir;
        uint64_t timeout;
        bool detach;
} ExecArgs;

static int exec_option(int c, const char *arg, void *userdata) {
        ExecArgs *a = userdata;
        char **l;

        switch (c) {
        case ARG_TTY:
                a->tty = true;
                return CTL_PROCEED;
        case ARG_ENV:
                if (!strchr(arg, '=') || arg[0] == '=')
                        return ctl_usage_error(a->verb, "--env wants KEY=VALUE, got '%s'", arg);
                l = reallocarray(a->env, a->n_env + 1, sizeof(char *));
                if (!l)
                        return ctl_bus_fail("--env", -ENOMEM);
                a->env = l;
                a->env[a->n_env++] = (char *) arg;
                return CTL_PROCEED;
        case ARG_WORKDIR:
                a->workdir = arg;
                return CTL_PROCEED;
        case ARG_TIMEOUT:
                return ctl_parse_uint(a->verb, "--timeout", arg, 0, 86400, &a->timeout);
        case ARG_DETACH:
                a->detach = true;
                return CTL_PROCEED;
        default:
                return CTL_EXIT_USAGE;
        }
}

/* The options a{sv}; ws NULL: a capture, whose in (may be empty) becomes "stdin". */
static int append_exec_options(sd_bus_message *m, const ExecArgs *a, const struct winsize *ws, const char *in,
                               size_t in_size) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        if (a->n_env > 0) {
                if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
                    (r = sd_bus_message_append(m, "s", "env")) < 0 ||
                    (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
                    (r = sd_bus_message_open_container(m, 'a', "{ss}")) < 0)
                        return r;
                for (size_t i = 0; i < a->n_env; i++) {
                        _cleanup_free_ char *k = strndup(a->env[i], strcspn(a->env[i], "="));

                        if (!k)
                                return -ENOMEM;
                        if ((r = sd_bus_message_append(m, "{ss}", k, strchr(a->env[i], '=') + 1)) < 0)
                                return r;
                }
                if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
                    (r = sd_bus_message_close_container(m)) < 0)
                        return r;
        }
        if (a->workdir && (r = sd_bus_message_append(m, "{sv}", "working_dir", "s", a->workdir)) < 0)
                return r;
        if (in_size > 0 &&
            ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
             (r = sd_bus_message_append(m, "s", "stdin")) < 0 ||
             (r = sd_bus_message_open_container(m, 'v', "ay")) < 0 ||
             (r = sd_bus_message_append_array(m, 'y', in, in_size)) < 0 ||
             (r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0))
                return r;
        if (a->timeout > 0 && (r = sd_bus_message_append(m, "{sv}", "timeout", "u", (uint32_t) a->timeout)) < 0)
                return r;
        /* A captured run keeps what it wrote when it times out (exit status 124). */
        if (!ws && (r = sd_bus_message_append(m, "{sv}", "on_timeout", "s", "result")) < 0)
                return r;
        if (a->tty && (r = sd_bus_message_append(m, "{sv}", "tty", "b", 1)) < 0)
                return r;
        if (a->detach && (r = sd_bus_message_append(m, "{sv}", "detach", "b", 1)) < 0)
                return r;
        if (a->tty && ws && ws->ws_row > 0 &&
            ((r = sd_bus_message_append(m, "{sv}", "rows", "q", (uint16_t) ws->ws_row)) < 0 ||
             (r = sd_bus_message_append(m, "{sv}", "cols", "q", (uint16_t) ws->ws_col)) < 0))
                return r;
        return sd_bus_message_close_container(m);
}

static struct termios saved_termios;
static bool termios_saved;

static void restore_terminal(void) {
        if (termios_saved)
                (void) tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_termios);
        termios_saved = false;
}

static void raw_terminal(void) {
        struct termios t;

        if (tcgetattr(STDIN_FILENO, &saved_termios) < 0)
                return;
        termios_saved = true;
        t = saved_termios;
        cfmakeraw(&t);
        (void) tcsetattr(STDIN_FILENO, TCSADRAIN, &t);
}

typedef struct Waiter {
        bool exited;
        int status;
} Waiter;

static int on_exited(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        Waiter *w = userdata;
        int32_t status;

        if (sd_bus_message_read(m, "i", &status) >= 0) {
                w->exited = true;
                w->status = status;
        }
        return 0;
}

static void forward_size(sd_bus *bus, const char *path) {
        struct winsize ws;

        if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0)
                return;
        (void) sd_bus_call_method_async(bus, NULL, CTL_BUS_SERVICE, path, EXEC_INTERFACE, "Resize", NULL, NULL,
                                        "qq", (uint16_t) ws.ws_row, (uint16_t) ws.ws_col);
}

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process go to the exec's process
 * (Kill), which decides what they mean; its exit status still ends this process. */
static void forward_signal(sd_bus *bus, const char *path, int sig) {
        (void) sd_bus_call_method_async(bus, NULL, CTL_BUS_SERVICE, path, EXEC_INTERFACE, "Kill", NULL, NULL, "s",
                                        sigabbrev_np(sig));
}

/* The exit status may be known before the signal could reach us. */
static int already_exited(sd_bus *bus, const char *path, Waiter *w) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int running = 1, r;
        int32_t status;

        r = sd_bus_get_property_trivial(bus, CTL_BUS_SERVICE, path, EXEC_INTERFACE, "Running", &error, 'b', &running);
        if (r < 0 || running)
                return r;
        r = sd_bus_get_property_trivial(bus, CTL_BUS_SERVICE, path, EXEC_INTERFACE, "ExitStatus", &error, 'i',
                                        &status);
        if (r >= 0) {
                w->exited = true;
                w->status = status;
        }
        return r;
}

/* The signals forwarded, blocked from before the start on: the command may print and
 * be signalled before StartExec has answered; such a signal waits, and goes to it. */
static void block_forwarded(bool tty, sigset_t *ret) {
        static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

        sigemptyset(ret);
        for (size_t i = 0; i < ELEMENTSOF(forwarded); i++)
                sigaddset(ret, forwarded[i]);
        if (tty)
                sigaddset(ret, SIGWINCH);
        (void) sigprocmask(SIG_BLOCK, ret, NULL);
}

int ctl_exec_wait_exited(sd_bus *bus, const char *path, const sigset_t *mask) {
        _cleanup_close_ int sfd = -EBADF;
        Waiter w = {};
        int r;

        r = sd_bus_match_signal(bus, NULL, CTL_BUS_SERVICE, path, EXEC_INTERFACE, "Exited", on_exited, &w);
        if (r < 0 || (r = already_exited(bus, path, &w)) < 0)
                return ctl_bus_fail("Exited", r);
        sfd = signalfd(-1, mask, SFD_CLOEXEC | SFD_NONBLOCK);
        while (!w.exited) {
                struct pollfd p[2] = { { .fd = sd_bus_get_fd(bus), .events = (short) sd_bus_get_events(bus) },
                                       { .fd = sfd, .events = POLLIN } };
                struct signalfd_siginfo si;

                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return ctl_bus_fail("the bus", r);
                if (r > 0)
                        continue;
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return ctl_bus_fail("poll", -errno);
                if (p[1].revents && read(sfd, &si, sizeof si) > 0) {
                        if (si.ssi_signo == SIGWINCH)
                                forward_size(bus, path);
                        else
                                forward_signal(bus, path, (int) si.ssi_signo);
                }
        }
        return w.status < 0 ? 255 : w.status & 0xff;
}

static uint64_t now_s(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec;
}

/* The service kills a run at its timeout: SIGKILL for a streamed one (137), 124 for a
 * captured one (on_timeout "result"). Either way the exit status is 124, as coreutils'
 * timeout, the --json form, the Python module and the MCP server report it; said on
 * stderr, where a caller looks. */
static int said_timed_out(const ExecArgs *a, uint64_t started, int status, int timed_out_status) {
        if (a->timeout == 0 || status != timed_out_status || now_s() - started < a->timeout)
                return status;
        fprintf(stderr, "timed out after %" PRIu64 " s\n", a->timeout);
        return CTL_TIMED_OUT_STATUS;
}

static int run_exec(CtlOptions *o, const char *name, char **cmd, const ExecArgs *a) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        struct winsize ws = {};
        uint64_t started = now_s();
        const char *path;
        sigset_t mask;
        int r;

        if (a->tty && !isatty(STDIN_FILENO))
                return ctl_usage_error(a->verb, "-t needs a terminal on standard input");
        if (a->tty)
                (void) ioctl(STDIN_FILENO, TIOCGWINSZ, &ws);
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = ctl_bus_new_sandbox_call(bus, o, "StartExec", name, &m)) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append_strv(m, cmd)) < 0 ||
            (r = append_exec_options(m, a, &ws, NULL, 0)) < 0 ||
            (r = sd_bus_message_append(m, "hhh", STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO)) < 0)
                return ctl_bus_fail("StartExec", r);
        block_forwarded(a->tty, &mask);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "o", &path)) < 0)
                return ctl_bus_fail("StartExec", r);
        if (a->tty)
                raw_terminal();
        r = ctl_exec_wait_exited(bus, path, &mask);
        restore_terminal();
        return said_timed_out(a, started, r, 128 + SIGKILL);
}

const char *ctl_exec_id(const char *path) {
        const char *slash = strrchr(path, '/');

        return slash ? slash + 1 : path;
}

int ctl_print_exec(const char *path, bool json) {
        _cleanup_(json_object_putp) json_object *j = NULL;

        if (!json) {
                printf("%s\n", ctl_exec_id(path));
                return 0;
        }
        j = json_object_new_object();
        if (!j || json_object_object_add(j, "exec", json_object_new_string(path)) < 0 ||
            json_object_object_add(j, "id", json_object_new_string(ctl_exec_id(path))) < 0)
                return ctl_bus_fail("exec", -ENOMEM);
        ctl_print_json(j);
        return 0;
}

/* --detach: nothing of this process is the command's; its exec object is printed. */
static int run_detached(CtlOptions *o, const char *name, char **cmd, const ExecArgs *a) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int null = -EBADF;
        const struct winsize none = {};
        const char *path;
        int r;

        if (a->tty || a->timeout > 0)
                return ctl_usage_error(a->verb, "--detach: not with %s", a->tty ? "-t" : "--timeout");
        null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0)
                return ctl_bus_fail("/dev/null", -errno);
        if (ctl_bus_connect(o, &bus) < 0 || ctl_bus_new_sandbox_call(bus, o, "StartExec", name, &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append_strv(m, cmd)) < 0 || (r = append_exec_options(m, a, &none, NULL, 0)) < 0 ||
            (r = sd_bus_message_append(m, "hhh", null, null, null)) < 0)
                return ctl_bus_fail("StartExec", r);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "o", &path)) < 0)
                return ctl_bus_fail("StartExec", r);
        return ctl_print_exec(path, o->json);
}

/* Output bytes as a JSON string: invalid UTF-8 becomes U+FFFD, byte by byte. */
static json_object *lossy_string(const void *data, size_t n) {
        _cleanup_free_ char *out = malloc(n * 3 + 1);
        const char *p = data;
        size_t o = 0;

        if (!out)
                return NULL;
        for (size_t i = 0; i < n;) {
                uint32_t cp;
                int k = p[i] ? sbx_utf8_decode(p + i, n - i, &cp) : 1;

                if (k > 0) {
                        memcpy(out + o, p + i, (size_t) k);
                        o += (size_t) k;
                        i += (size_t) k;
                } else {
                        memcpy(out + o, "\xef\xbf\xbd", 3);
                        o += 3;
                        i++;
                }
        }
        return json_object_new_string_len(out, (int) o);
}

/* Standard input, unless it is a terminal: all of it, for the capture's stdin. */
static int read_stdin(char **ret, size_t *ret_size) {
        *ret = NULL;
        *ret_size = 0;
        if (isatty(STDIN_FILENO))
                return 0;
        return sbx_read_fd(STDIN_FILENO, SBX_EXEC_STDIN_MAX, ret, ret_size);
}

static int print_capture(sd_bus_message *reply) {
        _cleanup_(json_object_putp) json_object *out = json_object_new_object();
        const void *o, *e;
        size_t on, en;
        int32_t status;
        int truncated, r;

        if ((r = sd_bus_message_read(reply, "i", &status)) < 0 ||
            (r = sd_bus_message_read_array(reply, 'y', &o, &on)) < 0 ||
            (r = sd_bus_message_read_array(reply, 'y', &e, &en)) < 0 ||
            (r = sd_bus_message_read(reply, "b", &truncated)) < 0)
                return ctl_bus_fail("ExecSandbox", r);
        if (!out ||
            json_object_object_add(out, "exit_status", json_object_new_int(status)) < 0 ||
            json_object_object_add(out, "stdout", lossy_string(o, on)) < 0 ||
            json_object_object_add(out, "stderr", lossy_string(e, en)) < 0 ||
            json_object_object_add(out, "truncated", json_object_new_boolean(truncated)) < 0)
                return ctl_bus_fail("ExecSandbox", -ENOMEM);
        ctl_print_json(out);
        return status & 0xff;
}

static int run_capture(CtlOptions *o, const char *name, char **cmd, const ExecArgs *a) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *in = NULL;
        ExecArgs capture = *a;
        uint64_t timeout = a->timeout > 0 ? a->timeout : SBX_EXEC_TIMEOUT_DEFAULT_S, started;
        size_t in_size;
        int r;

        if (a->tty)
                return ctl_usage_error(a->verb, "--json captures the output; it cannot have a terminal (-t)");
        if ((r = read_stdin(&in, &in_size)) < 0)
                return ctl_bus_fail("standard input", r);
        capture.timeout = timeout;
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = ctl_bus_new_sandbox_call(bus, o, "ExecSandbox", name, &m)) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append_strv(m, cmd)) < 0 ||
            (r = append_exec_options(m, &capture, NULL, in, in_size)) < 0)
                return ctl_bus_fail("ExecSandbox", r);
        /* The call answers when the command ends: wait for the exec's timeout and more. */
        started = now_s();
        if (ctl_bus_call(bus, m, (timeout + 30) * 1000 * 1000, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        return said_timed_out(&capture, started, print_capture(reply), CTL_TIMED_OUT_STATUS);
}

/* -t → --tty: the shared parser knows long options only. */
static void expand_short(int argc, char **argv) {
        static char tty[] = "--tty";

        for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
                if (streq(argv[i], "-t"))
                        argv[i] = tty;
}

static const struct option exec_options[] = {
        CTL_COMMON_OPTIONS,
        { "tty",     no_argument,       NULL, ARG_TTY     },
        { "env",     required_argument, NULL, ARG_ENV     },
        { "workdir", required_argument, NULL, ARG_WORKDIR },
        { "timeout", required_argument, NULL, ARG_TIMEOUT },
        { "detach",  no_argument,       NULL, ARG_DETACH  },
        {}
};

int verb_exec(int argc, char **argv, CtlOptions *o) {
        ExecArgs a = { .verb = argv[0] };
        int r;

        expand_short(argc, argv);
        r = ctl_parse_args(argc, argv, exec_options, o, exec_option, &a, 2, INT_MAX);
        if (r == CTL_PROCEED)
                r = (a.detach ? run_detached : o->json ? run_capture : run_exec)(o, argv[optind],
                                                                               argv + optind + 1, &a);
        free(a.env);
        return r;
}

int verb_shell(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        static char sh[] = "/bin/sh";
        char *cmd[] = { sh, NULL };
        ExecArgs a = { .verb = argv[0], .tty = true };
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 1, 1)) != CTL_PROCEED)
                return r;
        return run_exec(o, argv[optind], cmd, &a);
}

/* usage ------------------------------------------------------------------------- */

/* cp ------------------------------------------------------------------------------ */

/* "NAME:PATH" → name and path (both in s); NULL when s names a local path. A local
 * path with ':' is written with a '/' in front of the colon (./a:b). */
static char *split_remote(char *s, char **ret_path) {
        char *colon = strchr(s, ':');

        if (!colon || colon == s || memchr(s, '/', (size_t) (colon - s)))
                return NULL;
        *colon = 0;
        *ret_path = colon + 1;
        return s;
}

/* /bin/tar with one end of a pipe as its stdin or stdout. */
static int spawn_tar(char *const *argv, int fd, int target, pid_t *ret) {
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                if (dup2(fd, target) < 0)
                        _exit(127);
                execv("/bin/tar", argv);
                _exit(127);
        }
        *ret = pid;
        return 0;
}

static int wait_child(pid_t pid) {
        int status;

        if (waitpid(pid, &status, 0) < 0)
                return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* Takes fd (closed on every path: while it is open, tar never sees the pipe's end). */
static int copy_call(CtlOptions *o, const char *method, const char *name, const char *path, int fd) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_close_ int ours = fd;
        int r;

        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if (ctl_bus_new_sandbox_call(bus, o, method, name, &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append(m, "sha{sv}", path, ours, 0)) < 0)
                return ctl_bus_fail(method, r);
        /* The message holds its own copy of the descriptor. */
        ours = safe_close(ours);
        return ctl_bus_call(bus, m, CP_CALL_TIMEOUT_USEC, o, NULL) < 0 ? CTL_EXIT_FAILURE : 0;
}

static int copy_in(CtlOptions *o, const char *src, const char *name, const char *guest_dir) {
        _cleanup_free_ char *d = strdup(src), *b = strdup(src);
        char *tar[] = { (char *) "tar", (char *) "-c", (char *) "-f", (char *) "-", (char *) "-C", NULL, NULL, NULL };
        int p[2], r, q;
        pid_t pid;

        if (!d || !b)
                return ctl_bus_fail("cp", -ENOMEM);
        if (access(src, R_OK) < 0)
                return ctl_bus_fail(src, -errno);
        tar[5] = dirname(d);
        tar[6] = basename(b);
        if (pipe2(p, O_CLOEXEC) < 0 || spawn_tar(tar, p[1], STDOUT_FILENO, &pid) < 0)
                return ctl_bus_fail("tar", -errno);
        safe_close(p[1]);
        r = copy_call(o, "CopyToSandbox", name, guest_dir, p[0]);
        q = wait_child(pid);
        if (r == 0 && q < 0)
                return ctl_bus_fail("tar (making the archive)", q);
        return r;
}

/* The archive from in to out through the tar filter copies into a sandbox pass
 * (tar-filter.h), in a child: no devices, setuid bits or links leading out. */
/* other: the pipe's write end, which the child must not hold open. */
static int spawn_filter(int in, int out, int other, pid_t *ret) {
        pid_t pid = fork();

        if (pid < 0)
                return -errno;
        if (pid == 0) {
                _cleanup_(sbx_tar_filter_freep) SbxTarFilter *f = NULL;
                _cleanup_free_ char *buf = NULL;
                SbxError error = SBX_ERROR_NULL;
                size_t size = 0, alloc = 0;
                char chunk[65536];
                ssize_t n;
                int r;

                safe_close(other);
                if (sbx_tar_filter_new(getuid(), getgid(), &f) < 0)
                        _exit(EXIT_FAILURE);
                do {
                        n = read(in, chunk, sizeof chunk);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n < 0)
                                _exit(EXIT_FAILURE);
                        r = n > 0 ? sbx_tar_filter_feed(f, chunk, (size_t) n, &buf, &size, &alloc, &error)
                                  : sbx_tar_filter_finish(f, &buf, &size, &alloc, &error);
                        if (r < 0) {
                                ctl_error_unnamed(sbx_error_is_set(&error) ? sbx_error_bus_name(error.kind)
                                                                           : ctl_errno_name(r),
                                                  "cp: %s", error.message ?: strerror(-r));
                                _exit(EXIT_FAILURE);
                        }
                        if (size > 0 && ctl_write_all(out, buf, size) < 0)
                                _exit(EXIT_FAILURE);
                        size = 0;
                } while (n != 0);
                _exit(EXIT_SUCCESS);
        }
        *ret = pid;
        return 0;
}

static int copy_out(CtlOptions *o, const char *name, const char *guest_path, const char *dst) {
        char *tar[] = { (char *) "tar", (char *) "-x", (char *) "-f", (char *) "-", (char *) "--no-same-owner",
                        (char *) "--no-same-permissions", (char *) "-C", (char *) dst, NULL };
        struct stat st;
        int p[2], f[2], r, q, k = 0;
        pid_t pid, filter = 0;

        if (stat(dst, &st) < 0 || !S_ISDIR(st.st_mode))
                return ctl_usage_error("cp", "the destination '%s' must be an existing directory", dst);
        if (pipe2(p, O_CLOEXEC) < 0)
                return ctl_bus_fail("pipe", -errno);
        /* As root, tar would make the device nodes the archive names (the sandbox's
         * owner chose what is in it): root's copies out pass the same filter as copies
         * in. Anyone else's tar cannot make devices and drops setuid bits itself. */
        if (geteuid() == 0) {
                if (pipe2(f, O_CLOEXEC) < 0 || spawn_filter(p[0], f[1], p[1], &filter) < 0)
                        return ctl_bus_fail("cp", -errno);
                safe_close(f[1]);
                safe_close(p[0]);
                p[0] = f[0];
        }
        if (spawn_tar(tar, p[0], STDIN_FILENO, &pid) < 0)
                return ctl_bus_fail("tar", -errno);
        safe_close(p[0]);
        r = copy_call(o, "CopyFromSandbox", name, guest_path, p[1]);
        if (filter > 0)
                k = wait_child(filter);
        q = wait_child(pid);
        if (r == 0 && k < 0)
                return CTL_EXIT_FAILURE;        /* the filter said why */
        if (r == 0 && q < 0)
                return ctl_bus_fail("tar (unpacking the archive)", q);
        return r;
}

int verb_cp(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, {} };
        char *src_path = NULL, *dst_path = NULL, *src_name, *dst_name;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, NULL, NULL, 2, 2)) != CTL_PROCEED)
                return r;
        src_name = split_remote(argv[optind], &src_path);
        dst_name = split_remote(argv[optind + 1], &dst_path);
        if (!src_name == !dst_name)
                return ctl_usage_error(argv[0], "exactly one of SRC and DST must be NAME:PATH");
        if (dst_name)
                return copy_in(o, argv[optind], dst_name, dst_path);
        return copy_out(o, src_name, src_path, argv[optind + 1]);
}
