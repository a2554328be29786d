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
        bool non_ascii;                 /* out: a string had a byte ≥ 0x80 */
} SpecRepr;

/* Every string of the tuple goes through here. */
static int write_str(FILE *f, SpecRepr *sr, const char *s) {
        for (const char *p = s; *p && !sr->non_ascii; p++)
                sr->non_ascii = (unsigned char) *p >= 0x80;
        return sbx_pyrepr_str(f, sr->version, s);
}

static int write_optional_str(FILE *f, SpecRepr *sr, const char *s) {
        if (!s) {
                sbx_pyrepr_none(f);
                return 0;
        }
        return write_str(f, sr, s);
}

static int write_env(FILE *f, SpecRepr *sr, const SbxSpec *spec) {
        int r;

        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < spec->n_env; i++) {
                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_tuple_begin(f);
                if ((r = write_str(f, sr, spec->env[i].key)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 1);
                if ((r = write_str(f, sr, spec->env[i].value)) < 0)
                        return r;
                sbx_pyrepr_tuple_end(f, 2);
        }
        sbx_pyrepr_tuple_end(f, spec->n_env);
        return 0;
}

static int write_volumes(FILE *f, SpecRepr *sr, const SbxSpec *spec) {
        int r;

        sbx_pyrepr_tuple_begin(f);
        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *vol = &spec->volumes[i];

                sbx_pyrepr_tuple_item(f, i);
                sbx_pyrepr_tuple_begin(f);
                if ((r = write_str(f, sr, vol->host)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 1);
                if ((r = write_str(f, sr, vol->guest)) < 0)
                        return r;
                sbx_pyrepr_tuple_item(f, 2);
                if ((r = write_str(f, sr, vol->mode)) < 0)
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

/* The 10-tuple, in xagent's field order (xagent-contract.md §1). */
static int write_spec(FILE *f, void *value) {
        SpecRepr *sr = value;
        const SbxSpec *spec = sr->spec;
        const char *template_type = sbx_template_type_to_string(spec->template_type);
        size_t i = 0;
        int r;

        if (!template_type || !spec->working_dir)
                return -EINVAL;

        sbx_pyrepr_tuple_begin(f);
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_str(f, sr, template_type)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_optional_str(f, sr, spec->image)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_optional_str(f, sr, spec->snapshot_id)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_str(f, sr, spec->working_dir)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_int(f, spec->cpus);
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_int(f, spec->memory);
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_env(f, sr, spec)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        if ((r = write_volumes(f, sr, spec)) < 0)
                return r;
        sbx_pyrepr_tuple_item(f, i++);
        sbx_pyrepr_bool(f, spec->network_isolated);
        sbx_pyrepr_tuple_item(f, i++);
        write_ports(f, spec);
        sbx_pyrepr_tuple_end(f, i);
        return 0;
}

static int spec_repr(const SbxSpec *spec, SbxPythonVersion v, char **ret, bool *ret_non_ascii) {
        SpecRepr sr = { .spec = spec, .version = v };
        int r;

        if (!sbx_python_version_to_string(v))
                return -EINVAL;
        r = sbx_pyrepr_to_string(write_spec, &sr, ret);
        if (r >= 0 && ret_non_ascii)
                *ret_non_ascii = sr.non_ascii;
        return r;
}

int sbx_spec_repr(const SbxSpec *spec, SbxPythonVersion v, char **ret) {
        return spec_repr(spec, v, ret, NULL);
}

static int fingerprint(const SbxSpec *spec, SbxPythonVersion v, char ret[static SBX_FINGERPRINT_HEX_LEN + 1],
                       bool *ret_non_ascii) {
        _cleanup_free_ char *canonical = NULL;
        unsigned char digest[SBX_FINGERPRINT_HEX_LEN / 2];
        gnutls_datum_t d = { .data = digest, .size = sizeof(digest) };
        size_t hex_size = SBX_FINGERPRINT_HEX_LEN + 1;
        int r;

        r = spec_repr(spec, v, &canonical, ret_non_ascii);
        if (r < 0)
                return r;
        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, canonical, strlen(canonical), digest) < 0)
                return -EIO;
        if (gnutls_hex_encode(&d, ret, &hex_size) < 0)
                return -EIO;
        return 0;
}

int sbx_spec_fingerprint(const SbxSpec *spec, SbxPythonVersion v, char ret[static SBX_FINGERPRINT_HEX_LEN + 1]) {
        return fingerprint(spec, v, ret, NULL);
}

int sbx_spec_fingerprints(const SbxSpec *spec, SbxFingerprints *ret) {
        SbxFingerprints f;
        bool non_ascii;
        int r;

        if ((r = fingerprint(spec, 0, f.hex[0], &non_ascii)) < 0)
                return r;
        /* Python versions differ only in which code points above ASCII repr() escapes:
         * an ASCII spec has one repr, so one fingerprint, under all of them. */
        for (SbxPythonVersion v = 1; v < _SBX_PYTHON_VERSION_MAX; v++)
                if (!non_ascii)
                        memcpy(f.hex[v], f.hex[0], sizeof f.hex[0]);
                else if ((r = fingerprint(spec, v, f.hex[v], NULL)) < 0)
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
