/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Detached processes (docs/architecture.md, "Detached processes"), run by the
 * service through one exec as the sandbox's owner:
 *
 *   --detach DIR CAP -- ARGV…   makes DIR (0700) and its ring file of CAP bytes a
 *       stream (SBX_RING_CAP_MIN…SBX_RING_CAP_MAX), starts the
 *       supervisor in a session of its own (double fork, so the exec's end, the
 *       caller's and the service's leave it alone), and exits once ARGV runs: 0, or
 *       3 with "exec-failed ERRNO" on stdout when ARGV could not be started, 4 when
 *       DIR or the supervisor could not be made.
 *   --supervise DIR FD TOKEN -- ARGV…   (run by the above only) the supervisor: it
 *       re-executed itself without the exec's token in its environment, so a Kill
 *       of the exec's token reaches ARGV and its descendants but not the supervisor,
 *       which records how ARGV ended. ARGV gets the token back, DIR's FIFO
 *       (SBX_RING_STDIN_FILE) as stdin — opened for reading and writing, so that it
 *       never reads an end of file, only what an Attach writes (without one, a read
 *       blocks) — and pipes as stdout and stderr, copied into the ring file.
 *
 * The ring file (layout in proto.h, SBX_RING_*): a header, then one ring per
 * stream of the cap DIR was made with (CAP: the policy's max_process_output), each
 * keeping its stream's newest CAP bytes, then each stream's intent. A reader (the
 * service, through the channel's READ) reads the header's commit first and the
 * stream's intent last; a write declares its intent before it writes and commits
 * after, so what lies between intent − CAP and commit was not overwritten
 * meanwhile. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detach.h"
#include "ring-file.h"

#define EXEC_TOKEN_VAR "XAGENT_SANDBOX_EXEC="
#define CHUNK 65536U

static char chunk[CHUNK];

typedef struct Report {
        int kind;                       /* 1: ARGV could not be executed; 2: the supervisor failed */
        int err;
} Report;

static void report(int fd, int kind, int err) {
        Report r = { kind, err };

        (void) !write(fd, &r, sizeof r);
}

static int pwrite_all(int fd, const void *p, size_t n, uint64_t off) {
        while (n > 0) {
                ssize_t k = pwrite(fd, p, n, (off_t) off);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -1;
                p = (const char *) p + k;
                n -= (size_t) k;
                off += (uint64_t) k;
        }
        return 0;
}

static int put_u64(int fd, uint64_t off, uint64_t v) {
        uint8_t b[8];

        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t) (v >> (8 * i));
        return pwrite_all(fd, b, sizeof b, off);
}

/* Copies [off, off+n) of a ring of size cap at base in the file, wrapping. */
static int ring_write(int fd, uint64_t base, uint64_t cap, uint64_t off, const void *p, size_t n) {
        uint64_t at = off % cap, first = cap - at < n ? cap - at : n;

        if (pwrite_all(fd, p, (size_t) first, base + at) < 0)
                return -1;
        return n > first ? pwrite_all(fd, (const char *) p + first, n - (size_t) first, base) : 0;
}

static uint64_t ring_cap;
static uint64_t written[2];             /* each stream's position of its next byte */

static int append(int fd, int stream, const char *p, size_t n) {
        uint64_t pos;

        if (n > ring_cap) {             /* only the newest cap bytes can stay */
                written[stream] += n - ring_cap;
                p += n - ring_cap;
                n = (size_t) ring_cap;
        }
        pos = written[stream];
        if (put_u64(fd, SBX_RING_INTENT_OFFSET(ring_cap, stream), pos + n) < 0 ||
            ring_write(fd, SBX_RING_DATA_OFFSET(ring_cap, stream), ring_cap, pos, p, n) < 0)
                return -1;
        written[stream] = pos + n;
        return put_u64(fd, SBX_RING_COMMIT_OFFSET(stream), written[stream]);
}

static int exit_status(int status) {
        return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

/* Copies what is ready of the pipes into the ring (wait_ms: how long to wait for it). */
static int copy_ready(int ring, struct pollfd p[2], int wait_ms) {
        int k = poll(p, 2, wait_ms);

        if (k < 0 && errno != EINTR)
                return -1;
        for (int i = 0; k > 0 && i < 2; i++) {
                ssize_t n;

                if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                n = read(p[i].fd, chunk, sizeof chunk);
                if (n > 0 && append(ring, i, chunk, (size_t) n) == 0)
                        continue;
                if (n < 0 && errno == EINTR)
                        continue;
                close(p[i].fd);         /* its end, or a ring that cannot be written */
                p[i].fd = -1;
        }
        return k;
}

/* Copies both pipes into the ring until both end; the status once ARGV ended and
 * what it wrote before was copied (a reader that sees the end sees that output). */
static void supervise_loop(int ring, int out, int err, pid_t child) {
        struct pollfd p[2] = { { .fd = out, .events = POLLIN }, { .fd = err, .events = POLLIN } };
        bool ended = false;

        for (;;) {
                int status;

                if (!ended && waitpid(child, &status, WNOHANG) == child) {
                        ended = true;
                        /* The pipes hold what it wrote last (a descendant may write on). */
                        for (unsigned i = 0; i < 64 && (p[0].fd >= 0 || p[1].fd >= 0) && copy_ready(ring, p, 0) > 0; i++)
                                ;
                        (void) put_u64(ring, SBX_RING_STATUS_OFFSET, (uint64_t) exit_status(status));
                        (void) put_u64(ring, SBX_RING_STATE_OFFSET, SBX_RING_EXITED);
                }
                if (ended && p[0].fd < 0 && p[1].fd < 0)
                        break;
                if (copy_ready(ring, p, ended ? -1 : 100) < 0)
                        break;
        }
}

static char token_entry[128];

/* DIR's FIFO, for reading and writing; it must be one (the owner may have put
 * anything there). */
static int open_input(const char *dir) {
        struct stat st;
        int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), fd;

        if (d < 0)
                return -1;
        fd = openat(d, SBX_RING_STDIN_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        close(d);
        if (fd < 0)
                return -1;
        /* The process reads it blocking. */
        if (fstat(fd, &st) < 0 || !S_ISFIFO(st.st_mode) || fcntl(fd, F_SETFL, O_RDWR) < 0) {
                close(fd);
                errno = EBADF;
                return -1;
        }
        return fd;
}

/* The cap the ring file was made with (its header, written by --detach). */
static int read_cap(int ring) {
        uint8_t buf[SBX_RING_HEADER_SIZE];
        SbxRingHeader h;

        if (pread(ring, buf, sizeof buf, 0) != (ssize_t) sizeof buf || sbx_ring_parse_header(buf, sizeof buf, &h) < 0) {
                errno = EBADMSG;
                return -1;
        }
        ring_cap = h.cap;
        return 0;
}

int sbx_init_supervise(const char *dir, const char *report_fd, const char *token, char **argv) {
        int rep = atoi(report_fd), out[2], err[2], ring, input;
        pid_t child;

        if (strlen(token) == 0 || strlen(token) > 64 || rep < 3)
                return 2;
        (void) fcntl(rep, F_SETFD, FD_CLOEXEC);
        ring = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (ring >= 0) {
                int d = ring;

                ring = openat(d, SBX_RING_FILE, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                close(d);
        }
        input = open_input(dir);
        if (ring < 0 || read_cap(ring) < 0 || input < 0 || pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                report(rep, 2, errno);
                return 4;
        }
        (void) put_u64(ring, SBX_RING_PID_OFFSET, (uint64_t) getpid());
        (void) put_u64(ring, SBX_RING_START_TIME_OFFSET, ring_file_start_time("/proc/self/stat"));
        snprintf(token_entry, sizeof token_entry, EXEC_TOKEN_VAR "%s", token);
        child = fork();
        if (child < 0) {
                report(rep, 2, errno);
                return 4;
        }
        if (child == 0) {
                (void) signal(SIGPIPE, SIG_DFL);
                if (dup2(input, 0) < 0 || dup2(out[1], 1) < 0 || dup2(err[1], 2) < 0 ||
                    putenv(token_entry) != 0)
                        report(rep, 2, errno);
                else {
                        execvp(argv[0], argv);
                        report(rep, 1, errno);
                }
                _exit(127);
        }
        close(rep);
        close(out[1]);
        close(err[1]);
        close(input);
        supervise_loop(ring, out[0], err[0], child);
        return 0;
}

static int make_ring(const char *dir, uint64_t cap) {
        static const uint8_t zero[4096];
        int d, fd;

        d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (d < 0)
                return -1;
        fd = openat(d, SBX_RING_FILE, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
        close(d);
        if (fd < 0 || ftruncate(fd, (off_t) SBX_RING_FILE_SIZE(cap)) < 0 ||
            pwrite_all(fd, zero, SBX_RING_HEADER_SIZE, 0) < 0 ||
            pwrite_all(fd, SBX_RING_MAGIC, 8, 0) < 0 || put_u64(fd, SBX_RING_CAP_OFFSET, cap) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return close(fd);
}

/* DIR's parent is made if missing (0700, the owner's); DIR must be new. */
static int make_dir(const char *dir, uint64_t cap) {
        char parent[256];
        const char *slash = strrchr(dir, '/');

        if (!slash || slash == dir || (size_t) (slash - dir) >= sizeof parent)
                return -1;
        memcpy(parent, dir, (size_t) (slash - dir));
        parent[slash - dir] = 0;
        if (mkdir(parent, 0700) < 0 && errno != EEXIST)
                return -1;
        return mkdir(dir, 0700) < 0 ? -1 : make_ring(dir, cap);
}

static int make_input(const char *dir) {
        int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW), r;

        if (d < 0)
                return -1;
        r = mkfifoat(d, SBX_RING_STDIN_FILE, 0600);
        close(d);
        return r;
}

static void forget_dir(const char *dir) {
        int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

        if (d >= 0) {
                (void) unlinkat(d, SBX_RING_FILE, 0);
                (void) unlinkat(d, SBX_RING_STDIN_FILE, 0);
                close(d);
        }
        (void) rmdir(dir);
}

/* The child of the first fork: a session of its own, then the supervisor. */
static void start_supervisor(const char *dir, int rep, const char *token, char **argv, int argc) {
        char fd_arg[16], *args[SBX_DETACH_ARGV_MAX + 8];
        extern char **environ;
        size_t n = 0, len = strlen(EXEC_TOKEN_VAR);
        char **env;
        int i;

        pid_t pid;

        if (setsid() < 0 || argc > SBX_DETACH_ARGV_MAX || (pid = fork()) < 0)
                goto fail;
        if (pid > 0)
                _exit(0);               /* the supervisor is re-parented to the sandbox's init */
        (void) fcntl(rep, F_SETFD, 0);
        snprintf(fd_arg, sizeof fd_arg, "%d", rep);
        args[0] = (char *) "xagent-sandbox-init";
        args[1] = (char *) "--supervise";
        args[2] = (char *) dir;
        args[3] = fd_arg;
        args[4] = (char *) token;
        args[5] = (char *) "--";
        for (i = 0; i < argc; i++)
                args[6 + i] = argv[i];
        args[6 + i] = NULL;
        /* The environment without the token (compacted in place: this process execs next). */
        env = environ;
        for (char **e = environ; *e; e++)
                if (strncmp(*e, EXEC_TOKEN_VAR, len) != 0)
                        env[n++] = *e;
        env[n] = NULL;
        execve("/proc/self/exe", args, env);
fail:
        report(rep, 2, errno);
        _exit(4);
}

/* CAP in decimal, within the ring's bounds; 0 if it is not. */
static uint64_t parse_cap(const char *s) {
        uint64_t v = 0;

        if (!*s || strlen(s) > 20)
                return 0;
        for (; *s; s++) {
                if (*s < '0' || *s > '9')
                        return 0;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        return v >= SBX_RING_CAP_MIN && v <= SBX_RING_CAP_MAX ? v : 0;
}

int sbx_init_detach(const char *dir, const char *cap_arg, char **argv, int argc) {
        const char *token = getenv("XAGENT_SANDBOX_EXEC");
        uint64_t cap = parse_cap(cap_arg);
        int rep[2], status;
        Report r;
        ssize_t n;
        pid_t pid;

        if (!token || cap == 0 || argc < 1 || strlen(dir) > 200)
                return 2;
        if (make_dir(dir, cap) < 0) {
                printf("dir-failed %d\n", errno);
                return 4;
        }
        if (make_input(dir) < 0) {
                printf("dir-failed %d\n", errno);
                forget_dir(dir);
                return 4;
        }
        if (pipe2(rep, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
                printf("fork-failed %d\n", errno);
                forget_dir(dir);
                return 4;
        }
        if (pid == 0) {
                close(rep[0]);
                start_supervisor(dir, rep[1], token, argv, argc);
        }
        close(rep[1]);
        (void) waitpid(pid, &status, 0);
        do
                n = read(rep[0], &r, sizeof r);
        while (n < 0 && errno == EINTR);
        if (n == 0)
                return 0;               /* the pipe closed on ARGV's exec: it runs */
        if (n != (ssize_t) sizeof r)
                r = (Report) { 2, EIO };
        printf("%s %d\n", r.kind == 1 ? "exec-failed" : "supervisor-failed", r.err);
        if (r.kind == 1) {
                /* ARGV never ran: its supervisor ends at once; nothing of it is kept. */
                forget_dir(dir);
                return 3;
        }
        forget_dir(dir);
        return 4;
}
