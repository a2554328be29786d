/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dialect.h"
#include "json-util.h"

#define USEC_PER_SEC UINT64_C(1000000)
#define LOCALHOST_PREFIX "localhost/"

void sbx_dialect_done(SbxDialect *d) {
        for (size_t i = 0; i < d->n_default_caps; i++)
                free(d->default_caps[i]);
        *d = (SbxDialect) {};
}

static json_object *member(json_object *o, const char *key) {
        json_object *v = NULL;

        return o && json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static const char *string_member(json_object *o, const char *key) {
        json_object *v = member(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

SbxEngineKind sbx_engine_from_version(json_object *version) {
        json_object *components = member(version, "Components");

        if (!components || !json_object_is_type(components, json_type_array))
                return SBX_ENGINE_DOCKER;
        for (size_t i = 0; i < json_object_array_length(components); i++)
                if (streq_ptr(string_member(json_object_array_get_idx(components, i), "Name"), SBX_PODMAN_COMPONENT))
                        return SBX_ENGINE_PODMAN;
        return SBX_ENGINE_DOCKER;
}

bool sbx_engine_rootless(json_object *info) {
        json_object *options = member(info, "SecurityOptions"), *rootless;

        if (options && json_object_is_type(options, json_type_array))
                for (size_t i = 0; i < json_object_array_length(options); i++)
                        if (streq_ptr(json_object_get_string(json_object_array_get_idx(options, i)), "name=rootless"))
                                return true;
        rootless = member(member(member(info, "host"), "security"), "rootless");
        if (!rootless)
                rootless = member(member(member(info, "Host"), "Security"), "Rootless");
        return rootless && json_object_is_type(rootless, json_type_boolean) && json_object_get_boolean(rootless);
}

/* "cap_chown" and "CAP_CHOWN" are "CHOWN". */
static char *cap_name(const char *s, size_t n) {
        char *c;

        if (n >= 4 && strncasecmp(s, "CAP_", 4) == 0) {
                s += 4;
                n -= 4;
        }
        c = strndup(s, n);
        for (char *p = c; p && *p; p++)
                *p = (char) toupper((unsigned char) *p);
        return c;
}

int sbx_dialect_set_default_caps(SbxDialect *d, json_object *libpod_info, SbxError *error) {
        const char *caps = string_member(member(member(libpod_info, "host"), "security"), "capabilities");

        if (!caps)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Podman's /libpod/info names no default capabilities (host.security.capabilities)");
        for (const char *p = caps; *p;) {
                size_t n = strcspn(p, ",");

                if (n > 0) {
                        if (d->n_default_caps >= SBX_DIALECT_CAPS_MAX)
                                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                                     "Podman's /libpod/info lists more than %u default capabilities",
                                                     SBX_DIALECT_CAPS_MAX);
                        if (!(d->default_caps[d->n_default_caps] = cap_name(p, n)))
                                return -ENOMEM;
                        d->n_default_caps++;
                }
                p += n + (p[n] == ',');
        }
        return 0;
}

static bool array_has_cap(json_object *a, const char *cap) {
        for (size_t i = 0; i < json_object_array_length(a); i++) {
                json_object *e = json_object_array_get_idx(a, i);
                _cleanup_free_ char *name = NULL;

                if (!json_object_is_type(e, json_type_string))
                        continue;
                name = cap_name(json_object_get_string(e), strlen(json_object_get_string(e)));
                if (name && streq(name, cap))
                        return true;
        }
        return false;
}

static bool empty_or_null(json_object *v) {
        return !v || (json_object_is_type(v, json_type_array) && json_object_array_length(v) == 0);
}

/* CapDrop lists names: it is "ALL" when it names every capability of Podman's
 * default set and nothing is added back (CapAdd empty, not privileged) — what
 * the container then holds is the default set minus those, nothing. */
static int normalize_cap_drop(const SbxDialect *d, json_object *host) {
        json_object *drop = member(host, "CapDrop"), *priv = member(host, "Privileged"), *all;

        if (!drop || !json_object_is_type(drop, json_type_array) || d->n_default_caps == 0 ||
            !empty_or_null(member(host, "CapAdd")) ||
            (priv && (!json_object_is_type(priv, json_type_boolean) || json_object_get_boolean(priv))))
                return 0;
        for (size_t i = 0; i < d->n_default_caps; i++)
                if (!array_has_cap(drop, d->default_caps[i]))
                        return 0;
        all = json_object_new_array();
        if (!all || sbx_json_push(all, json_object_new_string("ALL")) < 0) {
                json_object_put(all);
                return -ENOMEM;
        }
        return sbx_json_put(host, "CapDrop", all);
}

static int replace_string(json_object *o, const char *key, const char *from, const char *to) {
        if (!streq_ptr(string_member(o, key), from))
                return 0;
        return sbx_json_put(o, key, json_object_new_string(to));
}

/* Config.Image "localhost/NAME" is NAME: Podman's name for an image it holds
 * locally under the short name asked for. Any other registry stays. */
static int normalize_image(json_object *config) {
        const char *image = string_member(config, "Image"), *rest;

        if (!image || !(rest = startswith(image, LOCALHOST_PREFIX)) || !*rest)
                return 0;
        return sbx_json_put(config, "Image", json_object_new_string(rest));
}

/* NetworkDisabled, which Podman does not echo: true when the container has no
 * network at all — mode "none" and no network attached. */
static int normalize_network_disabled(json_object *inspect, json_object *config, json_object *host) {
        json_object *networks = member(member(inspect, "NetworkSettings"), "Networks");

        if (member(config, "NetworkDisabled") || !streq_ptr(string_member(host, "NetworkMode"), "none"))
                return 0;
        if (networks && !(json_object_is_type(networks, json_type_object) && json_object_object_length(networks) == 0))
                return 0;
        return sbx_json_put(config, "NetworkDisabled", json_object_new_boolean(true));
}

/* The log bound: the compat answer has LogConfig.Config null; the libpod one has
 * the size Podman cuts the (single) log file at. */
static int normalize_log(json_object *host, json_object *libpod) {
        json_object *log = member(host, "LogConfig"), *lp = member(member(libpod, "HostConfig"), "LogConfig");
        json_object *config;
        const char *type = string_member(log, "Type");
        int r;

        if (!log || (member(log, "Config") && !json_object_is_type(member(log, "Config"), json_type_null)))
                return 0;
        if (!streq_ptr(type, string_member(lp, "Type")) || !streq_ptr(string_member(lp, "Size"), SBX_PODMAN_LOG_SIZE))
                return 0;
        config = json_object_new_object();
        if ((r = sbx_json_put(log, "Config", config)) < 0 ||
            (r = sbx_json_put(config, "max-size", json_object_new_string("1m"))) < 0 ||
            (r = sbx_json_put(config, "max-file", json_object_new_string("2"))) < 0)
                return r;
        return 0;
}

/* Podman sets these when neither the image nor the request did. */
static bool engine_added(const char *kv) {
        static const char *const keys[] = { "PATH=", "TERM=", "container=", "HOME=", "HOSTNAME=" };

        for (size_t i = 0; i < ELEMENTSOF(keys); i++)
                if (startswith(kv, keys[i]))
                        return true;
        return false;
}

static int mark_engine_env(json_object *inspect, json_object *config) {
        json_object *env = member(config, "Env"), *added = json_object_new_array();
        int r;

        if (!added)
                return -ENOMEM;
        if (env && json_object_is_type(env, json_type_array))
                for (size_t i = 0; i < json_object_array_length(env); i++) {
                        const char *kv = json_object_get_string(json_object_array_get_idx(env, i));

                        if (json_object_is_type(json_object_array_get_idx(env, i), json_type_string) &&
                            engine_added(kv) && (r = sbx_json_push(added, json_object_new_string(kv))) < 0) {
                                json_object_put(added);
                                return r;
                        }
                }
        return sbx_json_put(inspect, SBX_ENGINE_ENV_KEY, added);
}

int sbx_dialect_normalize_inspect(const SbxDialect *d, json_object *inspect, json_object *libpod) {
        json_object *config, *host;
        int r;

        if (!d || d->kind != SBX_ENGINE_PODMAN || !json_object_is_type(inspect, json_type_object))
                return 0;
        config = member(inspect, "Config");
        host = member(inspect, "HostConfig");
        if (config && json_object_is_type(config, json_type_object) &&
            ((r = normalize_image(config)) < 0 || (r = normalize_network_disabled(inspect, config, host)) < 0 ||
             (r = mark_engine_env(inspect, config)) < 0))
                return r;
        if (!host || !json_object_is_type(host, json_type_object))
                return 0;
        /* Podman 4.3.1 reports a container's own IPC namespace as "shareable" whatever
         * was asked ("private", "none", "shareable" alike): that is its own; "host",
         * "container:…" stay what they are. PID and UTS: "private" is Docker's "". */
        if ((r = replace_string(host, "IpcMode", "shareable", "private")) < 0 ||
            (r = replace_string(host, "PidMode", "private", "")) < 0 ||
            (r = replace_string(host, "UTSMode", "private", "")) < 0 ||
            (r = normalize_cap_drop(d, host)) < 0 ||
            (r = normalize_log(host, libpod)) < 0)
                return r;
        return 0;
}

uint64_t sbx_dialect_report_since(const SbxDialect *d, uint64_t since_us) {
        if (!d || d->kind != SBX_ENGINE_PODMAN)
                return since_us;
        return since_us - since_us % USEC_PER_SEC;
}

const char *sbx_dialect_init_volume_o(const SbxDialect *d) {
        return d && d->kind == SBX_ENGINE_PODMAN ? "bind,ro,uid=0,gid=0" : "bind,ro";
}

int sbx_dialect_check_commit(const SbxDialect *d, SbxError *error) {
        if (!d || d->kind != SBX_ENGINE_PODMAN)
                return 0;
        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                             "snapshots are not supported on Podman: its commit ignores the labels this service "
                             "gives a snapshot's image, which would keep the sandbox's owner and fingerprint labels "
                             "and lose the token an interrupted snapshot is found by");
}

int sbx_dialect_apply_kernel_limits(json_object *inspect, const SbxKernelLimits *k) {
        json_object *host = member(inspect, "HostConfig");
        int r;

        if (!host || !json_object_is_type(host, json_type_object))
                return 0;
        if ((k->has_memory && (r = sbx_json_put(host, "Memory", json_object_new_int64(k->memory))) < 0) ||
            (k->has_memory_swap && (r = sbx_json_put(host, "MemorySwap", json_object_new_int64(k->memory_swap))) < 0) ||
            (k->has_pids && (r = sbx_json_put(host, "PidsLimit", json_object_new_int64(k->pids))) < 0) ||
            (k->has_nano_cpus && (r = sbx_json_put(host, "NanoCpus", json_object_new_int64(k->nano_cpus))) < 0) ||
            (k->has_caps && k->holds_caps && (r = sbx_json_put(host, "CapDrop", json_object_new_array())) < 0))
                return r;
        return 0;
}
