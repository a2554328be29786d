/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Reading the values of an a{sv} of options or of a spec, one key at a time, for
 * every a{sv} reader the daemon and the client share (bus-spec.h, bus-labels.h,
 * bus-lifetime.h). Each reader enters the variant of key, checks its type, reads it
 * and leaves the variant; a wrong type or a value out of range is InvalidArgs
 * naming the key (docs/api.md, "Errors"). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-bus.h>

#include "error.h"

/* Whether type is one of D-Bus's integer types (y n q i u x t). */
bool sbx_bus_type_is_integer(char type);
/* Reads a basic integer of that type into *ret: 1 for a 't' above INT64_MAX (its
 * bits in *ret), -EMEDIUMTYPE for a type that is no integer. */
int sbx_bus_read_integer(sd_bus_message *m, char type, int64_t *ret);
/* As sbx_bus_read_integer(), but -ERANGE for a 't' above INT64_MAX. */
int sbx_bus_read_any_int(sd_bus_message *m, char type, int64_t *ret);

/* A malformed message is the caller's fault as well: InvalidArgs "KEY: malformed value". */
int sbx_bus_malformed(SbxError *error, const char *key, int r);
/* InvalidArgs "KEY: more than SBX_MAX_INPUT_ENTRIES entries". */
int sbx_bus_too_many(SbxError *error, const char *key);

/* Enters the variant of key, which must hold exactly the signature want; and leaves it. */
int sbx_bus_enter_variant(sd_bus_message *m, const char *key, const char *want, SbxError *error);
int sbx_bus_exit_variant(sd_bus_message *m, const char *key, SbxError *error);

/* The variant of key as a string (*field replaced), a boolean, an integer of any
 * integer type within [min, max], a 't'-sized count (any integer type, not negative),
 * or a string of two values, no or yes (*ret: whether it is yes). */
int sbx_bus_read_string(sd_bus_message *m, const char *key, char **field, SbxError *error);
int sbx_bus_read_bool(sd_bus_message *m, const char *key, bool *field, SbxError *error);
int sbx_bus_read_int(sd_bus_message *m, const char *key, int64_t min, int64_t max, int64_t *ret,
                     SbxError *error);
int sbx_bus_read_u64(sd_bus_message *m, const char *key, uint64_t *ret, SbxError *error);
int sbx_bus_read_choice(sd_bus_message *m, const char *key, const char *no, const char *yes, bool *ret,
                        SbxError *error);

/* Walks an a{sv}, calling read_entry for each key with the message at its variant; a
 * key of keys (at most 32) seen twice is refused. */
int sbx_bus_read_dict(sd_bus_message *m, const char *const *keys, size_t n_keys,
                      int (*read_entry)(sd_bus_message *m, void *userdata, const char *key, SbxError *error),
                      void *userdata, SbxError *error);
/* A read_entry for a key no reader knows: InvalidArgs "KEY: unknown option". */
int sbx_bus_unknown_option(sd_bus_message *m, void *userdata, const char *key, SbxError *error);
