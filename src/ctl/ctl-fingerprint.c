/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "ctl-verbs.h"
#include "fingerprint.h"
#include "json-util.h"
#include "policy.h"
#include "spec-json.h"

#define MAX_SPEC_FILE (1024 * 1024)

/* The default image is the host policy's, so the fingerprint printed here is the
 * one the daemon would stamp for the same spec on this host. */
static int load_default_image(const char *policy_path, char **ret, SbxError *error) {
        _cleanup_free_ char *text = NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *p = NULL;
        int r;

        if (access(policy_path, F_OK) < 0)
                return (*ret = strdup(SBX_POLICY_DEFAULT_IMAGE)) ? 0 : -ENOMEM;
        r = ctl_read_file(policy_path, MAX_SPEC_FILE, &text, error);
        if (r < 0)
                return r;
        r = sbx_policy_parse(text, &p, error);
        if (r < 0)
                return r;
        return (*ret = strdup(p->default_image)) ? 0 : -ENOMEM;
}

enum { ARG_CONFIG = 0x200 };

static int fingerprint_option(int c, const char *arg, void *userdata) {
        *(const char **) userdata = arg;        /* --config, the only one */
        return CTL_PROCEED;
}

int verb_fingerprint(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "config", required_argument, NULL, ARG_CONFIG },
                {}
        };
        _cleanup_free_ char *text = NULL, *default_image = NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        _cleanup_(sbx_error_free) SbxError error = SBX_ERROR_NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        const char *path, *policy_path = SBX_POLICY_PATH;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, fingerprint_option, &policy_path, 0, 1)) != CTL_PROCEED)
                return r;
        path = optind < argc ? argv[optind] : "-";

        if ((r = ctl_read_file(path, MAX_SPEC_FILE, &text, &error)) < 0 ||
            (r = load_default_image(policy_path, &default_image, &error)) < 0 ||
            (r = sbx_spec_from_json_string(text, &spec, &error)) < 0 ||
            (r = sbx_spec_finalize(spec, default_image, &error)) < 0 ||
            (r = sbx_spec_fingerprint(spec, fp)) < 0)
                return ctl_fail("fingerprint", r, &error);

        if (!o->json) {
                puts(fp);
                return 0;
        }
        _cleanup_(json_object_putp) json_object *out = json_object_new_object(), *js = NULL;
        if (!out || sbx_spec_to_json(spec, &js) < 0 ||
            json_object_object_add(out, "spec", TAKE_PTR(js)) < 0 ||
            json_object_object_add(out, "fingerprint", json_object_new_string(fp)) < 0)
                return ctl_fail("fingerprint", -ENOMEM, NULL);
        ctl_print_json(out);
        return 0;
}
