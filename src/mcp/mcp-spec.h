/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec arguments of the tools (mcp-spec.c). */

#include "mcp-server.h"

/* The spec arguments of create/ensure/verify appended as a{sv}. */
int append_spec_args(sd_bus_message *m, json_object *args, char **error);
