/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "bus-signal.h"
#include "log.h"

typedef struct Send {
        sd_bus *bus;
        const char *path, *interface, *member;
        BusSignalAppend append;
        void *userdata;
} Send;

static void send_one(const char *destination, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        Send *s = userdata;
        int r;

        if ((r = sd_bus_message_new_signal(s->bus, &msg, s->path, s->interface, s->member)) < 0 ||
            (r = sd_bus_message_set_destination(msg, destination)) < 0 || (r = s->append(msg, s->userdata)) < 0 ||
            (r = sd_bus_send(s->bus, msg, NULL)) < 0)
                log_debug("%s.%s to %s: %s", s->interface, s->member, destination, strerror(-r));
}

void bus_signal_send(sd_bus *bus, CallerCache *callers, uid_t owner, uid_t also, const char *path,
                     const char *interface, const char *member, BusSignalAppend append, void *userdata) {
        Send s = { .bus = bus, .path = path, .interface = interface, .member = member, .append = append,
                   .userdata = userdata };

        if (bus && callers)
                caller_cache_foreach(callers, owner, also, send_one, &s);
}
