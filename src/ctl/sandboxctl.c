/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* xagent-sandboxctl: the command-line client, in the style of machinectl. */

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "config.h"
#include "ctl-util.h"
#include "ctl-verbs.h"

typedef struct Verb {
        const char *name;
        unsigned min_args, max_args;    /* not counting the verb itself */
        int (*run)(int argc, char **argv, const CtlOptions *o);
        const char *usage;
        const char *help;
} Verb;

static const Verb verbs[] = {
        { "fingerprint", 0, 3, verb_fingerprint, "fingerprint [--config PATH] [FILE|-]",
          "Print the fingerprint of a JSON spec (no daemon needed)" },
};

static void help(void) {
        printf("xagent-sandboxctl [OPTIONS...] COMMAND ...\n\n"
               "Manage verified sandboxes through xagent-sandboxd.\n\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                printf("  %-30s %s\n", verbs[i].usage, verbs[i].help);
        printf("\nOptions:\n"
               "  -h --help                      Show this help\n"
               "     --version                  Show the version\n"
               "     --json                     Print JSON for programs\n"
               "     --no-ask-password          Never ask for a password (polkit)\n"
               "\nRun 'xagent-sandboxctl COMMAND --help' for a command's own options.\n");
}

static const Verb *find_verb(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(verbs); i++)
                if (streq(verbs[i].name, name))
                        return &verbs[i];
        return NULL;
}

int main(int argc, char **argv) {
        enum { ARG_VERSION = 0x100, ARG_JSON, ARG_NO_ASK_PASSWORD };
        static const struct option options[] = {
                { "help",            no_argument, NULL, 'h'                  },
                { "version",         no_argument, NULL, ARG_VERSION          },
                { "json",            no_argument, NULL, ARG_JSON             },
                { "no-ask-password", no_argument, NULL, ARG_NO_ASK_PASSWORD  },
                {}
        };
        CtlOptions o = { .ask_password = isatty(STDIN_FILENO) };
        const Verb *v;
        unsigned n_args;
        int c;

        /* '+': stop at the verb; its own options are the verb's business. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        puts("xagent-sandboxctl " PACKAGE_VERSION);
                        return 0;
                case ARG_JSON:
                        o.json = true;
                        break;
                case ARG_NO_ASK_PASSWORD:
                        o.ask_password = false;
                        break;
                default:
                        return 2;
                }

        if (optind >= argc) {
                fprintf(stderr, "xagent-sandboxctl: a command is needed; see --help\n");
                return 2;
        }
        v = find_verb(argv[optind]);
        if (!v) {
                fprintf(stderr, "xagent-sandboxctl: unknown command '%s'; see --help\n", argv[optind]);
                return 2;
        }
        n_args = (unsigned) (argc - optind - 1);
        for (int i = optind + 1; i < argc; i++)
                if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        printf("xagent-sandboxctl %s\n\n%s\n", v->usage, v->help);
                        return 0;
                }
        if (n_args < v->min_args || n_args > v->max_args)
                return ctl_usage(v->usage);
        return v->run(argc - optind, argv + optind, &o);
}
