/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A typed error for every layer: a kind (which the bus front end maps to a D-Bus
 * error name) and a human message that names what was wrong. Functions return a
 * negative errno and, when given a non-NULL SbxError, fill it in. Pure C: no
 * libsystemd here, so the core stays free of I/O dependencies. */

#include <errno.h>
#include <stdarg.h>

#include "macro.h"

#define SBX_BUS_ERROR_PREFIX "org.xagent.Sandbox1.Error."
#define SBX_BUS_DBUS_PREFIX "org.freedesktop.DBus.Error."

/* Every kind, once: its name, the errno that goes with it, the D-Bus error the bus
 * front end sends for it, and the errno sd-bus clients get back for that D-Bus
 * name (sd_bus_error_map). The enum, the names, the errnos and the
 * D-Bus map are all made from this one list, so they cannot disagree.
 *
 * DockerNotFound and DockerConflict are Docker's 404 and 409: results that only
 * the caller can name (NoSuchSandbox, NoSuchSnapshot, SandboxExists, success for
 * an idempotent delete…). Passed on unnamed they are sent as BackendError. */
#define SBX_ERROR_KINDS(X)                                                                                     \
        X(INVALID_ARGS,              "InvalidArgs",                      EINVAL,          SBX_BUS_DBUS_PREFIX "InvalidArgs", EINVAL) \
        X(ACCESS_DENIED,             "AccessDenied",                     EACCES,          SBX_BUS_DBUS_PREFIX "AccessDenied", EACCES) \
        X(INTERACTIVE_AUTH_REQUIRED, "InteractiveAuthorizationRequired", EBADR,           SBX_BUS_DBUS_PREFIX "InteractiveAuthorizationRequired", EBADR) \
        X(LIMITS_EXCEEDED,           "LimitsExceeded",                   ENOBUFS,         SBX_BUS_DBUS_PREFIX "LimitsExceeded", ENOBUFS) \
        X(NO_SUCH_SANDBOX,           "NoSuchSandbox",                    ENXIO,           SBX_BUS_ERROR_PREFIX "NoSuchSandbox", ENXIO) \
        X(SANDBOX_EXISTS,            "SandboxExists",                    EEXIST,          SBX_BUS_ERROR_PREFIX "SandboxExists", EEXIST) \
        X(RUNTIME_CONFLICT,          "RuntimeConflict",                  EADDRINUSE,      SBX_BUS_ERROR_PREFIX "RuntimeConflict", EADDRINUSE) \
        X(RECOVERY_REQUIRED,         "RecoveryRequired",                 ENOTRECOVERABLE, SBX_BUS_ERROR_PREFIX "RecoveryRequired", ENOTRECOVERABLE) \
        X(NO_SUCH_SNAPSHOT,          "NoSuchSnapshot",                   ENOENT,          SBX_BUS_ERROR_PREFIX "NoSuchSnapshot", ENOENT) \
        X(SNAPSHOT_EXISTS,           "SnapshotExists",                   ENOTEMPTY,       SBX_BUS_ERROR_PREFIX "SnapshotExists", ENOTEMPTY) \
        X(POLICY_VIOLATION,          "PolicyViolation",                  EPERM,           SBX_BUS_ERROR_PREFIX "PolicyViolation", EPERM) \
        X(BACKEND_UNAVAILABLE,       "BackendUnavailable",               EHOSTDOWN,       SBX_BUS_ERROR_PREFIX "BackendUnavailable", EHOSTDOWN) \
        X(BACKEND_ERROR,             "BackendError",                     EPROTO,          SBX_BUS_ERROR_PREFIX "BackendError", EPROTO) \
        X(NOT_RUNNING,               "NotRunning",                       ESRCH,           SBX_BUS_ERROR_PREFIX "NotRunning", ESRCH) \
        X(TIMED_OUT,                 "TimedOut",                         ETIME,           SBX_BUS_ERROR_PREFIX "TimedOut", ETIME) \
        X(STORE_UNAVAILABLE,         "StoreUnavailable",                 EUCLEAN,         SBX_BUS_ERROR_PREFIX "StoreUnavailable", EUCLEAN) \
        X(AUTHORIZATION_TIMED_OUT,   "AuthorizationTimedOut",            ETIMEDOUT,       SBX_BUS_ERROR_PREFIX "AuthorizationTimedOut", ETIMEDOUT) \
        X(SANDBOX_BUSY,              "SandboxBusy",                      EUSERS,          SBX_BUS_ERROR_PREFIX "SandboxBusy", EBUSY) \
        X(NO_SUCH_IMAGE,             "NoSuchImage",                      ENOMEDIUM,       SBX_BUS_ERROR_PREFIX "NoSuchImage", ENOMEDIUM) \
        X(REGISTRY_UNTRUSTED,        "RegistryUntrusted",                EKEYREJECTED,    SBX_BUS_ERROR_PREFIX "RegistryUntrusted", EKEYREJECTED) \
        X(DOCKER_NOT_FOUND,          "DockerNotFound",                   ENODATA,         SBX_BUS_ERROR_PREFIX "BackendError", EPROTO) \
        X(DOCKER_CONFLICT,           "DockerConflict",                   EBUSY,           SBX_BUS_ERROR_PREFIX "BackendError", EPROTO) \
        X(IO,                        "IOError",                          EIO,             SBX_BUS_DBUS_PREFIX "IOError", EIO)

typedef enum SbxErrorKind {
        SBX_ERROR_NONE = 0,
#define SBX_ERROR_ENUM(kind, name, errnum, bus_name, bus_errnum) SBX_ERROR_##kind,
        SBX_ERROR_KINDS(SBX_ERROR_ENUM)
#undef SBX_ERROR_ENUM
        _SBX_ERROR_KIND_MAX,
} SbxErrorKind;

typedef struct SbxError {
        SbxErrorKind kind;
        char *message;
} SbxError;

#define SBX_ERROR_NULL ((SbxError) { .kind = SBX_ERROR_NONE, .message = NULL })

/* Records kind and message in *e (if e is non-NULL and not yet set: the first
 * error wins) and returns the negative errno that goes with the kind. */
int sbx_error_set(SbxError *e, SbxErrorKind kind, const char *fmt, ...) _printf_(3, 4);
int sbx_error_setv(SbxError *e, SbxErrorKind kind, const char *fmt, va_list ap) _printf_(3, 0);

int sbx_error_errno(SbxErrorKind kind) _pure_;
/* The short name of a kind ("InvalidArgs", "NoSuchSandbox", …). */
const char *sbx_error_kind_name(SbxErrorKind kind) _pure_;
/* The D-Bus error name sent for a kind. */
const char *sbx_error_bus_name(SbxErrorKind kind) _pure_;

static inline bool sbx_error_is_set(const SbxError *e) {
        return e && e->kind != SBX_ERROR_NONE;
}

/* The error recorded is of this kind: how callers branch on a result. */
static inline bool sbx_error_is(const SbxError *e, SbxErrorKind kind) {
        return e && e->kind == kind;
}

void sbx_error_free(SbxError *e);

/* Hands src over to dst (first error wins: if dst is NULL or already set, src is
 * freed); src is left empty. */
void sbx_error_move(SbxError *dst, SbxError *src);
