/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The process tools (mcp-procs.c): detached processes. */

#include "mcp-server.h"

int process_start_start(Call *c);
int process_start_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int process_list_start(Call *c);
int process_list_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int process_output_start(Call *c);
int process_output_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int process_kill_start(Call *c);
int process_kill_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
