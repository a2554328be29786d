/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The channel's EXEC (proto.h, "commands over the channel"; docs/architecture.md,
 * "Commands over the channel"): the program forks a supervisor per command, which
 * waits until the service took its end of the socket pair, forks the command with
 * the program's own rights, namespaces and cgroup, and carries the command's
 * standard streams and its end on the socket in Docker's multiplexed framing, so that
 * the service relays it as it relays a Docker exec's stream.
 *
 * The service is not trusted to be there: a supervisor that does not get its start
 * byte in time ends without starting anything, and one whose socket the service
 * closed kills the command (by its token, with its descendants) and ends. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "exec-serve.h"
#include "kill.h"
#include "macro.h"

#define CHUNK 65536U
/* After the command ended, how long its streams may stay quiet before the end is
 * reported: what it wrote before it ended is read first; a process it left that
 * holds them open (a detached supervisor, `cmd &`) does not hold the end, as with
 * a Docker exec. */
#define EXIT_GRACE_MS 10
#define EXEC_TOKEN_VAR "XAGENT_SANDBOX_EXEC="

extern char **environ;

static char strings[SBX_PROTO_MAX_PAYLOAD + 1];
static char *ptrs[SBX_EXEC_ARGS_MAX];
static char *envp[SBX_EXEC_ARGS_MAX + 4];
static uint8_t obuf[SBX_DOCKER_FRAME_HEADER_SIZE + CHUNK];
static uint8_t ibuf[CHUNK];

static int reply_error(SbxProtoWriter *w, int err, const char *msg) {
        w->size = 0;
        w->error = 0;
        sbx_proto_begin(w, SBX_PROTO_ERROR);
        sbx_proto_put_u64(w, SBX_TAG_ERRNO, (uint64_t) err);
        sbx_proto_put_str(w, SBX_TAG_MESSAGE, msg);
        return -err;
}

/* ---- the command ------------------------------------------------------------------ */

static bool key_in(const char *entry, char *const *list) {
        size_t k = strcspn(entry, "=");

        for (size_t i = 0; list && list[i]; i++)
                if (strncmp(list[i], entry, k) == 0 && list[i][k] == '=')
                        return true;
        return false;
}

/* The program's environment without its token, overridden by the request's, then
 * the command's token; TERM=xterm with a terminal when none says otherwise (as Docker). */
static char **command_env(const SbxProtoExec *x) {
        static char token[sizeof EXEC_TOKEN_VAR + SBX_EXEC_TOKEN_MAX];
        size_t n = 0, cap = ELEMENTSOF(envp) - 3;

        for (char **e = environ; e && *e && n < cap; e++)
                if (strncmp(*e, EXEC_TOKEN_VAR, strlen(EXEC_TOKEN_VAR)) != 0 && !key_in(*e, x->env))
                        envp[n++] = *e;
        for (size_t i = 0; x->env[i] && n < cap; i++)
                envp[n++] = x->env[i];
        envp[n] = NULL;
        if (x->tty && !key_in("TERM=", envp))
                envp[n++] = (char *) "TERM=xterm";
        snprintf(token, sizeof token, EXEC_TOKEN_VAR "%s", x->token);
        envp[n++] = token;
        envp[n] = NULL;
        return envp;
}

static _Noreturn void fail_child(int report, unsigned kind, int err) {
        uint8_t b[2 * sizeof(uint32_t)] = { (uint8_t) kind };

        memcpy(b + 4, &err, sizeof err);
        (void) !write(report, b, sizeof b);
        _exit(127);
}

/* In the forked child: default signals, its streams, its directory, its program. */
static _Noreturn void run_command(const SbxProtoExec *x, int report, int master, const int std[3]) {
        sigset_t none;

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        for (int sig = 1; sig < NSIG; sig++)
                (void) signal(sig, SIG_DFL);
        if (master >= 0) {
                int slave;

                if (setsid() < 0 || (slave = ioctl(master, TIOCGPTPEER, O_RDWR)) < 0 ||
                    ioctl(slave, TIOCSCTTY, 0) < 0)
                        fail_child(report, SBX_EXEC_FAILED, errno);
                for (int i = 0; i < 3; i++)
                        if (dup2(slave, i) < 0)
                                fail_child(report, SBX_EXEC_FAILED, errno);
                if (slave > 2)
                        close(slave);
        } else
                for (int i = 0; i < 3; i++)
                        if (dup2(std[i], i) < 0)
                                fail_child(report, SBX_EXEC_FAILED, errno);
        if (x->working_dir && chdir(x->working_dir) < 0)
                fail_child(report, SBX_EXEC_NO_WORKING_DIR, errno);
        environ = command_env(x);
        execvp(x->argv[0], x->argv);
        fail_child(report, SBX_EXEC_NOT_EXECUTED, errno);
}

/* ---- the stream ------------------------------------------------------------------- */

/* A status frame, with the terminal's master as SCM_RIGHTS when master ≥ 0. */
static int send_status(int sock, unsigned kind, uint32_t value, int master) {
        uint8_t b[SBX_DOCKER_FRAME_HEADER_SIZE + SBX_EXEC_STATUS_SIZE];
        union { struct cmsghdr h; char buf[CMSG_SPACE(sizeof(int))]; } c = {};
        struct iovec iov = { .iov_base = b, .iov_len = sizeof b };
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
        struct pollfd p = { .fd = sock, .events = POLLOUT };

        sbx_exec_status_frame(b, kind, value);
        if (master >= 0) {
                m.msg_control = c.buf;
                m.msg_controllen = sizeof c.buf;
                CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
                CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
                CMSG_FIRSTHDR(&m)->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(CMSG_FIRSTHDR(&m)), &master, sizeof(int));
        }
        /* 16 bytes into an emptied socket: whole, or the service is gone. */
        if (poll(&p, 1, SBX_EXEC_GO_TIMEOUT_MS) <= 0)
                return -1;
        return sendmsg(sock, &m, MSG_NOSIGNAL) == (ssize_t) sizeof b ? 0 : -1;
}

typedef struct Relay {
        int sock, in_w, out[2];
        bool tty, sock_in, exited;
        size_t opos, olen, ipos, ilen;
        int status;
} Relay;

static void close_input(Relay *r) {
        if (!r->tty && r->in_w >= 0)
                close(r->in_w);
        if (!r->tty)
                r->in_w = -1;
        r->ilen = 0;
}

/* The service's side: its input, and room for output. -1: it is gone. */
static int service_io(Relay *r, short revents) {
        ssize_t k;

        if (revents & (POLLHUP | POLLERR))
                return -1;
        if ((revents & POLLOUT) && r->olen > 0) {
                k = send(r->sock, obuf + r->opos, r->olen - r->opos, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                r->opos += k > 0 ? (size_t) k : 0;
                if (r->opos == r->olen)
                        r->opos = r->olen = 0;
        }
        if ((revents & POLLIN) && r->sock_in && r->ilen == 0) {
                k = recv(r->sock, ibuf, sizeof ibuf, MSG_DONTWAIT);
                if (k == 0) {
                        r->sock_in = false;
                        close_input(r);
                } else if (k < 0 && errno != EAGAIN && errno != EINTR)
                        return -1;
                else if (k > 0) {
                        r->ipos = 0;
                        r->ilen = (size_t) k;
                }
        }
        return 0;
}

static void command_input(Relay *r) {
        ssize_t k = write(r->in_w, ibuf + r->ipos, r->ilen - r->ipos);

        if (k < 0 && errno != EAGAIN && errno != EINTR)
                r->ilen = 0;            /* it closed its input: the rest is dropped */
        else if (k > 0 && (r->ipos += (size_t) k) == r->ilen)
                r->ilen = 0;
}

static void command_output(Relay *r, int s) {
        ssize_t k = read(r->out[s], obuf + SBX_DOCKER_FRAME_HEADER_SIZE, CHUNK);

        if (k < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (k <= 0) {                   /* its end (EIO: a terminal all of whose users left) */
                if (!r->tty || s == 0)
                        close(r->out[s]);
                r->out[s] = -1;
                if (r->tty)
                        r->in_w = -1;
                return;
        }
        memset(obuf, 0, SBX_DOCKER_FRAME_HEADER_SIZE);
        obuf[0] = (uint8_t) (r->tty ? 1 : s + 1);
        for (int i = 0; i < 4; i++)
                obuf[4 + i] = (uint8_t) ((uint64_t) k >> (24 - 8 * i));
        r->opos = 0;
        r->olen = SBX_DOCKER_FRAME_HEADER_SIZE + (size_t) k;
}

static int exit_status(int st) {
        return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* Until the command ended and its streams were carried: 0, or -1 when the service went away. */
static int relay(Relay *r, pid_t child) {
        int pidfd = (int) syscall(SYS_pidfd_open, child, 0), st, n;

        for (;;) {
                struct pollfd p[5] = {
                        { .fd = r->sock, .events = (short) ((r->olen > 0 ? POLLOUT : 0) |
                                                            (r->sock_in && r->ilen == 0 ? POLLIN : 0)) },
                        { .fd = r->olen == 0 ? r->out[0] : -1, .events = POLLIN },
                        { .fd = r->olen == 0 ? r->out[1] : -1, .events = POLLIN },
                        { .fd = r->ilen > 0 ? r->in_w : -1, .events = POLLOUT },
                        { .fd = r->exited ? -1 : pidfd, .events = POLLIN },
                };

                if (r->exited && r->olen == 0 && r->out[0] < 0 && r->out[1] < 0)
                        break;
                n = poll(p, ELEMENTSOF(p), r->exited && r->olen == 0 ? EXIT_GRACE_MS : pidfd < 0 ? 100 : -1);
                if (n < 0 && errno != EINTR)
                        return -1;
                if (n == 0 && r->exited && r->olen == 0)
                        break;
                if (service_io(r, p[0].revents) < 0)
                        return -1;
                if (p[3].revents && r->ilen > 0)
                        command_input(r);
                for (int s = 0; s < 2; s++)
                        if (p[1 + s].revents && r->olen == 0 && r->out[s] >= 0)
                                command_output(r, s);
                if (!r->exited && (pidfd < 0 || p[4].revents) && waitpid(child, &st, WNOHANG) == child) {
                        r->exited = true;
                        r->status = exit_status(st);
                }
        }
        /* Output still queued goes first, then the end. */
        return 0;
}

static int flush_output(Relay *r) {
        while (r->olen > 0) {
                struct pollfd p = { .fd = r->sock, .events = POLLOUT };

                if (poll(&p, 1, SBX_EXEC_GO_TIMEOUT_MS) <= 0 || service_io(r, p.revents) < 0)
                        return -1;
        }
        return 0;
}

static bool wait_go(int sock) {
        struct pollfd p = { .fd = sock, .events = POLLIN };
        char c = 0;

        return poll(&p, 1, SBX_EXEC_GO_TIMEOUT_MS) == 1 && read(sock, &c, 1) == 1 && c == SBX_EXEC_GO;
}

/* The command's streams: a terminal (*master), or three pipes (std: the command's
 * ends, mine: the supervisor's — stdin's write end, stdout's and stderr's read ends). */
static int make_streams(const SbxProtoExec *x, int *master, int std[3], int mine[3]) {
        int p[3][2];

        if (x->tty) {
                struct winsize ws = { .ws_row = (unsigned short) x->rows, .ws_col = (unsigned short) x->cols };
                int unlock = 0;

                *master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (*master < 0 || ioctl(*master, TIOCSPTLCK, &unlock) < 0 ||
                    (x->rows > 0 && x->cols > 0 && ioctl(*master, TIOCSWINSZ, &ws) < 0))
                        return -errno;
                mine[0] = mine[1] = *master;
                mine[2] = -1;
                return 0;
        }
        for (int i = 0; i < 3; i++)
                if (pipe2(p[i], O_CLOEXEC) < 0)
                        return -errno;
        std[0] = p[0][0], mine[0] = p[0][1];
        for (int i = 1; i < 3; i++)
                std[i] = p[i][1], mine[i] = p[i][0];
        return 0;
}

static int supervise(int sock, const SbxProtoExec *x) {
        int master = -1, std[3] = { -1, -1, -1 }, mine[3] = { -1, -1, -1 }, report[2], null, r;
        uint8_t rep[8];
        pid_t child;
        ssize_t k;

        (void) signal(SIGCHLD, SIG_DFL);
        (void) signal(SIGPIPE, SIG_IGN);
        (void) setsid();
        /* Nothing of the channel's: its streams, the other commands' sockets. */
        if (sock != 3 && (dup3(sock, 3, O_CLOEXEC) < 0 || close(sock) < 0))
                return 1;
        sock = 3;
        null = open("/dev/null", O_RDWR);
        for (int i = 0; i < 3 && null >= 0; i++)
                (void) dup2(null, i);
        (void) syscall(SYS_close_range, 4U, ~0U, 0U);
        if (!wait_go(sock))
                return 0;
        if ((r = make_streams(x, &master, std, mine)) < 0 || pipe2(report, O_CLOEXEC) < 0)
                return send_status(sock, SBX_EXEC_FAILED, (uint32_t) (r < 0 ? -r : errno), -1) < 0;
        child = fork();
        if (child < 0)
                return send_status(sock, SBX_EXEC_FAILED, (uint32_t) errno, -1) < 0;
        if (child == 0)
                run_command(x, report[1], master, std);
        close(report[1]);
        for (int i = 0; i < 3; i++)
                if (std[i] >= 0)
                        close(std[i]);
        while ((k = read(report[0], rep, sizeof rep)) < 0 && errno == EINTR)
                ;
        if (k == (ssize_t) sizeof rep) {
                int err;

                memcpy(&err, rep + 4, sizeof err);
                (void) waitpid(child, NULL, 0);
                return send_status(sock, rep[0], (uint32_t) err, -1) < 0;
        }
        if (send_status(sock, SBX_EXEC_STARTED, 0, master) < 0)
                goto gone;

        Relay rl = { .sock = sock, .in_w = mine[0], .out = { mine[1], mine[2] }, .tty = x->tty, .sock_in = true };
        (void) fcntl(sock, F_SETFL, O_NONBLOCK);
        for (int i = 0; i < 3; i++)
                if (mine[i] >= 0)
                        (void) fcntl(mine[i], F_SETFL, O_NONBLOCK);
        if (relay(&rl, child) < 0 || flush_output(&rl) < 0 ||
            send_status(sock, SBX_EXEC_EXITED, (uint32_t) rl.status, -1) < 0)
                goto gone;
        return 0;
gone:
        /* The service closed the stream: what it started goes with it. */
        (void) sbx_init_kill_token(SIGKILL, x->token);
        return 0;
}

int sbx_serve_exec(const SbxProtoFrame *f, SbxProtoWriter *w, int *ret_handoff) {
        SbxProtoExec x;
        char why[128];
        int sv[2], r;
        pid_t pid;

        r = sbx_proto_exec_parse(f, &x, strings, sizeof strings, ptrs, ELEMENTSOF(ptrs), why, sizeof why);
        if (r < 0)
                return reply_error(w, -r, why);
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return reply_error(w, errno, "cannot make the command's socket");
        pid = fork();
        if (pid < 0) {
                r = errno;
                close(sv[0]);
                close(sv[1]);
                return reply_error(w, r, "cannot fork");
        }
        if (pid == 0) {
                close(sv[0]);
                _exit(supervise(sv[1], &x));
        }
        close(sv[1]);
        if (*ret_handoff >= 0)
                close(*ret_handoff);
        *ret_handoff = sv[0];
        w->size = 0;
        w->error = 0;
        sbx_proto_begin(w, SBX_PROTO_OK);
        sbx_proto_put_u64(w, SBX_TAG_FD, (uint64_t) sv[0]);
        return 0;
}
