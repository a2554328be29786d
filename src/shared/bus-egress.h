/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A sandbox's egress as a{sv} (docs/api.md, "Egress"): mode s ("default" | "none" |
 * "allowlist") and allow as (CIDR[:PORT[/tcp|udp]] or NAME[:PORT]); read by the
 * daemon (the create and ensure option "egress", SetSandboxEgress), written by the
 * client and by the inspection. */

#include <stdbool.h>
#include <systemd/sd-bus.h>

#include "egress.h"
#include "error.h"
#include "policy.h"

/* The a{sv} at m's position (inside a variant for an option's value: enter it first).
 * InvalidArgs naming an unknown key, a wrong type or an entry that is neither form. */
int sbx_bus_read_egress(sd_bus_message *m, SbxEgress *ret, SbxError *error);
/* The option "egress": its variant next. */
int sbx_bus_read_egress_entry(sd_bus_message *m, const char *key, SbxEgress *ret, bool *ret_given, SbxError *error);

/* Whether the host policy admits e for a sandbox (network_isolated: it has none to
 * open): egress.h's check, and a remote engine, where only the default is possible
 * (PolicyViolation naming why). */
int sbx_egress_admit(const SbxPolicy *p, const SbxEgress *e, bool network_isolated, SbxError *error);

/* GetPolicy's "egress" entry: default, always_deny, allowed, max_rules, names, resolvers. */
int sbx_bus_append_policy_egress(sd_bus_message *m, const SbxPolicyEgress *p);

/* mode and allow as an a{sv} value (no variant around it). */
int sbx_bus_append_egress(sd_bus_message *m, const char *mode, char *const *allow);
