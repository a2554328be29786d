/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec and options as a{sv} (docs/api.md), read at the contract level (see
 * spec.h): what the bus types can carry; create's admissibility rules come after
 * (sbx_spec_finalize). Every unknown key, wrong variant type, repeated key or bad
 * value is InvalidArgs naming the key. An integer value may come as any D-Bus
 * integer type (y n q i u x t; python3-dbus and GLib send 'i' or 'x' for a plain
 * int), and ports as a(XY) of any integer types, each range-checked. Lists hold
 * at most SBX_MAX_INPUT_ENTRIES entries; env names must be unique (a D-Bus dict
 * with a repeated key is malformed). */

#include <systemd/sd-bus.h>

#include "spec.h"

/* Reads an a{sv} spec into a raw spec (see spec-json.h for what "raw" means). */
int sbx_bus_read_spec(sd_bus_message *m, SbxSpec **ret, SbxError *error);

/* Writes a raw spec as the a{sv} that sbx_bus_read_spec() reads back (for clients).
 * Only what is set goes out: no image for an image template without one, no
 * working_dir when NULL, no cpus/memory when 0, no empty env/volumes/ports, no
 * network_isolated when false — the daemon's defaults apply to what is missing.
 * Numbers go as the documented 'u' and a(qq) when they fit, else as 'x' / a(xx). */
int sbx_bus_append_spec(sd_bus_message *m, const SbxSpec *spec, SbxError *error);

/* Create options: none are defined yet, so any key is refused. */
int sbx_bus_read_create_options(sd_bus_message *m, SbxError *error);

/* Stop options: "timeout" (u, or any integer type: seconds before SIGKILL, 0–3600). */
#define SBX_STOP_TIMEOUT_DEFAULT 10U
#define SBX_STOP_TIMEOUT_MAX 3600U
int sbx_bus_read_stop_options(sd_bus_message *m, unsigned *ret_timeout, SbxError *error);
