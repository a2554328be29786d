/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "error.h"

static const struct {
        const char *name;
        int errnum;
} kinds[_SBX_ERROR_KIND_MAX] = {
        [SBX_ERROR_NONE]                      = { "None",                             0             },
        [SBX_ERROR_INVALID_ARGS]              = { "InvalidArgs",                      EINVAL        },
        [SBX_ERROR_ACCESS_DENIED]             = { "AccessDenied",                     EACCES        },
        [SBX_ERROR_INTERACTIVE_AUTH_REQUIRED] = { "InteractiveAuthorizationRequired", EBADR         },
        [SBX_ERROR_LIMITS_EXCEEDED]           = { "LimitsExceeded",                   ENOBUFS       },
        [SBX_ERROR_NO_SUCH_SANDBOX]           = { "NoSuchSandbox",                    ENXIO         },
        [SBX_ERROR_SANDBOX_EXISTS]            = { "SandboxExists",                    EEXIST        },
        [SBX_ERROR_RUNTIME_CONFLICT]          = { "RuntimeConflict",                  EADDRINUSE    },
        [SBX_ERROR_RECOVERY_REQUIRED]         = { "RecoveryRequired",                 ENOTRECOVERABLE },
        [SBX_ERROR_NO_SUCH_SNAPSHOT]          = { "NoSuchSnapshot",                   ENOENT        },
        [SBX_ERROR_SNAPSHOT_EXISTS]           = { "SnapshotExists",                   ENOTEMPTY     },
        [SBX_ERROR_POLICY_VIOLATION]          = { "PolicyViolation",                  EPERM         },
        [SBX_ERROR_BACKEND_UNAVAILABLE]       = { "BackendUnavailable",               EHOSTDOWN     },
        [SBX_ERROR_BACKEND_ERROR]             = { "BackendError",                     EPROTO        },
        [SBX_ERROR_IO]                        = { "IOError",                          EIO           },
};

int sbx_error_errno(SbxErrorKind kind) {
        if (kind <= SBX_ERROR_NONE || kind >= _SBX_ERROR_KIND_MAX)
                return EIO;
        return kinds[kind].errnum;
}

const char *sbx_error_kind_name(SbxErrorKind kind) {
        if (kind < 0 || kind >= _SBX_ERROR_KIND_MAX)
                return "Unknown";
        return kinds[kind].name;
}

int sbx_error_setv(SbxError *e, SbxErrorKind kind, const char *fmt, va_list ap) {
        if (e && e->kind == SBX_ERROR_NONE) {
                e->kind = kind;
                if (vasprintf(&e->message, fmt, ap) < 0)
                        e->message = NULL;
        }
        return -sbx_error_errno(kind);
}

int sbx_error_set(SbxError *e, SbxErrorKind kind, const char *fmt, ...) {
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = sbx_error_setv(e, kind, fmt, ap);
        va_end(ap);
        return r;
}

void sbx_error_free(SbxError *e) {
        if (!e)
                return;
        free(e->message);
        *e = SBX_ERROR_NULL;
}
