/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The service's signals tell whose sandboxes exist, their states and their execs'
 * exit statuses: what only their owner (and root) may read. So none is broadcast:
 * each is sent as a unicast, one copy per connection that may read it — every
 * connection the service knows (from its calls: callers.h) of the object's
 * owner, of the other uid given (an exec's caller), and of root. A connection that
 * has never called the service gets nothing; a client subscribes by calling once
 * (GetManagedObjects, an ObjectManager client's first call, does; the cache keeps at
 * most 4096 connections, later ones are not told). Holders of
 * manage-others are not sent other users' signals: telling them apart would mean
 * asking polkit about every connection for every signal; they list instead. */

#include <systemd/sd-bus.h>

#include "callers.h"

/* No uid: matches no connection (a sandbox without a valid owner: root only). */
#define BUS_SIGNAL_NO_UID ((uid_t) -1)

/* Appends the signal's arguments. */
typedef int (*BusSignalAppend)(sd_bus_message *m, void *userdata);

/* Sends the signal path/interface/member to each connection of uid owner, also or 0;
 * errors (a connection gone meanwhile) are ignored. */
void bus_signal_send(sd_bus *bus, CallerCache *callers, uid_t owner, uid_t also, const char *path,
                     const char *interface, const char *member, BusSignalAppend append, void *userdata);
