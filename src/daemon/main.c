/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* xagent-sandboxd: the one process on the host that holds the Docker socket,
 * offering verified sandbox operations on the system bus as org.xagent.Sandbox1. */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "docker-dialect.h"
#include "docker-tls.h"
#include "init-volume.h"
#include "log.h"
#include "manager.h"
#include "policy.h"

static void help(void) {
        printf("xagent-sandboxd [OPTIONS...]\n\n"
               "Verified sandbox lifecycle operations on the system bus (org.xagent.Sandbox1).\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --config PATH          Host policy (default: %s)\n"
               "     --state-dir DIR        State (default: $STATE_DIRECTORY, else /var/lib/xagent-sandbox)\n"
               "     --docker-host URL      Docker endpoint (default: $DOCKER_HOST, else the policy's engine.host,\n"
               "                            else unix:///var/run/docker.sock; tcp:// is mutual TLS only)\n"
               "     --idle-timeout SECONDS Exit after so long without calls (default: 30; 0 = never)\n"
               "     --init-dir DIR         Where xagent-sandbox-init is (default: %s)\n"
               "     --check-config [PATH]  Check a host policy file (default: --config's) and exit\n",
               SBX_POLICY_PATH, SBX_INIT_DIR);
}

static int parse_seconds(const char *s, unsigned *ret) {
        char *end;
        unsigned long v;

        errno = 0;
        v = strtoul(s, &end, 10);
        if (errno != 0 || end == s || *end || s[0] == '-' || v > 86400UL * 365)
                return -EINVAL;
        *ret = (unsigned) v;
        return 0;
}

static SbxDockerTls engine_tls(const SbxPolicy *p) {
        return (SbxDockerTls) {
                .ca = p->engine.tls_ca, .cert = p->engine.tls_cert, .key = p->engine.tls_key,
                .server_name = p->engine.server_name,
        };
}

/* The host policy as the daemon would read it: "PATH: ok", or the key and the rule
 * it breaks, without starting anything; a tcp:// engine's files are checked too. */
static int do_check_config(const char *path, int n_args) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = NULL;
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxDockerTls tls;

        if (n_args > 1) {
                log_error("--check-config takes at most one path");
                return EXIT_FAILURE;
        }
        if (manager_load_policy(path, &p, &e) < 0 ||
            (sbx_policy_engine_remote(p) && (tls = engine_tls(p), sbx_docker_tls_check_files(&tls, &e) < 0))) {
                fprintf(stderr, "%s: %s\n", path, e.message ?: "out of memory");
                return EXIT_FAILURE;
        }
        /* The runtimes it offers must be the engine's (GET /info; one that does not answer:
         * unchecked, a warning). */
        if (manager_check_runtimes(p->engine.host ?: getenv("DOCKER_HOST") ?: "unix://" SBX_DOCKER_SOCKET_DEFAULT, p,
                                   &e) < 0) {
                fprintf(stderr, "%s: %s\n", path, e.message ?: "out of memory");
                return EXIT_FAILURE;
        }
        /* A local engine a user administers is refused here too (docs/engines.md). */
        if (p->engine.host && !sbx_policy_engine_remote(p) && sbx_docker_check_engine(p->engine.host, &e) == -EPERM) {
                fprintf(stderr, "%s: %s\n", path, e.message ?: "out of memory");
                return EXIT_FAILURE;
        }
        if (sbx_policy_engine_remote(p))
                printf("%s: ok (engine %s: mutual TLS, its files root's and loadable)\n", path, p->engine.host);
        else
                printf("%s: ok\n", path);
        return EXIT_SUCCESS;
}

/* The engine: --docker-host, else $DOCKER_HOST, else the policy's engine.host, else
 * the default; a tcp:// one gets the policy's TLS files, checked now (no start without
 * them). A policy that does not load is manager_new()'s to report. */
static int setup_engine(ManagerConfig *config, bool host_given, const char *env_host, SbxPolicy **ret_policy) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxPolicy *p = NULL;
        SbxDockerTls tls;

        if (manager_load_policy(config->config_path, &p, &e) < 0)
                return 0;
        *ret_policy = p;
        if (!host_given)
                config->docker_host = env_host ?: p->engine.host ?: "unix:///var/run/docker.sock";
        if (strncmp(config->docker_host, "tcp://", strlen("tcp://")) != 0)
                return 0;
        if (!sbx_policy_engine_remote(p)) {
                log_error("docker host %s: a tcp:// engine is mutual TLS only, and %s names no engine with "
                          "tls_ca, tls_cert, tls_key", config->docker_host, config->config_path);
                return -EINVAL;
        }
        tls = engine_tls(p);
        if (sbx_docker_tls_setup(&tls, &e) < 0) {
                log_error("%s: %s", config->config_path, e.message ?: "out of memory");
                return -EINVAL;
        }
        log_info("engine %s: mutual TLS with %s", config->docker_host, p->engine.tls_cert);
        return 0;
}

#define LOCK_FILE "daemon.lock"
#define LOCK_WAIT_MS 10000U

/* Who holds the lock, as its file says. */
static void lock_holder(int fd, char pid[static 32]) {
        ssize_t n = pread(fd, pid, 31, 0);

        pid[MAX(n, 0)] = 0;
        pid[strcspn(pid, "\n")] = 0;
        if (!pid[0])
                strcpy(pid, "unknown");
}

/* One daemon per state directory: the lock on STATE_DIR/daemon.lock (a file of its
 * own: SQLite's locks on the database are SQLite's) is taken before anything reads
 * the state or asks for the bus name, and held until the process is gone. A second
 * instance waits a little for it (a call racing the idle exit activates the next
 * daemon while the old one finishes), then gives up naming the holder. */
static int lock_state_dir(const char *dir, int *ret_fd) {
        _cleanup_free_ char *path = NULL;
        char pid[32];
        int fd;

        if (mkdir(dir, 0700) < 0 && errno != EEXIST)
                return log_error_errno(errno, "%s: %m", dir);
        if (asprintf(&path, "%s/" LOCK_FILE, dir) < 0)
                return log_oom();
        fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return log_error_errno(errno, "%s: %m", path);
        for (unsigned waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 100) {
                if (errno != EWOULDBLOCK) {
                        log_error_errno(errno, "%s: cannot lock: %m", path);
                        close(fd);
                        return -errno;
                }
                lock_holder(fd, pid);
                if (waited == 0)
                        log_info("%s is in use by another xagent-sandboxd (pid %s): waiting for it to exit", dir,
                                 pid);
                if (waited >= LOCK_WAIT_MS) {
                        log_error("%s is in use by another xagent-sandboxd (pid %s): exiting", dir, pid);
                        close(fd);
                        return -EBUSY;
                }
                (void) usleep(100 * 1000);
        }
        snprintf(pid, sizeof pid, "%d\n", (int) getpid());
        if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, strlen(pid), 0) < 0)
                log_warning_errno(errno, "%s: %m", path);
        *ret_fd = fd;
        return 0;
}

/* For tests only (xagent-sandboxd(8), ENVIRONMENT): a shorter deadline tick or detached
 * poll, in milliseconds (10 to 60000). Unset: the defaults. */
static int test_interval(const char *variable, uint64_t *ret) {
        const char *v = getenv(variable);
        char *end;
        unsigned long ms;

        if (!v)
                return 0;
        errno = 0;
        ms = strtoul(v, &end, 10);
        if (errno != 0 || end == v || *end || ms < 10 || ms > 60000) {
                log_error("%s: not a number of milliseconds from 10 to 60000: %s", variable, v);
                return -EINVAL;
        }
        log_notice("%s=%lu: for tests only", variable, ms);
        *ret = (uint64_t) ms * 1000U;
        return 0;
}

int main(int argc, char **argv) {
        enum { ARG_VERSION = 0x100, ARG_CONFIG, ARG_STATE_DIR, ARG_DOCKER_HOST, ARG_IDLE_TIMEOUT, ARG_INIT_DIR, ARG_CHECK_CONFIG };
        static const struct option options[] = {
                { "help",         no_argument,       NULL, 'h'              },
                { "version",      no_argument,       NULL, ARG_VERSION      },
                { "config",       required_argument, NULL, ARG_CONFIG       },
                { "state-dir",    required_argument, NULL, ARG_STATE_DIR    },
                { "docker-host",  required_argument, NULL, ARG_DOCKER_HOST  },
                { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },
                { "init-dir",     required_argument, NULL, ARG_INIT_DIR     },
                { "check-config", no_argument,       NULL, ARG_CHECK_CONFIG },
                {}
        };
        ManagerConfig config = {
                .config_path = SBX_POLICY_PATH,
                .state_dir = getenv("STATE_DIRECTORY") ?: "/var/lib/xagent-sandbox",
                .docker_host = NULL,
                .init_dir = SBX_INIT_DIR,
                .idle_timeout_s = 30,
        };
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *engine_policy = NULL;
        bool check_config = false, host_given = false;
        int c, r, lock_fd = -1;

        log_setup();
        /* Large buffers (messages, captured output) are mapped and unmapped, never
         * kept in the heap once freed: fixed thresholds, not glibc's sliding ones
         * (which rise to the largest block freed, up to 32 MiB, and then keep such
         * blocks for good). */
        (void) mallopt(M_MMAP_THRESHOLD, 256 * 1024);
        (void) mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
        /* One arena for all threads: a worker's own arena kept its high-water mark of
         * pages that hold a few live chunks after malloc_trim(), for each of up to 16
         * arenas (8 per core). Measured at 200 sandboxes, idle after a burst: RssAnon
         * 3084 kB with glibc's default, 3036 with 2 arenas, 2808 with one. The threads
         * are few and mostly wait for Docker. */
        (void) mallopt(M_ARENA_MAX, 1);

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                case ARG_VERSION:
                        puts("xagent-sandboxd " PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                case ARG_CONFIG:
                        config.config_path = optarg;
                        break;
                case ARG_STATE_DIR:
                        config.state_dir = optarg;
                        break;
                case ARG_DOCKER_HOST:
                        config.docker_host = optarg;
                        host_given = true;
                        break;
                case ARG_CHECK_CONFIG:
                        check_config = true;
                        break;
                case ARG_INIT_DIR:
                        if (optarg[0] != '/') {
                                log_error("--init-dir: not an absolute path: %s", optarg);
                                return EXIT_FAILURE;
                        }
                        config.init_dir = optarg;
                        break;
                case ARG_IDLE_TIMEOUT:
                        if (parse_seconds(optarg, &config.idle_timeout_s) < 0) {
                                log_error("--idle-timeout: not a number of seconds: %s", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                default:
                        return EXIT_FAILURE;
                }
        if (check_config)
                return do_check_config(optind < argc ? argv[optind] : config.config_path, argc - optind);
        if (optind < argc) {
                log_error("takes no arguments");
                return EXIT_FAILURE;
        }

        if (test_interval("SBX_TEST_DEADLINE_TICK_MS", &config.deadline_tick_usec) < 0 ||
            test_interval("SBX_TEST_DETACHED_POLL_MS", &config.detached_poll_usec) < 0 ||
            test_interval("SBX_TEST_POOL_TICK_MS", &config.pool_tick_usec) < 0)
                return EXIT_FAILURE;
        if (setup_engine(&config, host_given, getenv("DOCKER_HOST"), &engine_policy) < 0)
                return EXIT_FAILURE;
        if (!config.docker_host)
                config.docker_host = getenv("DOCKER_HOST") ?: "unix:///var/run/docker.sock";

        /* Every create needs it: better no start at all than a failure at the first one. */
        _cleanup_(sbx_error_free) SbxError init_error = SBX_ERROR_NULL;
        if (sbx_init_program_check(config.init_dir, &init_error) < 0) {
                log_error("%s", init_error.message ?: "out of memory");
                return EXIT_FAILURE;
        }

        /* STATE_DIRECTORY may list several; the first is ours. */
        _cleanup_free_ char *state_dir = strndup(config.state_dir, strcspn(config.state_dir, ":"));
        if (!state_dir)
                return EXIT_FAILURE;
        config.state_dir = state_dir;
        if (lock_state_dir(state_dir, &lock_fd) < 0)
                return EXIT_FAILURE;

        r = manager_new(&config, &m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_run(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
