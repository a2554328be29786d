/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "error.h"

static const struct {
        const char *name;
        int errnum;
        const char *bus_name;
} kinds[_SBX_ERROR_KIND_MAX] = {
        [SBX_ERROR_NONE] = { "None", 0, NULL },
#define SBX_ERROR_ENTRY(kind, n, e, b, be) [SBX_ERROR_##kind] = { n, e, b },
        SBX_ERROR_KINDS(SBX_ERROR_ENTRY)
#undef SBX_ERROR_ENTRY
};

int sbx_error_errno(SbxErrorKind kind) {
        if (kind <= SBX_ERROR_NONE || kind >= _SBX_ERROR_KIND_MAX)
                return EIO;
        return kinds[kind].errnum;
}

const char *sbx_error_bus_name(SbxErrorKind kind) {
        if (kind <= SBX_ERROR_NONE || kind >= _SBX_ERROR_KIND_MAX)
                return "org.freedesktop.DBus.Error.Failed";
        return kinds[kind].bus_name;
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

void sbx_error_move(SbxError *dst, SbxError *src) {
        if (dst && !sbx_error_is_set(dst)) {
                *dst = *src;
                *src = SBX_ERROR_NULL;
        } else
                sbx_error_free(src);
}
