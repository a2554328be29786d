/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* xagent's ResolvedSandboxRuntimeSpec.fingerprint() (xagent-contract.md §2): the SHA-256
 * of the UTF-8 Python repr() of the 10-tuple (template_type, image, snapshot_id,
 * working_dir, cpus, memory, env, volumes, network_isolated, ports).
 *
 * repr() escapes what the running Python's Unicode database calls non-printable,
 * so the fingerprint of a spec holding a code point assigned after Unicode 14.0
 * depends on the Python version xagent runs on: each function takes it. */

#include <stdbool.h>

#include "spec.h"
#include "unicode.h"

#define SBX_FINGERPRINT_HEX_LEN 64
/* The prefix xagent's log-safe __repr__ shows (xagent-contract.md §1.5). */
#define SBX_FINGERPRINT_SHORT_LEN 12

/* The canonical string of a normalized spec, byte-exact with Python version v:
 * NULL image/snapshot_id are None, "" is ''. -EILSEQ if a string is not valid
 * UTF-8, -EINVAL if the spec is not normalized (no working_dir, unknown template
 * type) or v is not a version, -ENOMEM. */
int sbx_spec_repr(const SbxSpec *spec, SbxPythonVersion v, char **ret);

/* The fingerprint of a normalized spec under Python version v: 64 lowercase hex
 * digits. Errors as sbx_spec_repr(). */
int sbx_spec_fingerprint(const SbxSpec *spec, SbxPythonVersion v, char ret[static SBX_FINGERPRINT_HEX_LEN + 1]);

/* The fingerprint under every Python version (most are the same string). */
typedef struct SbxFingerprints {
        char hex[_SBX_PYTHON_VERSION_MAX][SBX_FINGERPRINT_HEX_LEN + 1];
} SbxFingerprints;

int sbx_spec_fingerprints(const SbxSpec *spec, SbxFingerprints *ret);
/* hex is the fingerprint under one of the versions. */
bool sbx_fingerprints_contain(const SbxFingerprints *f, const char *hex) _pure_;
