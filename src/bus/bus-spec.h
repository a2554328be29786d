/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec and options as a{sv} (DESIGN §3, §4). Every unknown key, wrong variant
 * type, repeated key or bad value is InvalidArgs naming the key. */

#include <systemd/sd-bus.h>

#include "spec.h"

/* Reads an a{sv} spec into a raw spec (see spec-json.h for what "raw" means). */
int sbx_bus_read_spec(sd_bus_message *m, SbxSpec **ret, SbxError *error);

/* Writes a raw spec as the a{sv} that sbx_bus_read_spec() reads back (for clients).
 * Only what is set goes out: no image for an image template without one, no
 * working_dir when NULL, no cpus/memory when 0, no empty env/volumes/ports, no
 * network_isolated when false — the daemon's defaults apply to what is missing.
 * A number outside its D-Bus type is InvalidArgs naming the key. */
int sbx_bus_append_spec(sd_bus_message *m, const SbxSpec *spec, SbxError *error);

/* Create options: none are defined yet, so any key is refused. */
int sbx_bus_read_create_options(sd_bus_message *m, SbxError *error);

/* Stop options: "timeout" (u, seconds before SIGKILL). */
#define SBX_STOP_TIMEOUT_DEFAULT 10U
#define SBX_STOP_TIMEOUT_MAX 3600U
int sbx_bus_read_stop_options(sd_bus_message *m, unsigned *ret_timeout, SbxError *error);
