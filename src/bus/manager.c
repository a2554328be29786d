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
#include "bus-exec.h"
#include "bus-manager.h"
#include "channel.h"
#include "resolvers.h"
#include "bus-sandbox.h"
#include "bus-pool.h"
#include "deadlines.h"
#include "events.h"
#include "fileio.h"
#include "log.h"
#include "manager.h"
#include "operation.h"
#include "spec-json.h"
#include "work.h"

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
                caller_cache_forget(&m->callers, name);
                bus_exec_caller_gone(m, name);
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

        if (m->n_busy > 0 || m->releasing || m->leases.n > 0 || registry_deadlines_pending(&m->registry))
                return 0;
        /* A sandbox's names are answered by this process: it stays while any is served. */
        if (sbx_resolvers_serving(m->resolvers) > 0) {
                (void) manager_arm_idle(m);
                return 0;
        }
        log_info("idle for %u s, exiting", m->idle_timeout_s);
        m->releasing = true;
        r = sd_bus_release_name_async(m->bus, NULL, SBX_BUS_NAME, NULL, NULL);
        if (r < 0)
                sd_event_exit(m->event, 0);
        return 0;
}

/* Leases ------------------------------------------------------------------ */

/* The last lease gone and nothing in flight: the idle exit counts from now. */
static void on_lease_ended(void *userdata) {
        Manager *m = userdata;

        if (m->leases.n == 0 && m->n_busy == 0)
                (void) manager_arm_idle(m);
}

/* A sandbox gone (deleted, or found missing) takes its leases with it. */
static void on_sandbox_dropped(void *userdata, const char *name) {
        Manager *m = userdata;

        (void) leases_revoke(&m->leases, name, "the sandbox was removed");
}

/* The registry's clock is the service's (manager-state.h). */
static uint64_t registry_clock(void *userdata) {
        return manager_now_us(userdata);
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
        l->service_id = m->service_id;
        l->judgements = m->judgements;
        l->lists_judged = &m->lists_judged;
        l->observations = m->observations;
        l->channels = m->channels;
        l->resolvers = m->resolvers;
        l->specs = sbx_spec_memo_new();
        if (!l->specs || sbx_docker_new(m->docker_host, &l->docker, &e) < 0 ||
            sbx_store_reopen(m->state_dir, &l->store, &e) < 0) {
                log_error("Worker: %s", e.message ?: "out of memory");
                sbx_error_free(&e);
                sbx_docker_free(l->docker);
                sbx_spec_memo_free(l->specs);
                free(l);
                return NULL;
        }
        return l;
}

static void worker_fini(void *ctx) {
        SbxLifecycle *l = ctx;

        if (l) {
                /* what is past its age would otherwise wait for the next read */
                sbx_observation_cache_sweep(l->observations);
                sbx_docker_free(l->docker);
                sbx_store_close(l->store);
                sbx_spec_memo_free(l->specs);
                free(l);
        }
        /* A retiring worker (worker-pool.h) leaves its malloc arena full of free
         * chunks (a large list's answers, SQLite's page cache): give them back. Not
         * under ASan, whose allocator replaces glibc's: glibc's trim of an arena it
         * never set up reads through a NULL (seen: SEGV in mtrim). */
#ifndef __SANITIZE_ADDRESS__
        (void) malloc_trim(0);
#endif
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

/* The policy's runtimes against the engine's registered ones (GET /info): one it has
 * not registered is a load error naming it. An engine that does not answer (within a
 * few seconds: activation does not wait on a hung dockerd) leaves them unchecked here;
 * a create under such a runtime then fails at the engine, and the posture judges what
 * runs. */
#define RUNTIMES_CHECK_BUDGET_S 5U
int manager_check_runtimes(const char *docker_host, const SbxPolicy *p, SbxError *error) {
        _cleanup_(json_object_putp) json_object *info = NULL;
        SbxDocker *d = NULL;
        SbxError e = SBX_ERROR_NULL;
        int r;

        if (p->runtimes.n == 0)
                return 0;
        if ((r = sbx_docker_new(docker_host, &d, &e)) >= 0) {
                sbx_docker_set_deadline(d, RUNTIMES_CHECK_BUDGET_S);
                r = sbx_docker_info(d, &info, &e);
        }
        sbx_docker_free(d);
        if (r < 0) {
                log_warning("runtimes: not checked against the engine (%s)", e.message ?: "out of memory");
                sbx_error_free(&e);
                return 0;
        }
        return sbx_runtimes_check_engine(&p->runtimes, info, error);
}

static int load_policy(const char *path, const char *docker_host, SbxPolicy **ret) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        int r = manager_load_policy(path, ret, &e);

        if (r >= 0 && (r = manager_check_runtimes(docker_host, *ret, &e)) < 0)
                *ret = sbx_policy_unref(*ret);
        if (r < 0)
                log_error("%s: %s", path, e.message ?: "out of memory");
        return r;
}

/* SIGHUP: the policy file again, in the same process. A bad file keeps the policy
 * in force. Operations already on a worker finish under the policy they began with. */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;
        SbxPolicy *p = NULL, *old;

        if (load_policy(m->config_path, m->docker_host, &p) < 0) {
                log_warning("%s: not reloaded, the policy in force stays", m->config_path);
                return 0;
        }
        pthread_mutex_lock(&m->policy_lock);
        old = m->policy;
        m->policy = p;
        pthread_mutex_unlock(&m->policy_lock);
        sbx_policy_unref(old);
        /* what the kept descriptions judged (the posture) was judged by the old one */
        (void) registry_sweep_described(&m->registry, NULL, 0);
        log_notice("%s: reloaded", m->config_path);
        bus_pool_refill(m);             /* members of the old policy replaced */
        return 0;
}

/* The socket path behind a unix:// host: never to be mounted into a sandbox. A
 * tcp:// engine (mutual TLS, set up by main) has none here: NULL. */
static int docker_socket_of(const char *host, char **ret) {
        const char *prefix = "unix://";

        if (strncmp(host, "tcp://", strlen("tcp://")) == 0) {
                *ret = NULL;
                return 0;
        }
        if (strncmp(host, prefix, strlen(prefix)) != 0) {
                log_error("--docker-host %s: only unix:// and (mutual TLS) tcp:// endpoints are supported", host);
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
        m->reads_waiting_tail = &m->reads_waiting;
        m->idle_timeout_s = c->idle_timeout_s;
        m->deadline_tick_usec = c->deadline_tick_usec;
        m->pool_tick_usec = c->pool_tick_usec;
        m->detached_poll_usec = c->detached_poll_usec ?: SBX_DETACHED_POLL_USEC;
        m->state_dir = strdup(c->state_dir);
        m->docker_host = strdup(c->docker_host);
        m->init_dir = strdup(c->init_dir);
        m->config_path = strdup(c->config_path);
        m->locks = sbx_keyed_lock_registry_new();
        m->auth_cache = auth_cache_new();
        m->judgements = sbx_verdict_cache_new();
        m->observations = sbx_observation_cache_new();
        if (!m->state_dir || !m->docker_host || !m->init_dir || !m->config_path || !m->locks || !m->auth_cache ||
            !m->judgements || !m->observations || sbx_channels_new(&m->channels) < 0 ||
            sbx_resolvers_new(&m->resolvers) < 0)
                return -ENOMEM;
        if ((r = docker_socket_of(c->docker_host, &m->docker_socket)) < 0 ||
            (r = load_policy(c->config_path, c->docker_host, &m->policy)) < 0)
                return r;

        if (mkdir(c->state_dir, 0700) < 0 && errno != EEXIST) {
                log_error_errno(errno, "%s: %m", c->state_dir);
                return -errno;
        }
        if ((r = sbx_lifecycle_service_id(c->state_dir, &m->service_id)) < 0)
                return log_error_errno(r, "%s: %m", c->state_dir);
        /* A corrupt or unreadable database: the service takes its name all the same and
         * answers every call with what is wrong (manager_run()), so that an administrator
         * learns it from any client; it touches nothing, in Docker or the store, and
         * exits idle as usual, so the next activation picks up a repaired file. */
        r = sbx_store_open(c->state_dir, &store, &e);
        if (r < 0) {
                sbx_error_set(&m->store_error, SBX_ERROR_STORE_UNAVAILABLE,
                              "The service's store cannot be opened, so no sandbox is managed until it is "
                              "repaired or moved away: %s", e.message ?: strerror(-r));
                if (!m->store_error.message)
                        return -ENOMEM;
                log_error("%s", m->store_error.message);
        }
        /* A new, empty or truncated file: whatever Docker still has is found (and
         * rebuilt from its containers) by the reconciliation. */
        if (store && sbx_store_created(store))
                log_notice("%s: no store yet (a first start, or the file was empty): created", sbx_store_path(store));
        m->startup_store = TAKE_PTR(store);     /* the objects at start-up are read from it */

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
        manager_events_stop(m);
        work_cancel_queued(m);          /* what waits for a read worker never reached a pool */
        sbx_worker_pool_free(m->pool);
        sbx_worker_pool_free(m->read_pool);
        tdestroy(m->busy_by_uid, free);
        if (m->bus) {
                (void) sd_bus_flush(m->bus);
                sd_bus_flush_close_unref(m->bus);
        }
        leases_clear(&m->leases);
        deadlines_stop(m);
        bus_pool_stop(m);
        registry_clear(&m->registry);
        sd_event_source_unref(m->idle_source);
        sd_event_source_unref(m->retry_source);
        sd_event_source_unref(m->described_sweep);
        sd_event_source_unref(m->first_source);
        sd_event_unref(m->event);
        sbx_keyed_lock_registry_free(m->locks);
        auth_cache_free(m->auth_cache);
        caller_cache_clear(&m->callers);
        sbx_verdict_cache_free(m->judgements);
        sbx_observation_cache_free(m->observations);
        sbx_channels_free(m->channels);         /* after the pools: no worker holds one */
        sbx_resolvers_free(m->resolvers);
        sbx_store_close(m->startup_store);
        sbx_error_free(&m->store_error);
        sbx_policy_unref(m->policy);
        free(m->config_path);
        free(m->state_dir);
        free(m->docker_host);
        free(m->init_dir);
        free(m->docker_socket);
        free(m->service_id);
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

/* The objects at start-up, from the store alone: the name is taken without waiting
 * for Docker. Until the first reconciliation refreshes them (PropertiesChanged),
 * their Status is empty and their Verdict unverified: nothing has been checked yet. */
static void load_stored_objects(Manager *m) {
        _cleanup_(sbx_store_closep) SbxStore *store = TAKE_PTR(m->startup_store);       /* checked by manager_new() */
        _cleanup_(sbx_sandbox_row_list_freep) SbxSandboxRow **rows = NULL;
        SbxError e = SBX_ERROR_NULL;

        if (!store || sbx_store_list_sandboxes(store, SBX_STORE_ANY_OWNER, &rows, &e) < 0) {
                log_warning("Cannot read the stored sandboxes: %s", e.message ?: "out of memory");
                sbx_error_free(&e);
                return;
        }
        for (SbxSandboxRow **row = rows; *row; row++) {
                _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;

                (void) sbx_spec_from_json_string((*row)->spec_json, &spec, NULL);
                (void) registry_put(&m->registry, &(SbxSandbox) {
                        .name = (*row)->name,
                        .owner_valid = true,
                        .owner = (*row)->owner_uid,
                        .container_id = (*row)->container_id,
                        .state = (*row)->state == SBX_SANDBOX_RUNNING ? SBX_STATE_RUNNING : SBX_STATE_STOPPED,
                        .status = (char *) "",
                        .image = spec && spec->image ? spec->image : (char *) "",
                        .fingerprint = (*row)->fingerprint,
                        .verdict = SBX_VERDICT_UNVERIFIED,
                        .created_us = (uint64_t) MAX((*row)->created_us, 0),
                        .labels_json = (*row)->labels_json,
                });
        }
        bus_detached_load(m, store);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        Manager *m = userdata;

        if (m->terminating) {           /* asked twice: now */
                sd_event_exit(m->event, 0);
                return 0;
        }
        log_info("%s, exiting", strsignal((int) si->ssi_signo));
        /* What has not started never will: answered now, and so is whatever comes
         * in meanwhile. Execs are killed. What runs finishes and is answered: the loop
         * (whose end closes the bus) ends when nothing is busy any more. */
        m->terminating = true;
        operation_cancel_queued(m);
        bus_exec_shutdown_all(m);
        if (m->n_busy == 0)
                sd_event_exit(m->event, 0);
        else
                log_info("Waiting for %u running operation(s) to finish", m->n_busy);
        return 0;
}

/* The idle exit counts from here: its source is made once, and re-armed whenever
 * the last call in flight ends (manager_arm_idle()). */
static int take_name(Manager *m) {
        int r = sd_bus_request_name(m->bus, SBX_BUS_NAME, 0);

        if (r < 0)
                return log_error_errno(r, "cannot own %s: %m", SBX_BUS_NAME);
        if (m->idle_timeout_s == 0)
                return 0;
        r = sd_event_add_time_relative(m->event, &m->idle_source, CLOCK_MONOTONIC,
                                       (uint64_t) m->idle_timeout_s * 1000000, 0, on_idle, m);
        if (r < 0)
                return log_error_errno(r, "cannot set up the idle exit: %m");
        return 0;
}

/* Before any object sees it: every method call addressed to the service (but the bus's
 * Peer interface) is answered with the store's problem. */
static int on_call_without_store(sd_bus_message *msg, void *userdata, sd_bus_error *ret_error) {
        Manager *m = userdata;
        int r;

        if (!sd_bus_message_is_method_call(msg, NULL, NULL) ||
            streq_ptr(sd_bus_message_get_interface(msg), "org.freedesktop.DBus.Peer"))
                return 0;
        r = sd_bus_reply_method_errorf(msg, sbx_error_bus_name(m->store_error.kind), "%s", m->store_error.message);
        if (r < 0)
                log_warning_errno(r, "%s: the StoreUnavailable answer to %s could not be sent: %m",
                                  sd_bus_message_get_member(msg), sd_bus_message_get_sender(msg) ?: "?");
        (void) manager_arm_idle(m);     /* the idle exit counts from the last call */
        return 1;
}

/* The store could not be opened: the name is taken, every call is answered with why,
 * nothing is read from or done to Docker (no reconciliation, no events). */
static int run_store_unavailable(Manager *m) {
        int r;

        if ((r = sd_bus_add_filter(m->bus, NULL, on_call_without_store, m)) < 0 || (r = take_name(m)) < 0)
                return r;
        (void) sd_notify(false, "READY=1\nSTATUS=Store unavailable: answering every call with StoreUnavailable");
        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        return r;
}

/* The bus connection is gone (dbus-daemon went away, or dropped us): nobody can
 * reach this process any more, and the next call activates another. It exits now:
 * nothing is answered, every process it runs in a sandbox is killed (streaming
 * execs, captures, copies), and the state directory's lock goes with it (main.c). */
static int on_bus_lost(sd_bus_message *message, void *userdata, sd_bus_error *error) {
        Manager *m = userdata;

        log_error("Lost the connection to the bus: exiting");
        m->terminating = true;
        operation_cancel_queued(m);
        sbx_exec_cancel_all();
        bus_exec_shutdown_all(m);
        sd_event_exit(m->event, -ENOTCONN);
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
        m->after_sweep = bus_detached_restore;
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
        m->registry.bus = m->bus;
        m->registry.callers = &m->callers;
        m->registry.dropped = on_sandbox_dropped;
        m->registry.dropped_userdata = m;
        m->registry.now = registry_clock;
        m->registry.now_userdata = m;
        m->leases = (Leases) { .event = m->event, .bus = m->bus, .registry = &m->registry,
                               .ended = on_lease_ended, .userdata = m };
        if ((r = sd_bus_match_signal(m->bus, NULL, NULL, "/org/freedesktop/DBus/Local", "org.freedesktop.DBus.Local",
                                     "Disconnected", on_bus_lost, m)) < 0)
                return r;
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

        if (sbx_error_is_set(&m->store_error))
                return run_store_unavailable(m);

        /* The name first, Docker afterwards (docs/lifecycle.md): activation never waits on
         * a hung dockerd. Store and Docker are reconciled in the background each time
         * the event stream (re)connects. */
        load_stored_objects(m);
        if ((r = take_name(m)) < 0)
                return r;
        (void) sd_notify(false, "READY=1\nSTATUS=Serving " SBX_BUS_NAME);
        deadlines_start(m);
        bus_pool_start(m);
        if ((r = manager_events_start(m)) < 0)
                return log_error_errno(r, "cannot follow Docker's events: %m");

        r = sd_event_loop(m->event);
        (void) sd_notify(false, "STOPPING=1");
        return r;
}
