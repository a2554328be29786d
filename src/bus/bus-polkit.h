/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Asynchronous polkit CheckAuthorization for a bus caller (docs/security.md): subject
 * system-bus-name = the caller's unique name; interactivity from the call's
 * ALLOW_INTERACTIVE_AUTHORIZATION header flag. */

#include <systemd/sd-bus.h>

#include "error.h"

/* A hung polkitd costs a caller at most this long (then AuthorizationTimedOut, which
 * a caller may retry): below the 25 s every D-Bus client waits by default. polkitd
 * answers one check at a time, 0.6 ms each on an idle machine and 3.4 ms (57 ms at
 * worst) with two busy loops on two cores (docs/security.md): a 5 s limit was reached
 * by a queue of ~1500 checks during a flood of callers. polkitd 122 (Debian 12) itself
 * sometimes answers only when its own 15 s limit for a rules script runs out — a lost
 * wakeup in its duktape runner, measured 1 in 20,000 checks under CPU load, after which
 * it answers correctly — so the limit sits above that: 20 s.
 * An interactive check waits for a person: 5 minutes. */
#define SBX_POLKIT_TIMEOUT_USEC (20ULL * 1000000ULL)

#define SBX_POLKIT_ACTION_INSPECT       "org.xagent.sandbox1.inspect"
#define SBX_POLKIT_ACTION_CREATE        "org.xagent.sandbox1.create"
#define SBX_POLKIT_ACTION_MANAGE        "org.xagent.sandbox1.manage"
#define SBX_POLKIT_ACTION_MANAGE_OTHERS "org.xagent.sandbox1.manage-others"
#define SBX_POLKIT_ACTION_EXEC          "org.xagent.sandbox1.exec"
#define SBX_POLKIT_ACTION_EXEC_OTHERS   "org.xagent.sandbox1.exec-others"
#define SBX_POLKIT_ACTION_PULL          "org.xagent.sandbox1.pull"

/* The answer: 0 = authorized; else the error (AccessDenied,
 * InteractiveAuthorizationRequired, AuthorizationTimedOut) is in *error. polkit
 * unreachable = denied; polkit not answering in time = AuthorizationTimedOut. */
typedef void (*SbxPolkitCallback)(int r, SbxError *error, void *userdata);

/* details: NULL-terminated key, value, key, value, … (may be NULL). interactive:
 * whether polkit may ask the user (normally the call's header flag); without it a
 * challenge is answered with InteractiveAuthorizationRequired. The callback runs
 * exactly once, unless *ret_slot is unreferenced first (then never). */
int sbx_polkit_check_async(sd_bus *bus, const char *sender, const char *action, const char *const *details,
                           bool interactive, uint64_t timeout_usec, SbxPolkitCallback callback, void *userdata,
                           sd_bus_slot **ret_slot);
