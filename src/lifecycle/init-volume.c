/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <gnutls/crypto.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "container-body.h"
#include "docker-dialect.h"
#include "docker-volume.h"
#include "init-volume.h"
#include "json-util.h"

#define INIT_PROGRAM "xagent-sandbox-init"

static int volume_name(const char *init_dir, char **ret) {
        uint8_t digest[32];

        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, init_dir, strlen(init_dir), digest) < 0)
                return -EIO;
        if (asprintf(ret, "%s-%02x%02x%02x%02x%02x%02x", SBX_INIT_VOLUME_PREFIX, digest[0], digest[1], digest[2],
                     digest[3], digest[4], digest[5]) < 0)
                return -ENOMEM;
        return 0;
}

static int driver_options(const SbxDialect *dialect, const char *init_dir, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();
        int r;

        if (!o)
                return -ENOMEM;
        if ((r = sbx_json_put(o, "type", json_object_new_string("none"))) < 0 ||
            (r = sbx_json_put(o, "o", json_object_new_string(sbx_dialect_init_volume_o(dialect)))) < 0 ||
            (r = sbx_json_put(o, "device", json_object_new_string(init_dir))) < 0)
                return r;
        *ret = TAKE_PTR(o);
        return 0;
}

static bool same_options(json_object *volume, json_object *want) {
        json_object *have = json_object_object_get(volume, "Options");

        json_object_object_foreach(want, key, value) {
                json_object *v = have ? json_object_object_get(have, key) : NULL;
                if (!v || !json_object_is_type(v, json_type_string) ||
                    !streq(json_object_get_string(v), json_object_get_string(value)))
                        return false;
        }
        return true;
}

int sbx_init_program_check(const char *init_dir, SbxError *error) {
        _cleanup_free_ char *program = NULL;
        struct stat st;

        if (asprintf(&program, "%s/%s", init_dir, INIT_PROGRAM) < 0)
                return -ENOMEM;
        if (init_dir[0] != '/')
                return sbx_error_set(error, SBX_ERROR_IO, "--init-dir %s: not an absolute path", init_dir);
        if (stat(program, &st) < 0)
                return sbx_error_set(error, SBX_ERROR_IO,
                                     "The sandboxes' first process %s is missing (%m); --init-dir names its directory",
                                     program);
        if (!S_ISREG(st.st_mode) || access(program, X_OK) < 0)
                return sbx_error_set(error, SBX_ERROR_IO,
                                     "The sandboxes' first process %s is not an executable file; "
                                     "--init-dir names its directory", program);
        return 0;
}

int sbx_init_volume_ensure(SbxDocker *d, const char *init_dir, char **ret_name, SbxError *error) {
        _cleanup_(json_object_putp) json_object *volume = NULL, *options = NULL;
        _cleanup_free_ char *name = NULL;
        int r;

        if ((r = sbx_init_program_check(init_dir, error)) < 0)
                return r;
        /* Negotiated first: the options are the engine's dialect's. */
        if ((r = sbx_docker_negotiate(d, error)) < 0 || (r = volume_name(init_dir, &name)) < 0 ||
            (r = driver_options(sbx_docker_dialect(d), init_dir, &options)) < 0)
                return r;

        r = sbx_docker_volume_inspect(d, name, &volume, error);
        if (sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND)) {
                sbx_error_free(error);
                r = sbx_docker_volume_create_local(d, name, options, error);
        } else if (r >= 0 && !same_options(volume, options))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Docker volume '%s' exists but is not bound read-only to '%s'", name, init_dir);
        if (r < 0)
                return r;
        *ret_name = TAKE_PTR(name);
        return 0;
}
