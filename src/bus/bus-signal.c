/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "bus-signal.h"
#include "log.h"
#include "operation.h"

typedef struct Send {
        Manager *m;
        const char *path, *interface, *member;
        BusSignalAppend append;
        void *userdata;
} Send;

static void send_one(const char *destination, void *userdata) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *msg = NULL;
        Send *s = userdata;
        int r;

        if ((r = sd_bus_message_new_signal(s->m->bus, &msg, s->path, s->interface, s->member)) < 0 ||
            (r = sd_bus_message_set_destination(msg, destination)) < 0 || (r = s->append(msg, s->userdata)) < 0 ||
            (r = sd_bus_send(s->m->bus, msg, NULL)) < 0)
                log_debug("%s.%s to %s: %s", s->interface, s->member, destination, strerror(-r));
}

void bus_signal_send(Manager *m, uid_t owner, uid_t also, const char *path, const char *interface,
                     const char *member, BusSignalAppend append, void *userdata) {
        Send s = { .m = m, .path = path, .interface = interface, .member = member, .append = append,
                   .userdata = userdata };

        if (m->bus)
                bus_caller_foreach(owner, also, send_one, &s);
}
