/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The desired spec: xagent's ResolvedSandboxRuntimeSpec (xagent-contract.md §1).
 *
 * ("xagent-contract.md §N", here and elsewhere, is a section of xagent's sandbox
 * runtime spec contract, its PR #1007 as docs/lifecycle.md calls it, written down
 * in the reference file of that name.)
 *
 * A spec is filled in raw by a parser (JSON, D-Bus), then sbx_spec_normalize()
 * turns it into xagent's canonical form in place (xagent-contract.md §1.2 from_parts()
 * and §1.1 validation, exactly). Only a normalized spec may be fingerprinted or
 * serialized. Two levels of validity (docs/api.md):
 *
 *   contract-valid  everything from_parts() accepts whose strings are Python
 *                   strs (valid UTF-8): sbx_spec_complete(). What the offline
 *                   fingerprint and VerifySandbox take, e.g. network_isolated
 *                   with ports (xagent's vector V5), relative paths, any mode,
 *                   any port number, control characters.
 *   admissible      what this service creates: contract-valid and the stricter
 *                   rules of sbx_spec_check_admissible(); sbx_spec_finalize().
 *                   The host policy (policy.h) narrows it further. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_DEFAULT_WORKING_DIR "/home"
#define SBX_DEFAULT_CPUS 1
#define SBX_DEFAULT_MEMORY_MIB 512
#define SBX_MIN_CPUS 1
#define SBX_MIN_MEMORY_MIB 128

/* Bounds of an admissible spec (sbx_spec_check_admissible). Generous for real use,
 * small enough that no caller can make the service allocate without limit. */
#define SBX_MAX_CPUS 1024
#define SBX_MAX_MEMORY_MIB (16 * 1024 * 1024)   /* 16 TiB */
#define SBX_MAX_IMAGE_LEN 512
#define SBX_MAX_PATH_LEN 4096
#define SBX_MAX_ENV_KEY_LEN 256
#define SBX_MAX_ENV_VALUE_LEN 8192
#define SBX_MAX_ENV 256
#define SBX_MAX_VOLUMES 64
#define SBX_MAX_PORTS 64
#define SBX_MAX_PORT 65535

/* Input bound of both levels: a list (env, volumes, ports) of a spec read from
 * JSON or D-Bus holds at most this many entries. */
#define SBX_MAX_INPUT_ENTRIES 4096

/* The spec fields as a bitmask, in the order VerifySandbox names them: the order
 * of xagent's publish check (image, volumes, ports, working_dir,
 * network_isolated, cpus, memory), then the fields it does not cover. */
typedef enum SbxSpecField {
        SBX_SPEC_FIELD_IMAGE            = 1u << 0,
        SBX_SPEC_FIELD_VOLUMES          = 1u << 1,
        SBX_SPEC_FIELD_PORTS            = 1u << 2,
        SBX_SPEC_FIELD_WORKING_DIR      = 1u << 3,
        SBX_SPEC_FIELD_NETWORK_ISOLATED = 1u << 4,
        SBX_SPEC_FIELD_CPUS             = 1u << 5,
        SBX_SPEC_FIELD_MEMORY           = 1u << 6,
        SBX_SPEC_FIELD_TEMPLATE_TYPE    = 1u << 7,
        SBX_SPEC_FIELD_SNAPSHOT_ID      = 1u << 8,
        SBX_SPEC_FIELD_ENV              = 1u << 9,
} SbxSpecField;
#define SBX_SPEC_FIELD_COUNT 10

/* xagent's names of the bits, bit i is sbx_spec_field_names[i] (publish.h names
 * its seven by the same table). */
extern const char *const sbx_spec_field_names[SBX_SPEC_FIELD_COUNT];

/* xagent's field name of a single bit. */
const char *sbx_spec_field_to_string(SbxSpecField f) _pure_;
/* Fills names (NULL-terminated, at most SBX_SPEC_FIELD_COUNT + 1 slots) in the
 * order above. */
size_t sbx_spec_fields_to_names(unsigned mask, const char *names[static SBX_SPEC_FIELD_COUNT + 1]);

typedef enum SbxTemplateType {
        SBX_TEMPLATE_IMAGE,
        SBX_TEMPLATE_SNAPSHOT,
        _SBX_TEMPLATE_TYPE_MAX,
} SbxTemplateType;

typedef struct SbxEnvVar {
        char *key;
        char *value;
} SbxEnvVar;

typedef struct SbxVolume {
        char *host;
        char *guest;
        char *mode;             /* "ro" or "rw" once admissible; xagent keeps it as given */
} SbxVolume;

typedef struct SbxPort {
        int64_t host;           /* 0 = ephemeral */
        int64_t guest;
} SbxPort;

typedef struct SbxSpec {
        SbxTemplateType template_type;
        char *image;            /* NULL = Python None; "" is kept distinct, as xagent does */
        char *snapshot_id;
        char *working_dir;      /* NULL or "" = default */
        int64_t cpus;           /* 0 = default */
        int64_t memory;         /* MiB, 0 = default */
        SbxEnvVar *env;
        size_t n_env;
        SbxVolume *volumes;
        size_t n_volumes;
        bool network_isolated;
        SbxPort *ports;
        size_t n_ports;
} SbxSpec;

const char *sbx_template_type_to_string(SbxTemplateType t) _pure_;

SbxSpec *sbx_spec_new(void);
SbxSpec *sbx_spec_free(SbxSpec *spec);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxSpec *, sbx_spec_free);

/* Appenders for parsers: each copies its arguments. */
int sbx_spec_add_env(SbxSpec *spec, const char *key, const char *value);
int sbx_spec_add_volume(SbxSpec *spec, const char *host, const char *guest, const char *mode);
int sbx_spec_add_port(SbxSpec *spec, int64_t host, int64_t guest);

/* xagent's from_parts() + __post_init__ (xagent-contract.md §1.1, §1.2): defaults, canonical
 * paths, env sorted (a later duplicate key wins, as in a Python dict), volumes
 * and ports sorted and de-duplicated; then the template/cpus/memory checks with
 * xagent's messages. InvalidArgs on failure. */
int sbx_spec_normalize(SbxSpec *spec, SbxError *error);

/* What a normalized spec needs beyond from_parts() to be contract-valid: every
 * string valid UTF-8. InvalidArgs naming the field. */
int sbx_spec_validate_contract(const SbxSpec *spec, SbxError *error);

/* Admissibility, on a normalized spec: valid UTF-8 everywhere, non-empty
 * image/snapshot id, an image reference of printable ASCII, absolute working_dir
 * and volume paths, mode "ro"/"rw", ports in range with guest >= 1 and none for
 * a network_isolated sandbox, env names non-empty without '=', no control
 * characters in names and paths, and the length/count bounds above.
 * InvalidArgs naming the field and the rule. */
int sbx_spec_check_admissible(const SbxSpec *spec, SbxError *error);

/* Structural equality (xagent's dataclass ==) of two normalized specs. */
bool sbx_spec_equal(const SbxSpec *a, const SbxSpec *b);

/* Sandbox names and snapshot ids: non-empty, valid UTF-8, no control characters,
 * at most SBX_MAX_NAME_LEN bytes. InvalidArgs naming the field. */
#define SBX_MAX_NAME_LEN 200
/* A snapshot's image tag is "<safe id>-<10 hex>" and Docker allows 128 characters. */
#define SBX_MAX_SNAPSHOT_ID_LEN 100
int sbx_name_validate(const char *field, const char *name, SbxError *error);

/* Completes a raw spec to a contract-valid one: an image template without an
 * image gets default_image (the host policy's), then sbx_spec_normalize() and
 * sbx_spec_validate_contract(). For fingerprints and verification. */
int sbx_spec_complete(SbxSpec *spec, const char *default_image, SbxError *error);

/* Completes a raw spec to an admissible one, for create: the count bounds on the
 * entries as given (before duplicates collapse), sbx_spec_complete(), then
 * sbx_spec_check_admissible(). */
int sbx_spec_finalize(SbxSpec *spec, const char *default_image, SbxError *error);
