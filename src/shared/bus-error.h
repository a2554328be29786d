/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The service's D-Bus errors (docs/api.md), made from the one list of kinds in
 * error.h. */

#include <systemd/sd-bus.h>

#include "error.h"

#define SBX_BUS_ERROR_NO_SUCH_SANDBOX   SBX_BUS_ERROR_PREFIX "NoSuchSandbox"
#define SBX_BUS_ERROR_SANDBOX_EXISTS    SBX_BUS_ERROR_PREFIX "SandboxExists"
#define SBX_BUS_ERROR_RUNTIME_CONFLICT  SBX_BUS_ERROR_PREFIX "RuntimeConflict"
#define SBX_BUS_ERROR_RECOVERY_REQUIRED SBX_BUS_ERROR_PREFIX "RecoveryRequired"
#define SBX_BUS_ERROR_NO_SUCH_SNAPSHOT  SBX_BUS_ERROR_PREFIX "NoSuchSnapshot"
#define SBX_BUS_ERROR_SNAPSHOT_EXISTS   SBX_BUS_ERROR_PREFIX "SnapshotExists"
#define SBX_BUS_ERROR_POLICY_VIOLATION  SBX_BUS_ERROR_PREFIX "PolicyViolation"
#define SBX_BUS_ERROR_BACKEND_UNAVAILABLE SBX_BUS_ERROR_PREFIX "BackendUnavailable"
#define SBX_BUS_ERROR_BACKEND_ERROR     SBX_BUS_ERROR_PREFIX "BackendError"

/* For sd_bus_error_add_map(): each name with the errno of its kind, so sd-bus
 * clients (xagent-sandboxctl among them) get sensible -errno values. */
extern const sd_bus_error_map sbx_bus_error_map[];

/* The D-Bus error name of a kind. */
const char *sbx_bus_error_name(SbxErrorKind kind) _pure_;

/* Fills ret from e (or, when e carries nothing, from the errno r) and returns
 * the negative errno to hand back to sd-bus. */
int sbx_bus_error_from(sd_bus_error *ret, const SbxError *e, int r);
