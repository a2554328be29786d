/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The registry of known sandboxes (registry.h). */

#include <errno.h>
#include <search.h>

#include "bus-inspection.h"
#include "bus-labels.h"
#include "bus-signal.h"
#include "naming.h"
#include "registry.h"
#include "time-util.h"
#include "user-labels.h"

/* Properties ------------------------------------------------------------------ */

int sandbox_entry_append_property(sd_bus_message *reply, const SandboxEntry *e, const char *property, bool broadcast) {
        if (streq(property, "Name"))
                return sd_bus_message_append(reply, "s", e->display);
        if (streq(property, "Owner"))
                return sd_bus_message_append(reply, "u", (uint32_t) e->owner);
        if (streq(property, "ContainerId"))
                return sd_bus_message_append(reply, "s", e->container_id ?: "");
        if (streq(property, "State"))
                return sd_bus_message_append(reply, "s", sbx_state_to_string(e->state));
        if (streq(property, "Status"))
                return sd_bus_message_append(reply, "s", e->status ?: "");
        if (streq(property, "Image"))
                return sd_bus_message_append(reply, "s", broadcast ? "" : e->image ?: "");
        if (streq(property, "Fingerprint"))
                return sd_bus_message_append(reply, "s", broadcast ? "" : e->fingerprint ?: "");
        if (streq(property, "Verdict"))
                return sd_bus_message_append(reply, "s", sbx_verdict_to_string(e->verdict));
        if (streq(property, "CreatedAt"))
                return sd_bus_message_append(reply, "t", e->created_us);
        if (streq(property, "Labels"))
                return sbx_bus_append_labels(reply, broadcast ? NULL : e->labels);
        if (streq(property, "Leases"))
                return sd_bus_message_append(reply, "u", (uint32_t) e->leases);
        if (streq(property, "LastActivity"))
                return sd_bus_message_append(reply, "t", e->last_activity_us);
        if (streq(property, "IdleTimeout"))
                return sd_bus_message_append(reply, "u", e->idle_timeout_s);
        if (streq(property, "OnIdle"))
                return sd_bus_message_append(reply, "s", e->on_idle_pause ? "pause" : "stop");
        if (streq(property, "ExpiresAt"))
                return sd_bus_message_append(reply, "t", e->expire_at_us);
        return -ENOENT;
}

/* The properties as the vtable of bus-sandbox.c has them: signature, and whether a
 * change is announced with the value (or only invalidated: spec contents). */
static const struct {
        const char *name, *signature;
        bool invalidates;
} properties[] = {
        { "Name", "s", false }, { "Owner", "u", false }, { "ContainerId", "s", false },
        { "State", "s", false }, { "Status", "s", false }, { "Image", "s", true },
        { "Fingerprint", "s", true }, { "Verdict", "s", false }, { "CreatedAt", "t", false },
        { "Labels", "a{ss}", true }, { "Leases", "u", false }, { "LastActivity", "t", false },
        { "IdleTimeout", "u", false }, { "OnIdle", "s", false }, { "ExpiresAt", "t", false },
};

static int append_property(sd_bus_message *m, const SandboxEntry *e, size_t i) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', properties[i].name)) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', properties[i].signature)) < 0 ||
            (r = sandbox_entry_append_property(m, e, properties[i].name, true)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int sandbox_entry_append_interfaces(sd_bus_message *m, const SandboxEntry *e) {
        static const char *const standard[] = {
                "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Properties",
        };
        int r;

        if ((r = sd_bus_message_append(m, "o", e->path)) < 0 || (r = sd_bus_message_open_container(m, 'a', "{sa{sv}}")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(standard); i++)
                if ((r = sd_bus_message_append(m, "{sa{sv}}", standard[i], 0)) < 0)
                        return r;
        if ((r = sd_bus_message_open_container(m, 'e', "sa{sv}")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', SBX_BUS_SANDBOX_INTERFACE)) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        /* As sd-bus's own: the values of the properties that announce them. */
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (!properties[i].invalidates && (r = append_property(m, e, i)) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static bool named(const char *const *names, const char *name) {
        for (; names && *names; names++)
                if (streq(*names, name))
                        return true;
        return false;
}

int sandbox_entry_append_changed(sd_bus_message *m, const SandboxEntry *e, const char *const *names) {
        int r;

        if ((r = sd_bus_message_append(m, "s", SBX_BUS_SANDBOX_INTERFACE)) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (!properties[i].invalidates && named(names, properties[i].name) &&
                    (r = append_property(m, e, i)) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_open_container(m, 'a', "s")) < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(properties); i++)
                if (properties[i].invalidates && named(names, properties[i].name) &&
                    (r = sd_bus_message_append_basic(m, 's', properties[i].name)) < 0)
                        return r;
        return sd_bus_message_close_container(m);
}


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
        return sandbox_entry_append_interfaces(msg, userdata);
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
        return sandbox_entry_append_changed(msg, c->e, c->names);
}

static void announce(Registry *reg, const SandboxEntry *e, const char *path, const char *interface,
                     const char *member, BusSignalAppend append, void *userdata) {
        bus_signal_send(reg->bus, reg->callers, reader(e), BUS_SIGNAL_NO_UID, path, interface, member, append,
                        userdata);
}

static void announce_new(Registry *reg, SandboxEntry *e) {
        announce(reg, e, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxNew", append_name_path, e);
        announce(reg, e, SBX_BUS_PATH, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded", append_added, e);
}

static void announce_changed(Registry *reg, const SandboxEntry *e, const char *const *names) {
        announce(reg, e, e->path, "org.freedesktop.DBus.Properties", "PropertiesChanged", append_changed,
                 &(Changed) { .e = e, .names = names });
}

static void announce_removed(Registry *reg, SandboxEntry *e) {
        announce(reg, e, SBX_BUS_PATH, "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved", append_removed, e);
        announce(reg, e, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE, "SandboxRemoved", append_name_path, e);
}

/* The registry ------------------------------------------------------------------ */

static int entry_cmp(const void *a, const void *b) {
        return strcmp(((const SandboxEntry *) a)->name, ((const SandboxEntry *) b)->name);
}

static void forget_described(SandboxEntry *e) {
        e->described = sbx_sandbox_free(e->described);
        e->verified = sbx_spec_free(e->verified);
}

static void entry_free(void *p) {
        SandboxEntry *e = p;

        if (!e)
                return;
        forget_described(e);
        free(e->name);
        free(e->path);
        free(e->container_id);
        free(e->status);
        free(e->image);
        free(e->fingerprint);
        free(e->labels_json);
        json_object_put(e->labels);
        use_watch_unref(e->watch);
        free(e);
}

UseWatch *use_watch_new(void) {
        UseWatch *w = calloc(1, sizeof(UseWatch));

        if (w)
                w->refs = 1;
        return w;
}

UseWatch *use_watch_ref(UseWatch *w) {
        if (w)
                w->refs++;
        return w;
}

UseWatch *use_watch_unref(UseWatch *w) {
        if (w && --w->refs == 0)
                free(w);
        return NULL;
}

void registry_mark_used(SandboxEntry *e) {
        if (e && e->watch)
                e->watch->used = true;
}

int registry_path(const char *name, char **ret) {
        return sd_bus_path_encode(SBX_BUS_SANDBOX_PREFIX, name, ret);
}

int registry_listed(Registry *reg, const SbxSandbox *s) {
        SandboxEntry *e = registry_get(reg, s->name);

        if (!e || !streq_ptr(e->container_id, s->container_id))
                return registry_put(reg, s);
        return registry_put(reg, &(SbxSandbox) {
                .name = e->name, .owner_valid = e->owner_valid, .owner = e->owner, .container_id = e->container_id,
                .state = s->state, .status = s->status, .image = e->image, .fingerprint = e->fingerprint,
                .verdict = e->verdict, .created_us = e->created_us, .labels_json = e->labels_json });
}

SandboxEntry *registry_get(Registry *reg, const char *name) {
        SandboxEntry key = { .name = (char *) name };
        SandboxEntry **found = tfind(&key, &reg->tree, entry_cmp);

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

/* The labels' stored form (NULL: none), and parsed; returns 1 if they changed. */
static int set_labels(SandboxEntry *e, const char *labels_json) {
        json_object *parsed = NULL;
        int r;

        labels_json = labels_json ?: "{}";
        if (e->labels && streq_ptr(e->labels_json, labels_json))
                return 0;
        /* The store's own form; one that cannot be read shows as none. */
        if (sbx_user_labels_from_string(labels_json, &parsed) < 0 &&
            sbx_user_labels_from_string(NULL, &parsed) < 0)
                return -ENOMEM;
        if ((r = set_string(&e->labels_json, labels_json)) < 0) {
                json_object_put(parsed);
                return r;
        }
        json_object_put(e->labels);
        e->labels = parsed;
        return 1;
}

/* Whether e has a deadline still to come: an expiry, or an idle stop while it runs. */
static bool has_deadline(const SandboxEntry *e) {
        return e->expire_at_us > 0 || (e->idle_timeout_s > 0 && e->state == SBX_STATE_RUNNING);
}

/* Keeps reg->n_deadlines after a change of e's state or lifetime (had: before it). */
static void count_deadline(Registry *reg, const SandboxEntry *e, bool had) {
        reg->n_deadlines = reg->n_deadlines + has_deadline(e) - had;
}

int registry_put(Registry *reg, const SbxSandbox *s) {
        SandboxEntry *e = registry_get(reg, s->name);
        const char *changed[9 + 1];     /* the nine tracked properties and a NULL */
        size_t n = 0;
        bool is_new = !e, had = e && has_deadline(e);
        int r;

        if (is_new) {
                e = calloc(1, sizeof(SandboxEntry));
                if (!e)
                        return -ENOMEM;
                e->registry = reg;
                e->name = strdup(s->name);
                if (!e->name || registry_path(s->name, &e->path) < 0) {
                        entry_free(e);
                        return -ENOMEM;
                }
                (void) sbx_name_unqualify(e->name, &e->display);
                if (!tsearch(e, &reg->tree, entry_cmp)) {
                        entry_free(e);
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
        TRACK(set_labels(e, s->labels_json), "Labels");
#undef TRACK
        if (e->owner != s->owner || e->owner_valid != s->owner_valid) {
                e->owner = s->owner;
                e->owner_valid = s->owner_valid;
                changed[n++] = "Owner";
        }
        if (e->state != s->state) {
                e->state = s->state;
                count_deadline(reg, e, had);
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
        if (e->last_activity_us < e->created_us)
                e->last_activity_us = e->created_us;
        e->looked_us = sbx_now_monotonic_us();
        changed[n] = NULL;
        if (n > 0)
                forget_described(e);

        if (is_new) {
                reg->seq++;
                announce_new(reg, e);
        } else if (n > 0)
                announce_changed(reg, e, changed);
        return 0;
}

void registry_set_state(Registry *reg, const char *name, SbxState state, const char *status) {
        SandboxEntry *e = registry_get(reg, name);
        bool had;

        if (!e || (e->state == state && streq_ptr(e->status, status)))
                return;
        forget_described(e);
        had = has_deadline(e);
        e->state = state;
        count_deadline(reg, e, had);
        if (set_string(&e->status, status) < 0)
                return;
        announce_changed(reg, e, (const char *const[]) { "State", "Status", NULL });
}

static bool touch(SandboxEntry *e, uint64_t now_us) {
        if (now_us < e->last_activity_us + REGISTRY_ACTIVITY_STEP_US)
                return false;
        e->last_activity_us = now_us;
        return true;
}

void registry_touch(Registry *reg, const char *name, uint64_t now_us) {
        SandboxEntry *e = registry_get(reg, name);

        registry_mark_used(e);
        if (e && touch(e, now_us))
                announce_changed(reg, e, (const char *const[]) { "LastActivity", NULL });
}

void registry_started(Registry *reg, const char *name) {
        registry_set_state(reg, name, SBX_STATE_RUNNING, "running");
}

void registry_stopped(Registry *reg, const char *name) {
        registry_set_state(reg, name, SBX_STATE_STOPPED, "exited");
}

void registry_paused(Registry *reg, const char *name) {
        registry_set_state(reg, name, SBX_STATE_PAUSED, "paused");
}

static uint64_t shifted(uint64_t t, int64_t step_us) {
        if (t == 0)
                return 0;               /* never */
        if (step_us < 0 && (uint64_t) -step_us >= t)
                return 1;
        return t + (uint64_t) step_us;
}

typedef struct Rebase {
        Registry *reg;
        int64_t step_us;
} Rebase;

static void rebase_one(const void *node, VISIT which, void *closure) {
        SandboxEntry *e = *(SandboxEntry *const *) node;
        const Rebase *rb = closure;

        if (which != postorder && which != leaf)
                return;
        e->last_activity_us = shifted(e->last_activity_us, rb->step_us);
        e->expire_at_us = shifted(e->expire_at_us, rb->step_us);
        e->activity_stored_us = 0;
        e->rebased = e->has_lifetime;
        announce_changed(rb->reg, e, (const char *const[]) { "LastActivity", "ExpiresAt", NULL });
}

void registry_rebase(Registry *reg, int64_t step_us) {
        twalk_r(reg->tree, rebase_one, &(Rebase) { .reg = reg, .step_us = step_us });
}

void registry_set_lifetime(Registry *reg, const SbxLifetimeRow *row) {
        SandboxEntry *e = registry_get(reg, row->name);
        bool had;

        if (!e)
                return;
        had = has_deadline(e);
        e->idle_timeout_s = row->idle_timeout_s;
        e->expire_at_us = row->expire_at_us;
        count_deadline(reg, e, had);
        e->on_idle_pause = row->on_idle_pause;
        e->idle_counts_processes = row->counts_processes;
        e->has_lifetime = row->idle_timeout_s > 0 || row->expire_at_us > 0;
        e->last_activity_us = MAX(e->last_activity_us, row->last_activity_us);
        e->activity_stored_us = MAX(e->activity_stored_us, row->last_activity_us);
        announce_changed(reg, e, (const char *const[]) { "IdleTimeout", "OnIdle", "ExpiresAt", "LastActivity", NULL });
}

bool registry_deadlines_pending(Registry *reg) {
        return reg->n_deadlines > 0;
}

void registry_set_leases(Registry *reg, const char *name, unsigned n) {
        SandboxEntry *e = registry_get(reg, name);

        if (!e)
                return;
        e->leases = n;
        registry_mark_used(e);
        (void) touch(e, reg->now ? reg->now(reg->now_userdata) : sbx_now_realtime_us());
        announce_changed(reg, e, (const char *const[]) { "Leases", "LastActivity", NULL });
}

void registry_drop(Registry *reg, const char *name) {
        SandboxEntry *e = registry_get(reg, name);
        _cleanup_free_ char *key = NULL;

        if (!e)
                return;
        key = strdup(name);             /* name may be the entry's own */
        announce_removed(reg, e);
        reg->n_deadlines -= has_deadline(e);
        tdelete(e, &reg->tree, entry_cmp);
        entry_free(e);
        reg->seq++;
        if (key && reg->dropped)
                reg->dropped(reg->dropped_userdata, key);
}

/* Kept descriptions ---------------------------------------------------------- */

void registry_describe(Registry *reg, SbxSandbox *s) {
        SandboxEntry *e = s && s->seen ? registry_get(reg, s->name) : NULL;

        if (!e) {
                sbx_sandbox_free(s);
                return;
        }
        forget_described(e);
        e->described = s;
        e->described_plan = BUS_INSPECTION_UNPLANNED;
}

const SbxSandbox *registry_described(SandboxEntry *e, SbxObservationCache *c, uint64_t max_age_us) {
        if (!e || !e->described)
                return NULL;
        if (!sbx_observation_cache_holds(c, e->described->container_id, e->described->seen, max_age_us)) {
                forget_described(e);
                return NULL;
        }
        return e->described;
}

int registry_fingerprints_of(SandboxEntry *e, const SbxSpec *spec, SbxFingerprints *buf,
                             const SbxFingerprints **ret) {
        int r;

        if (e->verified && sbx_spec_equal(e->verified, spec)) {
                *ret = &e->verified_fps;
                return 0;
        }
        if ((r = sbx_spec_fingerprints(spec, buf)) < 0)
                return r;
        *ret = buf;
        return 0;
}

void registry_keep_verified(SandboxEntry *e, SbxSpec *spec, const SbxFingerprints *fps) {
        if (!e->described) {
                sbx_spec_free(spec);
                return;
        }
        sbx_spec_free(e->verified);
        e->verified = spec;
        e->verified_fps = *fps;
}

/* Built for each reply, its strings checked once: a kept sealed message copied
 * into the reply (sd_bus_message_copy()) costs twice what building it does. */
int registry_append_inspection(SandboxEntry *e, sd_bus_message *reply) {
        if (!e || !e->described)
                return -ESTALE;
        return bus_append_inspection_planned(reply, e->described, &e->described_plan);
}

typedef struct Sweep {
        SbxObservationCache *c;
        uint64_t max_age_us;
        size_t kept;
} Sweep;

static void sweep_one(SandboxEntry *e, void *userdata) {
        Sweep *s = userdata;

        if (!s->c)
                forget_described(e);
        else if (registry_described(e, s->c, s->max_age_us))
                s->kept++;
}

size_t registry_sweep_described(Registry *reg, SbxObservationCache *c, uint64_t max_age_us) {
        Sweep s = { .c = c, .max_age_us = max_age_us };

        registry_foreach(reg, sweep_one, &s);
        return s.kept;
}

typedef struct Walk {
        void (*f)(SandboxEntry *e, void *userdata);
        void *userdata;
} Walk;

static void walk_action(const void *node, VISIT which, void *closure) {
        const Walk *w = closure;

        if (which == postorder || which == leaf)
                w->f(*(SandboxEntry *const *) node, w->userdata);
}

void registry_foreach(Registry *reg, void (*f)(SandboxEntry *e, void *userdata), void *userdata) {
        twalk_r(reg->tree, walk_action, &(Walk) { .f = f, .userdata = userdata });
}

void registry_clear(Registry *reg) {
        tdestroy(reg->tree, entry_free);
        reg->tree = NULL;
        reg->n_deadlines = 0;
}
