/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The volume pins (lifecycle-internal.h): each volume a create or start mounts, held
 * open from the root that admits it downward, so that what was checked is what
 * Docker mounts (docs/security.md). */

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "lifecycle-internal.h"
#include "volume-check.h"

void lc_pins_done(Pins *p) {
        for (size_t i = 0; i < p->n; i++)
                if (p->fds[i] >= 0)
                        (void) close(p->fds[i]);
        free(p->fds);
        *p = (Pins) {};
}

/* Each volume on the file system, from the root that admits it downward, and the
 * working directory where it lies inside one. */
int lc_pin_volumes(SbxLifecycle *l, const SbxSpec *spec, const SbxOwner *owner, Pins *p, SbxError *error) {
        const char *rest;
        ssize_t wd;
        int r;

        p->fds = calloc(spec->n_volumes + 1, sizeof(int));
        if (!p->fds)
                return -ENOMEM;
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *v = &spec->volumes[i];
                _cleanup_free_ char *root = NULL;

                p->fds[i] = -EBADF;
                p->n++;
                if ((r = sbx_policy_find_root(l->policy, owner, v->host, v->mode, &root, error)) < 0)
                        return r;
                p->fds[i] = sbx_volume_open_checked(root, v->host, v->mode, owner->uid, owner->gid, owner->groups,
                                                    owner->n_groups, error);
                if (p->fds[i] < 0)
                        return p->fds[i];
        }
        wd = sbx_spec_working_dir_volume(spec, &rest);
        if (wd >= 0)
                return sbx_volume_check_working_dir(p->fds[wd], spec->volumes[wd].host, rest, spec->working_dir,
                                                    error);
        return 0;
}
