/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "bus-error.h"

static const char *const names[_SBX_ERROR_KIND_MAX] = {
        [SBX_ERROR_INVALID_ARGS]              = SD_BUS_ERROR_INVALID_ARGS,
        [SBX_ERROR_ACCESS_DENIED]             = SD_BUS_ERROR_ACCESS_DENIED,
        [SBX_ERROR_INTERACTIVE_AUTH_REQUIRED] = SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
        [SBX_ERROR_LIMITS_EXCEEDED]           = SD_BUS_ERROR_LIMITS_EXCEEDED,
        [SBX_ERROR_NO_SUCH_SANDBOX]           = SBX_BUS_ERROR_NO_SUCH_SANDBOX,
        [SBX_ERROR_SANDBOX_EXISTS]            = SBX_BUS_ERROR_SANDBOX_EXISTS,
        [SBX_ERROR_RUNTIME_CONFLICT]          = SBX_BUS_ERROR_RUNTIME_CONFLICT,
        [SBX_ERROR_RECOVERY_REQUIRED]         = SBX_BUS_ERROR_RECOVERY_REQUIRED,
        [SBX_ERROR_NO_SUCH_SNAPSHOT]          = SBX_BUS_ERROR_NO_SUCH_SNAPSHOT,
        [SBX_ERROR_SNAPSHOT_EXISTS]           = SBX_BUS_ERROR_SNAPSHOT_EXISTS,
        [SBX_ERROR_POLICY_VIOLATION]          = SBX_BUS_ERROR_POLICY_VIOLATION,
        [SBX_ERROR_BACKEND_UNAVAILABLE]       = SBX_BUS_ERROR_BACKEND_UNAVAILABLE,
        [SBX_ERROR_BACKEND_ERROR]             = SBX_BUS_ERROR_BACKEND_ERROR,
        [SBX_ERROR_IO]                        = SD_BUS_ERROR_IO_ERROR,
};


const sd_bus_error_map sbx_bus_error_map[] = {
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_NO_SUCH_SANDBOX, ENXIO),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_SANDBOX_EXISTS, EEXIST),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_RUNTIME_CONFLICT, EADDRINUSE),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_RECOVERY_REQUIRED, ENOTRECOVERABLE),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_NO_SUCH_SNAPSHOT, ENOENT),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_SNAPSHOT_EXISTS, ENOTEMPTY),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_POLICY_VIOLATION, EPERM),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_BACKEND_UNAVAILABLE, EHOSTDOWN),
        SD_BUS_ERROR_MAP(SBX_BUS_ERROR_BACKEND_ERROR, EPROTO),
        SD_BUS_ERROR_MAP_END
};

const char *sbx_bus_error_name(SbxErrorKind kind) {
        if (kind <= SBX_ERROR_NONE || kind >= _SBX_ERROR_KIND_MAX)
                return SD_BUS_ERROR_FAILED;
        return names[kind];
}

int sbx_bus_error_from(sd_bus_error *ret, const SbxError *e, int r) {
        if (sbx_error_is_set(e))
                return sd_bus_error_set(ret, sbx_bus_error_name(e->kind), e->message ?: sbx_error_kind_name(e->kind));
        return sd_bus_error_set_errno(ret, r < 0 ? r : -EIO);
}
