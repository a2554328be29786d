/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bus-lifetime.h"
#include "macro.h"

/* Seconds: any integer type, 0 to UINT32_MAX. */
static int read_seconds(sd_bus_message *m, const char *key, uint32_t *ret, SbxError *error) {
        int64_t v;
        int r = sbx_bus_read_int(m, key, 0, UINT32_MAX, &v, error);

        if (r >= 0)
                *ret = (uint32_t) v;
        return r;
}

int sbx_bus_read_lifetime_entry(sd_bus_message *m, const char *key, SbxLifetime *l, SbxError *error) {
        int r;

        if (streq(key, "idle_timeout")) {
                if ((r = read_seconds(m, key, &l->idle_timeout_s, error)) < 0)
                        return r;
                l->has_idle_timeout = true;
                return 0;
        }
        if (streq(key, "expire_after")) {
                l->has_expire_after = true;
                return read_seconds(m, key, &l->expire_after_s, error);
        }
        if (streq(key, "on_idle")) {
                l->has_on_idle = true;
                return sbx_bus_read_choice(m, key, "stop", "pause", &l->on_idle_pause, error);
        }
        if (streq(key, "idle_counts_processes")) {
                l->has_counts_processes = true;
                return sbx_bus_read_bool(m, key, &l->counts_processes, error);
        }
        return sbx_bus_unknown_option(m, NULL, key, error);
}

int sbx_lifetime_apply_policy(SbxLifetime *l, const SbxPolicy *p, SbxError *error) {
        int r = sbx_lifetime_check_policy(l, p, error);

        if (r < 0)
                return r;
        if (!l->has_idle_timeout)
                l->idle_timeout_s = (uint32_t) p->default_idle_timeout;
        return 0;
}

int sbx_lifetime_check_policy(const SbxLifetime *l, const SbxPolicy *p, SbxError *error) {
        if (l->idle_timeout_s > p->max_idle_timeout)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION, "idle_timeout: %" PRIu32 " s is above the host "
                                     "policy's max_idle_timeout (%" PRIi64 " s)", l->idle_timeout_s, p->max_idle_timeout);
        if (l->expire_after_s > p->max_expire_after)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION, "expire_after: %" PRIu32 " s is above the host "
                                     "policy's max_expire_after (%" PRIi64 " s)", l->expire_after_s, p->max_expire_after);
        return 0;
}
