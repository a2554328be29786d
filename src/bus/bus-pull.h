/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* PullImage (docs/api.md): an image pulled through the host policy's registries, its
 * progress signalled to the caller alone (PullProgress, a unicast like every signal of
 * the service: bus-signal.h) while a worker pulls. */

#include <systemd/sd-bus.h>

#include "operation-verbs.h"

/* The method handler: PullImage(s reference, a{sv} options) → s image_id. */
int bus_pull_method(sd_bus_message *msg, void *userdata, sd_bus_error *error);

/* The verb's work on a worker and its reply (operation-verbs.c's table). */
int bus_pull_run(Operation *o, SbxLifecycle *l);
int bus_pull_reply(Operation *o, sd_bus_message *reply);

/* Once on a worker: the worker's progress is signalled from the main thread every
 * 200 ms while it changes (the timer goes with the operation). */
void bus_pull_watch(Operation *o);
