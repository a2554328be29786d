/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The service's resolver for sandboxes with name entries (resolvers.h; docs/security.md,
 * "Egress"). One thread polls every served sandbox's socket and the first process of
 * each (a pidfd: a sandbox that stopped is forgotten at once). A query is hostile input:
 * parsed strictly (src/core/dns.c); an unlisted name is answered REFUSED there and then,
 * counted, never forwarded. A listed one is handed to a short-lived thread of its own
 * (at most MAX_JOBS at once) that asks the policy's resolvers from the daemon's own
 * network namespace, parses the answer as strictly, opens its addresses in the
 * sandbox's rules (timed set elements, nft run in its namespace) and only then replies.
 *
 * The socket is made in the sandbox's namespace by a thread that enters it (setns,
 * CLONE_NEWNET, which affects only that thread) and ends: the daemon itself never
 * leaves its own namespace. */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "dns.h"
#include "nft-run.h"
#include "fileio.h"
#include "log.h"
#include "resolvers.h"
#include "time-util.h"

#define MAX_JOBS 32U
#define UPSTREAM_TIMEOUT_MS 2000
#define MIN_TTL 2U
#define MAX_PORTS 64
#define MESSAGE_MAX 4096

typedef struct Pattern {
        char *name;
        uint16_t port;                  /* 0: any */
} Pattern;

typedef struct Upstream {
        struct sockaddr_storage sa;
        socklen_t len;
} Upstream;

typedef struct Resolver {
        unsigned n_ref;
        char *id;
        int fd4, fd6, pidfd, netns;
        ino_t ns_ino;
        Pattern *patterns;
        size_t n_patterns;
        SbxCidr *deny, *allowed;
        size_t n_deny, n_allowed;
        Upstream *up;
        size_t n_up;
        uint32_t max_ttl;
        uint64_t refused;
        struct Resolver *next;
} Resolver;

struct SbxResolvers {
        pthread_mutex_t lock;
        Resolver *list;
        size_t n;
        int wake;
        pthread_t thread;
        bool started, stop;
        unsigned jobs;
};

static Resolver *resolver_ref(Resolver *r) {
        __atomic_add_fetch(&r->n_ref, 1, __ATOMIC_RELAXED);
        return r;
}

static void resolver_unref(Resolver *r) {
        if (!r || __atomic_sub_fetch(&r->n_ref, 1, __ATOMIC_ACQ_REL) > 0)
                return;
        safe_close(r->fd4);
        safe_close(r->fd6);
        safe_close(r->pidfd);
        safe_close(r->netns);
        for (size_t i = 0; i < r->n_patterns; i++)
                free(r->patterns[i].name);
        free(r->patterns);
        free(r->deny);
        free(r->allowed);
        free(r->up);
        free(r->id);
        free(r);
}

int sbx_resolvers_new(SbxResolvers **ret) {
        SbxResolvers *r = calloc(1, sizeof(SbxResolvers));

        if (!r)
                return -ENOMEM;
        r->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->wake < 0) {
                free(r);
                return -errno;
        }
        pthread_mutex_init(&r->lock, NULL);
        *ret = r;
        return 0;
}

static void wake(SbxResolvers *rs) {
        uint64_t one = 1;

        (void) !write(rs->wake, &one, sizeof one);
}

SbxResolvers *sbx_resolvers_free(SbxResolvers *rs) {
        if (!rs)
                return NULL;
        pthread_mutex_lock(&rs->lock);
        rs->stop = true;
        pthread_mutex_unlock(&rs->lock);
        if (rs->started) {
                wake(rs);
                pthread_join(rs->thread, NULL);
        }
        while (rs->list) {
                Resolver *x = rs->list;

                rs->list = x->next;
                resolver_unref(x);
        }
        /* A job still running holds its resolver and counts itself out here: waited for
         * (each ends within its upstreams' deadlines and nft's). */
        for (unsigned i = 0; i < 3000 && __atomic_load_n(&rs->jobs, __ATOMIC_ACQUIRE) > 0; i++)
                usleep(10000);
        safe_close(rs->wake);
        pthread_mutex_destroy(&rs->lock);
        free(rs);
        return NULL;
}

size_t sbx_resolvers_serving(SbxResolvers *rs) {
        size_t n;

        if (!rs)
                return 0;
        pthread_mutex_lock(&rs->lock);
        n = rs->n;
        pthread_mutex_unlock(&rs->lock);
        return n;
}

/* Unlinks container_id's resolver (the lock held); it is the caller's reference now. */
static Resolver *unlink_locked(SbxResolvers *rs, const char *id, const Resolver *only) {
        for (Resolver **p = &rs->list; *p; p = &(*p)->next)
                if (streq((*p)->id, id) && (!only || *p == only)) {
                        Resolver *x = *p;

                        *p = x->next;
                        rs->n--;
                        return x;
                }
        return NULL;
}

uint64_t sbx_resolvers_refused(SbxResolvers *rs, const char *id) {
        uint64_t n = 0;

        if (!rs || !id)
                return 0;
        pthread_mutex_lock(&rs->lock);
        for (Resolver *x = rs->list; x; x = x->next)
                if (streq(x->id, id))
                        n = __atomic_load_n(&x->refused, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&rs->lock);
        return n;
}

bool sbx_resolvers_serves(SbxResolvers *rs, const char *id, int netns) {
        struct stat st;
        bool found = false;

        if (!rs || fstat(netns, &st) < 0)
                return false;
        pthread_mutex_lock(&rs->lock);
        for (Resolver *x = rs->list; x; x = x->next)
                found = found || (streq(x->id, id) && x->ns_ino == st.st_ino);
        pthread_mutex_unlock(&rs->lock);
        return found;
}

void sbx_resolvers_forget(SbxResolvers *rs, const char *id) {
        Resolver *x;

        if (!rs)
                return;
        pthread_mutex_lock(&rs->lock);
        x = unlink_locked(rs, id, NULL);
        pthread_mutex_unlock(&rs->lock);
        if (x)
                wake(rs);
        resolver_unref(x);
}

/* ---- answering ---------------------------------------------------------------- */

static void reply(int fd, const struct sockaddr_storage *to, socklen_t len, const uint8_t *buf, size_t size) {
        (void) sendto(fd, buf, size, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *) to, len);
}

static void reply_error(int fd, const struct sockaddr_storage *to, socklen_t len, const uint8_t *query,
                        const SbxDnsQuestion *q, unsigned rcode) {
        uint8_t out[MESSAGE_MAX];
        int n = sbx_dns_error_reply(query, q, rcode, out, sizeof out);

        if (n > 0)
                reply(fd, to, len, out, (size_t) n);
}

/* The ports of the entries name is listed by (0: any); how many, 0 if it is not listed. */
static size_t listed_ports(const Resolver *r, const char *name, uint16_t ports[static MAX_PORTS]) {
        size_t n = 0;

        for (size_t i = 0; i < r->n_patterns; i++) {
                bool seen = false;

                if (!sbx_dns_name_matches(r->patterns[i].name, name))
                        continue;
                for (size_t j = 0; j < n; j++)
                        seen = seen || ports[j] == r->patterns[i].port;
                if (!seen && n < MAX_PORTS)
                        ports[n++] = r->patterns[i].port;
        }
        return n;
}

typedef struct Job {
        SbxResolvers *rs;
        Resolver *r;
        int fd;
        struct sockaddr_storage from;
        socklen_t from_len;
        uint8_t query[MESSAGE_MAX];
        size_t query_size;
        SbxDnsQuestion q;
        uint16_t ports[MAX_PORTS];
        size_t n_ports;
} Job;

/* Asks one upstream: 0 with the answer in buf and *ret, or negative. */
static int ask(const Upstream *u, const SbxDnsQuestion *q, uint8_t *buf, size_t *ret_size, SbxDnsAnswer *ret) {
        _cleanup_close_ int fd = -1;
        SbxDnsQuestion mine = *q;
        uint64_t deadline = sbx_now_monotonic_us() + UPSTREAM_TIMEOUT_MS * 1000ULL;
        uint8_t out[MESSAGE_MAX];
        int n;

        if (getrandom(&mine.id, sizeof mine.id, 0) != sizeof mine.id)
                return -EIO;
        n = sbx_dns_make_query(&mine, mine.id, out, sizeof out);
        if (n < 0)
                return n;
        fd = socket(u->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (const struct sockaddr *) &u->sa, u->len) < 0 || send(fd, out, (size_t) n, 0) != n)
                return -errno;
        for (;;) {
                uint64_t now = sbx_now_monotonic_us();
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t k;

                if (now >= deadline)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int) ((deadline - now) / 1000) + 1) <= 0)
                        continue;
                k = recv(fd, buf, MESSAGE_MAX, MSG_DONTWAIT);
                if (k < 0)
                        continue;       /* an ICMP error: wait out the deadline for a real answer */
                /* anything else on the port (a spoofed or stale message) is ignored */
                if (sbx_dns_parse_answer(buf, (size_t) k, &mine, ret) == 0) {
                        *ret_size = (size_t) k;
                        return 0;
                }
        }
}

static bool admitted(const Resolver *r, const SbxDnsAddress *a) {
        SbxCidr c = { .family = a->family, .prefix = a->family == AF_INET ? 32 : 128 };
        bool deny = false, allow = false;

        memcpy(c.addr, a->addr, sizeof c.addr);
        for (size_t i = 0; i < r->n_deny; i++)
                deny = deny || sbx_cidr_within(&c, &r->deny[i]);
        for (size_t i = 0; i < r->n_allowed; i++)
                allow = allow || sbx_cidr_within(&c, &r->allowed[i]);
        return !deny || allow;
}

/* One element in a set: added, deleted and added again in one transaction, so an
 * element already there gets the new timeout. */
static void put_element(FILE *f, const char *set, const char *key, uint32_t ttl) {
        fprintf(f, "add element inet " SBX_EGRESS_TABLE " %s { %s timeout %us }\n", set, key, ttl);
        fprintf(f, "delete element inet " SBX_EGRESS_TABLE " %s { %s }\n", set, key);
        fprintf(f, "add element inet " SBX_EGRESS_TABLE " %s { %s timeout %us }\n", set, key, ttl);
}

/* The answer's admitted addresses opened for the listed ports in the sandbox's sets. */
static int open_addresses(const Job *j, const SbxDnsAnswer *a) {
        static char *const argv[] = { (char *) "nft", (char *) "-f", (char *) "-", NULL };
        _cleanup_free_ char *text = NULL, *output = NULL;
        size_t size = 0, n = 0;
        FILE *f = open_memstream(&text, &size);
        int r;

        if (!f)
                return -ENOMEM;
        for (size_t i = 0; i < a->n_addresses; i++) {
                const SbxDnsAddress *x = &a->addresses[i];
                uint32_t ttl = x->ttl < MIN_TTL ? MIN_TTL : x->ttl > j->r->max_ttl ? j->r->max_ttl : x->ttl;
                bool v4 = x->family == AF_INET;
                char addr[INET6_ADDRSTRLEN], key[INET6_ADDRSTRLEN + 32];

                if (!admitted(j->r, x) || !inet_ntop(x->family, x->addr, addr, sizeof addr))
                        continue;
                for (size_t p = 0; p < j->n_ports; p++) {
                        if (j->ports[p] == 0) {
                                put_element(f, v4 ? "names4_any" : "names6_any", addr, ttl);
                                n++;
                                continue;
                        }
                        snprintf(key, sizeof key, "%s . tcp . %u", addr, j->ports[p]);
                        put_element(f, v4 ? "names4" : "names6", key, ttl);
                        snprintf(key, sizeof key, "%s . udp . %u", addr, j->ports[p]);
                        put_element(f, v4 ? "names4" : "names6", key, ttl);
                        n++;
                }
        }
        if (fclose(f) != 0)
                return -ENOMEM;
        if (n == 0)
                return 0;
        r = lc_nft_run_in(j->r->netns, argv, text, &output, NULL);
        if (r != 0) {
                log_warning("egress: the addresses of '%s' could not be opened in %s: %s", j->q.name, j->r->id,
                            r < 0 ? strerror(-r) : output);
                return r < 0 ? r : -EIO;
        }
        return 0;
}

static void *job_run(void *userdata) {
        Job *j = userdata;
        uint8_t buf[MESSAGE_MAX];
        SbxDnsAnswer a;
        size_t size = 0;
        int r = -ENOENT;

        for (size_t i = 0; i < j->r->n_up && r < 0; i++)
                r = ask(&j->r->up[i], &j->q, buf, &size, &a);
        if (r >= 0 && a.rcode == SBX_DNS_RCODE_NOERROR)
                r = open_addresses(j, &a);
        if (r < 0)
                reply_error(j->fd, &j->from, j->from_len, j->query, &j->q, SBX_DNS_RCODE_SERVFAIL);
        else
                reply(j->fd, &j->from, j->from_len, buf, sbx_dns_trim_answer(buf, &a, j->q.id));
        __atomic_sub_fetch(&j->rs->jobs, 1, __ATOMIC_RELAXED);
        resolver_unref(j->r);
        free(j);
        return NULL;
}

static void handle_query(SbxResolvers *rs, Resolver *r, int fd) {
        Job *j = calloc(1, sizeof(Job));
        pthread_attr_t attr;
        pthread_t t;
        ssize_t n;

        if (!j)
                return;
        j->from_len = sizeof j->from;
        n = recvfrom(fd, j->query, sizeof j->query, MSG_DONTWAIT, (struct sockaddr *) &j->from, &j->from_len);
        /* not a query of ours to answer: dropped (no reflection of garbage) */
        if (n < 0 || sbx_dns_parse_query(j->query, (size_t) n, &j->q) < 0) {
                free(j);
                return;
        }
        j->query_size = (size_t) n;
        j->n_ports = listed_ports(r, j->q.name, j->ports);
        if (j->n_ports == 0) {
                __atomic_add_fetch(&r->refused, 1, __ATOMIC_RELAXED);
                reply_error(fd, &j->from, j->from_len, j->query, &j->q, SBX_DNS_RCODE_REFUSED);
                free(j);
                return;
        }
        if (__atomic_add_fetch(&rs->jobs, 1, __ATOMIC_RELAXED) > MAX_JOBS) {
                __atomic_sub_fetch(&rs->jobs, 1, __ATOMIC_RELAXED);
                reply_error(fd, &j->from, j->from_len, j->query, &j->q, SBX_DNS_RCODE_SERVFAIL);
                free(j);
                return;
        }
        j->rs = rs;
        j->r = resolver_ref(r);
        j->fd = fd;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        if (pthread_create(&t, &attr, job_run, j) != 0) {
                __atomic_sub_fetch(&rs->jobs, 1, __ATOMIC_RELAXED);
                reply_error(fd, &j->from, j->from_len, j->query, &j->q, SBX_DNS_RCODE_SERVFAIL);
                resolver_unref(j->r);
                free(j);
        }
        pthread_attr_destroy(&attr);
}

/* ---- the thread --------------------------------------------------------------- */

typedef struct Watch {
        Resolver *r;
        int kind;                       /* 0 wake, 1 a socket, 2 the pidfd */
} Watch;

static void *run(void *userdata) {
        SbxResolvers *rs = userdata;

        for (;;) {
                _cleanup_free_ struct pollfd *p = NULL;
                _cleanup_free_ Watch *w = NULL;
                size_t n = 1;
                uint64_t v;

                pthread_mutex_lock(&rs->lock);
                if (rs->stop) {
                        pthread_mutex_unlock(&rs->lock);
                        return NULL;
                }
                p = calloc(1 + 3 * rs->n, sizeof(struct pollfd));
                w = calloc(1 + 3 * rs->n, sizeof(Watch));
                if (!p || !w) {
                        pthread_mutex_unlock(&rs->lock);
                        usleep(100000);
                        continue;
                }
                p[0] = (struct pollfd) { .fd = rs->wake, .events = POLLIN };
                for (Resolver *x = rs->list; x; x = x->next) {
                        int fds[3] = { x->fd4, x->fd6, x->pidfd };

                        for (int k = 0; k < 3; k++)
                                if (fds[k] >= 0) {
                                        p[n] = (struct pollfd) { .fd = fds[k], .events = POLLIN };
                                        w[n++] = (Watch) { .r = resolver_ref(x), .kind = k == 2 ? 2 : 1 };
                                }
                }
                pthread_mutex_unlock(&rs->lock);
                if (poll(p, n, -1) > 0) {
                        if (p[0].revents)
                                (void) !read(rs->wake, &v, sizeof v);
                        for (size_t i = 1; i < n; i++) {
                                if (!p[i].revents)
                                        continue;
                                if (w[i].kind == 2) {
                                        Resolver *x;

                                        /* the sandbox's first process ended: its namespace goes */
                                        pthread_mutex_lock(&rs->lock);
                                        x = unlink_locked(rs, w[i].r->id, w[i].r);
                                        pthread_mutex_unlock(&rs->lock);
                                        resolver_unref(x);
                                } else
                                        handle_query(rs, w[i].r, p[i].fd);
                        }
                }
                for (size_t i = 1; i < n; i++)
                        resolver_unref(w[i].r);
        }
}

/* ---- serving a sandbox -------------------------------------------------------- */

typedef struct Opening {
        int netns, fd4, fd6, r;
} Opening;

static int bind_loopback(int family) {
        _cleanup_close_ int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(SBX_EGRESS_DNS_PORT),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(SBX_EGRESS_DNS_PORT),
                                   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
        int one = 1;

        if (fd < 0)
                return -errno;
        if (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
                return -errno;
        if (family == AF_INET ? bind(fd, (struct sockaddr *) &a4, sizeof a4) : bind(fd, (struct sockaddr *) &a6, sizeof a6))
                return -errno;
        return TAKE_FD(fd);
}

/* In a thread of its own, which enters the sandbox's namespace and ends there. */
static void *open_in_netns(void *userdata) {
        Opening *o = userdata;

        if (setns(o->netns, CLONE_NEWNET) < 0) {
                o->r = -errno;
                return NULL;
        }
        o->fd4 = bind_loopback(AF_INET);
        if (o->fd4 < 0)
                o->r = o->fd4;
        o->fd6 = bind_loopback(AF_INET6);       /* none where the sandbox has no IPv6 */
        return NULL;
}

static int parse_upstream(const char *s, Upstream *ret) {
        char host[INET6_ADDRSTRLEN + 1];
        const char *port = NULL;
        struct sockaddr_in *a4 = (struct sockaddr_in *) &ret->sa;
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *) &ret->sa;
        size_t len;
        long p = 53;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close)
                        return -EINVAL;
                len = (size_t) (close - s - 1);
                s++;
                port = close[1] == ':' ? close + 2 : NULL;
        } else if (strchr(s, ':') && strchr(s, ':') == strrchr(s, ':')) {
                len = (size_t) (strchr(s, ':') - s);
                port = strchr(s, ':') + 1;
        } else
                len = strlen(s);
        if (len >= sizeof host)
                return -EINVAL;
        memcpy(host, s, len);
        host[len] = 0;
        if (port && (p = strtol(port, NULL, 10)) < 1)
                return -EINVAL;
        memset(ret, 0, sizeof *ret);
        if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
                a4->sin_family = AF_INET;
                a4->sin_port = htons((uint16_t) p);
                ret->len = sizeof *a4;
        } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons((uint16_t) p);
                ret->len = sizeof *a6;
        } else
                return -EINVAL;
        return 0;
}

/* The policy's resolvers, or the host's /etc/resolv.conf nameservers. */
static int upstreams(Resolver *r, const SbxPolicyEgress *p) {
        _cleanup_free_ char *conf = NULL;
        _cleanup_strv_free_ char **list = NULL;
        char *const *names = p->resolvers;
        size_t n = 0;

        if (p->n_resolvers == 0) {
                list = calloc(8 + 1, sizeof(char *));
                if (!list)
                        return -ENOMEM;
                if (sbx_read_text_file("/etc/resolv.conf", 1 << 16, &conf, NULL) >= 0)
                        for (char *line = strtok(conf, "\n"); line && n < 8; line = strtok(NULL, "\n")) {
                                char addr[INET6_ADDRSTRLEN + 1];

                                if (sscanf(line, " nameserver %46s", addr) == 1 && !(list[n++] = strdup(addr)))
                                        return -ENOMEM;
                        }
                names = list;
        }
        for (size_t i = 0; names && names[i]; i++)
                n = i + 1;
        r->up = calloc(n + 1, sizeof(Upstream));
        if (!r->up)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (parse_upstream(names[i], &r->up[r->n_up]) == 0)
                        r->n_up++;
        return 0;
}

static int copy_policy(Resolver *r, const SbxResolverArgs *a) {
        const SbxPolicyEgress *p = a->policy;

        r->n_deny = p->n_always_deny + a->n_engine;
        r->deny = calloc(r->n_deny + 1, sizeof(SbxCidr));
        r->allowed = calloc(p->n_allowed + 1, sizeof(SbxCidr));
        r->patterns = calloc(a->egress->n_allow + 1, sizeof(Pattern));
        if (!r->deny || !r->allowed || !r->patterns)
                return -ENOMEM;
        memcpy(r->deny, p->always_deny, p->n_always_deny * sizeof(SbxCidr));
        memcpy(r->deny + p->n_always_deny, a->engine, a->n_engine * sizeof(SbxCidr));
        memcpy(r->allowed, p->allowed, p->n_allowed * sizeof(SbxCidr));
        r->n_allowed = p->n_allowed;
        r->max_ttl = p->max_name_ttl ?: SBX_EGRESS_DEFAULT_MAX_NAME_TTL;
        for (size_t i = 0; i < a->egress->n_allow; i++) {
                const SbxEgressEntry *x = &a->egress->allow[i];

                if (!x->name)
                        continue;
                if (!(r->patterns[r->n_patterns].name = strdup(x->name)))
                        return -ENOMEM;
                r->patterns[r->n_patterns++].port = x->port;
        }
        return upstreams(r, p);
}

static bool reuse_sockets(SbxResolvers *rs, Resolver *r) {
        bool done = false;

        pthread_mutex_lock(&rs->lock);
        for (Resolver *x = rs->list; x && !done; x = x->next)
                if (streq(x->id, r->id) && x->ns_ino == r->ns_ino && x->fd4 >= 0) {
                        r->fd4 = fcntl(x->fd4, F_DUPFD_CLOEXEC, 3);
                        r->fd6 = x->fd6 >= 0 ? fcntl(x->fd6, F_DUPFD_CLOEXEC, 3) : -1;
                        done = r->fd4 >= 0;
                }
        pthread_mutex_unlock(&rs->lock);
        return done;
}

static int start_thread(SbxResolvers *rs) {
        int r = 0;

        pthread_mutex_lock(&rs->lock);
        if (!rs->started) {
                r = -pthread_create(&rs->thread, NULL, run, rs);
                rs->started = r == 0;
        }
        pthread_mutex_unlock(&rs->lock);
        return r;
}

int sbx_resolvers_serve(SbxResolvers *rs, const SbxResolverArgs *a, SbxError *error) {
        Resolver *r = calloc(1, sizeof(Resolver)), *old;
        Opening o = { .fd4 = -1, .fd6 = -1 };
        struct stat st;
        pthread_t t;
        int k;

        if (!r)
                return -ENOMEM;
        *r = (Resolver) { .n_ref = 1, .fd4 = -1, .fd6 = -1, .pidfd = -1, .netns = -1 };
        if (!(r->id = strdup(a->container_id)) || (k = copy_policy(r, a)) < 0) {
                resolver_unref(r);
                return -ENOMEM;
        }
        r->netns = fcntl(a->netns, F_DUPFD_CLOEXEC, 3);
        if (r->netns < 0 || fstat(r->netns, &st) < 0) {
                resolver_unref(r);
                return -errno;
        }
        r->ns_ino = st.st_ino;
        o.netns = r->netns;
        /* Served in this namespace already (its names changed): the same sockets. */
        if (reuse_sockets(rs, r))
                k = 0;
        else {
                if ((k = -pthread_create(&t, NULL, open_in_netns, &o)) == 0)
                        pthread_join(t, NULL);
                r->fd4 = o.fd4, r->fd6 = o.fd6;
                k = k ?: o.r;
        }
        if (k >= 0 && a->pid > 0 && (r->pidfd = (int) syscall(SYS_pidfd_open, (pid_t) a->pid, 0)) < 0)
                k = -errno;
        if (k >= 0)
                k = start_thread(rs);
        if (k < 0) {
                resolver_unref(r);
                return sbx_error_set(error, SBX_ERROR_RUNTIME_CONFLICT,
                                     "egress: the resolver for the sandbox's names cannot listen in its namespace "
                                     "(127.0.0.1:%u): %s", SBX_EGRESS_DNS_PORT, strerror(-k));
        }
        pthread_mutex_lock(&rs->lock);
        old = unlink_locked(rs, r->id, NULL);
        r->next = rs->list;
        rs->list = r;
        rs->n++;
        pthread_mutex_unlock(&rs->lock);
        wake(rs);
        resolver_unref(old);
        return 0;
}
