/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <curl/curl.h>
#include <gnutls/crypto.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "docker-internal.h"
#include "json-util.h"
#include "registry.h"

#define MANIFEST_MAX (4U << 20)
#define ACCEPT "Accept: application/vnd.docker.distribution.manifest.v2+json, " \
               "application/vnd.docker.distribution.manifest.list.v2+json, " \
               "application/vnd.oci.image.manifest.v1+json, application/vnd.oci.image.index.v1+json"

typedef struct Body {
        char *data;
        size_t size;
        bool too_large;
} Body;

void sbx_registry_image_done(SbxRegistryImage *i) {
        free(i->digest);
        free(i->image_id);
        *i = (SbxRegistryImage) {};
}

const char *sbx_registry_host_arch(void) {
        static const struct { const char *uname, *docker; } map[] = {
                { "x86_64", "amd64" }, { "aarch64", "arm64" }, { "armv7l", "arm" }, { "i686", "386" },
                { "ppc64le", "ppc64le" }, { "s390x", "s390x" }, { "riscv64", "riscv64" },
        };
        struct utsname u;

        if (uname(&u) == 0)
                for (size_t i = 0; i < ELEMENTSOF(map); i++)
                        if (streq(u.machine, map[i].uname))
                                return map[i].docker;
        return "amd64";
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Body *b = userdata;
        size_t n = size * nmemb;
        char *p;

        if (n > MANIFEST_MAX - b->size) {
                b->too_large = true;
                return 0;
        }
        if (!(p = realloc(b->data, b->size + n + 1)))
                return 0;
        memcpy(p + b->size, ptr, n);
        b->data = p;
        b->size += n;
        b->data[b->size] = 0;
        return n;
}

/* One GET: 0 and the HTTP status, or the curl code as a negative number. */
static int get(const char *url, const char *ca_path, bool verify_host, unsigned timeout_s, Body *body,
               long *ret_status, char errbuf[static CURL_ERROR_SIZE]) {
        _cleanup_(curl_slist_free_allp) struct curl_slist *headers = curl_slist_append(NULL, ACCEPT);
        CURL *c = curl_easy_init();
        CURLcode cc = CURLE_OK;

        if (!c || !headers) {
                if (c)
                        curl_easy_cleanup(c);
                return -CURLE_OUT_OF_MEMORY;
        }
        errbuf[0] = 0;
#define SET(opt, val) do { if (cc == CURLE_OK) cc = curl_easy_setopt(c, opt, val); } while (0)
        SET(CURLOPT_URL, url);
        SET(CURLOPT_PROTOCOLS_STR, "https");
        SET(CURLOPT_CAINFO, ca_path);
        SET(CURLOPT_CAPATH, NULL);
        SET(CURLOPT_SSL_VERIFYPEER, 1L);
        SET(CURLOPT_SSL_VERIFYHOST, verify_host ? 2L : 0L);
        SET(CURLOPT_NOSIGNAL, 1L);
        SET(CURLOPT_TIMEOUT, (long) timeout_s);
        SET(CURLOPT_NOPROXY, "*");
        SET(CURLOPT_HTTPHEADER, headers);
        SET(CURLOPT_ERRORBUFFER, errbuf);
        SET(CURLOPT_WRITEFUNCTION, on_body);
        SET(CURLOPT_WRITEDATA, body);
#undef SET
        if (cc == CURLE_OK)
                cc = curl_easy_perform(c);
        if (cc == CURLE_OK)
                cc = curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, ret_status);
        curl_easy_cleanup(c);
        return cc == CURLE_OK ? 0 : -(int) cc;
}

/* A refused certificate, named: the same request without the name check tells a
 * certificate from another CA from one that does not name the host. */
static int untrusted(const char *url, const SbxImageRef *ref, const char *ca_path, unsigned timeout_s,
                     const char *why, SbxError *error) {
        char errbuf[CURL_ERROR_SIZE];
        Body b = {};
        long status = 0;
        int r = get(url, ca_path, false, timeout_s, &b, &status, errbuf);

        free(b.data);
        if (r >= 0 || r == -CURLE_WRITE_ERROR)
                return sbx_error_set(error, SBX_ERROR_REGISTRY_UNTRUSTED,
                                     "Registry %s: its certificate does not name %s (%s)", ref->registry,
                                     ref->registry, why);
        return sbx_error_set(error, SBX_ERROR_REGISTRY_UNTRUSTED,
                             "Registry %s: its certificate is not signed by the CA of the host policy (%s): %s",
                             ref->registry, ca_path, why);
}

static int fetch(const SbxImageRef *ref, const char *what, const char *ca_path, unsigned timeout_s, Body *body,
                 SbxError *error) {
        _cleanup_free_ char *url = NULL;
        char errbuf[CURL_ERROR_SIZE];
        long status = 0;
        const char *why;
        int r;

        if (asprintf(&url, "https://%s/v2/%s/manifests/%s", ref->registry, ref->repository, what) < 0)
                return -ENOMEM;
        r = get(url, ca_path, true, timeout_s, body, &status, errbuf);
        why = errbuf[0] ? errbuf : curl_easy_strerror((CURLcode) -r);
        if (r == -CURLE_OUT_OF_MEMORY)
                return -ENOMEM;
        if (r == -CURLE_PEER_FAILED_VERIFICATION)
                return untrusted(url, ref, ca_path, timeout_s, why, error);
        if (r == -CURLE_SSL_CACERT_BADFILE)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Registry %s: the host policy's CA file %s cannot be read: %s", ref->registry,
                                     ca_path, why);
        if (body->too_large)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Registry %s: a manifest over %u bytes",
                                     ref->registry, MANIFEST_MAX);
        if (r < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_UNAVAILABLE, "Registry %s: %s", ref->registry, why);
        if (status == 404)
                return sbx_error_set(error, SBX_ERROR_NO_SUCH_IMAGE, "Image %s/%s%s%s is not in registry %s",
                                     ref->registry, ref->repository, sbx_image_digest_valid(what) ? "@" : ":", what,
                                     ref->registry);
        if (status == 401 || status == 403)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                     "Registry %s asks for credentials (HTTP %ld); the service pulls anonymously only",
                                     ref->registry, status);
        if (status != 200)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Registry %s answered HTTP %ld for %s/%s %s",
                                     ref->registry, status, ref->registry, ref->repository, what);
        return 0;
}

static int digest_of(const Body *b, char **ret) {
        unsigned char d[32];
        char *s;

        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, b->data ?: "", b->size, d) < 0)
                return -EIO;
        if (!(s = malloc(7 + 64 + 1)))
                return -ENOMEM;
        strcpy(s, "sha256:");
        for (size_t i = 0; i < 32; i++)
                sprintf(s + 7 + 2 * i, "%02x", d[i]);
        *ret = s;
        return 0;
}

static int bad_manifest(const SbxImageRef *ref, const char *why, SbxError *error) {
        return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Registry %s: the manifest of %s is not usable: %s",
                             ref->registry, ref->repository, why);
}

/* A list of platforms: the digest of linux/arch's manifest. */
static int pick_platform(const SbxImageRef *ref, json_object *manifests, const char *arch, const char **ret,
                         SbxError *error) {
        for (size_t i = 0; i < json_object_array_length(manifests); i++) {
                json_object *m = json_object_array_get_idx(manifests, i), *pf, *os, *a, *d;

                if (json_object_object_get_ex(m, "platform", &pf) && json_object_object_get_ex(pf, "os", &os) &&
                    json_object_object_get_ex(pf, "architecture", &a) && json_object_object_get_ex(m, "digest", &d) &&
                    streq(json_object_get_string(os) ?: "", "linux") && streq(json_object_get_string(a) ?: "", arch)) {
                        *ret = json_object_get_string(d);
                        return 0;
                }
        }
        return sbx_error_set(error, SBX_ERROR_NO_SUCH_IMAGE, "Image %s/%s has no linux/%s variant", ref->registry,
                             ref->repository, arch);
}

/* A manifest: its config's digest and the size of it and its layers. */
static int read_manifest(const SbxImageRef *ref, json_object *j, SbxRegistryImage *ret, SbxError *error) {
        json_object *config, *digest, *size, *layers;
        uint64_t total;

        if (!json_object_object_get_ex(j, "config", &config) || !json_object_object_get_ex(config, "digest", &digest) ||
            !json_object_object_get_ex(config, "size", &size) || !json_object_object_get_ex(j, "layers", &layers) ||
            !json_object_is_type(layers, json_type_array))
                return bad_manifest(ref, "no config or layers (schema 1 is not supported)", error);
        if (!sbx_image_digest_valid(json_object_get_string(digest)))
                return bad_manifest(ref, "its config's digest is not sha256", error);
        total = (uint64_t) json_object_get_int64(size);
        for (size_t i = 0; i < json_object_array_length(layers); i++) {
                json_object *l = json_object_array_get_idx(layers, i), *s;

                if (!json_object_object_get_ex(l, "size", &s) || json_object_get_int64(s) < 0)
                        return bad_manifest(ref, "a layer without a size", error);
                total += (uint64_t) json_object_get_int64(s);
        }
        ret->size = total;
        ret->image_id = strdup(json_object_get_string(digest));
        return ret->image_id ? 0 : -ENOMEM;
}

/* Fetches what (a tag or a digest) and checks a digest asked for is the body's. */
static int fetch_checked(const SbxImageRef *ref, const char *what, const char *ca_path, unsigned timeout_s,
                         json_object **ret_json, char **ret_digest, SbxError *error) {
        _cleanup_free_ char *digest = NULL;
        Body b = {};
        int r = fetch(ref, what, ca_path, timeout_s, &b, error);

        if (r >= 0)
                r = digest_of(&b, &digest);
        if (r >= 0 && sbx_image_digest_valid(what) && !streq(what, digest))
                r = sbx_error_set(error, SBX_ERROR_BACKEND_ERROR,
                                  "Registry %s sent a manifest of digest %s for %s/%s@%s", ref->registry, digest,
                                  ref->registry, ref->repository, what);
        if (r >= 0 && !(*ret_json = json_tokener_parse(b.data ?: "")))
                r = bad_manifest(ref, "not JSON", error);
        free(b.data);
        if (r >= 0)
                *ret_digest = TAKE_PTR(digest);
        return r;
}

int sbx_registry_resolve(const SbxImageRef *ref, const char *ca_path, const char *arch, unsigned timeout_s,
                         SbxRegistryImage *ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *top = NULL, *one = NULL;
        _cleanup_free_ char *inner = NULL;
        SbxRegistryImage img = {};
        json_object *manifests;
        const char *platform = NULL;
        int r;

        r = fetch_checked(ref, ref->digest ?: ref->tag, ca_path, timeout_s, &top, &img.digest, error);
        if (r >= 0 && json_object_object_get_ex(top, "manifests", &manifests) &&
            json_object_is_type(manifests, json_type_array)) {
                r = pick_platform(ref, manifests, arch, &platform, error);
                if (r >= 0 && !sbx_image_digest_valid(platform))
                        r = bad_manifest(ref, "a platform's digest is not sha256", error);
                if (r >= 0)
                        r = fetch_checked(ref, platform, ca_path, timeout_s, &one, &inner, error);
        }
        if (r >= 0)
                r = read_manifest(ref, one ?: top, &img, error);
        if (r < 0) {
                sbx_registry_image_done(&img);
                return r;
        }
        *ret = img;
        return 0;
}
