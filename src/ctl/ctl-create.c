/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* create, ensure and verify: the commands that send a spec; and lifetimes, which
 * changes the lifetime options create and ensure take. */

#include <errno.h>
#include <stdio.h>

#include "bus-egress.h"
#include "bus-spec.h"
#include "ctl-bus.h"
#include "ctl-spec.h"
#include "ctl-verbs.h"
#include "json-util.h"

enum { ARG_RECREATE = 0x400, ARG_STOP_TIMEOUT, ARG_LABEL, ARG_IDLE_TIMEOUT, ARG_EXPIRE_AFTER, ARG_ON_IDLE,
       ARG_COUNTS_PROCESSES, ARG_PULL, ARG_EGRESS, ARG_ALLOW, ARG_NAME_PREFIX, ARG_RUNTIME };

#define LIFETIME_OPTIONS                                                                       \
        { "idle-timeout", required_argument, NULL, ARG_IDLE_TIMEOUT },                        \
        { "expire-after", required_argument, NULL, ARG_EXPIRE_AFTER },                        \
        { "on-idle",      required_argument, NULL, ARG_ON_IDLE      },                        \
        { "idle-counts-processes", required_argument, NULL, ARG_COUNTS_PROCESSES }

/* --pull missing: the image may be pulled first, as long as it is big. */
#define CTL_PULL_CALL_TIMEOUT_USEC (3600ULL * 1000 * 1000)

static const struct option spec_verb_options[] = {
        CTL_COMMON_OPTIONS, CTL_SPEC_OPTIONS,
        { "recreate",     no_argument,       NULL, ARG_RECREATE     },
        { "stop-timeout", required_argument, NULL, ARG_STOP_TIMEOUT },
        { "label",        required_argument, NULL, ARG_LABEL        },
        LIFETIME_OPTIONS,
        { "pull",         required_argument, NULL, ARG_PULL         },
        { "runtime",      required_argument, NULL, ARG_RUNTIME      },
        { "egress",       required_argument, NULL, ARG_EGRESS       },
        { "allow",        required_argument, NULL, ARG_ALLOW        },
        { "name-prefix",  required_argument, NULL, ARG_NAME_PREFIX  },
        {}
};

typedef struct SpecVerbArgs {
        CtlSpecArgs spec;
        bool recreate;
        uint64_t stop_timeout;
        json_object *labels;            /* create, ensure: --label */
        uint64_t idle_timeout, expire_after;    /* create, ensure: --idle-timeout, --expire-after */
        bool has_idle_timeout, has_expire_after;
        const char *on_idle;            /* … --on-idle, or NULL */
        int counts_processes;           /* … --idle-counts-processes yes|no, or -1 */
        const char *pull;               /* create, ensure: --pull never|missing, or NULL */
        const char *runtime;            /* create, ensure: --runtime NAME, or NULL (the daemon judges it) */
        const char *egress;             /* create, ensure: --egress MODE, or NULL */
        char **allow;                   /* … --allow ENTRY */
        size_t n_allow;
        const char *name_prefix;        /* claim: --name-prefix, or NULL */
} SpecVerbArgs;

static void spec_verb_args_done(SpecVerbArgs *a) {
        ctl_spec_args_done(&a->spec);
        json_object_put(a->labels);
        free(a->allow);
}

/* --egress MODE, --allow ENTRY (the daemon judges them). */
static int egress_option(int c, const char *arg, SpecVerbArgs *a) {
        char **n;

        if (streq(a->spec.verb, "verify"))
                return ctl_usage_error(a->spec.verb, "--egress, --allow: never part of a verification");
        if (c == ARG_EGRESS) {
                a->egress = arg;
                return CTL_PROCEED;
        }
        n = reallocarray(a->allow, a->n_allow + 2, sizeof(char *));
        if (!n)
                return ctl_bus_fail(a->spec.verb, -ENOMEM);
        a->allow = n;
        a->allow[a->n_allow++] = (char *) arg;
        a->allow[a->n_allow] = NULL;
        return CTL_PROCEED;
}

static int append_egress(sd_bus_message *m, const SpecVerbArgs *a) {
        int r;

        if (!a->egress && a->n_allow == 0)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "egress")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{sv}")) < 0 ||
            (r = sbx_bus_append_egress(m, a->egress ?: "allowlist", a->allow)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* --idle-timeout, --expire-after, --on-idle, --idle-counts-processes of create, ensure
 * and lifetimes. */
static int lifetime_option(int c, const char *arg, SpecVerbArgs *a) {
        if (streq(a->spec.verb, "verify"))
                return ctl_usage_error(a->spec.verb, "unknown option; see --help");
        if (c == ARG_COUNTS_PROCESSES) {
                if (!streq(arg, "yes") && !streq(arg, "no"))
                        return ctl_usage_error(a->spec.verb, "--idle-counts-processes: '%s' is neither yes nor no",
                                               arg);
                a->counts_processes = streq(arg, "yes");
                return CTL_PROCEED;
        }
        if (c == ARG_RUNTIME) {
                a->runtime = arg;
                return CTL_PROCEED;
        }
        if (c == ARG_PULL) {
                if (!streq(arg, "never") && !streq(arg, "missing"))
                        return ctl_usage_error(a->spec.verb, "--pull: '%s' is neither never nor missing", arg);
                a->pull = arg;
                return CTL_PROCEED;
        }
        if (c == ARG_ON_IDLE) {
                if (!streq(arg, "stop") && !streq(arg, "pause"))
                        return ctl_usage_error(a->spec.verb, "--on-idle: '%s' is neither stop nor pause", arg);
                a->on_idle = arg;
                return CTL_PROCEED;
        }
        if (c == ARG_IDLE_TIMEOUT) {
                a->has_idle_timeout = true;
                return ctl_parse_uint(a->spec.verb, "--idle-timeout", arg, 0, UINT32_MAX, &a->idle_timeout);
        }
        a->has_expire_after = true;
        return ctl_parse_uint(a->spec.verb, "--expire-after", arg, 0, UINT32_MAX, &a->expire_after);
}

static int append_lifetime(sd_bus_message *m, const SpecVerbArgs *a) {
        int r = 0;

        if (a->has_idle_timeout)
                r = sd_bus_message_append(m, "{sv}", "idle_timeout", "u", (uint32_t) a->idle_timeout);
        if (r >= 0 && a->has_expire_after)
                r = sd_bus_message_append(m, "{sv}", "expire_after", "u", (uint32_t) a->expire_after);
        if (r >= 0 && a->on_idle)
                r = sd_bus_message_append(m, "{sv}", "on_idle", "s", a->on_idle);
        if (r >= 0 && a->counts_processes >= 0)
                r = sd_bus_message_append(m, "{sv}", "idle_counts_processes", "b", a->counts_processes);
        if (r >= 0 && a->pull)
                r = sd_bus_message_append(m, "{sv}", "pull", "s", a->pull);
        if (r >= 0 && a->runtime)
                r = sd_bus_message_append(m, "{sv}", "runtime", "s", a->runtime);
        return r;
}

/* ensure's own options, then the spec options. */
static int spec_verb_option(int c, const char *arg, void *userdata) {
        SpecVerbArgs *a = userdata;

        if (c == ARG_IDLE_TIMEOUT || c == ARG_EXPIRE_AFTER || c == ARG_ON_IDLE || c == ARG_COUNTS_PROCESSES ||
            c == ARG_PULL || c == ARG_RUNTIME)
                return lifetime_option(c, arg, a);
        if (c == ARG_EGRESS || c == ARG_ALLOW)
                return egress_option(c, arg, a);
        if (((c == ARG_RECREATE || c == ARG_STOP_TIMEOUT) && !streq(a->spec.verb, "ensure")) ||
            (c == ARG_NAME_PREFIX && !streq(a->spec.verb, "claim")))
                return ctl_usage_error(a->spec.verb, "unknown option; see --help");
        if (c == ARG_NAME_PREFIX) {
                a->name_prefix = arg;
                return CTL_PROCEED;
        }
        if (c == ARG_LABEL) {
                if (streq(a->spec.verb, "verify"))
                        return ctl_usage_error(a->spec.verb, "--label: labels are never part of a verification");
                return ctl_label_parse(a->spec.verb, arg, &a->labels);
        }
        if (c == ARG_RECREATE) {
                a->recreate = true;
                return CTL_PROCEED;
        }
        if (c == ARG_STOP_TIMEOUT)
                return ctl_parse_uint(a->spec.verb, "--stop-timeout", arg, 0, SBX_STOP_TIMEOUT_MAX, &a->stop_timeout);
        return ctl_spec_option(c, arg, &a->spec);
}

/* Parses NAME (claim: none) and the spec options, then starts the call with name and
 * the spec. */
static int spec_call(int argc, char **argv, CtlOptions *o, const char *method, SpecVerbArgs *va,
                     sd_bus **ret_bus, sd_bus_message **ret_call) {
        CtlSpecArgs *a = &va->spec;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(sbx_error_free) SbxError error = SBX_ERROR_NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        bool claim = streq(method, "ClaimSandbox");
        int r;

        if ((r = ctl_parse_args(argc, argv, spec_verb_options, o, spec_verb_option, va, !claim, !claim)) != CTL_PROCEED ||
            (r = ctl_spec_build(a, &spec)) != CTL_PROCEED)
                return r;
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if (o->owner && !streq(method, "VerifySandbox"))
                return ctl_usage_error(argv[0], "--owner: a sandbox is created in its creator's own names");
        if (claim ? ctl_bus_new_call(bus, method, &m) < 0 : ctl_bus_new_sandbox_call(bus, o, method, argv[optind], &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sbx_bus_append_spec(m, spec, &error)) < 0)
                return sbx_error_is_set(&error) ? ctl_fail(method, r, &error) : ctl_bus_fail(method, r);
        *ret_bus = TAKE_PTR(bus);
        *ret_call = TAKE_PTR(m);
        return CTL_PROCEED;
}

int verb_create(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *out = NULL;
        const char *path, *fingerprint;
        int r;

        _cleanup_(spec_verb_args_done) SpecVerbArgs va = { .spec = CTL_SPEC_ARGS_INIT(argv[0]), .counts_processes = -1 };

        if ((r = spec_call(argc, argv, o, "CreateSandbox", &va, &bus, &m)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = ctl_bus_append_labels_entry(m, va.labels)) < 0 || (r = append_lifetime(m, &va)) < 0 ||
            (r = append_egress(m, &va)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("CreateSandbox", r);
        if (ctl_bus_call(bus, m, va.pull ? CTL_PULL_CALL_TIMEOUT_USEC : 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "os", &path, &fingerprint)) < 0)
                return ctl_bus_fail("CreateSandbox reply", r);
        if (!o->json) {
                printf("object: %s\nfingerprint: %s\n", path, fingerprint);
                return 0;
        }
        out = json_object_new_object();
        if (!out ||
            sbx_json_put(out, "object", json_object_new_string(path)) < 0 ||
            sbx_json_put(out, "fingerprint", json_object_new_string(fingerprint)) < 0)
                return ctl_bus_fail("create", -ENOMEM);
        ctl_print_json(out);
        return 0;
}

int verb_ensure(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *out = NULL;
        _cleanup_(spec_verb_args_done) SpecVerbArgs va = {
                .spec = CTL_SPEC_ARGS_INIT(argv[0]), .stop_timeout = SBX_ENSURE_STOP_TIMEOUT_DEFAULT,
                .counts_processes = -1 };
        const char *path, *fingerprint, *outcome;
        int r;

        if ((r = spec_call(argc, argv, o, "EnsureSandbox", &va, &bus, &m)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(m, "{sv}{sv}", "on_mismatch", "s", va.recreate ? "recreate" : "fail",
                                       "stop_timeout", "u", (uint32_t) va.stop_timeout)) < 0 ||
            (r = ctl_bus_append_labels_entry(m, va.labels)) < 0 || (r = append_lifetime(m, &va)) < 0 ||
            (r = append_egress(m, &va)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("EnsureSandbox", r);
        if (ctl_bus_call(bus, m, va.pull ? CTL_PULL_CALL_TIMEOUT_USEC : 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "oss", &path, &fingerprint, &outcome)) < 0)
                return ctl_bus_fail("EnsureSandbox reply", r);
        if (!o->json) {
                printf("object: %s\nfingerprint: %s\noutcome: %s\n", path, fingerprint, outcome);
                return 0;
        }
        out = json_object_new_object();
        if (!out ||
            sbx_json_put(out, "object", json_object_new_string(path)) < 0 ||
            sbx_json_put(out, "fingerprint", json_object_new_string(fingerprint)) < 0 ||
            sbx_json_put(out, "outcome", json_object_new_string(outcome)) < 0)
                return ctl_bus_fail("ensure", -ENOMEM);
        ctl_print_json(out);
        return 0;
}

/* A warm pool's member, or a create under a generated name (docs/lifecycle.md). */
int verb_claim(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *out = NULL;
        _cleanup_(spec_verb_args_done) SpecVerbArgs va = { .spec = CTL_SPEC_ARGS_INIT(argv[0]), .counts_processes = -1 };
        const char *path, *name, *fingerprint, *outcome;
        int r;

        if ((r = spec_call(argc, argv, o, "ClaimSandbox", &va, &bus, &m)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (va.name_prefix && (r = sd_bus_message_append(m, "{sv}", "name_prefix", "s", va.name_prefix)) < 0) ||
            (r = ctl_bus_append_labels_entry(m, va.labels)) < 0 || (r = append_lifetime(m, &va)) < 0 ||
            (r = append_egress(m, &va)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("ClaimSandbox", r);
        if (ctl_bus_call(bus, m, va.pull ? CTL_PULL_CALL_TIMEOUT_USEC : 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "osss", &path, &name, &fingerprint, &outcome)) < 0)
                return ctl_bus_fail("ClaimSandbox reply", r);
        if (!o->json) {
                printf("name: %s\nobject: %s\nfingerprint: %s\noutcome: %s\n", name, path, fingerprint, outcome);
                return 0;
        }
        out = json_object_new_object();
        if (!out || sbx_json_put(out, "name", json_object_new_string(name)) < 0 ||
            sbx_json_put(out, "object", json_object_new_string(path)) < 0 ||
            sbx_json_put(out, "fingerprint", json_object_new_string(fingerprint)) < 0 ||
            sbx_json_put(out, "outcome", json_object_new_string(outcome)) < 0)
                return ctl_bus_fail("claim", -ENOMEM);
        ctl_print_json(out);
        return 0;
}

static int print_verdict(const CtlOptions *o, const char *verdict, json_object *fields) {
        _cleanup_(json_object_putp) json_object *out = NULL;
        size_t n = json_object_array_length(fields);

        if (!o->json) {
                printf("verdict: %s\n", verdict);
                if (n > 0) {
                        fputs("mismatched_fields:", stdout);
                        for (size_t i = 0; i < n; i++)
                                printf(" %s", json_object_get_string(json_object_array_get_idx(fields, i)));
                        putchar('\n');
                }
                return 0;
        }
        out = json_object_new_object();
        if (!out ||
            sbx_json_put(out, "verdict", json_object_new_string(verdict)) < 0 ||
            sbx_json_put(out, "mismatched_fields", json_object_get(fields)) < 0)
                return -ENOMEM;
        ctl_print_json(out);
        return 0;
}

int verb_verify(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(json_object_putp) json_object *fields = NULL;
        const char *verdict;
        int r;

        _cleanup_(spec_verb_args_done) SpecVerbArgs va = { .spec = CTL_SPEC_ARGS_INIT(argv[0]), .counts_processes = -1 };

        if ((r = spec_call(argc, argv, o, "VerifySandbox", &va, &bus, &m)) != CTL_PROCEED)
                return r;
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read(reply, "s", &verdict)) < 0 ||
            (r = sbx_bus_read_json(reply, &fields)) < 0)
                return ctl_bus_fail("VerifySandbox reply", r);
        if ((r = print_verdict(o, verdict, fields)) < 0)
                return ctl_bus_fail("verify", r);
        /* Only a match is a success: scripts can rely on the exit status alone. */
        return streq(verdict, "match") ? 0 : CTL_EXIT_FAILURE;
}

static int lifetimes_option(int c, const char *arg, void *userdata) {
        return lifetime_option(c, arg, userdata);
}

/* lifetimes NAME [LIFETIME OPTIONS...]: SetSandboxLifetimes with what is given (at
 * least one); --expire-after counts from now. */
int verb_lifetimes(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = { CTL_COMMON_OPTIONS, LIFETIME_OPTIONS, {} };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(spec_verb_args_done) SpecVerbArgs va = { .spec = CTL_SPEC_ARGS_INIT(argv[0]), .counts_processes = -1 };
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, lifetimes_option, &va, 1, 1)) != CTL_PROCEED)
                return r;
        if (!va.has_idle_timeout && !va.has_expire_after && !va.on_idle && va.counts_processes < 0)
                return ctl_usage_error(argv[0], "nothing to change: give --idle-timeout, --expire-after, --on-idle "
                                       "or --idle-counts-processes");
        if (ctl_bus_connect(o, &bus) < 0 || ctl_bus_new_sandbox_call(bus, o, "SetSandboxLifetimes", argv[optind], &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 || (r = append_lifetime(m, &va)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("SetSandboxLifetimes", r);
        return ctl_bus_call(bus, m, 0, o, &reply) < 0 ? CTL_EXIT_FAILURE : 0;
}
