/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The registry of known sandboxes behind the per-sandbox objects (in the manner of
 * machined's machine.c): keyed by Docker-level name, updated from what the workers
 * saw, announcing what changed. Main thread only. */

#include <errno.h>
#include <search.h>

#include "bus-sandbox.h"
#include "bus-signal.h"
#include "manager.h"
#include "naming.h"

/* Signals -------------------------------------------------------------------- */

/* Who may read what a signal about e tells: its owner (and root, always). */
static uid_t reader(const SandboxEntry *e) {
        return e->owner_valid ? e->owner : BUS_SIGNAL_NO_UID;
}

static int append_name_path(sd_bus_message *msg, void *userdata) {
        const SandboxEntry *e = userdata;
        return sd_bus_message_append(msg, "so", e->display, e->path);
}

static int append_added(sd_bus_message *msg, void *userdata) {
        return bus_sandbox_append_interfaces(msg, userdata);
}

static int append_removed(sd_bus_message *msg, void *userdata) {
        const SandboxEntry *e = userdata;
        return sd_bus_message_append(msg, "oas", e->path, 4, "org.freedesktop.DBus.Peer",
                                     "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
                                     SBX_BUS_SANDBOX_INTERFACE);
}

typedef struct Changed {
        const SandboxEntry *e;
        const char *const *names;
} Changed;

static int append_changed(sd_bus_message *msg, void *userdata) {
        const Changed *c = userdata;
        return bus_sandbox_append_changed(msg, c->e, c->names);
}

static void announce_new(Manager *m, SandboxEntry *e) {
        bus_signal_send(m, reader(e), BUS_SIGNAL_NO_UID, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxNew",
                        append_name_path, e);
        bus_signal_send(m, reader(e), BUS_SIGNAL_NO_UID, SBX_BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                        "InterfacesAdded", append_added, e);
}

static void announce_changed(Manager *m, const SandboxEntry *e, const char *const *names) {
        bus_signal_send(m, reader(e), BUS_SIGNAL_NO_UID, e->path, "org.freedesktop.DBus.Properties",
                        "PropertiesChanged", append_changed, &(Changed) { .e = e, .names = names });
}

static void announce_removed(Manager *m, SandboxEntry *e) {
        bus_signal_send(m, reader(e), BUS_SIGNAL_NO_UID, SBX_BUS_PATH, "org.freedesktop.DBus.ObjectManager",
                        "InterfacesRemoved", append_removed, e);
        bus_signal_send(m, reader(e), BUS_SIGNAL_NO_UID, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxRemoved",
                        append_name_path, e);
}

/* The registry ------------------------------------------------------------------ */

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const SandboxEntry *) a)->name, ((const SandboxEntry *) b)->name);
}

void manager_free_sandbox_entry(void *p) {
        SandboxEntry *e = p;

        if (!e)
                return;
        free(e->name);
        free(e->path);
        free(e->container_id);
        free(e->status);
        free(e->image);
        free(e->fingerprint);
        free(e);
}

SandboxEntry *manager_get_sandbox(Manager *m, const char *name) {
        SandboxEntry key = { .name = (char *) name };
        SandboxEntry **found = tfind(&key, &m->sandboxes, entry_cmp);

        return found ? *found : NULL;
}

/* Replaces *field with a copy of value; returns 1 if it changed. */
static int set_string(char **field, const char *value) {
        char *copy;

        if (streq_ptr(*field, value))
                return 0;
        copy = strdup(value);
        if (!copy)
                return -ENOMEM;
        free(*field);
        *field = copy;
        return 1;
}

int manager_put_sandbox(Manager *m, const SbxSandbox *s) {
        SandboxEntry *e = manager_get_sandbox(m, s->name);
        const char *changed[8 + 1];     /* the eight tracked properties and a NULL */
        size_t n = 0;
        bool is_new = !e;
        int r;

        if (is_new) {
                e = calloc(1, sizeof(SandboxEntry));
                if (!e)
                        return -ENOMEM;
                e->manager = m;
                e->name = strdup(s->name);
                if (!e->name || bus_sandbox_path(s->name, &e->path) < 0) {
                        manager_free_sandbox_entry(e);
                        return -ENOMEM;
                }
                (void) sbx_name_unqualify(e->name, &e->display);
                if (!tsearch(e, &m->sandboxes, entry_cmp)) {
                        manager_free_sandbox_entry(e);
                        return -ENOMEM;
                }
        }

#define TRACK(expr, prop)                               \
        do {                                            \
                if ((r = (expr)) < 0)                   \
                        return r;                       \
                if (r > 0)                              \
                        changed[n++] = prop;            \
        } while (0)
        TRACK(set_string(&e->container_id, s->container_id), "ContainerId");
        TRACK(set_string(&e->status, s->status), "Status");
        TRACK(set_string(&e->image, s->image), "Image");
        TRACK(set_string(&e->fingerprint, s->fingerprint), "Fingerprint");
#undef TRACK
        if (e->owner != s->owner || e->owner_valid != s->owner_valid) {
                e->owner = s->owner;
                e->owner_valid = s->owner_valid;
                changed[n++] = "Owner";
        }
        if (e->state != s->state) {
                e->state = s->state;
                changed[n++] = "State";
        }
        if (e->verdict != s->verdict) {
                e->verdict = s->verdict;
                changed[n++] = "Verdict";
        }
        if (e->created_us != s->created_us) {
                e->created_us = s->created_us;
                changed[n++] = "CreatedAt";
        }
        changed[n] = NULL;

        if (is_new) {
                m->registry_seq++;
                announce_new(m, e);
        } else if (n > 0)
                announce_changed(m, e, changed);
        return 0;
}

void manager_set_sandbox_state(Manager *m, const char *name, SbxState state, const char *status) {
        SandboxEntry *e = manager_get_sandbox(m, name);

        if (!e || (e->state == state && streq_ptr(e->status, status)))
                return;
        e->state = state;
        if (set_string(&e->status, status) < 0)
                return;
        announce_changed(m, e, (const char *const[]) { "State", "Status", NULL });
}

void manager_drop_sandbox(Manager *m, const char *name) {
        SandboxEntry *e = manager_get_sandbox(m, name);

        if (!e)
                return;
        announce_removed(m, e);
        tdelete(e, &m->sandboxes, entry_cmp);
        manager_free_sandbox_entry(e);
        m->registry_seq++;
}

static void (*walk_fn)(SandboxEntry *e, void *userdata);
static void *walk_userdata;

static void walk_action(const void *node, VISIT which, int depth) {
        if (which == postorder || which == leaf)
                walk_fn(*(SandboxEntry *const *) node, walk_userdata);
}

void manager_foreach_sandbox(Manager *m, void (*f)(SandboxEntry *e, void *userdata), void *userdata) {
        /* twalk() has no userdata; this runs on the main thread only. */
        walk_fn = f;
        walk_userdata = userdata;
        twalk(m->sandboxes, walk_action);
        walk_fn = NULL;
        walk_userdata = NULL;
}

/* Audit --------------------------------------------------------------------- */

