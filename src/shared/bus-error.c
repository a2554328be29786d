/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "bus-error.h"

#define SBX_ERROR_MAP_ENTRY(kind, name, errnum, bus_name, bus_errnum) SD_BUS_ERROR_MAP(bus_name, bus_errnum),

const sd_bus_error_map sbx_bus_error_map[] = {
        SBX_ERROR_KINDS(SBX_ERROR_MAP_ENTRY)
        SD_BUS_ERROR_MAP_END
};

int sbx_bus_error_from(sd_bus_error *ret, const SbxError *e, int r) {
        if (sbx_error_is_set(e))
                return sd_bus_error_set(ret, sbx_error_bus_name(e->kind), e->message ?: sbx_error_kind_name(e->kind));
        return sd_bus_error_set_errno(ret, r < 0 ? r : -EIO);
}
