/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>

#include "json-util.h"
#include "spec-json.h"

#define NUL_REFUSED "contains U+0000 (NUL), which a spec cannot hold: refused rather than truncated"

static int get_string(const char *key, json_object *v, const char **ret, SbxError *error) {
        if (!json_object_is_type(v, json_type_string))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected a string", key);
        /* A C string ends at the first NUL: refuse rather than silently truncate. */
        if ((size_t) json_object_get_string_len(v) != strlen(json_object_get_string(v)))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: a string " NUL_REFUSED, key);
        *ret = json_object_get_string(v);
        return 0;
}

/* Any integer from INT64_MIN + 1 to INT64_MAX (xagent takes any int; range rules
 * are the admissibility check's). json-c saturates what it cannot hold without
 * saying so: above INT64_MAX it keeps a uint64, which tells; below INT64_MIN it
 * keeps INT64_MIN itself, so that value is refused as one that may stand for a
 * smaller number. */
static int get_int(const char *key, json_object *v, int64_t *ret, SbxError *error) {
        int64_t i;

        if (!json_object_is_type(v, json_type_int))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected an integer", key);
        i = json_object_get_int64(v);
        if (i == INT64_MIN || (i == INT64_MAX && json_object_get_uint64(v) != (uint64_t) INT64_MAX))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: %s is outside the range %" PRIi64 "–%" PRIi64 " of this JSON reader",
                                     key, json_object_to_json_string(v), INT64_MIN + 1, INT64_MAX);
        *ret = i;
        return 0;
}

static int get_array(const char *key, json_object *v, size_t len, size_t max, SbxError *error) {
        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected an array", key);
        if (len > 0 && json_object_array_length(v) != len)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: expected %zu elements", key, len);
        if (json_object_array_length(v) > max)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: more than %zu entries", key, max);
        return 0;
}

static int parse_env(SbxSpec *s, json_object *v, SbxError *error) {
        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: expected an object of strings");
        if ((size_t) json_object_object_length(v) > SBX_MAX_INPUT_ENTRIES)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: more than %d variables",
                                     SBX_MAX_INPUT_ENTRIES);
        json_object_object_foreach(v, key, val) {
                const char *value;
                int r;

                if ((r = get_string("env", val, &value, error)) < 0)
                        return r;
                if ((r = sbx_spec_add_env(s, key, value)) < 0)
                        return r;
        }
        return 0;
}

static int parse_volumes(SbxSpec *s, json_object *v, SbxError *error) {
        int r;

        if ((r = get_array("volumes", v, 0, SBX_MAX_INPUT_ENTRIES, error)) < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *t = json_object_array_get_idx(v, i);
                const char *host, *guest, *mode;

                if ((r = get_array("volumes", t, 3, 3, error)) < 0 ||
                    (r = get_string("volumes", json_object_array_get_idx(t, 0), &host, error)) < 0 ||
                    (r = get_string("volumes", json_object_array_get_idx(t, 1), &guest, error)) < 0 ||
                    (r = get_string("volumes", json_object_array_get_idx(t, 2), &mode, error)) < 0)
                        return r;
                if ((r = sbx_spec_add_volume(s, host, guest, mode)) < 0)
                        return r;
        }
        return 0;
}

static int parse_ports(SbxSpec *s, json_object *v, SbxError *error) {
        int r;

        if ((r = get_array("ports", v, 0, SBX_MAX_INPUT_ENTRIES, error)) < 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(v); i++) {
                json_object *t = json_object_array_get_idx(v, i);
                int64_t host, guest;

                if ((r = get_array("ports", t, 2, 2, error)) < 0 ||
                    (r = get_int("ports", json_object_array_get_idx(t, 0), &host, error)) < 0 ||
                    (r = get_int("ports", json_object_array_get_idx(t, 1), &guest, error)) < 0)
                        return r;
                if ((r = sbx_spec_add_port(s, host, guest)) < 0)
                        return r;
        }
        return 0;
}

static int set_string(const char *key, json_object *v, char **field, SbxError *error) {
        const char *str;
        int r = get_string(key, v, &str, error);

        if (r < 0)
                return r;
        free(*field);
        *field = strdup(str);
        return *field ? 0 : -ENOMEM;
}

/* null is Python's None: from_parts() then uses the default. */
static bool null_is_default(const char *key) {
        static const char *const keys[] = { "working_dir", "cpus", "memory", "env", "volumes", "ports" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (streq(key, keys[i]))
                        return true;
        return false;
}

static int parse_key(SbxSpec *s, const char *key, json_object *v, SbxError *error) {
        if (!v && null_is_default(key))
                return 0;
        if (streq(key, "image"))
                return set_string(key, v, &s->image, error);
        if (streq(key, "snapshot")) {
                s->template_type = SBX_TEMPLATE_SNAPSHOT;
                return set_string(key, v, &s->snapshot_id, error);
        }
        if (streq(key, "working_dir"))
                return set_string(key, v, &s->working_dir, error);
        if (streq(key, "cpus"))
                return get_int(key, v, &s->cpus, error);
        if (streq(key, "memory"))
                return get_int(key, v, &s->memory, error);
        if (streq(key, "env"))
                return parse_env(s, v, error);
        if (streq(key, "volumes"))
                return parse_volumes(s, v, error);
        if (streq(key, "network_isolated")) {
                if (!json_object_is_type(v, json_type_boolean))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "network_isolated: expected a boolean");
                s->network_isolated = json_object_get_boolean(v);
                return 0;
        }
        if (streq(key, "ports"))
                return parse_ports(s, v, error);
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key", key);
}

static int spec_from_json(json_object *obj, SbxSpec **ret, SbxError *error) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = NULL;
        int r;

        if (!json_object_is_type(obj, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "spec: expected a JSON object");
        s = sbx_spec_new();
        if (!s)
                return -ENOMEM;
        s->template_type = SBX_TEMPLATE_IMAGE;

        json_object_object_foreach(obj, key, val)
                if ((r = parse_key(s, key, val, error)) < 0)
                        return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int sbx_spec_from_json_string(const char *text, SbxSpec **ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *obj = NULL;
        int r;

        if ((r = sbx_json_parse_strict(text, "spec", &obj, error)) < 0)
                return r;
        return spec_from_json(obj, ret, error);
}

int sbx_spec_to_json(const SbxSpec *s, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *env = json_object_new_object(),
                                                *vols = json_object_new_array(), *ports = json_object_new_array();
        int r;

        if (!o || !env || !vols || !ports)
                return -ENOMEM;

        for (size_t i = 0; i < s->n_env; i++)
                if ((r = sbx_json_put(env, s->env[i].key, json_object_new_string(s->env[i].value))) < 0)
                        return r;
        for (size_t i = 0; i < s->n_volumes; i++) {
                json_object *t = json_object_new_array_ext(3);
                if (!t || sbx_json_push(vols, t) < 0)
                        return -ENOMEM;
                if ((r = sbx_json_push(t, json_object_new_string(s->volumes[i].host))) < 0 ||
                    (r = sbx_json_push(t, json_object_new_string(s->volumes[i].guest))) < 0 ||
                    (r = sbx_json_push(t, json_object_new_string(s->volumes[i].mode))) < 0)
                        return r;
        }
        for (size_t i = 0; i < s->n_ports; i++) {
                json_object *t = json_object_new_array_ext(2);
                if (!t || sbx_json_push(ports, t) < 0)
                        return -ENOMEM;
                if ((r = sbx_json_push(t, json_object_new_int64(s->ports[i].host))) < 0 ||
                    (r = sbx_json_push(t, json_object_new_int64(s->ports[i].guest))) < 0)
                        return r;
        }

        if (s->template_type == SBX_TEMPLATE_SNAPSHOT)
                r = sbx_json_put(o, "snapshot", json_object_new_string(s->snapshot_id ?: ""));
        else
                r = sbx_json_put(o, "image", json_object_new_string(s->image ?: ""));
        if (r < 0 ||
            (r = sbx_json_put(o, "working_dir", json_object_new_string(s->working_dir))) < 0 ||
            (r = sbx_json_put(o, "cpus", json_object_new_int64(s->cpus))) < 0 ||
            (r = sbx_json_put(o, "memory", json_object_new_int64(s->memory))) < 0 ||
            (r = sbx_json_put(o, "env", TAKE_PTR(env))) < 0 ||
            (r = sbx_json_put(o, "volumes", TAKE_PTR(vols))) < 0 ||
            (r = sbx_json_put(o, "network_isolated", json_object_new_boolean(s->network_isolated))) < 0 ||
            (r = sbx_json_put(o, "ports", TAKE_PTR(ports))) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

int sbx_spec_to_json_string(const SbxSpec *spec, char **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *str;
        int r;

        if ((r = sbx_spec_to_json(spec, &o)) < 0)
                return r;
        str = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (!str)
                return -ENOMEM;
        *ret = strdup(str);
        return *ret ? 0 : -ENOMEM;
}
