/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Leases on sandboxes (leases.h). */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "bus-names.h"
#include "leases.h"
#include "log.h"
#include "macro.h"

struct Lease {
        Leases *leases;
        char *sandbox;                  /* Docker-level name */
        char *holder;                   /* the unique name that acquired it */
        uid_t uid;                      /* … and its uid */
        int fd;                         /* the service's end: the pipe's read end */
        sd_event_source *source;
        Lease *next;
};

static void lease_free(Lease *l) {
        sd_event_source_disable_unref(l->source);
        safe_close(l->fd);
        free(l->sandbox);
        free(l->holder);
        free(l);
}

unsigned leases_count(const Leases *ls, const char *sandbox, const char *except) {
        unsigned n = 0;

        for (const Lease *l = ls->list; l; l = l->next)
                if (streq(l->sandbox, sandbox) && !(except && streq(l->holder, except)))
                        n++;
        return n;
}

unsigned leases_of_user(const Leases *ls, uid_t uid) {
        unsigned n = 0;

        for (const Lease *l = ls->list; l; l = l->next)
                if (l->uid == uid)
                        n++;
        return n;
}

/* Unlinks l, frees it and shows the sandbox's new count. */
static void lease_end(Lease *l) {
        Leases *ls = l->leases;
        _cleanup_free_ char *sandbox = TAKE_PTR(l->sandbox);

        for (Lease **p = &ls->list; *p; p = &(*p)->next)
                if (*p == l) {
                        *p = l->next;
                        break;
                }
        ls->n--;
        lease_free(l);
        registry_set_leases(ls->registry, sandbox, leases_count(ls, sandbox, NULL));
        if (ls->ended)
                ls->ended(ls->userdata);
}

/* The holder's end is a pipe's write end that carries nothing: only its hang-up
 * (every copy closed) is watched, never its data, so what a holder writes into it
 * costs the daemon nothing (it fills the pipe's one page, then the writer waits). */
static int on_lease_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Lease *l = userdata;

        if (!(revents & (EPOLLHUP | EPOLLERR)))
                return 0;
        log_debug("The lease of %s on %s ended (its descriptor was closed)", l->holder, l->sandbox);
        lease_end(l);
        return 0;
}

int leases_acquire(Leases *ls, const char *sandbox, uid_t uid, const char *holder, unsigned max_per_user,
                   unsigned max_per_sandbox, int *ret_fd, SbxError *error) {
        _cleanup_close_ int rfd = -1, wfd = -1;
        int pipefd[2];
        Lease *l;
        unsigned n;
        int r;

        if ((n = leases_of_user(ls, uid)) >= max_per_user)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "max_leases_per_user: uid %u holds %u leases already", (unsigned) uid, n);
        if ((n = leases_count(ls, sandbox, NULL)) >= max_per_sandbox)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "max_leases_per_sandbox: %u leases are held on this sandbox already", n);
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return sbx_error_set(error, errno == EMFILE || errno == ENFILE ? SBX_ERROR_LIMITS_EXCEEDED : SBX_ERROR_IO,
                                     "Cannot make the lease's pipe: %s", strerror(errno));
        rfd = pipefd[0];
        wfd = pipefd[1];
        /* Only the service's end: the flag is the open file's, which the holder's shares. */
        if (fcntl(rfd, F_SETFL, O_NONBLOCK) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "Cannot make the lease's pipe: %s", strerror(errno));
        /* What a holder may write into it stays in the kernel, bounded: one page. */
        (void) fcntl(rfd, F_SETPIPE_SZ, 4096);
        l = calloc(1, sizeof(Lease));
        if (!l)
                return -ENOMEM;
        *l = (Lease) { .leases = ls, .uid = uid, .fd = TAKE_FD(rfd) };
        l->sandbox = strdup(sandbox);
        l->holder = strdup(holder);
        if (!l->sandbox || !l->holder) {
                lease_free(l);
                return -ENOMEM;
        }
        r = sd_event_add_io(ls->event, &l->source, l->fd, 0, on_lease_io, l);
        if (r < 0) {
                lease_free(l);
                return sbx_error_set(error, SBX_ERROR_IO, "Cannot watch the lease's pipe: %s", strerror(-r));
        }
        l->next = ls->list;
        ls->list = l;
        ls->n++;
        registry_set_leases(ls->registry, sandbox, leases_count(ls, sandbox, NULL));
        *ret_fd = TAKE_FD(wfd);
        return 0;
}

static void send_revoked(Leases *ls, const Lease *l, const char *reason) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_free_ char *path = NULL;
        int r;

        if (!ls->bus || registry_path(l->sandbox, &path) < 0)
                return;
        r = sd_bus_message_new_signal(ls->bus, &m, path, SBX_BUS_SANDBOX_INTERFACE, "LeaseRevoked");
        if (r >= 0)
                r = sd_bus_message_set_destination(m, l->holder);
        if (r >= 0)
                r = sd_bus_message_append(m, "s", reason);
        if (r >= 0)
                r = sd_bus_send(ls->bus, m, NULL);
        if (r < 0)
                log_debug_errno(r, "LeaseRevoked to %s could not be sent: %m", l->holder);
}

unsigned leases_revoke(Leases *ls, const char *sandbox, const char *reason) {
        _cleanup_free_ char *name = strdup(sandbox);    /* sandbox may be a lease's own */
        unsigned n = 0;
        Lease *next;

        if (!name)
                return 0;
        for (Lease *l = ls->list; l; l = next) {
                next = l->next;
                if (!streq(l->sandbox, name))
                        continue;
                send_revoked(ls, l, reason);
                lease_end(l);
                n++;
        }
        return n;
}

void leases_clear(Leases *ls) {
        while (ls->list) {
                Lease *l = ls->list;

                ls->list = l->next;
                lease_free(l);
        }
        ls->n = 0;
}
