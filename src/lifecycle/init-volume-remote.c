/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The init volume on a remote engine (docs/engines.md): the engine's host has no
 * directory of ours to bind, so the program goes there by the Engine API — a
 * plain volume named after the program's SHA-256, filled through PUT …/archive of
 * a helper container that is created and never started (nothing runs, the
 * owner's least of all: §15), then removed. The volume's content is read back and
 * compared before any sandbox uses it, once per process and volume. */

#include <errno.h>
#include <fcntl.h>
#include <gnutls/crypto.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "container-body.h"
#include "docker-container.h"
#include "docker-volume.h"
#include "fileio.h"
#include "init-volume.h"
#include "json-util.h"
#include "ustar.h"

#define INIT_PROGRAM "xagent-sandbox-init"
#define FILL_DIR "/.xagent-sandbox-fill"
#define PROGRAM_MAX ((size_t) 12U << 20)
#define FILL_TIMEOUT_S 60U

/* The volume verified last (by name: its name is its content's hash), and where. */
static pthread_mutex_t verified_lock = PTHREAD_MUTEX_INITIALIZER;
static char verified[256];

static bool is_verified(const char *key) {
        bool v;

        pthread_mutex_lock(&verified_lock);
        v = streq(verified, key);
        pthread_mutex_unlock(&verified_lock);
        return v;
}

static void set_verified(const char *key) {
        pthread_mutex_lock(&verified_lock);
        snprintf(verified, sizeof verified, "%s", key);
        pthread_mutex_unlock(&verified_lock);
}

static int read_program(const char *init_dir, char **ret, size_t *ret_size, SbxError *error) {
        _cleanup_free_ char *path = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        if (asprintf(&path, "%s/%s", init_dir, INIT_PROGRAM) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: %m", path);
        r = sbx_read_fd(fd, PROGRAM_MAX, ret, ret_size);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "%s: cannot read: %s", path, strerror(-r));
        return 0;
}

/* The program as a one-entry ustar archive: root's, read and execute for all. */
static int program_tar(const char *data, size_t size, uint8_t **ret, size_t *ret_size) {
        size_t padded = (size + SBX_USTAR_BLOCK - 1) / SBX_USTAR_BLOCK * SBX_USTAR_BLOCK;
        size_t total = SBX_USTAR_BLOCK + padded + 2 * SBX_USTAR_BLOCK;
        uint8_t *t = calloc(1, total);

        if (!t)
                return -ENOMEM;
        sbx_ustar_header(t, &(SbxUstarEntry) {
                .name = INIT_PROGRAM, .type = '0', .mode = 0555, .size = size, .mtime = 0,
        });
        memcpy(t + SBX_USTAR_BLOCK, data, size);
        *ret = t;
        *ret_size = total;
        return 0;
}

/* Whether the archive Docker gave back holds exactly the program (pax headers skipped). */
static bool archive_holds(const char *tar, size_t size, const char *program, size_t program_size) {
        size_t off = 0;

        while (off + SBX_USTAR_BLOCK <= size) {
                const uint8_t *h = (const uint8_t *) tar + off;
                uint64_t n = sbx_ustar_number(h + 124, 12);
                char type = (char) h[156];

                if (sbx_ustar_is_zero(h) || !sbx_ustar_checksum_ok(h) || n > size)
                        return false;
                off += SBX_USTAR_BLOCK;
                if (type == 'x' || type == 'g') {
                        off += (n + SBX_USTAR_BLOCK - 1) / SBX_USTAR_BLOCK * SBX_USTAR_BLOCK;
                        continue;
                }
                return (type == '0' || type == 0) && n == program_size && off + n <= size &&
                       memcmp(tar + off, program, program_size) == 0;
        }
        return false;
}

static int helper_body(const char *volume, const char *image, json_object **ret) {
        _cleanup_(json_object_putp) json_object *b = json_object_new_object();
        json_object *host = json_object_new_object(), *mounts = json_object_new_array(), *m = json_object_new_object();
        json_object *entry = json_object_new_array();
        int r;

        if (!b || !host || !mounts || !m || !entry) {
                json_object_put(host);
                json_object_put(mounts);
                json_object_put(m);
                json_object_put(entry);
                return -ENOMEM;
        }
        /* Never started; an entrypoint that is not there, should anything try. */
        r = json_object_array_add(entry, json_object_new_string(FILL_DIR "/never-started"));
        if (r >= 0)
                r = sbx_json_put(b, "Entrypoint", entry);
        else
                json_object_put(entry);
        if (r >= 0 && (r = sbx_json_put(m, "Type", json_object_new_string("volume"))) >= 0 &&
            (r = sbx_json_put(m, "Source", json_object_new_string(volume))) >= 0)
                r = sbx_json_put(m, "Target", json_object_new_string(FILL_DIR));
        if (r >= 0)
                r = json_object_array_add(mounts, m) < 0 ? -ENOMEM : 0;
        else
                json_object_put(m);
        if (r >= 0)
                r = sbx_json_put(host, "Mounts", mounts);
        else
                json_object_put(mounts);
        if (r >= 0 && (r = sbx_json_put(host, "NetworkMode", json_object_new_string("none"))) >= 0)
                r = sbx_json_put(b, "HostConfig", host);
        else
                json_object_put(host);
        if (r < 0 || (r = sbx_json_put(b, "Image", json_object_new_string(image))) < 0 ||
            (r = sbx_json_put(b, "NetworkDisabled", json_object_new_boolean(true))) < 0)
                return r < 0 ? r : -ENOMEM;
        *ret = TAKE_PTR(b);
        return 0;
}

/* Reads the program back from the volume, and writes it when it is not exactly there. */
static int fill(SbxDocker *d, const char *helper, const char *program, size_t size, SbxError *error) {
        _cleanup_free_ char *escaped = NULL, *path = NULL, *tar = NULL;
        _cleanup_free_ uint8_t *out = NULL;
        size_t tar_size = 0, out_size = 0;
        int r;

        if ((r = sbx_docker_escape(d, helper, &escaped)) < 0)
                return r;
        if (asprintf(&path, "/containers/%s/archive?path=" FILL_DIR "/" INIT_PROGRAM, escaped) < 0)
                return -ENOMEM;
        r = sbx_docker_request_raw(d, "GET", path, NULL, FILL_TIMEOUT_S, &tar, &tar_size, error);
        if (r >= 0 && archive_holds(tar, tar_size, program, size))
                return 0;
        if (r < 0 && !sbx_error_is(error, SBX_ERROR_DOCKER_NOT_FOUND))
                return r;
        sbx_error_free(error);

        free(path);
        if (asprintf(&path, "/containers/%s/archive?path=" FILL_DIR, escaped) < 0)
                return -ENOMEM;
        if ((r = program_tar(program, size, &out, &out_size)) < 0 ||
            (r = sbx_docker_put_archive(d, path, out, out_size, FILL_TIMEOUT_S, error)) < 0)
                return r;
        return 0;
}

static int volume_name(const char *program, size_t size, char **ret, char hex[static 65]) {
        uint8_t digest[32];

        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, program, size, digest) < 0)
                return -EIO;
        for (size_t i = 0; i < sizeof digest; i++)
                sprintf(hex + 2 * i, "%02x", digest[i]);
        return asprintf(ret, "%s-remote-%.12s", SBX_INIT_VOLUME_PREFIX, hex) < 0 ? -ENOMEM : 0;
}

int sbx_init_volume_ensure_remote(SbxDocker *d, const char *init_dir, const char *image, char **ret_name,
                                  SbxError *error) {
        _cleanup_(json_object_putp) json_object *body = NULL, *options = json_object_new_object();
        _cleanup_free_ char *program = NULL, *name = NULL, *helper_name = NULL, *helper = NULL, *key = NULL;
        _cleanup_(sbx_error_free) SbxError cleanup_error = SBX_ERROR_NULL;
        char hex[65];
        size_t size = 0;
        int r;

        if (!options)
                return -ENOMEM;
        if ((r = read_program(init_dir, &program, &size, error)) < 0 ||
            (r = volume_name(program, size, &name, hex)) < 0)
                return r;
        if (asprintf(&key, "%s %s", sbx_docker_host(d), name) < 0)
                return -ENOMEM;
        if (!is_verified(key)) {
                if ((r = sbx_docker_volume_create_local(d, name, options, error)) < 0 ||
                    (r = helper_body(name, image, &body)) < 0)
                        return r;
                if (asprintf(&helper_name, "%s-fill-%.12s-%d", SBX_INIT_VOLUME_PREFIX, hex, (int) gettid()) < 0)
                        return -ENOMEM;
                if ((r = sbx_docker_container_create(d, helper_name, body, &helper, error)) < 0)
                        return r;
                r = fill(d, helper, program, size, error);
                /* The helper goes in every case (its volume stays: it is named, not anonymous). */
                if (sbx_docker_container_remove(d, helper, &cleanup_error) < 0 && r >= 0)
                        return sbx_error_set(error, cleanup_error.kind, "%s", cleanup_error.message);
                if (r < 0)
                        return r;
                set_verified(key);
        }
        *ret_name = TAKE_PTR(name);
        return 0;
}
