/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The copies (CopyToSandbox, CopyFromSandbox; declared in exec.h): the service's own
 * program unpacks or packs a tar stream as the sandbox's owner, through one exec. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "channel.h"
#include "exec.h"
#include "lifecycle-internal.h"
#include "tar-filter.h"
#include "time-util.h"

typedef struct CopyFilter {
        SbxTarFilter *filter;
        SbxError error;
        uint64_t budget;        /* bytes the sandbox may still take through the service (max_disk_mib) */
        uint64_t passed;        /* archive bytes passed on so far */
        int64_t max_disk_mib;
} CopyFilter;

static int copy_filter(void *userdata, const char *data, size_t size, char **out, size_t *out_size,
                       size_t *out_alloc) {
        CopyFilter *c = userdata;
        int r;

        if (!data)
                r = sbx_tar_filter_finish(c->filter, out, out_size, out_alloc, &c->error);
        else
                r = sbx_tar_filter_feed(c->filter, data, size, out, out_size, out_alloc, &c->error);
        if (r < 0)
                return r;
        /* The archive's bytes, headers included, bound what tar writes; the piece that
         * would cross the bound is never passed on. */
        c->passed += *out_size;
        if (c->passed > c->budget)
                return sbx_error_set(&c->error, SBX_ERROR_POLICY_VIOLATION,
                                     "max_disk_mib: the copy would take what the service put into the sandbox "
                                     "past the host policy's max_disk_mib %" PRIi64 " MiB; refused after %" PRIu64
                                     " bytes", c->max_disk_mib, c->passed - *out_size);
        return r;
}

/* What the sandbox may still take through the service: max_disk_mib less what the
 * service's calls put in (disk-ledger.h; no walk of the layer by the engine). */
static int disk_budget(SbxLifecycle *l, const char *container_id, CopyFilter *c, SbxError *error) {
        uint64_t bound = (uint64_t) l->policy->max_disk_mib << 20;
        uint64_t used = l->channels ? sbx_disk_ledger_used(sbx_channels_disk(l->channels), container_id) : 0;

        c->max_disk_mib = l->policy->max_disk_mib;
        c->budget = used >= bound ? 0 : bound - used;
        if (c->budget == 0)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "max_disk_mib: the service's file calls and copies put %" PRIu64 " bytes into "
                                     "the sandbox, the host policy's max_disk_mib %" PRIi64 " MiB or more; nothing "
                                     "more is copied in", used, c->max_disk_mib);
        return 0;
}

/* The filter's check of a long archive stops at the copy's deadline too. */
static bool copy_past_deadline(void *userdata) {
        const SbxRelay *r = userdata;

        return r->deadline_us > 0 && sbx_now_monotonic_us() >= r->deadline_us;
}

/* The program's complaint, for the message. */
static const char *tar_said(const SbxExecProcess *p) {
        const char *s = p->relay.out[1].data;

        return s && *s ? s : "no message";
}

/* After the stream: the program's exit status decides; its stderr is the message. */
static int copy_result(SbxLifecycle *l, SbxExecProcess *p, const char *field, const char *what, const char *path,
                       SbxError *error) {
        int status, r;

        r = sbx_exec_wait(l->docker, p, &status, error);
        if (r < 0)
                return r;
        if (status == 0)
                return 0;
        if (p->relay.out[1].data)
                p->relay.out[1].data[strcspn(p->relay.out[1].data, "\n")] = 0;
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s in the sandbox failed for '%s' (status %d): %s",
                             field, what, path, status, tar_said(p));
}

static int copy_run(SbxLifecycle *l, SbxExecProcess *p, SbxError *error) {
        p->relay.out[1].limit = 4096;
        return lc_exec_relay_or_kill(l, p, SBX_COPY_TIMEOUT_S, "archive", error);
}

static int owner_ids(const SbxExecProcess *p, uid_t *uid, gid_t *gid) {
        unsigned u, g;

        if (sscanf(p->user, "%u:%u", &u, &g) != 2)
                return -EINVAL;
        *uid = u;
        *gid = g;
        return 0;
}

int sbx_lifecycle_copy_to(SbxLifecycle *l, const char *name, const char *guest_dir, int tar_fd, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_free_ char *container_id = NULL;
        CopyFilter c = { .error = SBX_ERROR_NULL };
        uid_t uid;
        gid_t gid;
        int r;

        /* Before anything runs: a full budget takes no copy. */
        if ((r = sbx_lifecycle_container_id(l, name, &container_id, error)) < 0 ||
            (r = disk_budget(l, container_id, &c, error)) < 0)
                return r;
        /* The service's own program unpacks, as the owner (src/init/unpack.c): no tar in
         * the image is needed or run, and nothing is under its final name before it is whole. */
        r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--unpack", (char *) guest_dir, NULL } },
                &p, error);
        if (r < 0)
                return r;
        if ((r = owner_ids(p, &uid, &gid)) < 0 || (r = sbx_tar_filter_new(uid, gid, &c.filter)) < 0)
                return r;
        sbx_tar_filter_set_stop(c.filter, copy_past_deadline, &p->relay);
        p->relay.in_fd = tar_fd;
        p->relay.in_filter = copy_filter;
        p->relay.in_filter_userdata = &c;
        r = copy_run(l, p, error);
        sbx_tar_filter_free(c.filter);
        /* What was passed on may be there, whole or in part: it counts. */
        if (l->channels)
                sbx_disk_ledger_settle(sbx_channels_disk(l->channels), container_id, 0, c.passed, 0);
        if (sbx_error_is_set(&c.error)) {
                /* A refused entry: the unpacking was killed before it (copy_run()). */
                sbx_error_free(error);
                *error = c.error;
                return -EINVAL;
        }
        if (r < 0)
                return r;
        return copy_result(l, p, "guest_dir", "the unpacking", guest_dir, error);
}

int sbx_lifecycle_copy_from(SbxLifecycle *l, const char *name, const char *guest_path, int tar_fd, SbxError *error) {
        _cleanup_(sbx_exec_process_freep) SbxExecProcess *p = NULL;
        _cleanup_free_ char *dir = strdup(guest_path), *base = NULL;
        char *slash;
        int r;

        if (!dir)
                return -ENOMEM;
        slash = strrchr(dir, '/');
        while (slash && slash > dir && slash[1] == 0) {         /* "/a/b/" → "/a/b" */
                *slash = 0;
                slash = strrchr(dir, '/');
        }
        base = strdup(slash && slash[1] ? slash + 1 : ".");
        if (!base)
                return -ENOMEM;
        if (slash == dir)
                dir[1] = 0;
        else if (slash)
                *slash = 0;

        r = sbx_lifecycle_exec_start(l, name, &(SbxExecRequest) {
                .argv = (char *[]) { (char *) SBX_EXEC_INIT_PATH, (char *) "--pack", dir, base, NULL } }, &p, error);
        if (r < 0)
                return r;
        p->relay.out[0].fd = tar_fd;
        r = copy_run(l, p, error);
        if (r < 0)
                return r;
        return copy_result(l, p, "guest_path", "the packing", guest_path, error);
}
