/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* xagent-sandboxctl: the command-line client, in the style of machinectl. */

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "ctl-help.h"
#include "ctl-util.h"
#include "ctl-verbs.h"

/* What each command runs; its name and help are ctl_verbs[] of the same index. */
static int (*const verb_runs[_CTL_VERB_MAX])(int argc, char **argv, CtlOptions *o) = {
        [CTL_VERB_LIST] = verb_list,
        [CTL_VERB_SNAPSHOTS] = verb_snapshots,
        [CTL_VERB_CREATE] = verb_create,
        [CTL_VERB_ENSURE] = verb_ensure,
        [CTL_VERB_CLAIM] = verb_claim,
        [CTL_VERB_INSPECT] = verb_inspect,
        [CTL_VERB_VERIFY] = verb_verify,
        [CTL_VERB_START] = verb_start,
        [CTL_VERB_STOP] = verb_stop,
        [CTL_VERB_PAUSE] = verb_pause,
        [CTL_VERB_EGRESS] = verb_egress,
        [CTL_VERB_RESUME] = verb_resume,
        [CTL_VERB_DELETE] = verb_delete,
        [CTL_VERB_ACQUIRE] = verb_acquire,
        [CTL_VERB_LIFETIMES] = verb_lifetimes,
        [CTL_VERB_SNAPSHOT] = verb_snapshot,
        [CTL_VERB_DELETE_SNAPSHOT] = verb_delete_snapshot,
        [CTL_VERB_EXEC] = verb_exec,
        [CTL_VERB_PS] = verb_ps,
        [CTL_VERB_OUTPUT] = verb_output,
        [CTL_VERB_ATTACH] = verb_attach,
        [CTL_VERB_SHELL] = verb_shell,
        [CTL_VERB_CP] = verb_cp,
        [CTL_VERB_CAT] = verb_cat,
        [CTL_VERB_PUT] = verb_put,
        [CTL_VERB_LS] = verb_ls,
        [CTL_VERB_RM] = verb_rm,
        [CTL_VERB_USAGE] = verb_usage,
        [CTL_VERB_POLICY] = verb_policy,
        [CTL_VERB_PULL] = verb_pull,
        [CTL_VERB_FINGERPRINT] = verb_fingerprint,
};

int main(int argc, char **argv) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "version", no_argument, NULL, CTL_ARG_VERSION },
                {}
        };
        /* Ask only a person, and only one at a terminal, as systemctl does. */
        CtlOptions o = { .ask_password = isatty(STDIN_FILENO) };
        int c, v;

        /* Errors are JSON when --json is anywhere before "--", so that even a usage
         * error met before getopt reaches it comes out as JSON. */
        for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
                if (streq(argv[i], "--json"))
                        ctl_errors_as_json = true;

        /* '+': stop at the command; what follows is the command's business. */
        opterr = 0;
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        ctl_help();
                        return 0;
                case CTL_ARG_VERSION:
                        puts("xagent-sandboxctl " PACKAGE_VERSION);
                        return 0;
                case CTL_ARG_JSON:
                        o.json = true;
                        break;
                case CTL_ARG_NO_ASK_PASSWORD:
                        o.ask_password = false;
                        break;
                case CTL_ARG_OWNER:
                        o.owner = optarg;
                        break;
                default:
                        ctl_error_unnamed("usage", "unknown option '%s'; see --help", argv[optind - 1]);
                        return CTL_EXIT_USAGE;
                }

        if (optind >= argc) {
                ctl_error_unnamed("usage", "a command is needed; see --help");
                return CTL_EXIT_USAGE;
        }
        v = ctl_verb_from_name(argv[optind]);
        if (v < 0 || !verb_runs[v]) {
                ctl_error_unnamed("usage", "unknown command '%s'; see --help", argv[optind]);
                return CTL_EXIT_USAGE;
        }
        return verb_runs[v](argc - optind, argv + optind, &o);
}
