/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A typed error for every layer: a kind (which the bus front end maps to a D-Bus
 * error name) and a human message that names what was wrong. Functions return a
 * negative errno and, when given a non-NULL SbxError, fill it in. Pure C: no
 * libsystemd here, so the core stays free of I/O dependencies. */

#include <stdarg.h>

#include "macro.h"

typedef enum SbxErrorKind {
        SBX_ERROR_NONE = 0,
        SBX_ERROR_INVALID_ARGS,         /* org.freedesktop.DBus.Error.InvalidArgs */
        SBX_ERROR_ACCESS_DENIED,        /* org.freedesktop.DBus.Error.AccessDenied */
        SBX_ERROR_INTERACTIVE_AUTH_REQUIRED,
        SBX_ERROR_LIMITS_EXCEEDED,      /* org.freedesktop.DBus.Error.LimitsExceeded */
        SBX_ERROR_NO_SUCH_SANDBOX,
        SBX_ERROR_SANDBOX_EXISTS,
        SBX_ERROR_RUNTIME_CONFLICT,
        SBX_ERROR_RECOVERY_REQUIRED,
        SBX_ERROR_NO_SUCH_SNAPSHOT,
        SBX_ERROR_SNAPSHOT_EXISTS,
        SBX_ERROR_POLICY_VIOLATION,
        SBX_ERROR_BACKEND_UNAVAILABLE,
        SBX_ERROR_BACKEND_ERROR,
        SBX_ERROR_IO,                   /* local I/O: files, the store */
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

static inline bool sbx_error_is_set(const SbxError *e) {
        return e && e->kind != SBX_ERROR_NONE;
}

void sbx_error_free(SbxError *e);
