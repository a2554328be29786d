/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec options of create and verify: either --spec FILE (the JSON spec of docs/api.md)
 * or the single options, both into one raw SbxSpec that sbx_bus_append_spec() sends. */

#include "ctl-util.h"
#include "spec.h"

enum {
        CTL_ARG_SPEC = 0x300,
        CTL_ARG_IMAGE,
        CTL_ARG_SNAPSHOT,
        CTL_ARG_WORKDIR,
        CTL_ARG_CPUS,
        CTL_ARG_MEMORY,
        CTL_ARG_ENV,
        CTL_ARG_VOLUME,
        CTL_ARG_PORT,
        CTL_ARG_ISOLATED,
};

#define CTL_SPEC_OPTIONS                                                \
        { "spec",     required_argument, NULL, CTL_ARG_SPEC     },      \
        { "image",    required_argument, NULL, CTL_ARG_IMAGE    },      \
        { "snapshot", required_argument, NULL, CTL_ARG_SNAPSHOT },      \
        { "workdir",  required_argument, NULL, CTL_ARG_WORKDIR  },      \
        { "cpus",     required_argument, NULL, CTL_ARG_CPUS     },      \
        { "memory",   required_argument, NULL, CTL_ARG_MEMORY   },      \
        { "env",      required_argument, NULL, CTL_ARG_ENV      },      \
        { "volume",   required_argument, NULL, CTL_ARG_VOLUME   },      \
        { "port",     required_argument, NULL, CTL_ARG_PORT     },      \
        { "isolated", no_argument,       NULL, CTL_ARG_ISOLATED }

/* Their help lines are in ctl-help.c (SPEC_OPTIONS_HELP). */

typedef struct CtlSpecArgs {
        const char *verb;
        SbxSpec *spec;          /* what the single options built */
        bool have_options;
        const char *spec_file;
} CtlSpecArgs;

#define CTL_SPEC_ARGS_INIT(v) ((CtlSpecArgs) { .verb = (v) })
void ctl_spec_args_done(CtlSpecArgs *a);

/* A CtlOptionHandler for the options above (userdata: CtlSpecArgs). */
int ctl_spec_option(int c, const char *arg, void *userdata);

/* The raw spec the options or --spec FILE describe. Returns CTL_PROCEED or an exit
 * status (after printing why). */
int ctl_spec_build(CtlSpecArgs *a, SbxSpec **ret);
