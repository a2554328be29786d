/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "bus-labels.h"
#include "bus-read.h"
#include "json-util.h"
#include "observed.h"
#include "user-labels.h"

static int read_pairs(sd_bus_message *m, const char *key, json_object *labels, SbxError *error) {
        const char *k, *v;
        int r;

        if ((r = sd_bus_message_enter_container(m, 'a', "{ss}")) < 0)
                return sbx_bus_malformed(error, key, r);
        while ((r = sd_bus_message_read(m, "{ss}", &k, &v)) > 0)
                if ((r = sbx_user_labels_add(labels, k, v, error)) < 0)
                        return r;
        if (r < 0)
                return sbx_bus_malformed(error, key, r);
        r = sd_bus_message_exit_container(m);
        return r < 0 ? sbx_bus_malformed(error, key, r) : 0;
}

int sbx_bus_read_labels(sd_bus_message *m, const char *key, json_object **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *labels = json_object_new_object();
        int r;

        if (!labels)
                return -ENOMEM;
        if ((r = sbx_bus_enter_variant(m, key, "a{ss}", error)) < 0 || (r = read_pairs(m, key, labels, error)) < 0)
                return r;
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, key, r);
        json_object_put(*ret);
        *ret = TAKE_PTR(labels);
        return 0;
}

int sbx_bus_append_labels(sd_bus_message *m, json_object *labels) {
        int r = sd_bus_message_open_container(m, 'a', "{ss}");

        if (r >= 0 && labels) {
                json_object_object_foreach(labels, k, v)
                        if ((r = sd_bus_message_append(m, "{ss}", k, json_object_get_string(v))) < 0)
                                return r;
        }
        return r < 0 ? r : sd_bus_message_close_container(m);
}

static int read_state(sd_bus_message *m, char **ret, SbxError *error) {
        const char *s;
        int r;

        if ((r = sbx_bus_enter_variant(m, "state", "s", error)) < 0)
                return r;
        if ((r = sd_bus_message_read_basic(m, 's', &s)) < 0)
                return sbx_bus_malformed(error, "state", r);
        if (!streq(s, sbx_state_to_string(SBX_STATE_RUNNING)) && !streq(s, sbx_state_to_string(SBX_STATE_STOPPED)) &&
            !streq(s, sbx_state_to_string(SBX_STATE_PAUSED)))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "state: '%.64s' is none of \"running\", "
                                     "\"paused\", \"stopped\"", s);
        if (!(*ret = strdup(s)))
                return -ENOMEM;
        r = sd_bus_message_exit_container(m);
        return r < 0 ? sbx_bus_malformed(error, "state", r) : 0;
}

static int read_filter_entry(sd_bus_message *m, json_object **labels, char **state, SbxError *error) {
        const char *key;
        int r;

        if ((r = sd_bus_message_read_basic(m, 's', &key)) < 0)
                return sbx_bus_malformed(error, "filter", r);
        if (streq(key, "labels")) {
                if (*labels)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "labels: given twice");
                return sbx_bus_read_labels(m, key, labels, error);
        }
        if (streq(key, "state")) {
                if (*state)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "state: given twice");
                return read_state(m, state, error);
        }
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%.64s: unknown filter key", key);
}

int sbx_bus_read_copy_options(sd_bus_message *m, bool *ret_resume, SbxError *error) {
        bool seen = false;
        int b, r;

        *ret_resume = false;
        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0)
                return sbx_bus_malformed(error, "options", r);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                const char *key;

                if ((r = sd_bus_message_read_basic(m, 's', &key)) < 0)
                        return sbx_bus_malformed(error, "options", r);
                if (!streq(key, "resume"))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%.64s: unknown option", key);
                if (seen)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "resume: given twice");
                seen = true;
                if ((r = sbx_bus_enter_variant(m, key, "b", error)) < 0)
                        return r;
                if ((r = sd_bus_message_read_basic(m, 'b', &b)) < 0 || (r = sd_bus_message_exit_container(m)) < 0 ||
                    (r = sd_bus_message_exit_container(m)) < 0)
                        return sbx_bus_malformed(error, key, r);
                *ret_resume = b;
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "options", r);
        return 0;
}

int sbx_bus_read_find_filter(sd_bus_message *m, json_object **ret_labels, char **ret_state, SbxError *error) {
        _cleanup_(json_object_putp) json_object *labels = NULL;
        _cleanup_free_ char *state = NULL;
        int r;

        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0)
                return sbx_bus_malformed(error, "filter", r);
        while ((r = sd_bus_message_enter_container(m, 'e', "sv")) > 0) {
                if ((r = read_filter_entry(m, &labels, &state, error)) < 0)
                        return r;
                if ((r = sd_bus_message_exit_container(m)) < 0)
                        return sbx_bus_malformed(error, "filter", r);
        }
        if (r < 0 || (r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "filter", r);
        *ret_labels = TAKE_PTR(labels);
        *ret_state = TAKE_PTR(state);
        return 0;
}
