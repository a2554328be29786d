/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

/* Global options of xagent-sandboxctl. */
typedef struct CtlOptions {
        bool json;
        bool ask_password;
} CtlOptions;

/* Reads a whole file ("-" or NULL = standard input), refusing more than max bytes. */
int ctl_read_file(const char *path, size_t max, char **ret, SbxError *error);

/* Prints "xagent-sandboxctl: <what>: <message>" for a failed call and returns the
 * exit status to use. */
int ctl_fail(const char *what, int r, const SbxError *error);

/* Prints the usage line of a command and returns the usage-error exit status (2). */
int ctl_usage(const char *usage);
