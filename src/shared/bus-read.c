/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bus-read.h"
#include "macro.h"
#include "spec.h"

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

int sbx_bus_malformed(SbxError *error, const char *key, int r) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: malformed value (%s)", key, strerror(-r));
}

int sbx_bus_enter_variant(sd_bus_message *m, const char *key, const char *want, SbxError *error) {
        const char *contents;
        char type;
        int r;

        if ((r = sd_bus_message_peek_type(m, &type, &contents)) < 0)
                return sbx_bus_malformed(error, key, r);
        if (!streq(contents, want))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected a value of type '%s', got '%s'",
                                     key, want, contents);
        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, want);
        return r < 0 ? sbx_bus_malformed(error, key, r) : 0;
}

int sbx_bus_exit_variant(sd_bus_message *m, const char *key, SbxError *error) {
        int r = sd_bus_message_exit_container(m);
        return r < 0 ? sbx_bus_malformed(error, key, r) : 0;
}

int sbx_bus_read_string(sd_bus_message *m, const char *key, char **field, SbxError *error) {
        const char *s;
        int r;

        if ((r = sbx_bus_enter_variant(m, key, "s", error)) < 0)
                return r;
        if ((r = sd_bus_message_read_basic(m, 's', &s)) < 0)
                return sbx_bus_malformed(error, key, r);
        free(*field);
        *field = strdup(s);
        if (!*field)
                return -ENOMEM;
        return sbx_bus_exit_variant(m, key, error);
}

int sbx_bus_read_any_int(sd_bus_message *m, char type, int64_t *ret) {
        int r = sbx_bus_read_integer(m, type, ret);

        return r > 0 ? -ERANGE : r;
}

static bool is_int_type(const char *contents) {
        return contents && strlen(contents) == 1 && sbx_bus_type_is_integer(contents[0]);
}

/* Enters the variant of key, which must hold an integer of any type; its type. */
static int enter_int(sd_bus_message *m, const char *key, char *ret_type, SbxError *error) {
        const char *contents;
        int r;

        if ((r = sd_bus_message_peek_type(m, NULL, &contents)) < 0)
                return sbx_bus_malformed(error, key, r);
        if (!is_int_type(contents))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: expected an integer (any of y n q i u x t), got '%s'", key, contents);
        *ret_type = contents[0];
        if ((r = sd_bus_message_enter_container(m, SD_BUS_TYPE_VARIANT, contents)) < 0)
                return sbx_bus_malformed(error, key, r);
        return 0;
}

int sbx_bus_read_int(sd_bus_message *m, const char *key, int64_t min, int64_t max, int64_t *ret,
                     SbxError *error) {
        int64_t v;
        char type;
        int r;

        if ((r = enter_int(m, key, &type, error)) < 0)
                return r;
        r = sbx_bus_read_any_int(m, type, &v);
        if (r == -ERANGE || (r >= 0 && (v < min || v > max)))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: the value is outside %" PRIi64 "–%" PRIi64,
                                     key, min, max);
        if (r < 0)
                return sbx_bus_malformed(error, key, r);
        *ret = v;
        return sbx_bus_exit_variant(m, key, error);
}

int sbx_bus_too_many(SbxError *error, const char *key) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: more than %u entries", key,
                             (unsigned) SBX_MAX_INPUT_ENTRIES);
}


int sbx_bus_read_bool(sd_bus_message *m, const char *key, bool *field, SbxError *error) {
        int b, r;

        if ((r = sbx_bus_enter_variant(m, key, "b", error)) < 0)
                return r;
        if ((r = sd_bus_message_read_basic(m, 'b', &b)) < 0)
                return sbx_bus_malformed(error, key, r);
        *field = b;
        return sbx_bus_exit_variant(m, key, error);
}


int sbx_bus_read_dict(sd_bus_message *m, const char *const *keys, size_t n_keys,
                     int (*read_entry)(sd_bus_message *m, void *userdata, const char *key, SbxError *error),
                     void *userdata, SbxError *error) {
        unsigned seen = 0;
        int r;

        if ((r = sd_bus_message_enter_container(m, 'a', "{sv}")) < 0)
                return sbx_bus_malformed(error, "a{sv}", r);
        for (;;) {
                const char *key;

                r = sd_bus_message_enter_container(m, 'e', "sv");
                if (r < 0)
                        return sbx_bus_malformed(error, "a{sv}", r);
                if (r == 0)
                        break;
                if ((r = sd_bus_message_read_basic(m, 's', &key)) < 0)
                        return sbx_bus_malformed(error, "a{sv}", r);
                for (size_t i = 0; i < n_keys; i++)
                        if (streq(key, keys[i])) {
                                if (seen & (1u << i))
                                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: given twice", key);
                                seen |= 1u << i;
                        }
                if ((r = read_entry(m, userdata, key, error)) < 0)
                        return r;
                if ((r = sd_bus_message_exit_container(m)) < 0)
                        return sbx_bus_malformed(error, key, r);
        }
        r = sd_bus_message_exit_container(m);
        return r < 0 ? sbx_bus_malformed(error, "a{sv}", r) : 0;
}


int sbx_bus_unknown_option(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown option", key);
}


int sbx_bus_read_choice(sd_bus_message *m, const char *key, const char *no, const char *yes, bool *ret,
                       SbxError *error) {
        _cleanup_free_ char *mode = NULL;
        int r = sbx_bus_read_string(m, key, &mode, error);

        if (r >= 0 && !streq(mode, no) && !streq(mode, yes))
                r = sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: '%s' is neither \"%s\" nor \"%s\"", key, mode,
                                  no, yes);
        if (r >= 0)
                *ret = streq(mode, yes);
        return r < 0 ? r : 0;
}


/* A 't' of any size (offset, length): sbx_bus_read_int()'s range is int64's. */
int sbx_bus_read_u64(sd_bus_message *m, const char *key, uint64_t *ret, SbxError *error) {
        int64_t v;
        char type;
        int r;

        if ((r = enter_int(m, key, &type, error)) < 0)
                return r;
        if ((r = sbx_bus_read_integer(m, type, &v)) < 0)
                return sbx_bus_malformed(error, key, r);
        if (r == 0 && v < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %" PRIi64 " is negative", key, v);
        *ret = (uint64_t) v;
        return sbx_bus_exit_variant(m, key, error);
}

