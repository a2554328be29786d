/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* An owner as the user database has it now: primary group, name, home and
 * supplementary groups (for the volume roots and the file-system checks). */

#include <pwd.h>

#include "policy.h"

typedef struct SbxOwnerInfo {
        SbxOwner owner;
        struct passwd pw;
        char buf[4096];
        gid_t groups[256];
} SbxOwnerInfo;

/* AccessDenied when uid is not in the user database. */
int sbx_owner_info_lookup(uid_t uid, SbxOwnerInfo *info, SbxError *error);
