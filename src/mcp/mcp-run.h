/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The run tool (mcp-run.c): captured through ExecSandbox, or streamed through
 * StartExec as progress notifications. */

#include "mcp-server.h"

int mcp_bus_setup(Server *s);                           /* the exec objects' Exited signal */
int run_start(Call *c);
int run_on_reply(Call *c, sd_bus_message *reply, json_object **ret);
int run_on_error(Call *c, const sd_bus_error *e, json_object **ret);
char *run_render(json_object *structured);
/* The argv of a command argument (a string for /bin/sh -c, or an array), and an
 * "env" a{sv} entry of an object of strings; -EINVAL with *error naming it. */
int run_append_argv(sd_bus_message *m, json_object *command, char **error);
int run_append_env(sd_bus_message *m, json_object *env, char **error);
