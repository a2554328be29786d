/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* ListSandboxes' reply, made from what the list found; its effect on the objects after
 * the reply is out (docs/lifecycle.md, "Start-up, reconciliation and Docker's events"). */

#include <systemd/sd-bus.h>

#include "manager-state.h"

/* Appends the entries of *list that uid may see (NULL: all) to reply; then takes the
 * list over and applies it to m's registry on the next turn of the event loop, ahead
 * of any other source (at once when that cannot be arranged). */
int listing_reply(Manager *m, SbxSandbox ***list, size_t *n, const uid_t *uid, sd_bus_message *reply);
