/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The tool table and the tools that are one bus call (mcp-tools.c). */

#include "mcp-server.h"

/* The operations (mcp-tools.c), each one bus call or two; and the tools a model sees
 * (mcp-facade.c), which route to them. */
extern const Tool mcp_tools[];
extern const size_t mcp_n_tools;
extern const Tool mcp_agent_tools[];
extern const size_t mcp_n_agent_tools;
/* The leases the session holds, closed. */
void mcp_leases_done(Server *s);
const Tool *mcp_tool_find(const char *name);
int mcp_tools_list(json_object **ret);                  /* the tools/list "tools" array */
/* Checks args against the tool's inputSchema's property names and required list;
 * NULL when fine, else a message naming the argument (to free). */
char *mcp_tool_check_args(const Tool *t, json_object *args);
