/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec arguments of the tools (mcp-spec.c). */

#include "mcp-server.h"

/* The spec arguments of create/ensure/verify appended as a{sv}. */
int append_spec_args(sd_bus_message *m, json_object *args, char **error);
/* SetSandboxLifetimes' a{sv}: the lifetime arguments given (1), none (0: nothing
 * appended), or -EINVAL with *error naming the bad one. */
int append_lifetime_options(sd_bus_message *m, json_object *args, char **error);
/* The options a{sv} of CreateSandbox or ClaimSandbox (ensure false) or EnsureSandbox:
 * on_mismatch and stop_timeout (ensure's), name_prefix (a claim's), labels, and the
 * lifetimes idle_timeout, expire_after and on_idle, each only when given. A wrong
 * argument: -EINVAL, *error naming it. */
int append_make_options(sd_bus_message *m, json_object *args, bool ensure, char **error);
/* The argument "egress" ({mode, allow}) as the egress a{sv} (no variant around it); a
 * wrong one: -EINVAL, *error naming it. */
int append_egress_value(sd_bus_message *m, json_object *egress, char **error);
/* One a{sv} entry "labels" a{ss} of a JSON object of strings. */
int append_labels_entry(sd_bus_message *m, json_object *labels, char **error);
