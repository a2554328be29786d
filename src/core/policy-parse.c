/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The host policy's defaults, its lifetime (reference counted) and its parsing from
 * the text of /etc/xagent/sandboxd.json (policy.h): one parser per key, the keys of
 * the engine, the registries and the warm pools in their own files (policy-engine.c,
 * policy-registry.c, policy-pool.c, declared in policy-internal.h). The decisions
 * made with a policy are in policy-check.c. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "policy.h"
#include "policy-internal.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(json_tokener *, json_tokener_free);

static void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(v[i]);
        free(v);
}

static void roots_free_n(SbxVolumeRoot *r, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(r[i].path);
        free(r);
}

SbxPolicy *sbx_policy_free(SbxPolicy *p) {
        if (!p)
                return NULL;
        free(p->default_image);
        strv_free_n(p->allowed_images, p->n_allowed_images);
        roots_free_n(p->volume_roots, p->n_volume_roots);
        free(p->publish_address);
        policy_engine_done(&p->engine);
        sbx_policy_egress_done(&p->egress);
        policy_registries_free(p);
        policy_pools_free(p);
        sbx_runtimes_done(&p->runtimes);
        free(p);
        return NULL;
}

SbxPolicy *sbx_policy_ref(SbxPolicy *p) {
        if (p)
                __atomic_add_fetch(&p->n_ref, 1, __ATOMIC_RELAXED);
        return p;
}

SbxPolicy *sbx_policy_unref(SbxPolicy *p) {
        if (p && __atomic_sub_fetch(&p->n_ref, 1, __ATOMIC_ACQ_REL) == 0)
                sbx_policy_free(p);
        return NULL;
}

SbxPolicy *sbx_policy_new_default(void) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = calloc(1, sizeof(SbxPolicy));
        if (!p)
                return NULL;

        p->n_ref = 1;
        p->max_cpus = SBX_POLICY_DEFAULT_MAX_CPUS;
        p->max_memory_mib = SBX_POLICY_DEFAULT_MAX_MEMORY_MIB;
        p->max_sandboxes_per_user = SBX_POLICY_DEFAULT_MAX_SANDBOXES_PER_USER;
        p->pids_limit = SBX_POLICY_DEFAULT_PIDS_LIMIT;
        p->max_execs_per_user = SBX_POLICY_DEFAULT_MAX_EXECS_PER_USER;
        p->max_execs = SBX_POLICY_DEFAULT_MAX_EXECS;
        p->max_leases_per_user = SBX_POLICY_DEFAULT_MAX_LEASES_PER_USER;
        p->max_leases_per_sandbox = SBX_POLICY_DEFAULT_MAX_LEASES_PER_SANDBOX;
        p->max_idle_timeout = SBX_POLICY_DEFAULT_MAX_IDLE_TIMEOUT;
        p->max_expire_after = SBX_POLICY_DEFAULT_MAX_EXPIRE_AFTER;
        p->host_port_min = SBX_POLICY_DEFAULT_HOST_PORT_MIN;
        p->max_operations_per_user = SBX_POLICY_DEFAULT_MAX_OPERATIONS_PER_USER;
        p->max_reads_per_user = SBX_POLICY_DEFAULT_MAX_READS_PER_USER;
        p->max_stop_timeout = SBX_POLICY_DEFAULT_MAX_STOP_TIMEOUT;
        p->docker_timeout = SBX_POLICY_DEFAULT_DOCKER_TIMEOUT;
        p->observation_max_age = SBX_POLICY_DEFAULT_OBSERVATION_MAX_AGE;
        p->max_disk_mib = SBX_POLICY_DEFAULT_MAX_DISK_MIB;
        p->max_file_bytes = SBX_POLICY_DEFAULT_MAX_FILE_BYTES;
        p->max_process_output = SBX_POLICY_DEFAULT_MAX_PROCESS_OUTPUT;
        p->max_image_mib = SBX_POLICY_DEFAULT_MAX_IMAGE_MIB;
        p->python_version = SBX_PYTHON_DEFAULT;
        p->max_pooled = SBX_POLICY_DEFAULT_MAX_POOLED;
        if (policy_digest(p, "") < 0)
                return NULL;

        p->default_image = strdup(SBX_POLICY_DEFAULT_IMAGE);
        p->publish_address = strdup(SBX_POLICY_DEFAULT_PUBLISH_ADDRESS);
        p->allowed_images = calloc(1, sizeof(char *));
        p->volume_roots = calloc(1, sizeof(SbxVolumeRoot));
        if (!p->default_image || !p->publish_address || !p->allowed_images || !p->volume_roots ||
            sbx_policy_egress_init(&p->egress) < 0)
                return NULL;

        p->allowed_images[0] = strdup(SBX_POLICY_DEFAULT_ALLOWED_IMAGE);
        if (!p->allowed_images[0])
                return NULL;
        p->n_allowed_images = 1;

        p->volume_roots[0] = (SbxVolumeRoot) {
                .path = strdup(SBX_POLICY_DEFAULT_VOLUME_ROOT),
                .modes = SBX_VOLUME_MODE_RO | SBX_VOLUME_MODE_RW,
        };
        if (!p->volume_roots[0].path)
                return NULL;
        p->n_volume_roots = 1;

        return TAKE_PTR(p);
}

/* ---- parsing ---------------------------------------------------------------- */

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static bool is_image_text(const char *s) {
        for (; *s; s++)
                if (*s <= 0x20 || *s >= 0x7f)
                        return false;
        return true;
}

/* An image reference or a glob over them: non-empty printable ASCII without spaces. */
static int get_image_text(const char *field, json_object *v, const char **ret, SbxError *error) {
        const char *s;
        int r;

        if ((r = sbx_json_get_text(field, v, &s, error)) < 0)
                return r;
        if (isempty(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must not be empty", field);
        if (strlen(s) > SBX_MAX_IMAGE_LEN)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: longer than %d bytes",
                                     field, SBX_MAX_IMAGE_LEN);
        if (!is_image_text(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not printable ASCII without spaces", field, s);
        *ret = s;
        return 0;
}

static int replace_string(char **dst, const char *s) {
        char *c = strdup(s);
        if (!c)
                return -ENOMEM;
        free(*dst);
        *dst = c;
        return 0;
}

static int parse_default_image(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        const char *s;
        int r;

        if ((r = get_image_text(key, v, &s, error)) < 0)
                return r;
        return replace_string(&p->default_image, s);
}

static int parse_allowed_images(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        char **globs;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an array of strings", key);

        n = json_object_array_length(v);
        globs = calloc(n + 1, sizeof(char *));
        if (!globs)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[64];
                const char *s;

                snprintf(field, sizeof field, "%s[%zu]", key, i);
                r = get_image_text(field, json_object_array_get_idx(v, i), &s, error);
                if (r >= 0 && !(globs[i] = strdup(s)))
                        r = -ENOMEM;
                if (r < 0) {
                        strv_free_n(globs, i);
                        return r;
                }
        }

        strv_free_n(p->allowed_images, p->n_allowed_images);
        p->allowed_images = globs;
        p->n_allowed_images = n;
        return 0;
}

/* A root pattern is absolute from the start ("/…") or starts with the owner's home
 * ("%h" alone or "%h/…"); the only escapes are %h %u %U and %%. */
static int check_root_pattern(const char *field, const char *s, SbxError *error) {
        if (isempty(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must not be empty", field);
        if (strlen(s) > SBX_MAX_PATH_LEN)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: longer than %d bytes",
                                     field, SBX_MAX_PATH_LEN);
        if (has_control(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: contains control characters", field);
        if (s[0] != '/' && !(s[0] == '%' && s[1] == 'h' && (s[2] == 0 || s[2] == '/')))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not an absolute path (start with '/' or '%%h')", field, s);
        for (const char *c = s; *c; c++) {
                if (*c != '%')
                        continue;
                c++;
                if (!*c)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: '%s' ends in a lone '%%'", field, s);
                if (!strchr("huU%", *c))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: unknown escape '%%%c' in '%s' (known: %%h %%u %%U %%%%)",
                                             field, *c, s);
        }
        return 0;
}

static int parse_modes(const char *field, json_object *v, unsigned *ret, SbxError *error) {
        unsigned modes = 0;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an array of \"ro\"/\"rw\"", field);
        n = json_object_array_length(v);
        if (n == 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: must name at least one of \"ro\", \"rw\"", field);
        for (size_t i = 0; i < n; i++) {
                const char *s;

                if ((r = sbx_json_get_text(field, json_object_array_get_idx(v, i), &s, error)) < 0)
                        return r;
                if (streq(s, "ro"))
                        modes |= SBX_VOLUME_MODE_RO;
                else if (streq(s, "rw"))
                        modes |= SBX_VOLUME_MODE_RW;
                else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: unknown mode '%s' (known: \"ro\", \"rw\")", field, s);
        }
        *ret = modes;
        return 0;
}

static int parse_root(const char *field, json_object *v, SbxVolumeRoot *ret, SbxError *error) {
        json_object *path = NULL, *modes = NULL;
        char sub[96];
        const char *s;
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: must be an object { \"path\": …, \"modes\": […] }", field);
        json_object_object_foreach(v, k, val) {
                if (streq(k, "path"))
                        path = val;
                else if (streq(k, "modes"))
                        modes = val;
                else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key '%s'", field, k);
        }
        if (!json_object_object_get_ex(v, "path", NULL))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.path: missing", field);
        if (!json_object_object_get_ex(v, "modes", NULL))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.modes: missing", field);

        snprintf(sub, sizeof sub, "%s.path", field);
        if ((r = sbx_json_get_text(sub, path, &s, error)) < 0 ||
            (r = check_root_pattern(sub, s, error)) < 0)
                return r;
        snprintf(sub, sizeof sub, "%s.modes", field);
        if ((r = parse_modes(sub, modes, &ret->modes, error)) < 0)
                return r;

        ret->path = strdup(s);
        return ret->path ? 0 : -ENOMEM;
}

static int parse_volume_roots(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        SbxVolumeRoot *roots;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an array of objects", key);

        n = json_object_array_length(v);
        roots = calloc(n + 1, sizeof(SbxVolumeRoot));
        if (!roots)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[64];

                snprintf(field, sizeof field, "%s[%zu]", key, i);
                r = parse_root(field, json_object_array_get_idx(v, i), &roots[i], error);
                if (r < 0) {
                        roots_free_n(roots, i);
                        return r;
                }
        }

        roots_free_n(p->volume_roots, p->n_volume_roots);
        p->volume_roots = roots;
        p->n_volume_roots = n;
        return 0;
}

static int parse_publish_address(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        unsigned char buf[sizeof(struct in6_addr)];
        const char *s;
        int r;

        if ((r = sbx_json_get_text(key, v, &s, error)) < 0)
                return r;
        if (inet_pton(AF_INET, s, buf) != 1 && inet_pton(AF_INET6, s, buf) != 1)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not an IPv4 or IPv6 address literal", key, s);
        return replace_string(&p->publish_address, s);
}

/* The numeric keys: whole JSON numbers within [min, max]. */
static int parse_runtimes(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        return sbx_runtimes_parse(&p->runtimes, key, v, error);
}

static const struct {
        const char *key;
        size_t offset;
        int64_t min, max;
} int_keys[] = {
#define INT_KEY(k, lo, hi) { #k, offsetof(SbxPolicy, k), lo, hi }
        INT_KEY(max_cpus,               SBX_MIN_CPUS,       SBX_MAX_CPUS),
        INT_KEY(max_memory_mib,         SBX_MIN_MEMORY_MIB, SBX_MAX_MEMORY_MIB),
        INT_KEY(max_sandboxes_per_user, 1,                  SBX_POLICY_MAX_SANDBOXES_PER_USER_LIMIT),
        INT_KEY(pids_limit,             1,                  SBX_POLICY_PIDS_LIMIT_MAX),
        INT_KEY(max_execs_per_user,     1,                  SBX_POLICY_MAX_EXECS_LIMIT),
        INT_KEY(max_execs,              1,                  SBX_POLICY_MAX_EXECS_LIMIT),
        INT_KEY(max_leases_per_user,    1,                  SBX_POLICY_MAX_LEASES_LIMIT),
        INT_KEY(max_leases_per_sandbox, 1,                  SBX_POLICY_MAX_LEASES_LIMIT),
        INT_KEY(max_idle_timeout,       0,                  SBX_POLICY_LIFETIME_LIMIT),
        INT_KEY(max_expire_after,       0,                  SBX_POLICY_LIFETIME_LIMIT),
        INT_KEY(default_idle_timeout,   0,                  SBX_POLICY_LIFETIME_LIMIT),
        INT_KEY(host_port_min,          1,                  SBX_MAX_PORT),
        INT_KEY(max_operations_per_user, 1,                 SBX_POLICY_MAX_OPERATIONS_PER_USER_LIMIT),
        INT_KEY(max_reads_per_user,     1,                  SBX_POLICY_MAX_READS_PER_USER_LIMIT),
        INT_KEY(max_stop_timeout,       0,                  SBX_POLICY_MAX_STOP_TIMEOUT_LIMIT),
        INT_KEY(docker_timeout,         1,                  SBX_POLICY_DOCKER_TIMEOUT_LIMIT),
        INT_KEY(observation_max_age,    0,                  SBX_POLICY_OBSERVATION_MAX_AGE_LIMIT),
        INT_KEY(max_disk_mib,           1,                  SBX_POLICY_MAX_DISK_MIB_LIMIT),
        INT_KEY(max_file_bytes,         1,                  SBX_POLICY_MAX_FILE_BYTES_LIMIT),
        INT_KEY(max_image_mib,          1,                  SBX_POLICY_MAX_IMAGE_MIB_LIMIT),
        INT_KEY(max_pooled,             0,                  SBX_POLICY_MAX_POOLED_LIMIT),
        INT_KEY(max_process_output,     SBX_POLICY_MIN_PROCESS_OUTPUT, SBX_POLICY_MAX_PROCESS_OUTPUT_LIMIT),
#undef INT_KEY
};

static int parse_int_key(SbxPolicy *p, size_t i, json_object *v, SbxError *error) {
        int64_t x;

        if (!json_object_is_type(v, json_type_int))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be a whole number", int_keys[i].key);
        /* json-c saturates values beyond int64 to INT64_MIN/MAX: out of range either way. */
        x = json_object_get_int64(v);
        if (x < int_keys[i].min || x > int_keys[i].max)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: %s is outside %" PRIi64 "–%" PRIi64, int_keys[i].key,
                                     json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN),
                                     int_keys[i].min, int_keys[i].max);
        *(int64_t *) ((uint8_t *) p + int_keys[i].offset) = x;
        return 0;
}

static int parse_python_version(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        const char *s;
        int r;

        if ((r = sbx_json_get_text(key, v, &s, error)) < 0)
                return r;
        if (sbx_python_version_from_string(s, &p->python_version) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not one of \"3.11\", \"3.12\", \"3.13\", \"3.14\"", key, s);
        return 0;
}

static int parse_egress(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        return sbx_policy_egress_parse(&p->egress, v, error);
}

/* Read after every other key (policy_parse_pools()). */
static int parse_later(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        return 0;
}

static const struct {
        const char *key;
        int (*parse)(SbxPolicy *p, const char *key, json_object *v, SbxError *error);
} str_keys[] = {
        { "default_image",   parse_default_image },
        { "allowed_images",  parse_allowed_images },
        { "volume_roots",    parse_volume_roots },
        { "publish_address", parse_publish_address },
        { "python_version",  parse_python_version },
        { "engine",          policy_parse_engine },
        { "egress",          parse_egress },
        { "registries",      policy_parse_registries },
        { "warm_pools",      parse_later },
        { "runtimes",        parse_runtimes },
};

static int parse_key(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        for (size_t i = 0; i < ELEMENTSOF(str_keys); i++)
                if (streq(key, str_keys[i].key))
                        return str_keys[i].parse(p, key, v, error);
        for (size_t i = 0; i < ELEMENTSOF(int_keys); i++)
                if (streq(key, int_keys[i].key))
                        return parse_int_key(p, i, v, error);
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key", key);
}

static unsigned line_of(const char *s, size_t offset) {
        unsigned line = 1;

        for (size_t i = 0; i < offset && s[i]; i++)
                if (s[i] == '\n')
                        line++;
        return line;
}

/* The document is parsed inside "[" … "\n]": json-c then reads comments anywhere,
 * including after the object, and anything but exactly one value shows. */
static int parse_document(const char *json, json_object **ret, SbxError *error) {
        _cleanup_(json_tokener_freep) json_tokener *tok = NULL;
        _cleanup_(json_object_putp) json_object *doc = NULL;
        _cleanup_free_ char *wrapped = NULL;
        enum json_tokener_error jerr;
        size_t len, end;

        if (asprintf(&wrapped, "[%s\n]", json) < 0)
                return -ENOMEM;
        len = strlen(wrapped);

        tok = json_tokener_new();
        if (!tok)
                return -ENOMEM;
        doc = json_tokener_parse_ex(tok, wrapped, (int) len);
        jerr = json_tokener_get_error(tok);
        end = json_tokener_get_parse_end(tok);
        if (jerr == json_tokener_continue)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "policy: malformed JSON: unexpected end of input");
        if (jerr != json_tokener_success || !doc)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "policy: malformed JSON at line %u: %s",
                                     line_of(json, end > 0 ? end - 1 : 0), json_tokener_error_desc(jerr));
        if (end != len || json_object_array_length(doc) != 1)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "policy: malformed JSON: the document must be exactly one JSON object");

        *ret = json_object_get(json_object_array_get_idx(doc, 0));
        return 0;
}

int sbx_policy_parse(const char *json, SbxPolicy **ret, SbxError *error) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = NULL;
        _cleanup_(json_object_putp) json_object *obj = NULL;
        int r;

        if ((r = parse_document(json, &obj, error)) < 0)
                return r;
        if (!json_object_is_type(obj, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "policy: the document must be a JSON object");

        p = sbx_policy_new_default();
        if (!p)
                return -ENOMEM;

        json_object_object_foreach(obj, key, val)
                if ((r = parse_key(p, key, val, error)) < 0)
                        return r;

        /* A default image the policy itself forbids would make every plain create fail:
         * refuse it where the administrator sees it, at start-up. */
        if (!policy_image_allowed(p, p->default_image))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "default_image: '%s' is not matched by allowed_images", p->default_image);
        if ((r = policy_parse_pools(p, json_object_object_get(obj, "warm_pools"), error)) < 0 ||
            (r = policy_digest(p, json)) < 0)
                return r;

        *ret = TAKE_PTR(p);
        return 0;
}
