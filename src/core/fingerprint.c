/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>

#include "fingerprint.h"
#include "pyrepr.h"

typedef struct SpecRepr {
        const SbxSpec *spec;
        SbxPythonVersion version;
} SpecRepr;

static int write_optional_str(FILE *f, SbxPythonVersion v, const char *s) {
        if (!s) {
                sbx_pyrepr_none(f);
                return 0;
        }
        return sbx_pyrepr_str(f, v, s);
}

static int write_env(FILE *f, SbxPythonVersion v, const SbxSpec *spec) {
        int r;

        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < spec->n_env; i++) {
                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_tuple_begin(f);
                if ((r = sbx_pyrepr_str(f, v, spec->env[i].key)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 1);
                if ((r = sbx_pyrepr_str(f, v, spec->env[i].value)) < 0)
                        return r;
                sbx_pyrepr_tuple_end(f, 2);
        }
        sbx_pyrepr_tuple_end(f, spec->n_env);
        return 0;
}

static int write_volumes(FILE *f, SbxPythonVersion v, const SbxSpec *spec) {
        int r;

        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *vol = &spec->volumes[i];

                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_tuple_begin(f);
                if ((r = sbx_pyrepr_str(f, v, vol->host)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 1);
                if ((r = sbx_pyrepr_str(f, v, vol->guest)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 2);
                if ((r = sbx_pyrepr_str(f, v, vol->mode)) < 0)
                        return r;
                sbx_pyrepr_tuple_end(f, 3);
        }
        sbx_pyrepr_tuple_end(f, spec->n_volumes);
        return 0;
}

static void write_ports(FILE *f, const SbxSpec *spec) {
        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < spec->n_ports; i++) {
                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_tuple_begin(f);
                sbx_pyrepr_int(f, spec->ports[i].host);
                sbx_pyrepr_tuple_item(f, 1);
                sbx_pyrepr_int(f, spec->ports[i].guest);
                sbx_pyrepr_tuple_end(f, 2);
        }
        sbx_pyrepr_tuple_end(f, spec->n_ports);
}

/* The 10-tuple, in xagent's field order (contract §1). */
static int write_spec(FILE *f, const void *value) {
        const SpecRepr *sr = value;
        const SbxSpec *spec = sr->spec;
        SbxPythonVersion v = sr->version;
        const char *template_type = sbx_template_type_to_string(spec->template_type);
        size_t i = 0;
        int r;

        if (!template_type || !spec->working_dir)
                return -EINVAL;

        sbx_pyrepr_tuple_begin(f);
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = sbx_pyrepr_str(f, v, template_type)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_optional_str(f, v, spec->image)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_optional_str(f, v, spec->snapshot_id)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = sbx_pyrepr_str(f, v, spec->working_dir)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_int(f, spec->cpus);
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_int(f, spec->memory);
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_env(f, v, spec)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_volumes(f, v, spec)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_bool(f, spec->network_isolated);
        sbx_pyrepr_tuple_item(f, i++);
        write_ports(f, spec);
        sbx_pyrepr_tuple_end(f, i);
        return 0;
}

int sbx_spec_repr(const SbxSpec *spec, SbxPythonVersion v, char **ret) {
        if (!sbx_python_version_to_string(v))
                return -EINVAL;
        return sbx_pyrepr_to_string(write_spec, &(SpecRepr) { .spec = spec, .version = v }, ret);
}

int sbx_spec_fingerprint(const SbxSpec *spec, SbxPythonVersion v, char ret[static SBX_FINGERPRINT_HEX_LEN + 1]) {
        _cleanup_free_ char *canonical = NULL;
        unsigned char digest[SBX_FINGERPRINT_HEX_LEN / 2];
        gnutls_datum_t d = { .data = digest, .size = sizeof(digest) };
        size_t hex_size = SBX_FINGERPRINT_HEX_LEN + 1;
        int r;

        r = sbx_spec_repr(spec, v, &canonical);
        if (r < 0)
                return r;
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, canonical, strlen(canonical), digest) < 0)
                return -EIO;
        if (gnutls_hex_encode(&d, ret, &hex_size) < 0)
                return -EIO;
        return 0;
}

int sbx_spec_fingerprints(const SbxSpec *spec, SbxFingerprints *ret) {
        SbxFingerprints f;
        int r;

        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++)
                if ((r = sbx_spec_fingerprint(spec, v, f.hex[v])) < 0)
                        return r;
        *ret = f;
        return 0;
}

bool sbx_fingerprints_contain(const SbxFingerprints *f, const char *hex) {
        for (SbxPythonVersion v = 0; v < _SBX_PYTHON_VERSION_MAX; v++)
                if (streq_ptr(f->hex[v], hex))
                        return true;
        return false;
}
