/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The file tools (mcp-files.c). */

#include "mcp-server.h"

int file_read_start(Call *c);
int file_read_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int file_write_start(Call *c);
int file_write_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int file_list_start(Call *c);
int file_list_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int file_remove_start(Call *c);
int file_remove_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
