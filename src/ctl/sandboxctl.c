/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* xagent-sandboxctl: the command-line client, in the style of machinectl. */

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "ctl-spec.h"
#include "ctl-util.h"
#include "ctl-verbs.h"

typedef struct Verb {
        const char *name;
        int (*run)(int argc, char **argv, CtlOptions *o);
        const char *usage;
        const char *summary;
        const char *options;    /* help lines of the command's own options */
} Verb;

static const Verb verbs[] = {
        { "list", verb_list, "list [--no-legend]", "List the sandboxes, by name",
          "     --no-legend              Print neither the header nor the count\n" },
        { "snapshots", verb_snapshots, "snapshots [--no-legend]", "List the snapshots, by id",
          "     --no-legend              Print neither the header nor the count\n" },
        { "create", verb_create, "create NAME [SPEC OPTIONS...]",
          "Create a sandbox from a spec and start it", CTL_SPEC_OPTIONS_HELP },
        { "ensure", verb_ensure, "ensure NAME [SPEC OPTIONS...] [--recreate] [--stop-timeout S]",
          "Get or create a sandbox matching a spec (outcome: created, started, reused, recreated)",
          CTL_SPEC_OPTIONS_HELP
          "     --recreate               On a mismatch, replace the sandbox (default: fail)\n"
          "     --stop-timeout S         Seconds to stop a mismatched sandbox before (30)\n" },
        { "inspect", verb_inspect, "inspect NAME", "Show what a sandbox is, as Docker has it", "" },
        { "verify", verb_verify, "verify NAME [SPEC OPTIONS...]",
          "Compare a sandbox with a spec (exit status 0: match)", CTL_SPEC_OPTIONS_HELP },
        { "start", verb_start, "start NAME", "Start a stopped sandbox", "" },
        { "stop", verb_stop, "stop NAME [--timeout S]", "Stop a sandbox",
          "     --timeout S              Seconds before SIGKILL (10)\n" },
        { "delete", verb_delete, "delete NAME", "Remove a sandbox (nothing to do if none)", "" },
        { "snapshot", verb_snapshot, "snapshot NAME ID", "Save a sandbox as snapshot ID", "" },
        { "delete-snapshot", verb_delete_snapshot, "delete-snapshot ID", "Remove a snapshot", "" },
        { "exec", verb_exec, "exec [-t] [--env K=V]... [--workdir D] [--timeout S] NAME -- CMD...",
          "Run a command in a sandbox (exits with its status)",
          "  -t, --tty                    Give it a terminal (this one, raw meanwhile)\n"
          "     --env K=V                Set an environment variable (repeatable)\n"
          "     --workdir D              Run it in directory D (absolute)\n"
          "     --timeout S              Kill it after S seconds (default: none)\n" },
        { "shell", verb_shell, "shell NAME", "Open /bin/sh in a sandbox on this terminal", "" },
        { "cp", verb_cp, "cp SRC DST", "Copy files into (DST = NAME:DIR) or out of (SRC = NAME:PATH) a sandbox",
          "" },
        { "usage", verb_usage, "usage NAME", "Show what a sandbox consumes (CPU, memory, processes, network)", "" },
        { "policy", verb_policy, "policy", "Show what the host policy allows you (limits, images, volume roots)",
          "" },
        { "fingerprint", verb_fingerprint, "fingerprint [--config PATH] [--python X.Y] [FILE|-]",
          "Print the fingerprint of a JSON spec (no daemon needed)",
          "     --config PATH            Host policy for the default image\n" },
};

#define COMMON_OPTIONS_HELP                                                     \
        "     --json                   Print JSON for programs\n"               \
        "     --no-ask-password        Never ask for a password (polkit)\n"     \
        "     --owner USER             Another user's sandbox (root, manage-others)\n" \
        "  -h --help                   Show this help\n"

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

const char *ctl_verb_usage(const char *name) {
        const Verb *v = find_verb(name);
        return v ? v->usage : "[OPTIONS...] COMMAND ...";
}

void ctl_verb_help(const char *name) {
        const Verb *v = find_verb(name);

        if (!v)
                return;
        printf("xagent-sandboxctl %s\n\n%s.\n\nOptions:\n%s" COMMON_OPTIONS_HELP,
               v->usage, v->summary, v->options);
}

static void help(void) {
        printf("xagent-sandboxctl [OPTIONS...] COMMAND ...\n\n"
               "Manage verified sandboxes through xagent-sandboxd.\n\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-37s %s\n", verbs[i].usage, verbs[i].summary);
        printf("\nOptions (also accepted after the command):\n"
               COMMON_OPTIONS_HELP
               "     --version                Show the version\n"
               "\nExit status: 0 on success, 1 on failure (and for verify: a verdict other\n"
               "than \"match\"), 2 on a usage error.\n"
               "Run 'xagent-sandboxctl COMMAND --help' for a command's own options.\n");
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "version", no_argument, NULL, CTL_ARG_VERSION },
                {}
        };
        /* Ask only a person, and only one at a terminal, as systemctl does. */
        CtlOptions o = { .ask_password = isatty(STDIN_FILENO) };
        const Verb *v;
        int c;

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
                        help();
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
        v = find_verb(argv[optind]);
        if (!v) {
                ctl_error_unnamed("usage", "unknown command '%s'; see --help", argv[optind]);
                return CTL_EXIT_USAGE;
        }
        return v->run(argc - optind, argv + optind, &o);
}
