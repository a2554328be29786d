/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>

#include "channel.h"
#include "docker-events.h"
#include "events.h"
#include "reconcile.h"
#include "labels.h"
#include "log.h"
#include "naming.h"
#include "time-util.h"

/* Between attempts to follow the stream: doubling from the least to the most, back to
 * the least after a stream that stayed open HEALTHY_MS. A Docker that accepts the
 * stream and then breaks it at once (garbage) is retried no faster than one that
 * refuses it, and so is every attempt's reconciliation. */
#define BACKOFF_MIN_MS 250U
#define BACKOFF_MAX_MS 10000U
#define HEALTHY_MS 30000U

typedef enum EventKind {
        EVENT_CONNECTED,        /* the stream is (again) open: nothing is missed from now on */
        EVENT_RUNNING,
        EVENT_STARTED,          /* a new start: a new network namespace, without egress rules */
        EVENT_STOPPED,          /* ended: exited, killed, out of memory */
        EVENT_REMOVED,
        EVENT_PAUSED,           /* Docker's freezer */
        EVENT_CHANGED,          /* updated, renamed: what it reports is Docker's to say again */
} EventKind;

typedef struct Event {
        EventKind kind;
        char *name;             /* Docker-level sandbox name */
        char *id;               /* container */
        struct Event *next;
} Event;

struct ManagerEvents {
        Manager *m;
        pthread_t thread;
        bool started;
        uint64_t connected_ms;  /* the thread's: when the current attempt got the stream; 0: not */
        SbxDockerStop stop;     /* wakes the stream too */
        pthread_mutex_t lock;
        pthread_cond_t wake;    /* stop, for the thread's wait between attempts */
        Event *head, **tail;
        int efd;
        sd_event_source *source;
};

static void event_free(Event *e) {
        free(e->name);
        free(e->id);
        free(e);
}

/* The thread ---------------------------------------------------------------- */

static void push(ManagerEvents *ev, EventKind kind, const char *name, const char *id) {
        Event *e = calloc(1, sizeof(Event));

        if (!e || (name && !(e->name = strdup(name))) || (id && !(e->id = strdup(id)))) {
                if (e)
                        event_free(e);
                log_error("Out of memory: a Docker event was lost");
                return;
        }
        e->kind = kind;
        pthread_mutex_lock(&ev->lock);
        *ev->tail = e;
        ev->tail = &e->next;
        pthread_mutex_unlock(&ev->lock);
        (void) write(ev->efd, &(uint64_t) { 1 }, sizeof(uint64_t));
}

static void on_event(const SbxDockerEvent *d, void *userdata) {
        static const struct {
                const char *action;
                EventKind kind;
        } actions[] = {
                { "start",   EVENT_STARTED },
                { "die",     EVENT_STOPPED },
                { "destroy", EVENT_REMOVED },
                { "pause",   EVENT_PAUSED },
                { "unpause", EVENT_RUNNING },
                { "update",  EVENT_CHANGED },
                { "rename",  EVENT_CHANGED },
        };
        ManagerEvents *ev = userdata;
        _cleanup_free_ char *name = NULL;
        uid_t owner;

        /* Whatever happened to it but an exec, what an inspect told about it may be
         * out of date (docs/api.md#reads-from-observations). Told here, on the event thread: a read sees it
         * without waiting for the main loop. */
        if (strncmp(d->action, "exec_", 5) == 0)
                return;
        sbx_observation_cache_event(ev->m->observations, d->id, d->action);
        sbx_verdict_cache_forget(ev->m->judgements, d->id);
        /* Paused or dead, its kept channel answers nothing: a call waiting on it ends
         * NotRunning now, and the next asks Docker (docs/api.md), as after the
         * service's own pause or stop. */
        if (streq(d->action, "pause") || streq(d->action, "die"))
                sbx_channels_forget(ev->m->channels, d->id);
        if (!d->name_label || sbx_label_parse_owner(d->owner_label, &owner) < 0 ||
            sbx_name_from_labels(d->name_label, owner, &name) < 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(actions); i++)
                if (streq(d->action, actions[i].action))
                        push(ev, actions[i].kind, name, d->id);
}

static uint64_t now_ms(void) {
        return sbx_now_monotonic_us() / 1000U;
}

static void on_connected(void *userdata) {
        ManagerEvents *ev = userdata;

        /* Nothing was followed until now: no judgement or observation stands. */
        sbx_observation_cache_connected(ev->m->observations);
        sbx_verdict_cache_clear(ev->m->judgements);
        ev->connected_ms = now_ms();
        push(ev, EVENT_CONNECTED, NULL, NULL);
}

/* Waits ms, or until told to stop. */
static void pause_ms(ManagerEvents *ev, unsigned ms) {
        struct timespec until;

        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += ms / 1000;
        until.tv_nsec += (long) (ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&ev->lock);
        while (!sbx_docker_stop_requested(&ev->stop) && pthread_cond_timedwait(&ev->wake, &ev->lock, &until) == 0)
                ;
        pthread_mutex_unlock(&ev->lock);
}

static void *follow(void *userdata) {
        ManagerEvents *ev = userdata;
        _cleanup_(sbx_docker_freep) SbxDocker *d = NULL;
        unsigned backoff = BACKOFF_MIN_MS;
        bool quiet = false;             /* said so already, and nothing changed since */

        if (sbx_docker_new(ev->m->docker_host, &d, NULL) < 0) {
                log_error("Cannot follow Docker's events: no client");
                return NULL;
        }
        while (!sbx_docker_stop_requested(&ev->stop)) {
                SbxError e = SBX_ERROR_NULL;
                bool healthy;

                ev->connected_ms = 0;
                (void) sbx_docker_follow_events(d, on_event, on_connected, ev, &ev->stop, &e);
                /* From now until the next connection, events go unseen. */
                sbx_observation_cache_lost(ev->m->observations);
                if (sbx_docker_stop_requested(&ev->stop))
                        break;
                healthy = ev->connected_ms > 0 && now_ms() - ev->connected_ms >= HEALTHY_MS;
                if (healthy || !quiet)
                        log_warning("Not following Docker's events (%s); retrying until Docker answers",
                                    e.message ?: "out of memory");
                quiet = true;
                sbx_error_free(&e);
                if (healthy)
                        backoff = BACKOFF_MIN_MS;
                pause_ms(ev, backoff);
                backoff = MIN(backoff * 2, BACKOFF_MAX_MS);
        }
        return NULL;
}

/* The main thread ----------------------------------------------------------- */

static void apply(Manager *m, const Event *e) {
        SandboxEntry *entry;

        if (e->kind == EVENT_CONNECTED) {
                log_debug("Following Docker's events");
                manager_reconcile_after_calls(m);
                return;
        }
        /* Only about the container the object shows: a removed old one of a name
         * created again says nothing about the new one. */
        entry = registry_get(&m->registry, e->name);
        if (!entry || !streq_ptr(entry->container_id, e->id))
                return;
        switch (e->kind) {
        case EVENT_STARTED:
                manager_rearm_egress(m, e->name, e->id);
                __attribute__((fallthrough));
        case EVENT_RUNNING:
                registry_set_state(&m->registry, e->name, SBX_STATE_RUNNING, "running");
                break;
        case EVENT_STOPPED:
                registry_set_state(&m->registry, e->name, SBX_STATE_STOPPED, "exited");
                break;
        case EVENT_PAUSED:
                registry_set_state(&m->registry, e->name, SBX_STATE_PAUSED, "paused");
                break;
        case EVENT_CHANGED:
                manager_redescribe(m, e->name, e->id);
                break;
        case EVENT_REMOVED:
                registry_drop(&m->registry, e->name);
                manager_forget(m, e->name, e->id);
                break;
        default:
                break;
        }
}

static int on_efd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ManagerEvents *ev = userdata;
        Event *list;
        uint64_t v;

        (void) read(fd, &v, sizeof v);
        pthread_mutex_lock(&ev->lock);
        list = ev->head;
        ev->head = NULL;
        ev->tail = &ev->head;
        pthread_mutex_unlock(&ev->lock);
        while (list) {
                Event *next = list->next;

                apply(ev->m, list);
                event_free(list);
                list = next;
        }
        return 0;
}

static void events_free(ManagerEvents *ev) {
        if (!ev)
                return;
        if (ev->started) {
                sbx_docker_stop(&ev->stop);
                pthread_mutex_lock(&ev->lock);
                pthread_cond_broadcast(&ev->wake);
                pthread_mutex_unlock(&ev->lock);
                pthread_join(ev->thread, NULL);
        }
        for (Event *e = ev->head, *next; e; e = next) {
                next = e->next;
                event_free(e);
        }
        sd_event_source_disable_unref(ev->source);
        if (ev->efd >= 0)
                close(ev->efd);
        pthread_cond_destroy(&ev->wake);
        pthread_mutex_destroy(&ev->lock);
        pthread_mutex_destroy(&ev->stop.lock);
        free(ev);
}

int manager_events_start(Manager *m) {
        ManagerEvents *ev = calloc(1, sizeof(ManagerEvents));
        int r;

        if (!ev)
                return -ENOMEM;
        ev->m = m;
        ev->efd = -EBADF;
        ev->tail = &ev->head;
        pthread_mutex_init(&ev->lock, NULL);
        pthread_mutex_init(&ev->stop.lock, NULL);
        pthread_cond_init(&ev->wake, NULL);
        if ((ev->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
                r = -errno;
        else if ((r = sd_event_add_io(m->event, &ev->source, ev->efd, EPOLLIN, on_efd, ev)) >= 0 &&
                 (r = -pthread_create(&ev->thread, NULL, follow, ev)) >= 0)
                ev->started = true;
        if (r < 0) {
                events_free(ev);
                return r;
        }
        m->events = ev;
        return 0;
}

void manager_events_stop(Manager *m) {
        events_free(m->events);
        m->events = NULL;
}
