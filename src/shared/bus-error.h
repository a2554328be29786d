/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The service's D-Bus errors (docs/api.md), made from the one list of kinds in
 * error.h. */

#include <systemd/sd-bus.h>

#include "error.h"

/* For sd_bus_error_add_map(): each name with the errno of its kind, so sd-bus
 * clients (xagent-sandboxctl among them) get sensible -errno values. */
extern const sd_bus_error_map sbx_bus_error_map[];

/* Fills ret from e (or, when e carries nothing, from the errno r) and returns
 * the negative errno to hand back to sd-bus. */
int sbx_bus_error_from(sd_bus_error *ret, const SbxError *e, int r);
