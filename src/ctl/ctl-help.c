/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>

#include "ctl-help.h"
#include "macro.h"

/* The options of CTL_SPEC_OPTIONS (ctl-spec.h). */
#define SPEC_OPTIONS_HELP                                                               \
        "     --image REF              Image to start from (default: the host's)\n"     \
        "     --snapshot ID            Snapshot to start from instead of an image\n"    \
        "     --workdir PATH           Working directory in the sandbox (/home)\n"      \
        "     --cpus N                 Whole CPUs (1)\n"                                \
        "     --memory MIB             Memory in MiB (512)\n"                           \
        "     --env KEY=VALUE          Environment variable (repeatable)\n"             \
        "     --volume HOST:GUEST[:MODE]\n"                                             \
        "                              Bind HOST at GUEST, MODE ro or rw (default rw;\n"\
        "                              repeatable)\n"                                   \
        "     --port HOST:GUEST        Publish TCP port GUEST on HOST, 0 = any\n"       \
        "                              (repeatable)\n"                                  \
        "     --isolated               No network at all\n"                             \
        "     --spec FILE              The whole spec as JSON (- = standard input);\n"  \
        "                              not together with the options above\n"

#define LIFETIME_HELP                                                                   \
        "     --idle-timeout S         Stop it after S seconds without activity\n"     \
        "     --on-idle stop|pause     What idling does (stop)\n"                      \
        "     --idle-counts-processes yes|no\n"                                        \
        "                              Whether a running process nobody reads holds it\n"\
        "                              from the idle stop (no)\n"

#define LABEL_HELP                                                                      \
        "     --label K=V              Label the sandbox (repeatable; never part of the\n"\
        "                              spec or its fingerprint)\n"                     \
        LIFETIME_HELP                                                                   \
        "     --expire-after S         Delete it S seconds after its creation\n"      \
        "     --pull never|missing     Pull the image first if the host lacks it\n"   \
        "                              (from a registry the host policy lists)\n"   \
        "     --runtime NAME           The runtime it runs under: runc (the default) or\n"\
        "                              one of the host policy's runtimes (gvisor)\n"  \
        "     --egress MODE            What it may reach: default, none or allowlist\n"\
        "     --allow ENTRY            With --egress: CIDR[:PORT[/tcp|udp]] it may\n" \
        "                              reach (repeatable)\n"

const CtlVerbHelp ctl_verbs[_CTL_VERB_MAX] = {
        [CTL_VERB_LIST] = { "list", "list [--no-legend] [--label K=V]...", "List the sandboxes, by name",
          "     --no-legend              Print neither the header nor the count\n"
          "     --label K=V              Only those with this label (repeatable: all of them)\n" },
        [CTL_VERB_SNAPSHOTS] = { "snapshots", "snapshots [--no-legend]", "List the snapshots, by id",
          "     --no-legend              Print neither the header nor the count\n" },
        [CTL_VERB_CREATE] = { "create", "create NAME [SPEC OPTIONS...] [--label K=V]... [LIFETIME OPTIONS...]",
          "Create a sandbox from a spec and start it", SPEC_OPTIONS_HELP LABEL_HELP },
        [CTL_VERB_ENSURE] = { "ensure",
          "ensure NAME [SPEC OPTIONS...] [--label K=V]... [LIFETIME OPTIONS...] [--recreate] [--stop-timeout S]",
          "Get or create a sandbox matching a spec (outcome: created, started, reused, recreated)",
          SPEC_OPTIONS_HELP LABEL_HELP
          "     --recreate               On a mismatch, replace the sandbox (default: fail)\n"
          "     --stop-timeout S         Seconds to stop a mismatched sandbox before (30)\n" },
        [CTL_VERB_CLAIM] = { "claim",
          "claim [SPEC OPTIONS...] [--name-prefix P] [--label K=V]... [LIFETIME OPTIONS...]",
          "A sandbox at once: a warm pool's member, or one created (outcome: warm, cold)",
          SPEC_OPTIONS_HELP LABEL_HELP
          "     --name-prefix P          Its name is P-<8 hex> (sandbox)\n" },
        [CTL_VERB_INSPECT] = { "inspect", "inspect NAME [--fresh]", "Show what a sandbox is, as Docker has it",
          "     --fresh                  Ask Docker now, not the service's observation\n" },
        [CTL_VERB_VERIFY] = { "verify", "verify NAME [SPEC OPTIONS...]",
          "Compare a sandbox with a spec (exit status 0: match)", SPEC_OPTIONS_HELP },
        [CTL_VERB_START] = { "start", "start NAME", "Start a stopped sandbox", "" },
        [CTL_VERB_STOP] = { "stop", "stop NAME [--timeout S] [--force]", "Stop a sandbox",
          "     --timeout S              Seconds before SIGKILL (10)\n"
          "     --force                  Revoke the leases others hold on it\n" },
        [CTL_VERB_PAUSE] = { "pause", "pause NAME", "Freeze a running sandbox, its processes and memory kept", "" },
        [CTL_VERB_EGRESS] = { "egress", "egress NAME MODE [ENTRY...]",
          "Change what a sandbox may reach (MODE default, none, allowlist)", "" },
        [CTL_VERB_RESUME] = { "resume", "resume NAME", "Thaw a paused sandbox", "" },
        [CTL_VERB_DELETE] = { "delete", "delete NAME", "Remove a sandbox (nothing to do if none)", "" },
        [CTL_VERB_ACQUIRE] = { "acquire", "acquire NAME [-- CMD...]",
          "Hold a lease on a sandbox while CMD runs (exits with its status), or until killed", "" },
        [CTL_VERB_LIFETIMES] = { "lifetimes", "lifetimes NAME [LIFETIME OPTIONS...]",
          "Change a sandbox's idle timeout, expiry (from now) and idle behaviour",
          LIFETIME_HELP
          "     --expire-after S         Delete it S seconds from now (0: never)\n" },
        [CTL_VERB_SNAPSHOT] = { "snapshot", "snapshot NAME ID", "Save a sandbox as snapshot ID", "" },
        [CTL_VERB_DELETE_SNAPSHOT] = { "delete-snapshot", "delete-snapshot ID", "Remove a snapshot", "" },
        [CTL_VERB_EXEC] = { "exec", "exec [-t|--detach] [--env K=V]... [--workdir D] [--timeout S] NAME -- CMD...",
          "Run a command in a sandbox (exits with its status)",
          "  -t, --tty                    Give it a terminal (this one, raw meanwhile)\n"
          "     --detach                 Start it detached, print its exec id and return\n"
          "     --env K=V                Set an environment variable (repeatable)\n"
          "     --workdir D              Run it in directory D (absolute)\n"
          "     --timeout S              Kill it after S seconds (default: none)\n" },
        [CTL_VERB_PS] = { "ps", "ps NAME", "List the processes started in a sandbox (exec objects)", "" },
        [CTL_VERB_OUTPUT] = { "output", "output [--follow] EXEC", "Print a detached process's kept output",
          "     --follow                 Go on until the process ended\n" },
        [CTL_VERB_ATTACH] = { "attach", "attach EXEC",
          "Connect this terminal or these pipes to a detached process (^C leaves it running)", "" },
        [CTL_VERB_SHELL] = { "shell", "shell NAME", "Open /bin/sh in a sandbox on this terminal", "" },
        [CTL_VERB_CP] = { "cp", "cp SRC DST", "Copy files into (DST = NAME:DIR) or out of (SRC = NAME:PATH) a sandbox",
          "" },
        [CTL_VERB_CAT] = { "cat", "cat NAME:PATH", "Print a file of a sandbox (ReadFile, as its owner)", "" },
        [CTL_VERB_PUT] = { "put", "put [--mode M] [--append] [-p] LOCAL|- NAME:PATH",
          "Write a local file (- = standard input) into a sandbox, atomically (WriteFile)",
          "     --mode M                 Octal mode of a new file (0644)\n"
          "     --append                 Append instead of replacing\n"
          "  -p, --parents                Create missing directories\n" },
        [CTL_VERB_LS] = { "ls", "ls [--depth N] [--limit N] NAME:PATH", "List a directory of a sandbox (ListFiles)",
          "     --depth N                Levels below PATH (1)\n"
          "     --limit N                Entries at most (1000)\n" },
        [CTL_VERB_RM] = { "rm", "rm [-r] NAME:PATH", "Remove a file of a sandbox (RemoveFile)",
          "  -r, --recursive              A directory and everything below it\n" },
        [CTL_VERB_USAGE] = { "usage", "usage NAME", "Show what a sandbox consumes (CPU, memory, processes, network)", "" },
        [CTL_VERB_POLICY] = { "policy", "policy", "Show what the host policy allows you (limits, images, volume roots)",
          "" },
        [CTL_VERB_PULL] = { "pull", "pull REF",
          "Pull an image from a registry the host policy lists (progress: a bar on a terminal)", "" },
        [CTL_VERB_FINGERPRINT] = { "fingerprint", "fingerprint [--config PATH] [--python X.Y] [FILE|-]",
          "Print the fingerprint of a JSON spec (no daemon needed)",
          "     --config PATH            Host policy for the default image\n" },
};

#define COMMON_OPTIONS_HELP                                                     \
        "     --json                   Print JSON for programs\n"               \
        "     --no-ask-password        Never ask for a password (polkit)\n"     \
        "     --owner USER             Another user's sandbox (root, manage-others)\n" \
        "  -h --help                   Show this help\n"

int ctl_verb_from_name(const char *name) {
        for (size_t i = 0; i < ELEMENTSOF(ctl_verbs); i++)
                if (streq(ctl_verbs[i].name, name))
                        return (int) i;
        return -1;
}

const char *ctl_verb_usage(const char *name) {
        int v = ctl_verb_from_name(name);
        return v >= 0 ? ctl_verbs[v].usage : "[OPTIONS...] COMMAND ...";
}

void ctl_verb_help(const char *name) {
        int v = ctl_verb_from_name(name);

        if (v < 0)
                return;
        printf("xagent-sandboxctl %s\n\n%s.\n\nOptions:\n%s" COMMON_OPTIONS_HELP,
               ctl_verbs[v].usage, ctl_verbs[v].summary, ctl_verbs[v].options);
}

void ctl_help(void) {
        printf("xagent-sandboxctl [OPTIONS...] COMMAND ...\n\n"
               "Manage verified sandboxes through xagent-sandboxd.\n\n"
               "Commands:\n");
        for (size_t i = 0; i < ELEMENTSOF(ctl_verbs); i++)
                printf("  %-37s %s\n", ctl_verbs[i].usage, ctl_verbs[i].summary);
        printf("\nOptions (also accepted after the command):\n"
               COMMON_OPTIONS_HELP
               "     --version                Show the version\n"
               "\nExit status: 0 on success, 1 on failure (and for verify: a verdict other\n"
               "than \"match\"), 2 on a usage error.\n"
               "Run 'xagent-sandboxctl COMMAND --help' for a command's own options.\n");
}
