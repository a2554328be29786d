/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <unistd.h>

#include "bus-args.h"
#include "bus-spec.h"
#include "config.h"
#include "naming.h"

int bus_read_name(sd_bus_message *msg, const char *field, const char **ret, SbxError *e) {
        int r = sd_bus_message_read_basic(msg, 's', ret);

        if (r < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: malformed", field);
        return sbx_name_validate(field, *ret, e);
}

/* Snapshot ids: a name, and no longer than an image tag can carry. */
int bus_read_snapshot_id(sd_bus_message *msg, const char **ret, SbxError *e) {
        int r = bus_read_name(msg, "snapshot_id", ret, e);

        if (r < 0)
                return r;
        if (strlen(*ret) > SBX_MAX_SNAPSHOT_ID_LEN)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "snapshot_id: longer than %d bytes",
                                     SBX_MAX_SNAPSHOT_ID_LEN);
        return 0;
}

/* The spec argument with the host's default image: admissible for create,
 * contract-valid (all that xagent's from_parts() accepts) for verify. */
int bus_read_spec_arg(sd_bus_message *msg, Manager *m, bool admissible, SbxSpec **ret, SbxError *e) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = sbx_bus_read_spec(msg, &spec, e)) < 0 ||
            (r = (admissible ? sbx_spec_finalize : sbx_spec_complete)(spec, m->policy->default_image, e)) < 0)
                return r;
        *ret = TAKE_PTR(spec);
        return 0;
}

/* A stop holds its sandbox's lock while it waits: the policy bounds it. */
int bus_check_stop_timeout(Manager *m, const char *key, unsigned timeout, SbxError *e) {
        if ((uint64_t) timeout > (uint64_t) m->policy->max_stop_timeout)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: %u s is more than max_stop_timeout (%" PRIi64 " s)",
                                     key, timeout, m->policy->max_stop_timeout);
        return 0;
}

/* A descriptor a caller passed, for the relay (docker-relay.h): a copy, and nothing
 * else. It is neither looked at (fstat), opened anew, read nor written here: the
 * arguments are read before polkit has said yes, and whatever the relay does with it
 * happens after, with the caller's own open file description (its access mode, its
 * file status flags). An O_PATH descriptor is refused: it grants no reading or
 * writing, and reopening what it names (as /proc/self/fd/N) would be an open by root
 * on the caller's behalf. */
int bus_take_caller_fd(int fd, const char *field, int *ret, SbxError *e) {
        int flags = fcntl(fd, F_GETFL), copy;

        if (flags < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "%s: not a valid descriptor", field);
        if (flags & O_PATH)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS,
                                     "%s: an O_PATH descriptor, which can be neither read nor written; pass one "
                                     "opened for reading or writing", field);
        copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return -errno;
        *ret = copy;
        return 0;
}

int bus_read_fds(sd_bus_message *msg, int fds[static 3], SbxError *e) {
        static const char *const fields[3] = { "stdin", "stdout", "stderr" };
        int in[3], r;

        if ((r = sd_bus_message_read(msg, "hhh", &in[0], &in[1], &in[2])) < 0)
                return sbx_error_set(e, SBX_ERROR_INVALID_ARGS, "stdin, stdout, stderr: malformed (%s)", strerror(-r));
        for (size_t i = 0; i < 3; i++)
                if ((r = bus_take_caller_fd(in[i], fields[i], &fds[i], e)) < 0)
                        return r;
        return 0;
}
