/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <curl/curl.h>
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <search.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "bus-error.h"
#include "bus-manager.h"
#include "bus-sandbox.h"
#include "fileio.h"
#include "log.h"
#include "bus-exec.h"
#include "manager.h"

#define MAX_POLICY_FILE (1024 * 1024)

/* polkit's rules or actions changed: no remembered answer stands. */
static int on_polkit_changed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        auth_cache_clear(m->auth_cache);
        return 0;
}

/* Idle exit ----------------------------------------------------------------- */

static int on_name_owner_changed(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;
        const char *name, *old_owner, *new_owner;
        const char *unique = NULL;

        if (sd_bus_message_read(message, "sss", &name, &old_owner, &new_owner) < 0)
                return 0;
        if (name[0] == ':' && isempty(new_owner)) {
                auth_cache_forget(m->auth_cache, name);        /* that connection is gone */
                return 0;
        }
        if (!streq(name, SBX_BUS_NAME))
                return 0;
        (void) sd_bus_get_unique_name(m->bus, &unique);
        if (m->releasing && !streq_ptr(new_owner, unique)) {
                /* Every call routed to us by the name came before this signal, so is
                 * counted in n_busy; exit once they are answered. */
                m->name_released = true;
                if (m->n_busy == 0)
                        sd_event_exit(m->event, 0);
        }
        return 0;
}

static int on_idle(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        if (m->n_busy > 0 || m->releasing)
                return 0;
        log_info("idle for %u s, exiting", m->idle_timeout_s);
        m->releasing = true;
        r = sd_bus_release_name_async(m->bus, NULL, SBX_BUS_NAME, NULL, NULL);
        if (r < 0)
                sd_event_exit(m->event, 0);
        return 0;
}

static void arm_idle(Manager *m) {
        if (m->idle_timeout_s == 0 || m->releasing)
                return;
        if (m->idle_source) {
                (void) sd_event_source_set_time_relative(m->idle_source, (uint64_t) m->idle_timeout_s * 1000000);
                (void) sd_event_source_set_enabled(m->idle_source, SD_EVENT_ONESHOT);
        } else
                (void) sd_event_add_time_relative(m->event, &m->idle_source, CLOCK_MONOTONIC,
                                                  (uint64_t) m->idle_timeout_s * 1000000, 0, on_idle, m);
}

typedef struct UserShare {
        uid_t uid;
        unsigned n;
} UserShare;

static int share_cmp(const void *a, const void *b) {
        uid_t x = ((const UserShare *) a)->uid, y = ((const UserShare *) b)->uid;
        return x < y ? -1 : x > y;
}

int manager_busy(Manager *m, uid_t uid) {
        UserShare key = { .uid = uid }, *share, **found = tfind(&key, &m->busy_by_uid, share_cmp);

        if (found)
                share = *found;
        else {
                share = calloc(1, sizeof(UserShare));
                if (!share)
                        return -ENOMEM;
                share->uid = uid;
                if (!tsearch(share, &m->busy_by_uid, share_cmp)) {
                        free(share);
                        return -ENOMEM;
                }
        }
        if (uid != 0 && share->n >= (uint64_t) m->policy->max_operations_per_user)
                return -EBUSY;
        share->n++;
        m->n_busy++;
        if (m->idle_source)
                (void) sd_event_source_set_enabled(m->idle_source, SD_EVENT_OFF);
        return 0;
}

void manager_idle(Manager *m, uid_t uid) {
        UserShare key = { .uid = uid }, **found = tfind(&key, &m->busy_by_uid, share_cmp);

        if (found && --(*found)->n == 0) {
                UserShare *share = *found;
                tdelete(share, &m->busy_by_uid, share_cmp);
                free(share);
        }
        if (--m->n_busy > 0)
                return;
        if (m->name_released)
                sd_event_exit(m->event, 0);
        else
                arm_idle(m);
}

/* Workers ----------------------------------------------------------------- */

static void *worker_init(void *userdata) {
        Manager *m = userdata;
        SbxLifecycle *l = calloc(1, sizeof(SbxLifecycle));
        SbxError e = SBX_ERROR_NULL;

        if (!l)
                return NULL;
        l->locks = m->locks;
        /* l->policy: set for each job (manager_policy_ref()), as a reload may swap it */
        l->docker_socket = m->docker_socket;
        l->init_dir = m->init_dir;
        if (sbx_docker_new(m->docker_host, &l->docker, &e) < 0 || sbx_store_open(m->state_dir, &l->store, &e) < 0) {
                log_error("Worker: %s", e.message ?: "out of memory");
                sbx_error_free(&e);
                sbx_docker_free(l->docker);
                free(l);
                return NULL;
        }
        return l;
}

static void worker_fini(void *ctx) {
        SbxLifecycle *l = ctx;

        if (l) {
                sbx_docker_free(l->docker);
                sbx_store_close(l->store);
                free(l);
        }
        /* A retiring worker (worker-pool.h) leaves its malloc arena full of free
         * chunks (a large list's answers, SQLite's page cache): give them back. */
        (void) malloc_trim(0);
}

/* Set-up ------------------------------------------------------------------ */

int manager_load_policy(const char *path, SbxPolicy **ret, SbxError *error) {
        _cleanup_free_ char *text = NULL;
        int r;

        r = sbx_read_text_file(path, MAX_POLICY_FILE, &text, error);
        if (r == -ENOENT) {
                sbx_error_free(error);
                *ret = sbx_policy_new_default();
                return *ret ? 0 : -ENOMEM;
        }
        return r < 0 ? r : sbx_policy_parse(text, ret, error);
}

static int load_policy(const char *path, SbxPolicy **ret) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        int r = manager_load_policy(path, ret, &e);

        if (r < 0)
                log_error("%s: %s", path, e.message ?: "out of memory");
        return r;
}

SbxPolicy *manager_policy_ref(Manager *m) {
        SbxPolicy *p;

        pthread_mutex_lock(&m->policy_lock);
        p = sbx_policy_ref(m->policy);
        pthread_mutex_unlock(&m->policy_lock);
        return p;
}

/* SIGHUP: the policy file again, in the same process. A bad file keeps the policy
 * in force. Operations already on a worker finish under the policy they began with. */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        SbxPolicy *p = NULL, *old;

        if (load_policy(m->config_path, &p) < 0) {
                log_warning("%s: not reloaded, the policy in force stays", m->config_path);
                return 0;
        }
        pthread_mutex_lock(&m->policy_lock);
        old = m->policy;
        m->policy = p;
        pthread_mutex_unlock(&m->policy_lock);
        sbx_policy_unref(old);
        log_notice("%s: reloaded", m->config_path);
        return 0;
}

/* The socket path behind a unix:// host: never to be mounted into a sandbox. */
static int docker_socket_of(const char *host, char **ret) {
        const char *prefix = "unix://";

        if (strncmp(host, prefix, strlen(prefix)) != 0) {
                log_error("--docker-host %s: only unix:// endpoints are supported", host);
                return -EINVAL;
        }
        *ret = strdup(host + strlen(prefix));
        return *ret ? 0 : -ENOMEM;
}

int manager_new(const ManagerConfig *c, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = calloc(1, sizeof(Manager));
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_store_closep) SbxStore *store = NULL;
        int r;

        if (!m)
                return -ENOMEM;
        pthread_mutex_init(&m->policy_lock, NULL);
        m->idle_timeout_s = c->idle_timeout_s;
        m->state_dir = strdup(c->state_dir);
        m->docker_host = strdup(c->docker_host);
        m->init_dir = strdup(c->init_dir);
        m->config_path = strdup(c->config_path);
        m->locks = sbx_keyed_lock_registry_new();
        m->auth_cache = auth_cache_new();
        if (!m->state_dir || !m->docker_host || !m->init_dir || !m->config_path || !m->locks || !m->auth_cache)
                return -ENOMEM;
        if ((r = docker_socket_of(c->docker_host, &m->docker_socket)) < 0 ||
            (r = load_policy(c->config_path, &m->policy)) < 0)
                return r;

        if (mkdir(c->state_dir, 0700) < 0 && errno != EEXIST) {
                log_error_errno(errno, "%s: %m", c->state_dir);
                return -errno;
        }
        /* A corrupt or unreadable database stops the start, before anything else. */
        r = sbx_store_open(c->state_dir, &store, &e);
        if (r < 0) {
                log_error("%s", e.message ?: "cannot open the store");
                return r;
        }

        if ((r = sd_event_default(&m->event)) < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

Manager *manager_free(Manager *m) {
        if (!m)
                return NULL;
        /* Running execs are killed and their relays stopped; running and queued
         * jobs (those kills included) finish and are answered before the bus goes. */
        bus_exec_shutdown_all(m);
        sbx_worker_pool_free(m->pool);
        sbx_worker_pool_free(m->read_pool);
        tdestroy(m->busy_by_uid, free);
        if (m->bus) {
                (void) sd_bus_flush(m->bus);
                sd_bus_flush_close_unref(m->bus);
        }
        tdestroy(m->sandboxes, manager_free_sandbox_entry);
        sd_event_source_unref(m->idle_source);
        sd_event_unref(m->event);
        sbx_keyed_lock_registry_free(m->locks);
        auth_cache_free(m->auth_cache);
        sbx_policy_unref(m->policy);
        free(m->config_path);
        free(m->state_dir);
        free(m->docker_host);
        free(m->init_dir);
        free(m->docker_socket);
        free(m->docker_api_version);
        free(m);
        return NULL;
}

/* D-Bus activated: the starter bus; otherwise the system bus (which honours
 * DBUS_SYSTEM_BUS_ADDRESS, so tests point it at a private bus). */
static int connect_bus(Manager *m) {
        const char *starter = getenv("DBUS_STARTER_ADDRESS");
        int r;

        if (starter) {
                if ((r = sd_bus_new(&m->bus)) < 0 || (r = sd_bus_set_address(m->bus, starter)) < 0 ||
                    (r = sd_bus_set_bus_client(m->bus, true)) < 0 || (r = sd_bus_start(m->bus)) < 0)
                        return r;
        } else if ((r = sd_bus_open_system(&m->bus)) < 0)
                return r;
        if ((r = sd_bus_error_add_map(sbx_bus_error_map)) < 0)
                return r;
        return sd_bus_attach_event(m->bus, m->event, SD_EVENT_PRIORITY_NORMAL);
}

/* Start-up reconciliation (docs/lifecycle.md) and the initial objects. Docker being away
 * is no reason not to start: calls will say BackendUnavailable. */
static void reconcile(Manager *m) {
        SbxLifecycle *l = worker_init(m);
        SbxSandbox **list = NULL;
        SbxError e = SBX_ERROR_NULL;
        size_t n = 0;
        int r;

        if (!l)
                return;
        l->policy = m->policy;          /* the main thread: no reload can race it */
        r = sbx_lifecycle_reconcile(l, &e);
        if (r > 0)
                log_notice("dropped %d stored sandbox(es) whose container is gone", r);
        if (r >= 0)
                r = sbx_lifecycle_list(l, &list, &n, &e);
        if (r < 0)
                log_warning("start-up reconciliation failed: %s", e.message ?: "error");
        for (size_t i = 0; i < n; i++)
                (void) manager_put_sandbox(m, list[i]);
        if (r >= 0 && sbx_docker_api_version(l->docker))
                m->docker_api_version = strdup(sbx_docker_api_version(l->docker));
        sbx_sandbox_list_free(list, n);
        sbx_error_free(&e);
        worker_fini(l);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        log_info("%s, exiting", strsignal((int) si->ssi_signo));
        sd_event_exit(m->event, 0);
        return 0;
}

int manager_run(Manager *m) {
        sigset_t mask;
        int r;

        /* Block the signals before any thread exists, so only sd-event sees them. */
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return -errno;
        if ((r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m)) < 0 ||
            (r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload, m)) < 0)
                return r;

        if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
                return -EIO;
        r = sbx_worker_pool_new(m->event, &(SbxWorkerPoolConfig) {
                .n_workers = SBX_WORKERS, .max_queued = SBX_MAX_QUEUED,
                .init = worker_init, .fini = worker_fini, .init_userdata = m,
        }, &m->pool);
        if (r >= 0)
                r = sbx_worker_pool_new(m->event, &(SbxWorkerPoolConfig) {
                        .n_workers = SBX_READ_WORKERS, .max_queued = SBX_MAX_QUEUED,
                        .init = worker_init, .fini = worker_fini, .init_userdata = m,
                }, &m->read_pool);
        if (r < 0)
                return r;

        if ((r = connect_bus(m)) < 0) {
                log_error_errno(r, "cannot connect to the bus: %m");
                return r;
        }
        if ((r = bus_manager_register(m)) < 0 || (r = bus_sandbox_register(m)) < 0 ||
            (r = sd_bus_add_object_manager(m->bus, NULL, SBX_BUS_PATH)) < 0)
                return r;
        /* Not every NameOwnerChanged on the bus: our own name's (for the idle exit),
         * and names that lost their owner (a caller gone: forget its cached yes). */
        if ((r = sd_bus_add_match_async(m->bus, NULL,
                                        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                        "interface='org.freedesktop.DBus',member='NameOwnerChanged',"
                                        "arg0='" SBX_BUS_NAME "'", on_name_owner_changed, NULL, m)) < 0 ||
            (r = sd_bus_add_match_async(m->bus, NULL,
                                        "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                        "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg2=''",
                                        on_name_owner_changed, NULL, m)) < 0 ||
            (r = sd_bus_match_signal_async(m->bus, NULL, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "Changed", on_polkit_changed, NULL,
                                           m)) < 0)
                return r;

        reconcile(m);

        r = sd_bus_request_name(m->bus, SBX_BUS_NAME, 0);
        if (r < 0) {
                log_error_errno(r, "cannot own %s: %m", SBX_BUS_NAME);
                return r;
        }
        arm_idle(m);
        (void) sd_notify(false, "READY=1\nSTATUS=Serving " SBX_BUS_NAME);

        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        return r;
}
