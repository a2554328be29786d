/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "bus-egress.h"

static int bad(SbxError *error, const char *what, int r) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.%s: wrong type (%s)", what, strerror(-r));
}

int sbx_bus_read_egress(sd_bus_message *m, SbxEgress *ret, SbxError *error) {
        _cleanup_strv_free_ char **allow = NULL;
        _cleanup_free_ char *mode = NULL;
        size_t n_allow = 0;
        int r;

        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0)
                return bad(error, "", r);
        for (;;) {
                const char *key, *s;

                if ((r = sd_bus_message_enter_container(m, 'e', "sv")) < 0)
                        return bad(error, "", r);
                if (r == 0)
                        break;
                if ((r = sd_bus_message_read_basic(m, 's', &key)) < 0)
                        return bad(error, "", r);
                if (streq(key, "mode")) {
                        if (mode)
                                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.mode: given twice");
                        if ((r = sd_bus_message_read(m, "v", "s", &s)) < 0)
                                return bad(error, key, r);
                        if (!(mode = strdup(s)))
                                return -ENOMEM;
                } else if (streq(key, "allow")) {
                        if (allow)
                                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.allow: given twice");
                        if ((r = sd_bus_message_enter_container(m, 'v', "as")) < 0 ||
                            (r = sd_bus_message_read_strv(m, &allow)) < 0 ||
                            (r = sd_bus_message_exit_container(m)) < 0)
                                return bad(error, key, r);
                        while (allow && allow[n_allow])
                                n_allow++;
                } else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "egress.%s: unknown key (known: mode, allow)", key);
                if ((r = sd_bus_message_exit_container(m)) < 0)
                        return bad(error, key, r);
        }
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return bad(error, "", r);
        if (!mode && n_allow > 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "egress.mode: missing (entries are for \"allowlist\" or \"default\")");
        return sbx_egress_build(mode, allow, n_allow, ret, error);
}

int sbx_bus_read_egress_entry(sd_bus_message *m, const char *key, SbxEgress *ret, bool *ret_given, SbxError *error) {
        int r;

        if ((r = sd_bus_message_enter_container(m, 'v', "a{sv}")) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be a{sv} (mode, allow)", key);
        if ((r = sbx_bus_read_egress(m, ret, error)) < 0)
                return r;
        *ret_given = true;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? bad(error, "", r) : 0;
}

int sbx_egress_admit(const SbxPolicy *p, const SbxEgress *e, bool network_isolated, SbxError *error) {
        int r = sbx_egress_check(&p->egress, e, error);

        if (r < 0)
                return r;
        if (network_isolated && e->mode == SBX_EGRESS_MODE_ALLOWLIST)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "egress.mode: a network_isolated sandbox has no network: its egress stays none");
        /* A remote engine's sandboxes are in no namespace this host can enter: a bridge
         * sandbox there is made only where the administrator chose "open". */
        if (sbx_policy_engine_remote(p) &&
            sbx_egress_effective(&p->egress, e, network_isolated) != SBX_EGRESS_EFFECTIVE_OPEN &&
            sbx_egress_needs_rules(&p->egress, e, network_isolated))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "egress: the engine is remote (engine.host %s): its sandboxes' network "
                                     "namespaces are not on this host, so egress %s cannot be enforced (create it "
                                     "network_isolated, or the policy's egress.default \"open\" allows it)",
                                     p->engine.host, sbx_egress_effective_to_string(
                                             sbx_egress_effective(&p->egress, e, network_isolated)));
        return 0;
}

static int append_cidrs(sd_bus_message *m, const char *key, const SbxCidr *list, size_t n) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', key)) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "as")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "s")) < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char buf[SBX_CIDR_STRLEN];

                if ((r = sd_bus_message_append_basic(m, 's', sbx_cidr_to_string(&list[i], buf))) < 0)
                        return r;
        }
        if ((r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int sbx_bus_append_policy_egress(sd_bus_message *m, const SbxPolicyEgress *p) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "egress")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{sv}")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(m, "{sv}{sv}{sv}", "default", "s", sbx_egress_base_to_string(p->base),
                                       "max_rules", "t", (uint64_t) p->max_rules, "names", "b", (int) p->names)) < 0 ||
            (r = append_cidrs(m, "always_deny", p->always_deny, p->n_always_deny)) < 0 ||
            (r = append_cidrs(m, "allowed", p->allowed, p->n_allowed)) < 0 ||
            (r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "resolvers")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "as")) < 0 ||
            (r = sd_bus_message_append_strv(m, p->resolvers)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0 || (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int sbx_bus_append_egress(sd_bus_message *m, const char *mode, char *const *allow) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (r = sd_bus_message_append(m, "{sv}", "mode", "s", mode)) < 0 ||
            (r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "allow")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "as")) < 0 ||
            (r = sd_bus_message_append_strv(m, (char **) allow)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}
