/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <grp.h>

#include "owner-info.h"

int sbx_owner_info_lookup(uid_t uid, SbxOwnerInfo *info, SbxError *error) {
        struct passwd *result = NULL;
        int n = (int) ELEMENTSOF(info->groups);

        if (getpwuid_r(uid, &info->pw, info->buf, sizeof info->buf, &result) != 0 || !result)
                return sbx_error_set(error, SBX_ERROR_ACCESS_DENIED, "uid %u is not in the user database",
                                     (unsigned) uid);
        if (getgrouplist(result->pw_name, result->pw_gid, info->groups, &n) < 0)
                n = 0;
        info->owner = (SbxOwner) {
                .uid = uid,
                .gid = result->pw_gid,
                .name = result->pw_name,
                .home = result->pw_dir,
                .groups = info->groups,
                .n_groups = (size_t) n,
        };
        return 0;
}
