/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The commands' names and help texts: data under both the option parser (ctl-util.c,
 * which prints a command's help and usage line) and main (sandboxctl.c, which runs the
 * command of the same CtlVerb). Includes nothing of src/ctl. */

typedef enum CtlVerb {
        CTL_VERB_LIST,
        CTL_VERB_SNAPSHOTS,
        CTL_VERB_CREATE,
        CTL_VERB_ENSURE,
        CTL_VERB_CLAIM,
        CTL_VERB_INSPECT,
        CTL_VERB_VERIFY,
        CTL_VERB_START,
        CTL_VERB_STOP,
        CTL_VERB_PAUSE,
        CTL_VERB_EGRESS,
        CTL_VERB_RESUME,
        CTL_VERB_DELETE,
        CTL_VERB_ACQUIRE,
        CTL_VERB_LIFETIMES,
        CTL_VERB_SNAPSHOT,
        CTL_VERB_DELETE_SNAPSHOT,
        CTL_VERB_EXEC,
        CTL_VERB_PS,
        CTL_VERB_OUTPUT,
        CTL_VERB_ATTACH,
        CTL_VERB_SHELL,
        CTL_VERB_CP,
        CTL_VERB_CAT,
        CTL_VERB_PUT,
        CTL_VERB_LS,
        CTL_VERB_RM,
        CTL_VERB_USAGE,
        CTL_VERB_POLICY,
        CTL_VERB_PULL,
        CTL_VERB_FINGERPRINT,
        _CTL_VERB_MAX,
} CtlVerb;

typedef struct CtlVerbHelp {
        const char *name;
        const char *usage;
        const char *summary;
        const char *options;    /* help lines of the command's own options */
} CtlVerbHelp;

extern const CtlVerbHelp ctl_verbs[_CTL_VERB_MAX];

/* The command called name, or -1. */
int ctl_verb_from_name(const char *name);

/* A command's help and its usage line ("[OPTIONS...] COMMAND ..." for no command). */
void ctl_verb_help(const char *verb);
const char *ctl_verb_usage(const char *verb);

/* The help of xagent-sandboxctl itself. */
void ctl_help(void);
