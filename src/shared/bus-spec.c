/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>

#include "bus-labels.h"
#include "bus-lifetime.h"
#include "bus-read.h"
#include "bus-egress.h"
#include "bus-spec.h"
#include "json-util.h"
#include "proto.h"

/* The variant "env" a{ss}, each pair handed to add. */
static int read_env_pairs(sd_bus_message *m, int (*add)(void *userdata, const char *k, const char *v, SbxError *error),
                          void *userdata, SbxError *error) {
        int r;

        if ((r = sbx_bus_enter_variant(m, "env", "a{ss}", error)) < 0)
                return r;
        if ((r = sd_bus_message_enter_container(m, 'a', "{ss}")) < 0)
                return sbx_bus_malformed(error, "env", r);
        for (;;) {
                const char *k, *v;

                r = sd_bus_message_read(m, "{ss}", &k, &v);
                if (r < 0)
                        return sbx_bus_malformed(error, "env", r);
                if (r == 0)
                        break;
                if ((r = add(userdata, k, v, error)) < 0)
                        return r;
        }
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "env", r);
        return sbx_bus_exit_variant(m, "env", error);
}

static int spec_env_add(void *userdata, const char *k, const char *v, SbxError *error) {
        SbxSpec *s = userdata;

        if (s->n_env >= SBX_MAX_INPUT_ENTRIES)
                return sbx_bus_too_many(error, "env");
        for (size_t i = 0; i < s->n_env; i++)
                if (streq(s->env[i].key, k))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: variable '%s' given twice", k);
        return sbx_spec_add_env(s, k, v);
}

static int read_env(sd_bus_message *m, SbxSpec *s, SbxError *error) {
        return read_env_pairs(m, spec_env_add, s, error);
}

static int read_volumes(sd_bus_message *m, SbxSpec *s, SbxError *error) {
        int r;

        if ((r = sbx_bus_enter_variant(m, "volumes", "a(sss)", error)) < 0)
                return r;
        if ((r = sd_bus_message_enter_container(m, 'a', "(sss)")) < 0)
                return sbx_bus_malformed(error, "volumes", r);
        for (;;) {
                const char *h, *g, *mode;

                r = sd_bus_message_read(m, "(sss)", &h, &g, &mode);
                if (r < 0)
                        return sbx_bus_malformed(error, "volumes", r);
                if (r == 0)
                        break;
                if (s->n_volumes >= SBX_MAX_INPUT_ENTRIES)
                        return sbx_bus_too_many(error, "volumes");
                if ((r = sbx_spec_add_volume(s, h, g, mode)) < 0)
                        return r;
        }
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "volumes", r);
        return sbx_bus_exit_variant(m, "volumes", error);
}

/* "(XY)" with X and Y integer types: ports as (qq), as documented, or as any
 * other integer types (a(ii) from python3-dbus, a(xx) for numbers beyond 16 bits). */
static bool is_port_pair(const char *sig) {
        return strlen(sig) == 4 && sig[0] == '(' && sig[3] == ')' && sbx_bus_type_is_integer(sig[1]) &&
               sbx_bus_type_is_integer(sig[2]);
}

static int read_port(sd_bus_message *m, const char *pair, SbxSpec *s, SbxError *error) {
        const char inner[] = { pair[1], pair[2], 0 };
        int64_t host, guest;
        int r;

        r = sd_bus_message_enter_container(m, SD_BUS_TYPE_STRUCT, inner);
        if (r <= 0)
                return r < 0 ? sbx_bus_malformed(error, "ports", r) : 0;
        if ((r = sbx_bus_read_any_int(m, pair[1], &host)) < 0 || (r = sbx_bus_read_any_int(m, pair[2], &guest)) < 0)
                return r == -ERANGE ? sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                                    "ports: a port is outside the 64-bit integer range")
                                    : sbx_bus_malformed(error, "ports", r);
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "ports", r);
        if (s->n_ports >= SBX_MAX_INPUT_ENTRIES)
                return sbx_bus_too_many(error, "ports");
        if ((r = sbx_spec_add_port(s, host, guest)) < 0)
                return r;
        return 1;
}

static int read_ports(sd_bus_message *m, SbxSpec *s, SbxError *error) {
        const char *contents;
        int r;

        if ((r = sd_bus_message_peek_type(m, NULL, &contents)) < 0)
                return sbx_bus_malformed(error, "ports", r);
        if (!contents || contents[0] != 'a' || !is_port_pair(contents + 1))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "ports: expected a value of type 'a(qq)' (or other integer types), got '%s'",
                                     contents);
        if ((r = sbx_bus_enter_variant(m, "ports", contents, error)) < 0)
                return r;
        if ((r = sd_bus_message_enter_container(m, 'a', contents + 1)) < 0)
                return sbx_bus_malformed(error, "ports", r);
        while ((r = read_port(m, contents + 1, s, error)) > 0)
                ;
        if (r < 0)
                return r;
        if ((r = sd_bus_message_exit_container(m)) < 0)
                return sbx_bus_malformed(error, "ports", r);
        return sbx_bus_exit_variant(m, "ports", error);
}

static const char *const spec_keys[] = {
        "image", "snapshot", "working_dir", "cpus", "memory", "env", "volumes", "network_isolated", "ports",
};

static int spec_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        SbxSpec *s = userdata;

        if (streq(key, "image"))
                return sbx_bus_read_string(m, key, &s->image, error);
        if (streq(key, "snapshot")) {
                s->template_type = SBX_TEMPLATE_SNAPSHOT;
                return sbx_bus_read_string(m, key, &s->snapshot_id, error);
        }
        if (streq(key, "working_dir"))
                return sbx_bus_read_string(m, key, &s->working_dir, error);
        if (streq(key, "cpus"))
                return sbx_bus_read_int(m, key, INT64_MIN, INT64_MAX, &s->cpus, error);
        if (streq(key, "memory"))
                return sbx_bus_read_int(m, key, INT64_MIN, INT64_MAX, &s->memory, error);
        if (streq(key, "env"))
                return read_env(m, s, error);
        if (streq(key, "volumes"))
                return read_volumes(m, s, error);
        if (streq(key, "network_isolated"))
                return sbx_bus_read_bool(m, key, &s->network_isolated, error);
        if (streq(key, "ports"))
                return read_ports(m, s, error);
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key", key);
}

int sbx_bus_read_spec(sd_bus_message *m, SbxSpec **ret, SbxError *error) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = sbx_spec_new();
        int r;

        if (!s)
                return -ENOMEM;
        s->template_type = SBX_TEMPLATE_IMAGE;
        if ((r = sbx_bus_read_dict(m, spec_keys, ELEMENTSOF(spec_keys), spec_entry, s, error)) < 0)
                return r;
        *ret = TAKE_PTR(s);
        return 0;
}

int sbx_bus_read_no_options(sd_bus_message *m, SbxError *error) {
        return sbx_bus_read_dict(m, NULL, 0, sbx_bus_unknown_option, NULL, error);
}

typedef struct CreateOptions {
        char *runtime;                  /* the caller's buffer */
        json_object *labels;
        SbxLifetime lifetime;
        SbxEgress egress;
        bool has_egress;
        bool pull_missing;
        bool claim;
        char *name_prefix;              /* a claim's */
} CreateOptions;

/* runtime s: well-formed (runtime.h); whether the policy offers it is the caller's. */
static int read_runtime(sd_bus_message *m, const char *key, char ret[static SBX_RUNTIME_NAME_MAX + 1],
                        SbxError *error) {
        _cleanup_free_ char *s = NULL;
        int r = sbx_bus_read_string(m, key, &s, error);

        if (r < 0)
                return r;
        if (!sbx_runtime_name_valid(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not a runtime name ([a-z0-9][a-z0-9._-]*, at most %d bytes)", key,
                                     s, SBX_RUNTIME_NAME_MAX);
        strcpy(ret, s);
        return 0;
}

static int create_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        CreateOptions *o = userdata;
        int r;

        if (streq(key, "runtime"))
                return read_runtime(m, key, o->runtime, error);
        if (streq(key, "egress"))
                return sbx_bus_read_egress_entry(m, key, &o->egress, &o->has_egress, error);
        if (o->claim && streq(key, "name_prefix")) {
                if ((r = sbx_bus_read_string(m, key, &o->name_prefix, error)) < 0)
                        return r;
                return sbx_pool_name_prefix_check(key, o->name_prefix, error);
        }
        /* pull "missing": an image not on the host is pulled first (docs/api.md) */
        if (streq(key, "pull"))
                return sbx_bus_read_choice(m, key, "never", "missing", &o->pull_missing, error);
        if (!streq(key, "labels"))
                return sbx_bus_read_lifetime_entry(m, key, &o->lifetime, error);
        return sbx_bus_read_labels(m, key, &o->labels, error);
}

/* The create options, and (ret_name_prefix given) a claim's name_prefix. */
static int read_create_options(sd_bus_message *m, json_object **ret_labels, SbxLifetime *ret_lifetime,
                               bool *ret_pull_missing, SbxEgress *ret_egress,
                               char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], char **ret_name_prefix,
                               SbxError *error) {
        static const char *const keys[] = { "labels", "idle_timeout", "expire_after", "on_idle", "pull",
                                            "idle_counts_processes", "egress", "runtime", "name_prefix" };
        CreateOptions o = { .runtime = ret_runtime, .claim = ret_name_prefix };
        int r;

        ret_runtime[0] = '\0';
        r = sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), create_entry, &o, error);

        if (r < 0) {
                json_object_put(o.labels);
                sbx_egress_done(&o.egress);
                free(o.name_prefix);
        } else {
                *ret_labels = o.labels;
                *ret_lifetime = o.lifetime;
                *ret_egress = o.egress;
                *ret_pull_missing = o.pull_missing;
                if (ret_name_prefix)
                        *ret_name_prefix = o.name_prefix;
        }
        return r;
}

int sbx_bus_read_create_options(sd_bus_message *m, json_object **ret_labels, SbxLifetime *ret_lifetime,
                                bool *ret_pull_missing, SbxEgress *ret_egress,
                                char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], SbxError *error) {
        return read_create_options(m, ret_labels, ret_lifetime, ret_pull_missing, ret_egress, ret_runtime, NULL,
                                   error);
}

int sbx_bus_read_claim_options(sd_bus_message *m, json_object **ret_labels, SbxLifetime *ret_lifetime,
                               bool *ret_pull_missing, SbxEgress *ret_egress,
                               char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], char **ret_name_prefix,
                               SbxError *error) {
        return read_create_options(m, ret_labels, ret_lifetime, ret_pull_missing, ret_egress, ret_runtime,
                                   ret_name_prefix, error);
}

static int lifetime_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        return sbx_bus_read_lifetime_entry(m, key, userdata, error);
}

int sbx_bus_read_lifetime_options(sd_bus_message *m, SbxLifetime *ret, SbxError *error) {
        static const char *const keys[] = { "idle_timeout", "expire_after", "on_idle", "idle_counts_processes" };

        *ret = (SbxLifetime) {};
        return sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), lifetime_entry, ret, error);
}

static int stop_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        SbxStopOptions *o = userdata;
        int64_t t;
        int r;

        if (streq(key, "force"))
                return sbx_bus_read_bool(m, key, &o->force, error);
        if (!streq(key, "timeout"))
                return sbx_bus_unknown_option(m, userdata, key, error);
        if ((r = sbx_bus_read_int(m, key, 0, SBX_STOP_TIMEOUT_MAX, &t, error)) < 0)
                return r;
        o->timeout = (unsigned) t;
        return 0;
}

int sbx_bus_read_stop_options(sd_bus_message *m, SbxStopOptions *ret, SbxError *error) {
        static const char *const keys[] = { "timeout", "force" };

        *ret = (SbxStopOptions) { .timeout = SBX_STOP_TIMEOUT_DEFAULT };
        return sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), stop_entry, ret, error);
}

typedef struct EnsureOptions {
        char *runtime;                  /* the caller's buffer */
        bool recreate, force, pull_missing;
        unsigned stop_timeout;
        json_object *labels;
        SbxLifetime lifetime;
        SbxEgress egress;
        bool has_egress;
} EnsureOptions;

static int ensure_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        EnsureOptions *o = userdata;
        int64_t t;
        int r;

        if (streq(key, "stop_timeout")) {
                if ((r = sbx_bus_read_int(m, key, 0, SBX_STOP_TIMEOUT_MAX, &t, error)) < 0)
                        return r;
                o->stop_timeout = (unsigned) t;
                return 0;
        }
        if (streq(key, "labels"))
                return sbx_bus_read_labels(m, key, &o->labels, error);
        if (streq(key, "egress"))
                return sbx_bus_read_egress_entry(m, key, &o->egress, &o->has_egress, error);
        if (streq(key, "runtime"))
                return read_runtime(m, key, o->runtime, error);
        if (streq(key, "force"))
                return sbx_bus_read_bool(m, key, &o->force, error);
        if (streq(key, "pull"))
                return sbx_bus_read_choice(m, key, "never", "missing", &o->pull_missing, error);
        if (!streq(key, "on_mismatch"))
                return sbx_bus_read_lifetime_entry(m, key, &o->lifetime, error);
        return sbx_bus_read_choice(m, key, "fail", "recreate", &o->recreate, error);
}

int sbx_bus_read_ensure_options(sd_bus_message *m, bool *ret_recreate, unsigned *ret_stop_timeout,
                                json_object **ret_labels, bool *ret_force, SbxLifetime *ret_lifetime,
                                bool *ret_pull_missing, SbxEgress *ret_egress,
                                char ret_runtime[static SBX_RUNTIME_NAME_MAX + 1], SbxError *error) {
        static const char *const keys[] = { "on_mismatch", "stop_timeout", "labels", "force", "idle_timeout",
                                            "expire_after", "on_idle", "pull", "idle_counts_processes",
                                            "egress", "runtime" };
        EnsureOptions o = { .stop_timeout = SBX_ENSURE_STOP_TIMEOUT_DEFAULT, .runtime = ret_runtime };
        int r;

        ret_runtime[0] = '\0';
        r = sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), ensure_entry, &o, error);

        if (r < 0) {
                json_object_put(o.labels);
                sbx_egress_done(&o.egress);
                return r;
        }
        *ret_egress = o.egress;
        *ret_recreate = o.recreate;
        *ret_force = o.force;
        *ret_lifetime = o.lifetime;
        *ret_stop_timeout = o.stop_timeout;
        *ret_labels = o.labels;
        *ret_pull_missing = o.pull_missing;
        return 0;
}

/* The documented type 'u' when the value fits, else 'x' (the daemon reads both). */
static int append_int(sd_bus_message *m, const char *key, int64_t v) {
        if (v == 0)
                return 0;
        if (v > 0 && v <= UINT32_MAX)
                return sd_bus_message_append(m, "{sv}", key, "u", (uint32_t) v);
        return sd_bus_message_append(m, "{sv}", key, "x", v);
}

static int append_env(sd_bus_message *m, const SbxSpec *s) {
        int r;

        if (s->n_env == 0)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "env")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a{ss}")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{ss}")) < 0)
                return r;
        for (size_t i = 0; i < s->n_env; i++)
                if ((r = sd_bus_message_append(m, "{ss}", s->env[i].key, s->env[i].value)) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static int append_volumes(sd_bus_message *m, const SbxSpec *s) {
        int r;

        if (s->n_volumes == 0)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "volumes")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', "a(sss)")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "(sss)")) < 0)
                return r;
        for (size_t i = 0; i < s->n_volumes; i++)
                if ((r = sd_bus_message_append(m, "(sss)", s->volumes[i].host, s->volumes[i].guest,
                                               s->volumes[i].mode ?: "")) < 0)
                        return r;
        if ((r = sd_bus_message_close_container(m)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

static bool ports_fit_q(const SbxSpec *s) {
        for (size_t i = 0; i < s->n_ports; i++)
                if (s->ports[i].host < 0 || s->ports[i].host > UINT16_MAX ||
                    s->ports[i].guest < 0 || s->ports[i].guest > UINT16_MAX)
                        return false;
        return true;
}

/* As a(qq), the documented type, unless a port does not fit: then a(xx). */
static int append_ports(sd_bus_message *m, const SbxSpec *s) {
        bool q = ports_fit_q(s);
        int r;

        if (s->n_ports == 0)
                return 0;
        if ((r = sd_bus_message_open_container(m, 'e', "sv")) < 0 ||
            (r = sd_bus_message_append_basic(m, 's', "ports")) < 0 ||
            (r = sd_bus_message_open_container(m, 'v', q ? "a(qq)" : "a(xx)")) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', q ? "(qq)" : "(xx)")) < 0)
                return r;
        for (size_t i = 0; i < s->n_ports; i++) {
                if (q)
                        r = sd_bus_message_append(m, "(qq)", (uint16_t) s->ports[i].host, (uint16_t) s->ports[i].guest);
                else
                        r = sd_bus_message_append(m, "(xx)", s->ports[i].host, s->ports[i].guest);
                if (r < 0)
                        return r;
        }
        if ((r = sd_bus_message_close_container(m)) < 0 ||
            (r = sd_bus_message_close_container(m)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

int sbx_bus_append_spec(sd_bus_message *m, const SbxSpec *s, SbxError *error) {
        int r;

        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0)
                return r;
        if (s->template_type == SBX_TEMPLATE_SNAPSHOT)
                r = sd_bus_message_append(m, "{sv}", "snapshot", "s", s->snapshot_id ?: "");
        else if (s->image)
                r = sd_bus_message_append(m, "{sv}", "image", "s", s->image);
        if (r < 0)
                return r;
        if (s->working_dir && (r = sd_bus_message_append(m, "{sv}", "working_dir", "s", s->working_dir)) < 0)
                return r;
        if ((r = append_int(m, "cpus", s->cpus)) < 0 ||
            (r = append_int(m, "memory", s->memory)) < 0 ||
            (r = append_env(m, s)) < 0 ||
            (r = append_volumes(m, s)) < 0)
                return r;
        if (s->network_isolated && (r = sd_bus_message_append(m, "{sv}", "network_isolated", "b", 1)) < 0)
                return r;
        if ((r = append_ports(m, s)) < 0)
                return r;
        return sd_bus_message_close_container(m);
}

/* Exec options ------------------------------------------------------------ */

void sbx_exec_options_done(SbxExecOptions *o) {
        for (size_t i = 0; i < o->n_env; i++)
                free(o->env[i]);
        free(o->env);
        free(o->working_dir);
        free(o->stdin_data);
        *o = (SbxExecOptions) {};
}

static int exec_env_add(void *userdata, const char *k, const char *v, SbxError *error) {
        SbxExecOptions *o = userdata;
        char **l;

        if (isempty(k) || strchr(k, '=') || strlen(k) > SBX_MAX_ENV_KEY_LEN || strlen(v) > SBX_MAX_ENV_VALUE_LEN)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "env: '%.64s' is not a variable name (non-empty, no '=', ≤ %d bytes) or its "
                                     "value exceeds %d bytes", k, SBX_MAX_ENV_KEY_LEN, SBX_MAX_ENV_VALUE_LEN);
        if (o->n_env >= SBX_MAX_ENV)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: more than %d variables", SBX_MAX_ENV);
        l = reallocarray(o->env, o->n_env + 2, sizeof(char *));
        if (!l)
                return -ENOMEM;
        o->env = l;
        if (asprintf(&l[o->n_env], "%s=%s", k, v) < 0)
                return -ENOMEM;
        l[++o->n_env] = NULL;
        return 0;
}

static int read_exec_env(sd_bus_message *m, SbxExecOptions *o, SbxError *error) {
        return read_env_pairs(m, exec_env_add, o, error);
}

static int read_stdin(sd_bus_message *m, SbxExecOptions *o, SbxError *error) {
        const void *p;
        size_t n;
        int r;

        if ((r = sbx_bus_enter_variant(m, "stdin", "ay", error)) < 0)
                return r;
        if ((r = sd_bus_message_read_array(m, 'y', &p, &n)) < 0)
                return sbx_bus_malformed(error, "stdin", r);
        if (n > SBX_EXEC_STDIN_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "stdin: more than %zu bytes", SBX_EXEC_STDIN_MAX);
        free(o->stdin_data);
        o->stdin_data = NULL;
        if (n > 0) {
                o->stdin_data = malloc(n);
                if (!o->stdin_data)
                        return -ENOMEM;
                memcpy(o->stdin_data, p, n);
        }
        o->stdin_size = n;
        return sbx_bus_exit_variant(m, "stdin", error);
}

typedef struct ExecParse {
        SbxExecOptions *o;
        bool streaming;
} ExecParse;

static int exec_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        ExecParse *p = userdata;
        SbxExecOptions *o = p->o;
        int64_t v;
        int r;

        if (streq(key, "env"))
                return read_exec_env(m, o, error);
        if (streq(key, "resume"))
                return sbx_bus_read_bool(m, key, &o->resume, error);
        if (streq(key, "working_dir")) {
                if ((r = sbx_bus_read_string(m, key, &o->working_dir, error)) < 0)
                        return r;
                if (o->working_dir[0] != '/' || strlen(o->working_dir) > SBX_MAX_PATH_LEN)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "working_dir: '%.64s' is not an absolute path", o->working_dir);
                return 0;
        }
        if (streq(key, "timeout")) {
                if ((r = sbx_bus_read_int(m, key, p->streaming ? 0 : 1, SBX_EXEC_TIMEOUT_MAX_S, &v, error)) < 0)
                        return r;
                o->timeout_s = (unsigned) v;
                return 0;
        }
        if (!p->streaming && streq(key, "stdin"))
                return read_stdin(m, o, error);
        if (!p->streaming && streq(key, "output_limit")) {
                if ((r = sbx_bus_read_int(m, key, 0, (int64_t) SBX_EXEC_OUTPUT_LIMIT_MAX, &v, error)) < 0)
                        return r;
                o->output_limit = (uint64_t) v;
                return 0;
        }
        if (!p->streaming && streq(key, "on_timeout")) {
                _cleanup_free_ char *mode = NULL;

                if ((r = sbx_bus_read_string(m, key, &mode, error)) < 0)
                        return r;
                if (!streq(mode, "error") && !streq(mode, "result"))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "on_timeout: '%.64s' is neither \"error\" nor \"result\"", mode);
                o->timeout_result = streq(mode, "result");
                return 0;
        }
        if (p->streaming && streq(key, "tty"))
                return sbx_bus_read_bool(m, key, &o->tty, error);
        if (p->streaming && streq(key, "detach"))
                return sbx_bus_read_bool(m, key, &o->detach, error);
        if (streq(key, "wait")) {
                if ((r = sbx_bus_read_int(m, key, 0, SBX_EXEC_WAIT_MAX_S, &v, error)) < 0)
                        return r;
                o->wait_s = (unsigned) v;
                return 0;
        }
        if (p->streaming && (streq(key, "rows") || streq(key, "cols"))) {
                if ((r = sbx_bus_read_int(m, key, 1, UINT16_MAX, &v, error)) < 0)
                        return r;
                *(streq(key, "rows") ? &o->rows : &o->cols) = (unsigned) v;
                return 0;
        }
        return sbx_bus_unknown_option(m, NULL, key, error);
}

int sbx_bus_read_exec_options(sd_bus_message *m, bool streaming, SbxExecOptions *ret, SbxError *error) {
        static const char *const keys[] = { "env", "working_dir", "timeout", "stdin", "output_limit", "tty", "rows",
                                            "cols", "on_timeout", "detach", "wait", "resume" };
        ExecParse p = { .o = ret, .streaming = streaming };
        int r;

        *ret = (SbxExecOptions) {
                .timeout_s = streaming ? 0 : SBX_EXEC_TIMEOUT_DEFAULT_S,
                .output_limit = SBX_EXEC_OUTPUT_LIMIT_DEFAULT,
        };
        r = sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), exec_entry, &p, error);
        if (r >= 0 && ret->detach && (ret->tty || ret->timeout_s > 0))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: not with detach (a detached process has "
                                     "no terminal and no timeout; Kill ends it)", ret->tty ? "tty" : "timeout");
        return r;
}

int sbx_bus_read_argv(sd_bus_message *m, char ***ret, SbxError *error) {
        char **v = NULL;
        size_t n = 0;
        int r;

        r = sd_bus_message_read_strv(m, &v);
        if (r < 0)
                return sbx_bus_malformed(error, "argv", r);
        while (v && v[n])
                n++;
        if (n == 0 || n > SBX_EXEC_ARGV_MAX || isempty(v[0])) {
                for (size_t i = 0; i < n; i++)
                        free(v[i]);
                free(v);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "argv: must name a command (1–%u strings, the first non-empty)", SBX_EXEC_ARGV_MAX);
        }
        *ret = v;
        return 0;
}

/* File options ------------------------------------------------------------ */

typedef struct FileParse {
        SbxFileVerb verb;
        SbxFileOptions *o;
} FileParse;

static int file_entry(sd_bus_message *m, void *userdata, const char *key, SbxError *error) {
        FileParse *p = userdata;
        SbxFileOptions *o = p->o;
        int64_t v;
        int r;

        if (streq(key, "resume"))
                return sbx_bus_read_bool(m, key, &o->resume, error);
        /* The caller's descriptor: the message's; bus_take_caller_fd() copies it. */
        if (streq(key, "fd") && (p->verb == SBX_FILE_READ || p->verb == SBX_FILE_WRITE)) {
                if ((r = sbx_bus_enter_variant(m, key, "h", error)) < 0)
                        return r;
                if ((r = sd_bus_message_read_basic(m, 'h', &o->fd)) < 0)
                        return sbx_bus_malformed(error, key, r);
                return sbx_bus_exit_variant(m, key, error);
        }
        switch (p->verb) {
        case SBX_FILE_READ:
                if (streq(key, "offset"))
                        return sbx_bus_read_u64(m, key, &o->offset, error);
                if (streq(key, "length")) {
                        o->has_length = true;
                        return sbx_bus_read_u64(m, key, &o->length, error);
                }
                break;
        case SBX_FILE_WRITE:
                if (streq(key, "mode")) {
                        if ((r = sbx_bus_read_int(m, key, 0, 07777, &v, error)) < 0)
                                return r;
                        o->mode = (unsigned) v;
                        return 0;
                }
                if (streq(key, "append"))
                        return sbx_bus_read_bool(m, key, &o->append, error);
                if (streq(key, "make_parents"))
                        return sbx_bus_read_bool(m, key, &o->make_parents, error);
                break;
        case SBX_FILE_LIST:
                if (streq(key, "depth") || streq(key, "limit")) {
                        bool depth = streq(key, "depth");
                        int64_t max = depth ? SBX_PROTO_MAX_DEPTH : SBX_PROTO_MAX_LIMIT;

                        if ((r = sbx_bus_read_int(m, key, 1, max, &v, error)) < 0)
                                return r;
                        *(depth ? &o->depth : &o->limit) = (unsigned) v;
                        return 0;
                }
                break;
        case SBX_FILE_REMOVE:
                if (streq(key, "recursive"))
                        return sbx_bus_read_bool(m, key, &o->recursive, error);
                break;
        }
        return sbx_bus_unknown_option(m, NULL, key, error);
}

int sbx_bus_read_file_options(sd_bus_message *m, SbxFileVerb verb, SbxFileOptions *ret, SbxError *error) {
        static const char *const keys[] = { "offset", "length", "mode", "append", "make_parents", "depth", "limit",
                                            "recursive", "resume", "fd" };
        FileParse p = { .verb = verb, .o = ret };

        *ret = (SbxFileOptions) {
                .mode = SBX_PROTO_DEFAULT_MODE, .depth = SBX_PROTO_DEFAULT_DEPTH, .limit = SBX_PROTO_DEFAULT_LIMIT,
                .fd = -1,
        };
        return sbx_bus_read_dict(m, keys, ELEMENTSOF(keys), file_entry, &p, error);
}

int sbx_bus_read_file_path(sd_bus_message *m, const char **ret, SbxError *error) {
        const char *path;
        int r = sd_bus_message_read_basic(m, 's', &path);

        if (r < 0)
                return sbx_bus_malformed(error, "path", r);
        if (path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: '%.64s' is not absolute", path);
        if (strlen(path) > SBX_FILE_PATH_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "path: %zu bytes, more than %u", strlen(path),
                                     SBX_FILE_PATH_MAX);
        *ret = path;
        return 0;
}
