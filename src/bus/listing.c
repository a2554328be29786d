/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdlib.h>

#include "listing.h"
#include "log.h"
#include "naming.h"
#include "verdict.h"

/* A list's sandboxes waiting to be applied to the objects. */
typedef struct Listed {
        Registry *registry;
        SbxSandbox **list;
        size_t n;
} Listed;

static void apply(Registry *reg, SbxSandbox **list, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = list[i]->unjudged ? registry_listed(reg, list[i]) : registry_put(reg, list[i]);

                if (r < 0)
                        log_warning_errno(r, "Sandbox '%s' listed, its object not updated: %m", list[i]->name);
        }
}

static void listed_free(void *userdata) {
        Listed *l = userdata;

        sbx_sandbox_list_free(l->list, l->n);
        free(l);
}

static int on_listed(sd_event_source *s, void *userdata) {
        Listed *l = userdata;

        apply(l->registry, l->list, l->n);
        sd_event_source_disable_unref(s);       /* its only reference: l goes with it */
        return 0;
}

/* Takes the list over: applied on the next turn of the event loop (each changed
 * sandbox a signal to whoever may read it: hundreds right after an activation,
 * which the reply need not wait for), or now. */
static void apply_later(Manager *m, SbxSandbox ***list, size_t *n) {
        Listed *l = calloc(1, sizeof(Listed));
        sd_event_source *s = NULL;

        if (!l || sd_event_add_defer(m->event, &s, on_listed, l) < 0 ||
            sd_event_source_set_priority(s, SD_EVENT_PRIORITY_IMPORTANT) < 0 ||
            sd_event_source_set_destroy_callback(s, listed_free) < 0) {
                sd_event_source_disable_unref(s);
                free(l);
                apply(&m->registry, *list, *n);
                return;
        }
        *l = (Listed) { .registry = &m->registry, .list = TAKE_PTR(*list), .n = *n };
        *n = 0;                                 /* s is its own: on_listed() ends it */
}

int listing_reply(Manager *m, SbxSandbox ***list, size_t *n, const uid_t *uid, sd_bus_message *reply) {
        int r = sd_bus_message_open_container(reply, 'a', "(ssuso)");

        for (size_t i = 0; r >= 0 && i < *n; i++) {
                const SbxSandbox *s = (*list)[i];
                _cleanup_free_ char *path = NULL;
                const char *display;

                if (uid && !(s->owner_valid && s->owner == *uid))
                        continue;
                (void) sbx_name_unqualify(s->name, &display);
                if ((r = registry_path(s->name, &path)) >= 0)
                        r = sd_bus_message_append(reply, "(ssuso)", display, sbx_state_to_string(s->state),
                                                  (uint32_t) s->owner, sbx_verdict_to_string(s->verdict), path);
        }
        if (r >= 0 && (r = sd_bus_message_close_container(reply)) >= 0)
                apply_later(m, list, n);
        return r;
}
