/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* What marks a container of the service's that is no sandbox (yet): a create's
 * provisional name (PENDING_SUFFIX, docs/lifecycle.md) and a warm pool's member
 * ("Warm pools"): its name's suffix, which everyone who must pass members by asks
 * (sandbox.c, intent.c, reconcile.c, pool.c), and the policy's digest label that
 * create.c writes on one. */

#include <errno.h>
#include <string.h>

#include "labels.h"
#include "lifecycle-internal.h"

bool lc_has_suffix(const char *s, const char *suffix) {
        size_t n = strlen(s), m = strlen(suffix);

        return n >= m && streq(s + n - m, suffix);
}

bool lc_is_pool_name(const char *container_name) {
        return container_name && lc_has_suffix(container_name, POOL_SUFFIX);
}

bool lc_listed_pool_member(json_object *c) {
        json_object *names = json_object_object_get(c, "Names");

        if (!json_object_is_type(names, json_type_array))
                return false;
        for (size_t i = 0; i < json_object_array_length(names); i++)
                if (lc_is_pool_name(json_object_get_string(json_object_array_get_idx(names, i))))
                        return true;
        return false;
}

int lc_pool_label(SbxLifecycle *l, json_object *labels) {
        return json_object_object_add(labels, SBX_LABEL_POOL, json_object_new_string(l->policy->digest)) < 0 ? -ENOMEM
                                                                                                         : 0;
}
