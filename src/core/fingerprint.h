/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* xagent's ResolvedSandboxRuntimeSpec.fingerprint() (contract §2): the SHA-256
 * of the UTF-8 Python repr() of the 10-tuple (template_type, image, snapshot_id,
 * working_dir, cpus, memory, env, volumes, network_isolated, ports). */

#include "spec.h"

#define SBX_FINGERPRINT_HEX_LEN 64
/* The prefix xagent's log-safe __repr__ shows (contract §1.5). */
#define SBX_FINGERPRINT_SHORT_LEN 12

/* The canonical string of a normalized spec, byte-exact with Python: NULL
 * image/snapshot_id are None, "" is ''. -EILSEQ if a string is not valid UTF-8,
 * -EINVAL if the spec is not normalized (no working_dir, unknown template
 * type), -ENOMEM. */
int sbx_spec_repr(const SbxSpec *spec, char **ret);

/* The fingerprint of a normalized spec: 64 lowercase hex digits. Errors as
 * sbx_spec_repr(). */
int sbx_spec_fingerprint(const SbxSpec *spec, char ret[static SBX_FINGERPRINT_HEX_LEN + 1]);
