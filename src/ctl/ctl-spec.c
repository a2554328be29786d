/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-spec.h"
#include "fileio.h"
#include "spec-json.h"

#define MAX_SPEC_FILE (1024 * 1024)

void ctl_spec_args_done(CtlSpecArgs *a) {
        a->spec = sbx_spec_free(a->spec);
}

static int oom(void) {
        return ctl_fail("out of memory", -ENOMEM, NULL);
}

static int set_string(char **field, const char *arg) {
        free(*field);
        *field = strdup(arg);
        return *field ? CTL_PROCEED : oom();
}

static int parse_env(CtlSpecArgs *a, const char *arg) {
        _cleanup_free_ char *key = NULL;
        const char *eq = strchr(arg, '=');

        if (!eq || eq == arg)
                return ctl_usage_error(a->verb, "--env: '%s' is not KEY=VALUE", arg);
        key = strndup(arg, eq - arg);
        if (!key || sbx_spec_add_env(a->spec, key, eq + 1) < 0)
                return oom();
        return CTL_PROCEED;
}

/* HOST:GUEST[:MODE]; paths with ':' need --spec. */
static int parse_volume(CtlSpecArgs *a, const char *arg) {
        _cleanup_free_ char *copy = strdup(arg);
        char *host, *guest, *mode, *rest;

        if (!copy)
                return oom();
        rest = copy;
        host = strsep(&rest, ":");
        guest = strsep(&rest, ":");
        mode = strsep(&rest, ":");
        if (!guest || rest || !*host || !*guest || (mode && !*mode))
                return ctl_usage_error(a->verb, "--volume: '%s' is not HOST:GUEST[:MODE]", arg);
        if (sbx_spec_add_volume(a->spec, host, guest, mode ?: "rw") < 0)
                return oom();
        return CTL_PROCEED;
}

static int parse_port(CtlSpecArgs *a, const char *arg) {
        _cleanup_free_ char *host = NULL;
        const char *colon = strchr(arg, ':');
        uint64_t h, g;
        int r;

        if (!colon)
                return ctl_usage_error(a->verb, "--port: '%s' is not HOST:GUEST", arg);
        host = strndup(arg, colon - arg);
        if (!host)
                return oom();
        if ((r = ctl_parse_uint(a->verb, "--port HOST", host, 0, SBX_MAX_PORT, &h)) != CTL_PROCEED ||
            (r = ctl_parse_uint(a->verb, "--port GUEST", colon + 1, 1, SBX_MAX_PORT, &g)) != CTL_PROCEED)
                return r;
        if (sbx_spec_add_port(a->spec, (int64_t) h, (int64_t) g) < 0)
                return oom();
        return CTL_PROCEED;
}

static int parse_number(CtlSpecArgs *a, const char *name, const char *arg, int64_t *field) {
        uint64_t v;
        int r;

        r = ctl_parse_uint(a->verb, name, arg, 1, UINT32_MAX, &v);
        if (r == CTL_PROCEED)
                *field = (int64_t) v;
        return r;
}

int ctl_spec_option(int c, const char *arg, void *userdata) {
        CtlSpecArgs *a = userdata;

        if (c == CTL_ARG_SPEC) {
                a->spec_file = arg;
                return CTL_PROCEED;
        }
        if (!a->spec) {
                a->spec = sbx_spec_new();
                if (!a->spec)
                        return oom();
                a->spec->template_type = SBX_TEMPLATE_IMAGE;
        }
        a->have_options = true;
        switch (c) {
        case CTL_ARG_IMAGE:
                return set_string(&a->spec->image, arg);
        case CTL_ARG_SNAPSHOT:
                a->spec->template_type = SBX_TEMPLATE_SNAPSHOT;
                return set_string(&a->spec->snapshot_id, arg);
        case CTL_ARG_WORKDIR:
                return set_string(&a->spec->working_dir, arg);
        case CTL_ARG_CPUS:
                return parse_number(a, "--cpus", arg, &a->spec->cpus);
        case CTL_ARG_MEMORY:
                return parse_number(a, "--memory", arg, &a->spec->memory);
        case CTL_ARG_ENV:
                return parse_env(a, arg);
        case CTL_ARG_VOLUME:
                return parse_volume(a, arg);
        case CTL_ARG_PORT:
                return parse_port(a, arg);
        case CTL_ARG_ISOLATED:
                a->spec->network_isolated = true;
                return CTL_PROCEED;
        default:
                return ctl_usage_error(a->verb, "unexpected option");
        }
}

static int spec_from_file(const char *path, SbxSpec **ret) {
        _cleanup_(sbx_error_free) SbxError error = SBX_ERROR_NULL;
        _cleanup_free_ char *text = NULL;
        int r;

        if ((r = sbx_read_text_file(path, MAX_SPEC_FILE, &text, &error)) < 0 ||
            (r = sbx_spec_from_json_string(text, ret, &error)) < 0)
                return ctl_fail(path, r, &error);
        return CTL_PROCEED;
}

int ctl_spec_build(CtlSpecArgs *a, SbxSpec **ret) {
        if (a->spec_file && a->have_options)
                return ctl_usage_error(a->verb, "--spec cannot be combined with the single spec options");
        if (a->spec_file)
                return spec_from_file(a->spec_file, ret);
        if (a->spec && a->spec->image && a->spec->template_type == SBX_TEMPLATE_SNAPSHOT)
                return ctl_usage_error(a->verb, "--image and --snapshot are mutually exclusive");
        if (!a->spec && !(a->spec = sbx_spec_new()))
                return oom();
        if (!a->have_options)
                a->spec->template_type = SBX_TEMPLATE_IMAGE;
        *ret = TAKE_PTR(a->spec);
        return CTL_PROCEED;
}
