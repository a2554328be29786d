/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdatomic.h>

#include "bus-error.h"
#include "bus-names.h"
#include "bus-pull.h"
#include "bus-spec.h"
#include "image-ref.h"
#include "log.h"
#include "operation.h"

#define PULL_PROGRESS_INTERVAL_US 200000U

int bus_pull_method(sd_bus_message *msg, void *userdata, sd_bus_error *error) {
        _cleanup_(sbx_error_free) SbxError e = SBX_ERROR_NULL;
        SbxImageRef ref = {};
        const char *reference = NULL;
        int r;

        r = sd_bus_message_read(msg, "s", &reference);
        if (r < 0)
                r = sbx_error_set(&e, SBX_ERROR_INVALID_ARGS, "reference: not a string");
        if (r >= 0)
                r = sbx_image_ref_parse(reference, &ref, &e);
        sbx_image_ref_done(&ref);
        if (r >= 0)
                r = sbx_bus_read_no_options(msg, &e);
        if (r < 0)
                return operation_refuse(userdata, msg, VERB_PULL, reference, &e, r, error);
        return operation_start(userdata, msg, VERB_PULL, &(OperationArgs) { .reference = reference }, error);
}

/* On the worker: kept for the main thread's timer. */
static void on_progress(uint64_t done, uint64_t total, void *userdata) {
        Operation *o = userdata;

        atomic_store(&o->pull_done, done);
        atomic_store(&o->pull_total, total);
}

int bus_pull_run(Operation *o, SbxLifecycle *l) {
        return sbx_lifecycle_pull(l, o->reference, on_progress, o, &o->image_id, &o->error);
}

/* PullProgress to the caller alone, when the numbers moved. */
static void send_progress(Operation *o) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        uint64_t done = atomic_load(&o->pull_done), total = atomic_load(&o->pull_total);
        int r;

        if (done == o->pull_sent_done && total == o->pull_sent_total)
                return;
        o->pull_sent_done = done;
        o->pull_sent_total = total;
        if ((r = sd_bus_message_new_signal(o->m->bus, &msg, SBX_BUS_PATH, SBX_BUS_MANAGER_INTERFACE,
                                           "PullProgress")) < 0 ||
            (r = sd_bus_message_set_destination(msg, sd_bus_message_get_sender(o->call))) < 0 ||
            (r = sd_bus_message_append(msg, "stt", o->reference, done, total)) < 0 ||
            (r = sd_bus_send(o->m->bus, msg, NULL)) < 0)
                log_debug("PullProgress to %s: %s", sd_bus_message_get_sender(o->call), strerror(-r));
}

int bus_pull_reply(Operation *o, sd_bus_message *reply) {
        send_progress(o);
        return sd_bus_message_append(reply, "s", o->image_id);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        send_progress(userdata);
        return sd_event_source_set_time_relative(s, PULL_PROGRESS_INTERVAL_US);
}

void bus_pull_watch(Operation *o) {
        int r = sd_event_add_time_relative(o->m->event, &o->pull_timer, CLOCK_MONOTONIC, PULL_PROGRESS_INTERVAL_US,
                                           0, on_timer, o);

        if (r >= 0)
                r = sd_event_source_set_enabled(o->pull_timer, SD_EVENT_ON);
        if (r < 0)
                log_debug("PullProgress of %s: no timer: %s", o->reference, strerror(-r));
}
