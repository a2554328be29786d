/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec and options as a{sv} (DESIGN §3, §4). Every unknown key, wrong variant
 * type, repeated key or bad value is InvalidArgs naming the key. */

#include <systemd/sd-bus.h>

#include "spec.h"

/* Reads an a{sv} spec into a raw spec (see spec-json.h for what "raw" means). */
int sbx_bus_read_spec(sd_bus_message *m, SbxSpec **ret, SbxError *error);

/* Create options: none are defined yet, so any key is refused. */
int sbx_bus_read_create_options(sd_bus_message *m, SbxError *error);

/* Stop options: "timeout" (u, seconds before SIGKILL). */
#define SBX_STOP_TIMEOUT_DEFAULT 10U
#define SBX_STOP_TIMEOUT_MAX 3600U
int sbx_bus_read_stop_options(sd_bus_message *m, unsigned *ret_timeout, SbxError *error);
