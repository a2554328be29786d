/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "container-body.h"
#include "json-util.h"
#include "labels.h"
#include "policy.h"

#define CPU_NANOS INT64_C(1000000000)
#define MIB INT64_C(1048576)

static json_object *string_array(const char *const *items) {
        json_object *a = json_object_new_array();

        for (; a && *items; items++)
                if (sbx_json_push(a, json_object_new_string(*items)) < 0) {
                        json_object_put(a);
                        return NULL;
                }
        return a;
}

static int build_env(const SbxSpec *s, json_object **ret) {
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();

        if (!a)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_env; i++) {
                _cleanup_free_ char *kv = NULL;
                if (asprintf(&kv, "%s=%s", s->env[i].key, s->env[i].value) < 0)
                        return -ENOMEM;
                if (sbx_json_push(a, json_object_new_string(kv)) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

/* HostConfig.Mounts, not Binds: Binds would create a missing source directory as
 * root, and a ':' in a path would split its "host:guest:mode" string. */
static int build_mounts(const SbxSpec *s, const char *init_volume, json_object **ret) {
        _cleanup_(json_object_putp) json_object *a = json_object_new_array();
        json_object *init, *options;
        int r;

        if (!a)
                return -ENOMEM;
        /* A volume, not a bind: xagent's observed volumes are the bind mounts only,
         * so the first process is invisible to the verdict on both sides. */
        init = json_object_new_object();
        options = json_object_new_object();
        if ((r = sbx_json_push(a, init)) < 0 ||
            (r = sbx_json_put(init, "Type", json_object_new_string("volume"))) < 0 ||
            (r = sbx_json_put(init, "Source", json_object_new_string(init_volume))) < 0 ||
            (r = sbx_json_put(init, "Target", json_object_new_string(SBX_INIT_GUEST_DIR))) < 0 ||
            (r = sbx_json_put(init, "ReadOnly", json_object_new_boolean(true))) < 0 ||
            (r = sbx_json_put(init, "VolumeOptions", options)) < 0 ||
            (r = sbx_json_put(options, "NoCopy", json_object_new_boolean(true))) < 0)
                return r;
        for (size_t i = 0; i < s->n_volumes; i++) {
                json_object *m = json_object_new_object();

                if ((r = sbx_json_push(a, m)) < 0 ||
                    (r = sbx_json_put(m, "Type", json_object_new_string("bind"))) < 0 ||
                    (r = sbx_json_put(m, "Source", json_object_new_string(s->volumes[i].host))) < 0 ||
                    (r = sbx_json_put(m, "Target", json_object_new_string(s->volumes[i].guest))) < 0 ||
                    (r = sbx_json_put(m, "ReadOnly", json_object_new_boolean(streq(s->volumes[i].mode, "ro")))) < 0)
                        return r;
        }
        *ret = TAKE_PTR(a);
        return 0;
}

/* ExposedPorts and PortBindings. Host port 0 is sent as "0", which Docker echoes
 * back in PortBindings, so publish verification sees the (0, guest) it asked for. */
static int build_ports(const SbxSpec *s, const char *address, json_object **ret_exposed, json_object **ret_bindings) {
        _cleanup_(json_object_putp) json_object *exposed = json_object_new_object(),
                                                *bindings = json_object_new_object();

        if (!exposed || !bindings)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_ports; i++) {
                char key[32], host[16];
                json_object *list, *b;
                int r;

                snprintf(key, sizeof key, "%lld/tcp", (long long) s->ports[i].guest);
                snprintf(host, sizeof host, "%lld", (long long) s->ports[i].host);
                if ((r = sbx_json_put(exposed, key, json_object_new_object())) < 0)
                        return r;
                if (!json_object_object_get_ex(bindings, key, &list)) {
                        list = json_object_new_array();
                        if ((r = sbx_json_put(bindings, key, list)) < 0)
                                return r;
                }
                b = json_object_new_object();
                if ((r = sbx_json_push(list, b)) < 0 ||
                    (r = sbx_json_put(b, "HostIp", json_object_new_string(address))) < 0 ||
                    (r = sbx_json_put(b, "HostPort", json_object_new_string(host))) < 0)
                        return r;
        }
        *ret_exposed = TAKE_PTR(exposed);
        *ret_bindings = TAKE_PTR(bindings);
        return 0;
}

static int build_log_config(json_object **ret) {
        _cleanup_(json_object_putp) json_object *log = json_object_new_object();
        json_object *config = json_object_new_object();
        int r;

        if (!log)
                return -ENOMEM;
        if ((r = sbx_json_put(log, "Type", json_object_new_string(SBX_LOG_DRIVER))) < 0 ||
            (r = sbx_json_put(log, "Config", config)) < 0 ||
            (r = sbx_json_put(config, "max-size", json_object_new_string(SBX_LOG_MAX_SIZE))) < 0 ||
            (r = sbx_json_put(config, "max-file", json_object_new_string(SBX_LOG_MAX_FILE))) < 0)
                return r;
        *ret = TAKE_PTR(log);
        return 0;
}

/* HostConfig.Runtime when one is asked for, and under gVisor the guest's own bound on
 * processes (its RLIMIT_NPROC, which the guest kernel enforces: a fork bomb fails forks
 * before the pids cgroup, which counts runsc's threads too, is reached). */
static int put_runtime(json_object *h, const SbxContainerParams *p) {
        _cleanup_(json_object_putp) json_object *ulimits = NULL, *nproc = NULL;
        int64_t n = sbx_runtime_guest_nproc(p->engine_runtime, p->pids_limit);
        int r;

        if (!p->engine_runtime)
                return 0;
        if ((r = sbx_json_put(h, "Runtime", json_object_new_string(p->engine_runtime))) < 0 || n == 0)
                return r;
        if (!(ulimits = json_object_new_array()) || !(nproc = json_object_new_object()))
                return -ENOMEM;
        if ((r = sbx_json_put(nproc, "Name", json_object_new_string("nproc"))) < 0 ||
            (r = sbx_json_put(nproc, "Soft", json_object_new_int64(n))) < 0 ||
            (r = sbx_json_put(nproc, "Hard", json_object_new_int64(n))) < 0)
                return r;
        if (json_object_array_add(ulimits, TAKE_PTR(nproc)) < 0)
                return -ENOMEM;
        return sbx_json_put(h, "Ulimits", TAKE_PTR(ulimits));
}

static int build_host_config(const SbxContainerParams *p, json_object *bindings, json_object **ret) {
        static const char *const cap_drop[] = { "ALL", NULL };
        static const char *const security_opt[] = { "no-new-privileges:true", NULL };
        const SbxSpec *s = p->spec;
        _cleanup_(json_object_putp) json_object *h = json_object_new_object(), *mounts = NULL, *log = NULL;
        int64_t nano_cpus, memory;
        int r;

        if (!h)
                return -ENOMEM;
        if (__builtin_mul_overflow(s->cpus, CPU_NANOS, &nano_cpus) ||
            __builtin_mul_overflow(s->memory, MIB, &memory))
                return -ERANGE;
        if ((r = build_mounts(s, p->init_volume, &mounts)) < 0 || (r = build_log_config(&log)) < 0)
                return r;

        if ((r = sbx_json_put(h, "NanoCpus", json_object_new_int64(nano_cpus))) < 0 ||
            (r = sbx_json_put(h, "Memory", json_object_new_int64(memory))) < 0 ||
            (r = sbx_json_put(h, "MemorySwap", json_object_new_int64(memory))) < 0 ||
            (r = sbx_json_put(h, "PidsLimit",
                              json_object_new_int64(sbx_runtime_pids_limit(p->engine_runtime, p->pids_limit)))) < 0 ||
            (r = sbx_json_put(h, "Privileged", json_object_new_boolean(false))) < 0 ||
            (r = sbx_json_put(h, "CapDrop", string_array(cap_drop))) < 0 ||
            (r = sbx_json_put(h, "SecurityOpt", string_array(security_opt))) < 0 ||
            (r = sbx_json_put(h, "IpcMode", json_object_new_string("private"))) < 0 ||
            (r = sbx_json_put(h, "NetworkMode", json_object_new_string(s->network_isolated ? "none" : "bridge"))) < 0 ||
            (r = sbx_json_put(h, "PortBindings", json_object_get(bindings))) < 0 ||
            (r = sbx_json_put(h, "Mounts", TAKE_PTR(mounts))) < 0 ||
            (r = sbx_json_put(h, "LogConfig", TAKE_PTR(log))) < 0 ||
            (r = put_runtime(h, p)) < 0)
                return r;
        *ret = TAKE_PTR(h);
        return 0;
}

static bool working_dir_in_volume(const char *working_dir, const SbxVolume *volumes, size_t n_volumes) {
        const SbxSpec view = { .working_dir = (char *) working_dir, .volumes = (SbxVolume *) volumes,
                               .n_volumes = n_volumes };
        const char *rest;

        return working_dir && sbx_spec_working_dir_volume(&view, &rest) >= 0;
}

const char *sbx_container_config_working_dir(const SbxSpec *spec) {
        return working_dir_in_volume(spec->working_dir, spec->volumes, spec->n_volumes) ?
                SBX_CONFIG_WORKING_DIR_IN_VOLUME : spec->working_dir;
}

const char *sbx_container_spec_working_dir(const char *config_working_dir, const char *label,
                                           const SbxVolume *volumes, size_t n_volumes) {
        if (streq_ptr(config_working_dir, SBX_CONFIG_WORKING_DIR_IN_VOLUME) &&
            working_dir_in_volume(label, volumes, n_volumes))
                return label;
        return config_working_dir;
}

int sbx_container_body(const SbxContainerParams *p, json_object **ret) {
        static const char *const entrypoint[] = { SBX_INIT_PATH, NULL };
        const SbxSpec *s = p->spec;
        _cleanup_(json_object_putp) json_object *body = json_object_new_object(), *env = NULL, *labels = NULL,
                                                *exposed = NULL, *bindings = NULL, *host = NULL;
        int r;

        if (!body)
                return -ENOMEM;
        if (isempty(p->init_volume))
                return -EINVAL;
        if ((r = build_env(s, &env)) < 0 ||
            (r = sbx_labels_build(p->name, s, p->fingerprint, p->uid, &labels)) < 0 ||
            (r = build_ports(s, p->publish_address, &exposed, &bindings)) < 0 ||
            (r = build_host_config(p, bindings, &host)) < 0)
                return r;
        if (p->service && (r = sbx_json_put(labels, SBX_LABEL_SERVICE, json_object_new_string(p->service))) < 0)
                return r;
        if (p->runtime && (r = sbx_json_put(labels, SBX_LABEL_RUNTIME, json_object_new_string(p->runtime))) < 0)
                return r;
        /* Always written (blank when Config.WorkingDir is the spec's), so that an
         * image's label of that name is never read back as the spec's. */
        if ((r = sbx_json_put(labels, SBX_LABEL_WORKING_DIR,
                              json_object_new_string(streq(sbx_container_config_working_dir(s), s->working_dir)
                                                     ? "" : s->working_dir))) < 0)
                return r;

        if ((r = sbx_json_put(body, "Image", json_object_new_string(p->image))) < 0 ||
            /* An Entrypoint and no Cmd: Docker then uses neither of the image's. */
            (r = sbx_json_put(body, "Entrypoint", string_array(entrypoint))) < 0 ||
            (r = sbx_json_put(body, "User", json_object_new_string(SBX_INIT_USER))) < 0 ||
            (r = sbx_json_put(body, "WorkingDir", json_object_new_string(sbx_container_config_working_dir(s)))) < 0 ||
            (r = sbx_json_put(body, "Env", TAKE_PTR(env))) < 0 ||
            (r = sbx_json_put(body, "Labels", TAKE_PTR(labels))) < 0 ||
            (r = sbx_json_put(body, "ExposedPorts", TAKE_PTR(exposed))) < 0 ||
            (r = sbx_json_put(body, "NetworkDisabled", json_object_new_boolean(s->network_isolated))) < 0 ||
            (r = sbx_json_put(body, "HostConfig", TAKE_PTR(host))) < 0)
                return r;
        *ret = TAKE_PTR(body);
        return 0;
}
