/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* PullImage (docs/api.md): an image pulled through the host policy's registries, its
 * progress signalled to the caller alone (PullProgress, a unicast like every signal of
 * the service: bus-signal.h) while a worker pulls. */

#include <systemd/sd-bus.h>

#include "operation-verbs.h"

/* Once on a worker: the worker's progress (o->pull.done, total) is signalled
 * from the main thread every 200 ms while it changes (the timer goes with the
 * operation). */
void bus_pull_watch(Operation *o);
/* PullProgress now, if the numbers moved since the last (before the reply). */
void bus_pull_flush(Operation *o);
