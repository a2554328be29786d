/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "bus-polkit.h"

/* A person may take a while to type a password. */
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (300ULL * 1000000ULL)


typedef struct Check {
        SbxPolkitCallback callback;
        void *userdata;
        bool interactive;
        uint64_t timeout_usec;
        char *action;
} Check;

static void check_free(void *p) {
        Check *c = p;
        free(c->action);
        free(c);
}

static int on_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Check *c = userdata;
        SbxError e = SBX_ERROR_NULL;
        int authorized, challenge, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *err = sd_bus_message_get_error(reply);

                /* No answer in time (sd-bus's own timeout is NoReply) is no refusal:
                 * polkit was slow, the caller may retry. */
                if (sd_bus_error_has_names(err, SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT))
                        r = sbx_error_set(&e, SBX_ERROR_AUTHORIZATION_TIMED_OUT,
                                          "Authorization for %s timed out: polkit did not answer within %g s; "
                                          "try again", c->action, (double) c->timeout_usec / 1e6);
                else
                        r = sbx_error_set(&e, SBX_ERROR_ACCESS_DENIED,
                                          "Authorization for %s failed: polkit answered %s: %s", c->action,
                                          err->name, err->message ?: "");
        } else if ((r = sd_bus_message_enter_container(reply, 'r', "bba{ss}")) < 0 ||
                   (r = sd_bus_message_read(reply, "bb", &authorized, &challenge)) < 0)
                r = sbx_error_set(&e, SBX_ERROR_ACCESS_DENIED, "Authorization for %s failed: malformed polkit reply",
                                  c->action);
        else if (authorized)
                r = 0;
        else if (challenge && !c->interactive)
                r = sbx_error_set(&e, SBX_ERROR_INTERACTIVE_AUTH_REQUIRED,
                                  "Interactive authentication required for %s", c->action);
        else
                r = sbx_error_set(&e, SBX_ERROR_ACCESS_DENIED, "Access denied: %s is not authorized", c->action);

        c->callback(r, &e, c->userdata);
        sbx_error_free(&e);
        return 0;
}

int sbx_polkit_check_async(sd_bus *bus, const char *sender, const char *action, const char *const *details,
                           bool interactive, uint64_t timeout_usec, SbxPolkitCallback callback, void *userdata,
                           sd_bus_slot **ret_slot) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        Check *c;
        int r;

        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.PolicyKit1",
                                           "/org/freedesktop/PolicyKit1/Authority",
                                           "org.freedesktop.PolicyKit1.Authority", "CheckAuthorization");
        if (r < 0)
                return r;
        r = sd_bus_message_append(m, "(sa{sv})s", "system-bus-name", 1, "name", "s",
                                  sender, action);
        if (r < 0)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{ss}")) < 0)
                return r;
        for (const char *const *d = details; d && d[0] && d[1]; d += 2)
                if ((r = sd_bus_message_append(m, "{ss}", d[0], d[1])) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0)
                return r;
        /* flags: 1 = AllowUserInteraction; no cancellation id */
        if ((r = sd_bus_message_append(m, "us", (uint32_t) interactive, "")) < 0)
                return r;

        c = calloc(1, sizeof(Check));
        if (!c)
                return -ENOMEM;
        *c = (Check) { .callback = callback, .userdata = userdata, .interactive = interactive,
                       .action = strdup(action) };
        if (!c->action) {
                free(c);
                return -ENOMEM;
        }
        if (timeout_usec == 0)
                timeout_usec = interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : SBX_POLKIT_TIMEOUT_USEC;
        c->timeout_usec = timeout_usec;
        r = sd_bus_call_async(bus, &slot, m, on_reply, c, timeout_usec);
        if (r < 0) {
                check_free(c);
                return r;
        }
        sd_bus_slot_set_destroy_callback(slot, check_free);
        *ret_slot = TAKE_PTR(slot);
        return 0;
}
