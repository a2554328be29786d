/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The tool table and the tools that are one bus call (mcp-tools.c). */

#include "mcp-server.h"

/* The tools (mcp-tools.c). */
extern const Tool mcp_tools[];
extern const size_t mcp_n_tools;
const Tool *mcp_tool_find(const char *name);
int mcp_tools_list(json_object **ret);                  /* the tools/list "tools" array */
/* Checks args against the tool's inputSchema's property names and required list;
 * NULL when fine, else a message naming the argument (to free). */
char *mcp_tool_check_args(const Tool *t, json_object *args);
