/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <strings.h>

#include "container-body.h"
#include "json-util.h"
#include "labels.h"
#include "dialect.h"
#include "observed.h"


#define PARSE_ERROR(error, path, key, fmt, ...)                                 \
        sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker inspect: %s%s%s: " fmt, \
                      path, *(path) ? "." : "", key, ##__VA_ARGS__)

static const char *const state_table[_SBX_STATE_MAX] = {
        [SBX_STATE_STOPPED] = "stopped",
        [SBX_STATE_RUNNING] = "running",
        [SBX_STATE_PAUSED] = "paused",
};

const char *sbx_state_to_string(SbxState s) {
        if (s < 0 || s >= _SBX_STATE_MAX)
                return NULL;
        return state_table[s];
}

SbxState sbx_state_from_status(const char *raw_status) {
        /* Python's str.lower() maps no non-ASCII character into "running", so an
         * ASCII case-insensitive compare is exact. */
        if (raw_status && strcasecmp(raw_status, "paused") == 0)
                return SBX_STATE_PAUSED;
        return raw_status && strcasecmp(raw_status, "running") == 0 ? SBX_STATE_RUNNING : SBX_STATE_STOPPED;
}


static void kv_free(SbxEnvVar *kv, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(kv[i].key);
                free(kv[i].value);
        }
        free(kv);
}

SbxObserved *sbx_observed_free(SbxObserved *o) {
        if (!o)
                return NULL;
        free(o->id);
        free(o->name);
        free(o->raw_status);
        free(o->image_ref);
        free(o->image_digest);
        kv_free(o->env, o->n_env);
        for (size_t i = 0; i < o->n_volumes; i++) {
                free(o->volumes[i].host);
                free(o->volumes[i].guest);
                free(o->volumes[i].mode);
        }
        free(o->volumes);
        free(o->ports);
        strv_free(o->runtime_networks);
        strv_free(o->engine_addresses);
        free(o->sandbox_key);
        kv_free(o->labels, o->n_labels);
        free(o->created_at);
        free(o->working_dir);
        free(o->user);
        strv_free(o->cap_drop);
        strv_free(o->cap_add);
        strv_free(o->security_opt);
        strv_free(o->volumes_from);
        free(o->network_mode);
        free(o->ipc_mode);
        free(o->pid_mode);
        free(o->uts_mode);
        free(o->runtime);
        for (size_t i = 0; i < o->n_bindings; i++) {
                free(o->bindings[i].host_port);
                free(o->bindings[i].host_ip);
        }
        free(o->bindings);
        for (size_t i = 0; i < o->n_bound_ports; i++)
                free(o->bound_ports[i].host_ip);
        free(o->bound_ports);
        strv_free(o->entrypoint);
        strv_free(o->engine_env);
        free(o->started_at);
        free(o->init_volume);
        free(o->log_type);
        free(o->log_max_size);
        free(o->log_max_file);
        free(o);
        return NULL;
}

/* Looks up key in obj (NULL obj = {}). Returns 0 with *ret = NULL if the member
 * is absent or null, 1 if it has the wanted type, a BackendError otherwise. */
static int member(json_object *obj, const char *path, const char *key, json_type type,
                  json_object **ret, SbxError *error) {
        json_object *v = NULL;

        *ret = NULL;
        if (!obj || !json_object_object_get_ex(obj, key, &v) || json_object_is_type(v, json_type_null))
                return 0;
        if (!json_object_is_type(v, type))
                return PARSE_ERROR(error, path, key, "expected %s, got %s",
                                   json_type_to_name(type), json_type_to_name(json_object_get_type(v)));
        *ret = v;
        return 1;
}

/* A JSON string as a C string; one with an embedded NUL cannot be represented. */
static int string_value(json_object *v, const char *path, const char *key, char **ret, SbxError *error) {
        const char *s = json_object_get_string(v);

        if ((size_t) json_object_get_string_len(v) != strlen(s))
                return PARSE_ERROR(error, path, key, "string contains a NUL character");
        *ret = strdup(s);
        return *ret ? 0 : -ENOMEM;
}

static int get_string(json_object *obj, const char *path, const char *key, char **ret, SbxError *error) {
        json_object *v;
        int r;

        *ret = NULL;
        r = member(obj, path, key, json_type_string, &v, error);
        if (r <= 0)
                return r;
        return string_value(v, path, key, ret, error);
}

static int get_bool(json_object *obj, const char *path, const char *key, bool *ret, SbxError *error) {
        json_object *v;
        int r;

        r = member(obj, path, key, json_type_boolean, &v, error);
        if (r < 0)
                return r;
        *ret = r > 0 && json_object_get_boolean(v);
        return 0;
}

static int get_int(json_object *obj, const char *path, const char *key, bool *ret_has, int64_t *ret,
                   SbxError *error) {
        json_object *v;
        int r;

        r = member(obj, path, key, json_type_int, &v, error);
        if (r < 0)
                return r;
        *ret_has = r > 0;
        *ret = r > 0 ? json_object_get_int64(v) : 0;
        return 0;
}

static int get_array_length(json_object *obj, const char *path, const char *key, size_t *ret,
                            SbxError *error) {
        json_object *v;
        int r;

        r = member(obj, path, key, json_type_array, &v, error);
        if (r < 0)
                return r;
        *ret = r > 0 ? json_object_array_length(v) : 0;
        return 0;
}

/* A list of strings; absent or null → empty. *ret is always NULL-terminated. */
static int get_strv(json_object *obj, const char *path, const char *key, char ***ret, size_t *ret_n,
                    SbxError *error) {
        json_object *v;
        size_t n;
        char **l;
        int r;

        r = member(obj, path, key, json_type_array, &v, error);
        if (r < 0)
                return r;
        n = r > 0 ? json_object_array_length(v) : 0;
        l = calloc(n + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                json_object *item = json_object_array_get_idx(v, i);

                if (!json_object_is_type(item, json_type_string))
                        r = PARSE_ERROR(error, path, key, "item %zu is not a string", i);
                else
                        r = string_value(item, path, key, &l[i], error);
                if (r < 0) {
                        strv_free(l);
                        return r;
                }
        }
        *ret = l;
        *ret_n = n;
        return 0;
}

static int kv_set(SbxEnvVar **list, size_t *n, const char *key, size_t key_len, const char *value) {
        _cleanup_free_ char *k = strndup(key, key_len), *v = strdup(value);
        SbxEnvVar *l;

        if (!k || !v)
                return -ENOMEM;
        /* Python dict semantics: a later duplicate keeps the first position. */
        for (size_t i = 0; i < *n; i++)
                if (streq((*list)[i].key, k)) {
                        free((*list)[i].value);
                        (*list)[i].value = TAKE_PTR(v);
                        return 0;
                }
        l = reallocarray(*list, *n + 1, sizeof(SbxEnvVar));
        if (!l)
                return -ENOMEM;
        *list = l;
        l[(*n)++] = (SbxEnvVar) { .key = TAKE_PTR(k), .value = TAKE_PTR(v) };
        return 0;
}

static int parse_env(json_object *config, SbxObserved *o, SbxError *error) {
        char **items = NULL;
        size_t n = 0;
        int r;

        r = get_strv(config, "Config", "Env", &items, &n, error);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n && r >= 0; i++) {
                const char *eq = strchr(items[i], '=');

                if (eq)
                        r = kv_set(&o->env, &o->n_env, items[i], eq - items[i], eq + 1);
        }
        strv_free(items);
        return r < 0 ? r : 0;
}

static int parse_labels(json_object *config, SbxObserved *o, SbxError *error) {
        json_object *labels;
        int r;

        r = member(config, "Config", "Labels", json_type_object, &labels, error);
        if (r <= 0)
                return r;
        json_object_object_foreach(labels, key, value) {
                _cleanup_free_ char *s = NULL;

                if (!json_object_is_type(value, json_type_string))
                        return PARSE_ERROR(error, "Config.Labels", key, "expected string, got %s",
                                           json_type_to_name(json_object_get_type(value)));
                r = string_value(value, "Config.Labels", key, &s, error);
                if (r < 0)
                        return r;
                r = kv_set(&o->labels, &o->n_labels, key, strlen(key), s);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A mount that is not a bind: the first process's volume, or something else. */
static int parse_other_mount(json_object *m, const char *path, const char *type, const char *destination,
                             bool rw, SbxObserved *o, SbxError *error) {
        if (streq_ptr(type, "volume") && streq_ptr(destination, SBX_INIT_GUEST_DIR) && !o->init_volume) {
                o->init_volume_rw = rw;
                return get_string(m, path, "Name", &o->init_volume, error);
        }
        o->n_other_mounts++;
        return 0;
}

static int parse_mount(json_object *m, size_t index, SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *type = NULL, *source = NULL, *destination = NULL;
        char path[32];
        SbxVolume *l;
        bool rw;
        int r;

        snprintf(path, sizeof(path), "Mounts[%zu]", index);
        if (!json_object_is_type(m, json_type_object))
                return PARSE_ERROR(error, "", path, "expected object, got %s",
                                   json_type_to_name(json_object_get_type(m)));
        if ((r = get_string(m, path, "Type", &type, error)) < 0 ||
            (r = get_string(m, path, "Source", &source, error)) < 0 ||
            (r = get_string(m, path, "Destination", &destination, error)) < 0 ||
            (r = get_bool(m, path, "RW", &rw, error)) < 0)
                return r;
        if (!streq_ptr(type, "bind"))
                return parse_other_mount(m, path, type, destination, rw, o, error);
        if (isempty(source) || isempty(destination))
                return 0;

        l = reallocarray(o->volumes, o->n_volumes + 1, sizeof(SbxVolume));
        if (!l)
                return -ENOMEM;
        o->volumes = l;
        l[o->n_volumes] = (SbxVolume) {
                .host = TAKE_PTR(source),
                .guest = TAKE_PTR(destination),
                .mode = strdup(rw ? "rw" : "ro"),
        };
        o->n_volumes++;
        return l[o->n_volumes - 1].mode ? 0 : -ENOMEM;
}

static int parse_mounts(json_object *attrs, SbxObserved *o, SbxError *error) {
        json_object *mounts;
        int r;

        r = member(attrs, "", "Mounts", json_type_array, &mounts, error);
        if (r <= 0)
                return r;
        for (size_t i = 0; i < json_object_array_length(mounts); i++) {
                r = parse_mount(json_object_array_get_idx(mounts, i), i, o, error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* A decimal port number 0–65535 up to an optional "/protocol" suffix. Stricter
 * than Python's int(), which Docker's own output never needs. */
static int parse_port_number(const char *s, bool allow_suffix, int64_t *ret) {
        int64_t v = 0;
        size_t n = 0;

        for (; s[n] >= '0' && s[n] <= '9'; n++) {
                v = v * 10 + (s[n] - '0');
                if (v > SBX_MAX_PORT)
                        return -EINVAL;
        }
        if (n == 0 || (s[n] != '\0' && !(allow_suffix && s[n] == '/')))
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_binding(json_object *b, const char *key, size_t index, int64_t guest, SbxObserved *o,
                         SbxError *error) {
        _cleanup_free_ char *host_port = NULL, *host_ip = NULL, *path = NULL;
        SbxPortBinding *l;
        int64_t host;
        int r;

        if (asprintf(&path, "HostConfig.PortBindings.%s[%zu]", key, index) < 0)
                return -ENOMEM;
        if (!json_object_is_type(b, json_type_object))
                return PARSE_ERROR(error, "", path, "expected object, got %s",
                                   json_type_to_name(json_object_get_type(b)));
        if ((r = get_string(b, path, "HostPort", &host_port, error)) < 0 ||
            (r = get_string(b, path, "HostIp", &host_ip, error)) < 0)
                return r;
        if ((!host_port && !(host_port = strdup(""))) || (!host_ip && !(host_ip = strdup(""))))
                return -ENOMEM;

        if (!isempty(host_port)) {
                SbxPort *p;

                if (parse_port_number(host_port, false, &host) < 0)
                        return PARSE_ERROR(error, path, "HostPort", "\"%s\" is not a port number", host_port);
                p = reallocarray(o->ports, o->n_ports + 1, sizeof(SbxPort));
                if (!p)
                        return -ENOMEM;
                o->ports = p;
                o->ports[o->n_ports++] = (SbxPort) { .host = host, .guest = guest };
        }

        l = reallocarray(o->bindings, o->n_bindings + 1, sizeof(SbxPortBinding));
        if (!l)
                return -ENOMEM;
        o->bindings = l;
        l[o->n_bindings++] = (SbxPortBinding) {
                .guest = guest,
                .host_port = TAKE_PTR(host_port),
                .host_ip = TAKE_PTR(host_ip),
        };
        return 0;
}

static int parse_port_bindings(json_object *host_config, SbxObserved *o, SbxError *error) {
        json_object *bindings;
        int r;

        r = member(host_config, "HostConfig", "PortBindings", json_type_object, &bindings, error);
        if (r <= 0)
                return r;
        json_object_object_foreach(bindings, key, list) {
                int64_t guest;

                if (parse_port_number(key, true, &guest) < 0)
                        return PARSE_ERROR(error, "HostConfig.PortBindings", key, "not a port key");
                if (!list || json_object_is_type(list, json_type_null))
                        continue;
                if (!json_object_is_type(list, json_type_array))
                        return PARSE_ERROR(error, "HostConfig.PortBindings", key, "expected array, got %s",
                                           json_type_to_name(json_object_get_type(list)));
                for (size_t i = 0; i < json_object_array_length(list); i++) {
                        r = parse_binding(json_object_array_get_idx(list, i), key, i, guest, o, error);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int parse_bound_port(json_object *b, const char *key, int64_t guest, SbxObserved *o, SbxError *error) {
        _cleanup_free_ char *host_port = NULL, *host_ip = NULL;
        SbxBoundPort *l;
        int64_t host;
        int r;

        if (!json_object_is_type(b, json_type_object))
                return PARSE_ERROR(error, "NetworkSettings.Ports", key, "expected objects");
        if ((r = get_string(b, "NetworkSettings.Ports", "HostPort", &host_port, error)) < 0 ||
            (r = get_string(b, "NetworkSettings.Ports", "HostIp", &host_ip, error)) < 0)
                return r;
        if (!host_port || parse_port_number(host_port, false, &host) < 0)
                return PARSE_ERROR(error, "NetworkSettings.Ports", key, "a binding without a port number");
        if (!host_ip && !(host_ip = strdup("")))
                return -ENOMEM;
        l = reallocarray(o->bound_ports, o->n_bound_ports + 1, sizeof(SbxBoundPort));
        if (!l)
                return -ENOMEM;
        o->bound_ports = l;
        l[o->n_bound_ports++] = (SbxBoundPort) { .host_ip = TAKE_PTR(host_ip), .host = host, .guest = guest };
        return 0;
}

/* NetworkSettings.Ports: {"80/tcp": [{"HostIp", "HostPort"}…] or null}. */
static int parse_bound_ports(json_object *settings, SbxObserved *o, SbxError *error) {
        json_object *ports;
        int r;

        r = member(settings, "NetworkSettings", "Ports", json_type_object, &ports, error);
        if (r <= 0)
                return r;
        json_object_object_foreach(ports, key, list) {
                int64_t guest;
                const char *slash = strchr(key, '/');

                if (!slash || !streq(slash, "/tcp") || !list || !json_object_is_type(list, json_type_array))
                        continue;
                if (parse_port_number(key, true, &guest) < 0)
                        return PARSE_ERROR(error, "NetworkSettings.Ports", key, "not a port key");
                for (size_t i = 0; i < json_object_array_length(list); i++)
                        if ((r = parse_bound_port(json_object_array_get_idx(list, i), key, guest, o, error)) < 0)
                                return r;
        }
        return 0;
}

/* A string member, "" when absent or not a string (addresses are facts for egress,
 * never judged: a network without them just adds none). */
static const char *str_or_empty(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
                ? json_object_get_string(v) : "";
}

static int push_address(SbxObserved *o, const char *addr, int64_t prefix) {
        char **n;

        if (isempty(addr))
                return 0;
        n = reallocarray(o->engine_addresses, o->n_engine_addresses + 2, sizeof(char *));
        if (!n)
                return -ENOMEM;
        o->engine_addresses = n;
        if (asprintf(&n[o->n_engine_addresses], "%s/%" PRIi64, addr, prefix) < 0) {
                n[o->n_engine_addresses] = NULL;
                return -ENOMEM;
        }
        n[++o->n_engine_addresses] = NULL;
        return 0;
}

/* One network's gateways (as hosts) and subnets (the sandbox's address with its
 * prefix): the engine's own, refused by egress (egress.h). */
static int add_engine_addresses(SbxObserved *o, json_object *net) {
        json_object *v;
        int64_t p4 = 32, p6 = 128;
        int r;

        if (!json_object_is_type(net, json_type_object))
                return 0;
        if (json_object_object_get_ex(net, "IPPrefixLen", &v) && json_object_is_type(v, json_type_int))
                p4 = json_object_get_int64(v);
        if (json_object_object_get_ex(net, "GlobalIPv6PrefixLen", &v) && json_object_is_type(v, json_type_int))
                p6 = json_object_get_int64(v);
        if ((r = push_address(o, str_or_empty(net, "Gateway"), 32)) < 0 ||
            (r = push_address(o, str_or_empty(net, "IPv6Gateway"), 128)) < 0 ||
            (r = push_address(o, str_or_empty(net, "IPAddress"), p4)) < 0 ||
            (r = push_address(o, str_or_empty(net, "GlobalIPv6Address"), p6)) < 0)
                return r;
        return 0;
}

static int parse_networks(json_object *attrs, SbxObserved *o, SbxError *error) {
        json_object *settings, *networks;
        size_t n = 0;
        int r;

        r = member(attrs, "", "NetworkSettings", json_type_object, &settings, error);
        if (r < 0)
                return r;
        r = member(settings, "NetworkSettings", "Networks", json_type_object, &networks, error);
        if (r < 0 || (r = parse_bound_ports(settings, o, error)) < 0)
                return r;
        if (settings && !isempty(str_or_empty(settings, "SandboxKey")) &&
            !(o->sandbox_key = strdup(str_or_empty(settings, "SandboxKey"))))
                return -ENOMEM;
        o->runtime_networks = calloc((networks ? json_object_object_length(networks) : 0) + 1,
                                     sizeof(char *));
        if (!o->runtime_networks)
                return -ENOMEM;
        if (!networks)
                return 0;
        json_object_object_foreach(networks, key, value) {
                o->runtime_networks[n] = strdup(key);
                if (!o->runtime_networks[n])
                        return -ENOMEM;
                o->n_runtime_networks = ++n;
                if ((r = add_engine_addresses(o, value)) < 0)
                        return r;
        }
        return 0;
}

static int parse_facts(json_object *attrs, json_object *config, json_object *host_config,
                       json_object *state, SbxObserved *o, SbxError *error) {
        int r;

        if ((r = get_string(attrs, "", "Id", &o->id, error)) < 0 ||
            (r = get_string(attrs, "", "Name", &o->name, error)) < 0 ||
            (r = get_string(state, "State", "Status", &o->raw_status, error)) < 0 ||
            (r = get_string(config, "Config", "Image", &o->image_ref, error)) < 0 ||
            (r = get_string(attrs, "", "Image", &o->image_digest, error)) < 0 ||
            (r = get_int(host_config, "HostConfig", "NanoCpus", &o->has_raw_nano_cpus,
                         &o->raw_nano_cpus, error)) < 0 ||
            (r = get_int(host_config, "HostConfig", "Memory", &o->has_raw_memory_bytes,
                         &o->raw_memory_bytes, error)) < 0 ||
            (r = parse_env(config, o, error)) < 0 ||
            (r = get_strv(attrs, "", SBX_ENGINE_ENV_KEY, &o->engine_env, &o->n_engine_env, error)) < 0 ||
            (r = parse_mounts(attrs, o, error)) < 0 ||
            (r = parse_port_bindings(host_config, o, error)) < 0 ||
            (r = get_bool(config, "Config", "NetworkDisabled", &o->network_isolated, error)) < 0 ||
            (r = parse_networks(attrs, o, error)) < 0 ||
            (r = parse_labels(config, o, error)) < 0 ||
            (r = get_string(attrs, "", "Created", &o->created_at, error)) < 0 ||
            (r = get_string(config, "Config", "WorkingDir", &o->working_dir, error)) < 0)
                return r;

        if (!o->raw_status && !(o->raw_status = strdup("")))
                return -ENOMEM;
        o->state = sbx_state_from_status(o->raw_status);
        if (o->name && o->name[0] == '/')
                memmove(o->name, o->name + 1, strlen(o->name));
        return 0;
}

static int parse_log_config(json_object *hc, SbxObserved *o, SbxError *error) {
        json_object *log, *config;
        int r;

        if ((r = member(hc, "HostConfig", "LogConfig", json_type_object, &log, error)) <= 0)
                return r;
        if ((r = get_string(log, "HostConfig.LogConfig", "Type", &o->log_type, error)) < 0 ||
            (r = member(log, "HostConfig.LogConfig", "Config", json_type_object, &config, error)) < 0 ||
            (r = get_string(config, "HostConfig.LogConfig.Config", "max-size", &o->log_max_size, error)) < 0 ||
            (r = get_string(config, "HostConfig.LogConfig.Config", "max-file", &o->log_max_file, error)) < 0)
                return r;
        return 0;
}

static int parse_posture(json_object *config, json_object *hc, json_object *state, SbxObserved *o,
                         SbxError *error) {
        const char *p = "HostConfig";
        bool has_pid;
        int r;

        if ((r = get_string(config, "Config", "User", &o->user, error)) < 0 ||
            (r = get_bool(hc, p, "Privileged", &o->privileged, error)) < 0 ||
            (r = get_strv(hc, p, "CapDrop", &o->cap_drop, &o->n_cap_drop, error)) < 0 ||
            (r = get_strv(hc, p, "CapAdd", &o->cap_add, &o->n_cap_add, error)) < 0 ||
            (r = get_strv(hc, p, "SecurityOpt", &o->security_opt, &o->n_security_opt, error)) < 0 ||
            (r = get_array_length(hc, p, "Devices", &o->n_devices, error)) < 0 ||
            (r = get_array_length(hc, p, "DeviceCgroupRules", &o->n_device_cgroup_rules, error)) < 0 ||
            (r = get_array_length(hc, p, "DeviceRequests", &o->n_device_requests, error)) < 0 ||
            (r = get_strv(hc, p, "VolumesFrom", &o->volumes_from, &o->n_volumes_from, error)) < 0 ||
            (r = get_int(hc, p, "PidsLimit", &o->has_pids_limit, &o->pids_limit, error)) < 0 ||
            (r = get_int(hc, p, "MemorySwap", &o->has_memory_swap, &o->memory_swap, error)) < 0 ||
            (r = get_string(hc, p, "NetworkMode", &o->network_mode, error)) < 0 ||
            (r = get_string(hc, p, "IpcMode", &o->ipc_mode, error)) < 0 ||
            (r = get_string(hc, p, "PidMode", &o->pid_mode, error)) < 0 ||
            (r = get_string(hc, p, "UTSMode", &o->uts_mode, error)) < 0 ||
            (r = get_string(hc, p, "Runtime", &o->runtime, error)) < 0 ||
            (r = get_strv(config, "Config", "Entrypoint", &o->entrypoint, &o->n_entrypoint, error)) < 0 ||
            (r = get_int(state, "State", "Pid", &has_pid, &o->pid, error)) < 0 ||
            (r = get_string(state, "State", "StartedAt", &o->started_at, error)) < 0 ||
            (r = parse_log_config(hc, o, error)) < 0)
                return r;
        return 0;
}

/* A working directory inside a volume is in the label, not in Config.WorkingDir
 * (container-body.h). */
static int restore_working_dir(SbxObserved *o) {
        const char *wd = sbx_container_spec_working_dir(o->working_dir, sbx_observed_get_label(o, SBX_LABEL_WORKING_DIR),
                                                        o->volumes, o->n_volumes);
        char *copy;

        if (wd == o->working_dir)
                return 0;
        copy = strdup(wd);
        if (!copy)
                return -ENOMEM;
        free(o->working_dir);
        o->working_dir = copy;
        return 0;
}

int sbx_observed_from_json(json_object *attrs, SbxObserved **ret, SbxError *error) {
        _cleanup_(sbx_observed_freep) SbxObserved *o = NULL;
        json_object *config, *host_config, *state;
        int r;

        if (!json_object_is_type(attrs, json_type_object))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker inspect: expected an object, got %s",
                                     json_type_to_name(json_object_get_type(attrs)));

        o = calloc(1, sizeof(SbxObserved));
        if (!o)
                return -ENOMEM;

        if ((r = member(attrs, "", "Config", json_type_object, &config, error)) < 0 ||
            (r = member(attrs, "", "HostConfig", json_type_object, &host_config, error)) < 0 ||
            (r = member(attrs, "", "State", json_type_object, &state, error)) < 0 ||
            (r = parse_facts(attrs, config, host_config, state, o, error)) < 0 ||
            (r = parse_posture(config, host_config, state, o, error)) < 0)
                return r;

        o->fingerprint_label = sbx_label_attestation(sbx_observed_get_label(o, SBX_LABEL_SPEC_FINGERPRINT));
        o->version_label = sbx_label_attestation(sbx_observed_get_label(o, SBX_LABEL_SPEC_VERSION));
        o->owner_valid = sbx_label_parse_owner_of(sbx_observed_get_label(o, SBX_LABEL_OWNER),
                                                  sbx_observed_get_label(o, SBX_LABEL_SERVICE), &o->owner) >= 0;
        if ((r = restore_working_dir(o)) < 0)
                return r;

        *ret = TAKE_PTR(o);
        return 0;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct json_tokener *, json_tokener_free);

int sbx_observed_from_string(const char *json, SbxObserved **ret, SbxError *error) {
        _cleanup_(json_tokener_freep) struct json_tokener *tok = json_tokener_new();
        _cleanup_(json_object_putp) json_object *attrs = NULL;
        size_t len = strlen(json);
        enum json_tokener_error e;

        if (!tok)
                return -ENOMEM;
        if (len >= INT_MAX)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker inspect: JSON too large");
        /* Strict: no trailing data, comments or trailing commas. */
        json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
        /* Including the NUL tells the tokener the input ends there; a bare
         * top-level "null" then parses (to NULL) instead of waiting for more. */
        attrs = json_tokener_parse_ex(tok, json, (int) len + 1);
        e = json_tokener_get_error(tok);
        if (e == json_tokener_continue)
                e = json_tokener_error_parse_eof;
        if (e != json_tokener_success)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker inspect: malformed JSON: %s",
                                     json_tokener_error_desc(e));
        return sbx_observed_from_json(attrs, ret, error);
}

static const char *kv_get(const SbxEnvVar *l, size_t n, const char *key) {
        for (size_t i = 0; i < n; i++)
                if (streq(l[i].key, key))
                        return l[i].value;
        return NULL;
}

const char *sbx_observed_get_label(const SbxObserved *o, const char *key) {
        return kv_get(o->labels, o->n_labels, key);
}

const char *sbx_observed_get_env(const SbxObserved *o, const char *key) {
        return kv_get(o->env, o->n_env, key);
}
