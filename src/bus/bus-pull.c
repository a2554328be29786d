/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdatomic.h>

#include "bus-names.h"
#include "bus-pull.h"
#include "log.h"

#define PULL_PROGRESS_INTERVAL_US 200000U

void bus_pull_flush(Operation *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        PullJob *j = &o->pull;
        uint64_t done = atomic_load(&j->done), total = atomic_load(&j->total);
        int r;

        if (done == j->sent_done && total == j->sent_total)
                return;
        j->sent_done = done;
        j->sent_total = total;
        if ((r = sd_bus_message_new_signal(o->m->bus, &msg, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE,
                                           "PullProgress")) < 0 ||
            (r = sd_bus_message_set_destination(msg, sd_bus_message_get_sender(o->call))) < 0 ||
            (r = sd_bus_message_append(msg, "stt", j->reference, done, total)) < 0 ||
            (r = sd_bus_send(o->m->bus, msg, NULL)) < 0)
                log_debug("PullProgress to %s: %s", sd_bus_message_get_sender(o->call), strerror(-r));
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        bus_pull_flush(userdata);
        return sd_event_source_set_time_relative(s, PULL_PROGRESS_INTERVAL_US);
}

void bus_pull_watch(Operation *o) {
        int r = sd_event_add_time_relative(o->m->event, &o->pull.timer, CLOCK_MONOTONIC, PULL_PROGRESS_INTERVAL_US,
                                           0, on_timer, o);

        if (r >= 0)
                r = sd_event_source_set_enabled(o->pull.timer, SD_EVENT_ON);
        if (r < 0)
                log_debug("PullProgress of %s: no timer: %s", o->pull.reference, strerror(-r));
}
