/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The registry of known sandboxes behind the per-sandbox objects (in the manner of
 * machined's machine.c): keyed by Docker-level name, updated from what the workers
 * saw, announcing what changed. Main thread only. */

#include <errno.h>
#include <search.h>

#include "bus-sandbox.h"
#include "manager.h"
#include "naming.h"


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
                (void) sd_bus_emit_signal(m->bus, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxNew", "so", e->display,
                                          e->path);
                (void) sd_bus_emit_object_added(m->bus, e->path);
        } else if (n > 0)
                (void) sd_bus_emit_properties_changed_strv(m->bus, e->path, SBX_BUS_SANDBOX_INTERFACE,
                                                           (char **) changed);
        return 0;
}

void manager_set_sandbox_state(Manager *m, const char *name, SbxState state, const char *status) {
        SandboxEntry *e = manager_get_sandbox(m, name);

        if (!e || (e->state == state && streq_ptr(e->status, status)))
                return;
        e->state = state;
        if (set_string(&e->status, status) < 0)
                return;
        (void) sd_bus_emit_properties_changed(m->bus, e->path, SBX_BUS_SANDBOX_INTERFACE, "State", "Status", NULL);
}

void manager_drop_sandbox(Manager *m, const char *name) {
        SandboxEntry *e = manager_get_sandbox(m, name);

        if (!e)
                return;
        /* InterfacesRemoved is built from the live object: emit before removing. */
        (void) sd_bus_emit_object_removed(m->bus, e->path);
        (void) sd_bus_emit_signal(m->bus, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxRemoved", "so", e->display,
                                  e->path);
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

