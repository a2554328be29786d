/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "ctl-verbs.h"
#include "fileio.h"
#include "fingerprint.h"
#include "json-util.h"
#include "policy.h"
#include "spec-json.h"

#define MAX_SPEC_FILE (1024 * 1024)

/* The default image and Python version are the host policy's, so the
 * fingerprint printed here is the one the daemon would stamp for the same spec
 * on this host. */
static int load_policy(const char *policy_path, SbxPolicy **ret, SbxError *error) {
        _cleanup_free_ char *text = NULL;
        int r;

        if (access(policy_path, F_OK) < 0)
                return (*ret = sbx_policy_new_default()) ? 0 : -ENOMEM;
        r = sbx_read_text_file(policy_path, MAX_SPEC_FILE, &text, error);
        if (r < 0)
                return r;
        return sbx_policy_parse(text, ret, error);
}

enum { ARG_CONFIG = 0x200, ARG_PYTHON };

typedef struct FingerprintArgs {
        const char *policy_path;
        const char *python;     /* NULL: the policy's python_version */
} FingerprintArgs;

static int fingerprint_option(int c, const char *arg, void *userdata) {
        FingerprintArgs *a = userdata;
        SbxPythonVersion v;

        if (c == ARG_CONFIG) {
                a->policy_path = arg;
                return CTL_PROCEED;
        }
        if (sbx_python_version_from_string(arg, &v) < 0)
                return ctl_usage_error("fingerprint", "--python: '%s' is not one of 3.11, 3.12, 3.13, 3.14", arg);
        a->python = arg;
        return CTL_PROCEED;
}

/* A contract-valid spec (all that xagent's from_parts() accepts), completed with
 * the policy's default image. */
static int read_spec(const char *path, const SbxPolicy *p, SbxSpec **ret, SbxError *error) {
        _cleanup_free_ char *text = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = sbx_read_text_file(path, MAX_SPEC_FILE, &text, error)) < 0 ||
            (r = sbx_spec_from_json_string(text, &spec, error)) < 0 ||
            (r = sbx_spec_complete(spec, p->default_image, error)) < 0)
                return r;
        *ret = TAKE_PTR(spec);
        return 0;
}

static int print_json(const SbxSpec *spec, SbxPythonVersion v, const char *fp) {
        _cleanup_(json_object_putp) json_object *out = json_object_new_object(), *js = NULL;

        if (!out || sbx_spec_to_json(spec, &js) < 0 ||
            json_object_object_add(out, "spec", TAKE_PTR(js)) < 0 ||
            json_object_object_add(out, "python_version",
                                   json_object_new_string(sbx_python_version_to_string(v))) < 0 ||
            json_object_object_add(out, "fingerprint", json_object_new_string(fp)) < 0)
                return ctl_fail("fingerprint", -ENOMEM, NULL);
        ctl_print_json(out);
        return 0;
}

int verb_fingerprint(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "config", required_argument, NULL, ARG_CONFIG },
                { "python", required_argument, NULL, ARG_PYTHON },
                {}
        };
        _cleanup_(sbx_policy_freep) SbxPolicy *policy = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(sbx_error_free) SbxError error = SBX_ERROR_NULL;
        FingerprintArgs a = { .policy_path = SBX_POLICY_PATH };
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        SbxPythonVersion v;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, fingerprint_option, &a, 0, 1)) != CTL_PROCEED)
                return r;

        if ((r = load_policy(a.policy_path, &policy, &error)) < 0 ||
            (r = read_spec(optind < argc ? argv[optind] : "-", policy, &spec, &error)) < 0)
                return ctl_fail("fingerprint", r, &error);
        v = policy->python_version;
        if (a.python)
                (void) sbx_python_version_from_string(a.python, &v);
        if ((r = sbx_spec_fingerprint(spec, v, fp)) < 0)
                return ctl_fail("fingerprint", r, NULL);

        if (o->json)
                return print_json(spec, v, fp);
        puts(fp);
        return 0;
}
