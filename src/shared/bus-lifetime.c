/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bus-lifetime.h"
#include "macro.h"

bool sbx_bus_type_is_integer(char type) {
        return type != 0 && strchr("ynqiuxt", type);
}

int sbx_bus_read_integer(sd_bus_message *m, char type, int64_t *ret) {
        union {
                uint8_t y;
                int16_t n;
                uint16_t q;
                int32_t i;
                uint32_t u;
                int64_t x;
                uint64_t t;
        } v;
        int r;

        if (!sbx_bus_type_is_integer(type))
                return -EMEDIUMTYPE;
        if ((r = sd_bus_message_read_basic(m, type, &v)) < 0)
                return r;
        switch (type) {
        case 'y': *ret = v.y; break;
        case 'n': *ret = v.n; break;
        case 'q': *ret = v.q; break;
        case 'i': *ret = v.i; break;
        case 'u': *ret = v.u; break;
        case 'x': *ret = v.x; break;
        default:
                *ret = (int64_t) v.t;
                return v.t > INT64_MAX;
        }
        return 0;
}

static int malformed(SbxError *error, const char *key, int r) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: malformed value (%s)", key, strerror(-r));
}

/* Seconds: any integer type, 0 to UINT32_MAX. */
static int read_seconds(sd_bus_message *m, const char *key, uint32_t *ret, SbxError *error) {
        const char *contents;
        int64_t v;
        char type;
        int r, big;

        if ((r = sd_bus_message_peek_type(m, &type, &contents)) < 0)
                return malformed(error, key, r);
        if (!contents || strlen(contents) != 1 || !sbx_bus_type_is_integer(contents[0]))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected an integer (seconds), got '%s'",
                                     key, contents ?: "?");
        if ((r = sd_bus_message_enter_container(m, 'v', contents)) < 0 ||
            (r = big = sbx_bus_read_integer(m, contents[0], &v)) < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return malformed(error, key, r);
        if (big > 0 || v < 0 || v > UINT32_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %" PRIi64 " is outside 0–%" PRIu32, key, v,
                                     UINT32_MAX);
        *ret = (uint32_t) v;
        return 0;
}

static int read_on_idle(sd_bus_message *m, SbxLifetime *l, SbxError *error) {
        const char *s;
        int r;

        if ((r = sd_bus_message_enter_container(m, 'v', "s")) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "on_idle: expected a value of type 's'");
        if ((r = sd_bus_message_read_basic(m, 's', &s)) < 0)
                return malformed(error, "on_idle", r);
        if (!streq(s, "stop") && !streq(s, "pause"))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "on_idle: '%.64s' is neither \"stop\" nor \"pause\"", s);
        l->on_idle_pause = streq(s, "pause");
        r = sd_bus_message_exit_container(m);
        return r < 0 ? malformed(error, "on_idle", r) : 0;
}

static int read_flag(sd_bus_message *m, const char *key, bool *ret, SbxError *error) {
        int b, r;

        if ((r = sd_bus_message_enter_container(m, 'v', "b")) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected a value of type 'b'", key);
        if ((r = sd_bus_message_read_basic(m, 'b', &b)) < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return malformed(error, key, r);
        *ret = b;
        return 0;
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
                return read_on_idle(m, l, error);
        }
        if (streq(key, "idle_counts_processes")) {
                l->has_counts_processes = true;
                return read_flag(m, key, &l->counts_processes, error);
        }
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown option", key);
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
