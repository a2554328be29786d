/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The methods' arguments as both interfaces read them (bus-manager.c by name,
 * bus-sandbox.c per object): each reader sets e naming the argument that is wrong. */

#include <systemd/sd-bus.h>

#include "manager-state.h"
#include "spec.h"

int bus_read_name(sd_bus_message *msg, const char *field, const char **ret, SbxError *e);
/* Snapshot ids: a name, and no longer than an image tag can carry. */
int bus_read_snapshot_id(sd_bus_message *msg, const char **ret, SbxError *e);
/* The spec argument with the host's default image: admissible for create,
 * contract-valid (all that xagent's from_parts() accepts) for verify. */
int bus_read_spec_arg(sd_bus_message *msg, Manager *m, bool admissible, SbxSpec **ret, SbxError *e);
/* A stop holds its sandbox's lock while it waits: the policy bounds it. */
int bus_check_stop_timeout(Manager *m, const char *key, unsigned timeout, SbxError *e);
/* A descriptor the caller passed, copied (see bus-args.c); O_PATH refused. */
int bus_take_caller_fd(int fd, const char *field, int *ret, SbxError *e);
/* StartExec's stdin, stdout, stderr. */
int bus_read_fds(sd_bus_message *msg, int fds[static 3], SbxError *e);
