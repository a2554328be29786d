/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The host policy (docs/security.md): what an administrator allows sandboxes to be, parsed
 * from the JSON of /etc/xagent/sandboxd.json (the daemon reads the file; the core
 * only parses text), and the pure decisions made with it on a normalized spec.
 *
 * Every refusal of a spec is SBX_ERROR_POLICY_VIOLATION with a message naming the
 * value and the policy key or rule that refused it. The file-system checks of a
 * volume (exists, no symlink below its root, owner) are I/O and live elsewhere;
 * sbx_policy_find_root() hands the daemon the root to walk down from. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "egress.h"
#include "fingerprint.h"
#include "error.h"
#include "runtime.h"
#include "spec.h"
#include "unicode.h"

/* Where the daemon reads the host policy unless told otherwise. */
#define SBX_POLICY_PATH "/etc/xagent/sandboxd.json"

/* xagent's default image (contract: SANDBOX_IMAGE's default). */
#define SBX_POLICY_DEFAULT_IMAGE "xprobe/xagent-sandbox:latest"
/* All images allowed: what a fresh install is expected to do; polkit decides who may
 * create at all, and an administrator narrows this list. */
#define SBX_POLICY_DEFAULT_ALLOWED_IMAGE "*"
#define SBX_POLICY_DEFAULT_VOLUME_ROOT "%h"
#define SBX_POLICY_DEFAULT_MAX_CPUS 4
#define SBX_POLICY_DEFAULT_MAX_MEMORY_MIB 8192
#define SBX_POLICY_DEFAULT_MAX_SANDBOXES_PER_USER 16
#define SBX_POLICY_DEFAULT_PIDS_LIMIT 512
/* Processes started through the service (ExecSandbox, StartExec, copies) that may
 * run at once: per user and in total. A capture exec or a copy occupies one of
 * the 48 state-change workers for its whole run (a streaming one only its own
 * relay thread): one agent fans out 16 at once, and the default total leaves 16
 * workers to lifecycle calls. */
#define SBX_POLICY_DEFAULT_MAX_EXECS_PER_USER 16
#define SBX_POLICY_DEFAULT_MAX_EXECS 32
/* Leases (docs/api.md): each is one descriptor the daemon keeps open. */
#define SBX_POLICY_DEFAULT_MAX_LEASES_PER_USER 64
#define SBX_POLICY_DEFAULT_MAX_LEASES_PER_SANDBOX 64
#define SBX_POLICY_MAX_LEASES_LIMIT 1024
/* Idle stop and expiry (docs/lifecycle.md): the longest a caller may ask for, and the
 * idle timeout of a sandbox made without one (0: never). */
#define SBX_POLICY_DEFAULT_MAX_IDLE_TIMEOUT 86400
#define SBX_POLICY_DEFAULT_MAX_EXPIRE_AFTER (30 * 86400)
#define SBX_POLICY_LIFETIME_LIMIT (366 * 86400)
#define SBX_POLICY_DEFAULT_HOST_PORT_MIN 1024
#define SBX_POLICY_DEFAULT_PUBLISH_ADDRESS "127.0.0.1"
/* One caller's operations in flight: half the state-change workers, so another
 * user always finds some free (16 execs of one agent and 8 more). */
#define SBX_POLICY_DEFAULT_MAX_OPERATIONS_PER_USER 24
#define SBX_POLICY_MAX_OPERATIONS_PER_USER_LIMIT 128
/* One caller's reads in flight: a share of their own, so that a user's read storm
 * never refuses that user's state changes (nor the other way round). */
#define SBX_POLICY_DEFAULT_MAX_READS_PER_USER 16
#define SBX_POLICY_MAX_READS_PER_USER_LIMIT 1024
#define SBX_POLICY_DEFAULT_MAX_STOP_TIMEOUT 60
#define SBX_POLICY_MAX_STOP_TIMEOUT_LIMIT 3600
/* Seconds an operation's Docker calls may take in all (docs/lifecycle.md): below the
 * 25 s a D-Bus client waits by default. */
#define SBX_POLICY_DEFAULT_DOCKER_TIMEOUT 20
#define SBX_POLICY_DOCKER_TIMEOUT_LIMIT 600
#define SBX_POLICY_DEFAULT_OBSERVATION_MAX_AGE 2
#define SBX_POLICY_OBSERVATION_MAX_AGE_LIMIT 3600

/* A sandbox's writable layer, in MiB (docs/security.md, "Disk"): bounded by the
 * service on what enters through it (copies), the storage driver here supporting no
 * per-container size. */
#define SBX_POLICY_DEFAULT_MAX_DISK_MIB 10240
#define SBX_POLICY_MAX_DISK_MIB_LIMIT (INT64_C(16) * 1024 * 1024)
/* One file call's data, either way (ReadFile, WriteFile): the channel's bound (proto.h),
 * below the system bus's 32 MiB message limit with the reply's other fields. */
#define SBX_POLICY_DEFAULT_MAX_FILE_BYTES (INT64_C(16) << 20)
#define SBX_POLICY_MAX_FILE_BYTES_LIMIT (INT64_C(16) << 20)
/* What a detached process's output keeps of each stream, in bytes (the oldest
 * dropped): its ring in the sandbox (proto.h, SBX_RING_CAP_MIN…MAX). */
#define SBX_POLICY_DEFAULT_MAX_PROCESS_OUTPUT (INT64_C(1) << 20)
#define SBX_POLICY_MIN_PROCESS_OUTPUT (INT64_C(64) << 10)
#define SBX_POLICY_MAX_PROCESS_OUTPUT_LIMIT (INT64_C(64) << 20)
/* How the bound is enforced, as GetPolicy's disk_enforcement reports it. */
#define SBX_POLICY_DISK_ENFORCEMENT "copies"

/* Where the Docker socket lives when the daemon is given no other docker host. */
#define SBX_DOCKER_SOCKET_DEFAULT "/var/run/docker.sock"

/* Bounds a policy file must respect. */
#define SBX_POLICY_MAX_SANDBOXES_PER_USER_LIMIT 65536
#define SBX_POLICY_PIDS_LIMIT_MAX 4194304       /* the kernel's PID_MAX_LIMIT */
#define SBX_POLICY_MAX_EXECS_LIMIT 1024

typedef enum SbxVolumeModes {
        SBX_VOLUME_MODE_RO = 1 << 0,
        SBX_VOLUME_MODE_RW = 1 << 1,
} SbxVolumeModes;

typedef struct SbxVolumeRoot {
        char *path;             /* as written: absolute, or starting with "%h"; may hold %h %u %U %% */
        unsigned modes;         /* SbxVolumeModes, never 0 */
} SbxVolumeRoot;

/* The Docker engine (docs/engines.md): host is "unix:///PATH" or "tcp://HOST:PORT"; a tcp://
 * engine is TLS only, mutual and verified, so it needs all three files (absolute paths,
 * the daemon checks they are root's alone); server_name is the name its certificate
 * must carry (NULL: HOST). All NULL: the daemon's --docker-host, $DOCKER_HOST, or the
 * default socket. */
typedef struct SbxPolicyEngine {
        char *host;
        char *tls_ca;
        char *tls_cert;
        char *tls_key;
        char *server_name;
} SbxPolicyEngine;

/* A registry images may be pulled from (PullImage, docs/security.md "Images"): host
 * as a reference names it ("HOST[:PORT]"), ca the PEM file of the CA its TLS
 * certificate must be signed by (absolute; the service reads it at each pull). */
typedef struct SbxPolicyRegistry {
        char *host;
        char *ca;
} SbxPolicyRegistry;

/* An image pulled, at most (its layers as the registry sends them, and as Docker
 * stores them). */
#define SBX_POLICY_DEFAULT_MAX_IMAGE_MIB 4096
#define SBX_POLICY_MAX_IMAGE_MIB_LIMIT (INT64_C(1024) * 1024)
#define SBX_POLICY_MAX_REGISTRIES 64

/* A warm pool (docs/lifecycle.md, "Warm pools"): members made in advance for one
 * owner from one spec, handed out by ClaimSandbox. */
#define SBX_POLICY_MAX_POOL_SIZE 64
#define SBX_POLICY_MAX_POOLED_LIMIT 1024
#define SBX_POLICY_DEFAULT_MAX_POOLED 16
#define SBX_POOL_DEFAULT_NAME_PREFIX "sandbox"
#define SBX_POOL_NAME_PREFIX_MAX 32
/* The policy's digest (its text's SHA-256, the first 16 hex digits): a member made under
 * another policy is replaced. */
#define SBX_POLICY_DIGEST_LEN 16

typedef struct SbxPolicyPool {
        char *user;             /* as written: a user name, or NULL when given as a uid */
        uid_t uid;              /* when given as a uid (user NULL) */
        SbxSpec *spec;          /* finalized: no volumes, no fixed host port */
        char *spec_json;        /* … canonical (GetPolicy) */
        char fingerprint[SBX_FINGERPRINT_HEX_LEN + 1];  /* under the policy's python_version */
        char *name_prefix;      /* options.name_prefix: members are named "<prefix>-<8 hex>" */
        SbxEgress egress;       /* options.egress (admitted by the policy's egress) */
        char *egress_json;      /* … its stored form */
        int64_t size;
} SbxPolicyPool;

typedef struct SbxPolicy {
        char *default_image;
        char **allowed_images;  /* fnmatch() globs without flags: '*' also matches '/' and ':' */
        size_t n_allowed_images;
        SbxVolumeRoot *volume_roots;
        size_t n_volume_roots;
        int64_t max_cpus;
        int64_t max_memory_mib;
        int64_t max_sandboxes_per_user;
        int64_t pids_limit;
        int64_t max_execs_per_user;
        int64_t max_execs;
        int64_t max_leases_per_user;            /* leases one user holds at once */
        int64_t max_leases_per_sandbox;         /* leases held on one sandbox at once */
        int64_t max_idle_timeout;               /* seconds; a longer idle_timeout is refused */
        int64_t max_expire_after;               /* seconds; a longer expire_after is refused */
        int64_t default_idle_timeout;           /* seconds, for a sandbox made without; 0: never */
        int64_t host_port_min;
        int64_t max_operations_per_user;        /* one caller's state changes in flight */
        int64_t max_reads_per_user;             /* one caller's reads in flight */
        int64_t max_stop_timeout;               /* seconds a stop may wait before SIGKILL */
        int64_t docker_timeout;                 /* seconds an operation's Docker calls may take */
        /* seconds a read may use an observation (docs/api.md#reads-from-observations); 0: never */
        int64_t observation_max_age;
        int64_t max_disk_mib;                   /* a sandbox's writable layer, by copies into it */
        int64_t max_file_bytes;                 /* one ReadFile's or WriteFile's data */
        int64_t max_process_output;             /* a detached process's output kept, per stream */
        int64_t max_image_mib;                  /* an image pulled, at most */
        SbxPolicyRegistry *registries;          /* none: pulling is off */
        size_t n_registries;
        char *publish_address;  /* an IPv4 or IPv6 literal */
        /* The Python whose repr() the fingerprint stamped on created sandboxes
         * follows ("3.11"…"3.14"); verification accepts every version's. */
        SbxPythonVersion python_version;
        SbxPolicyEngine engine;
        SbxPolicyEgress egress;         /* docs/security.md, "Egress" */
        SbxPolicyPool *warm_pools;      /* docs/lifecycle.md, "Warm pools" */
        size_t n_warm_pools;
        int64_t max_pooled;             /* members on the host, at most */
        char digest[SBX_POLICY_DIGEST_LEN + 1];
        SbxRuntimes runtimes;           /* docs/security.md, "Runtimes" (runtime.h) */

        unsigned n_ref;         /* sbx_policy_ref()/unref(): a policy shared across threads */
} SbxPolicy;

/* Who a sandbox is for; name and home as the user database has them (may be NULL:
 * then the roots using %u / %h apply to nothing). */
typedef struct SbxOwner {
        uid_t uid;
        gid_t gid;
        const char *name;
        const char *home;
        const gid_t *groups;    /* supplementary groups (for the file-system checks), may be NULL */
        size_t n_groups;
} SbxOwner;

/* The built-in defaults (the policy of a missing file). NULL on allocation failure. */
SbxPolicy *sbx_policy_new_default(void);
SbxPolicy *sbx_policy_free(SbxPolicy *p);
/* A policy is created with one reference; ref/unref are atomic, and the last
 * unref frees it (the daemon swaps in a re-read policy while workers use the old). */
SbxPolicy *sbx_policy_ref(SbxPolicy *p);
SbxPolicy *sbx_policy_unref(SbxPolicy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxPolicy *, sbx_policy_free);

/* Parses a policy document: one JSON object (json-c's syntax, so comments are
 * allowed) whose keys override the defaults. Unknown keys, wrong types, values out
 * of range and malformed JSON are SBX_ERROR_INVALID_ARGS naming the key
 * ("volume_roots[1].modes: …"). */
int sbx_policy_parse(const char *json, SbxPolicy **ret, SbxError *error);

/* A pool name prefix: 1–32 of [A-Za-z0-9_.-], starting with a letter or a digit
 * (InvalidArgs naming field). */
int sbx_pool_name_prefix_check(const char *field, const char *s, SbxError *error);

/* The engine is a tcp:// one: only what does not depend on this host's file system
 * is offered on it (no host volumes). */
bool sbx_policy_engine_remote(const SbxPolicy *p);

/* Expands %h, %u, %U and %% in a root pattern for owner and canonicalizes the result.
 * Returns 1 and the path in *ret, 0 (and *ret = NULL) when the root does not apply to
 * this owner (no usable home or name, or the result is not an absolute path), or a
 * negative errno. */
int sbx_policy_expand_root(const char *pattern, const SbxOwner *owner, char **ret);

/* The image is matched by one of allowed_images. */
int sbx_policy_check_image(const SbxPolicy *p, const char *image, SbxError *error);
/* A pull of reference (PullImage): parsed into *ret_ref, matched by allowed_images,
 * from a registry of the policy's registries (*ret_registry points into p).
 * PolicyViolation naming the rule that refused it (no registries: pulling is off). */
typedef struct SbxImageRef SbxImageRef;
int sbx_policy_check_pull(const SbxPolicy *p, const char *reference, SbxImageRef *ret_ref,
                          const SbxPolicyRegistry **ret_registry, SbxError *error);

/* cpus <= max_cpus, memory <= max_memory_mib. */
int sbx_policy_check_limits(const SbxPolicy *p, const SbxSpec *spec, SbxError *error);
/* Each host port is 0 (ephemeral) or in host_port_min…65535. */
int sbx_policy_check_ports(const SbxPolicy *p, const SbxSpec *spec, SbxError *error);
/* Guest paths of the volumes and working_dir: absolute, not "/" (volumes), not
 * /proc, /sys, /dev or below, not in the reserved SBX_INIT_GUEST_DIR, and no volume
 * inside another's guest path. */
int sbx_policy_check_guest_paths(const SbxSpec *spec, SbxError *error);

/* The volume whose guest path strictly contains the working directory (which must
 * then exist in it: the file-system half of the check), with *ret_rest the path
 * below that guest path; -1 if none. */
ssize_t sbx_spec_working_dir_volume(const SbxSpec *spec, const char **ret_rest);

/* A host path that is never mounted: "/", and any path that is, is an ancestor of, or
 * lies below the Docker socket (docker_socket, NULL = the default; its /run ↔
 * /var/run twin and the default sockets are always included), /run/dbus, /proc,
 * /sys, /dev, /etc, /boot, /usr, /var/lib/docker. path must be canonical. Returns 0
 * if allowed, else PolicyViolation naming the path and the protected path. */
int sbx_policy_check_host_path(const char *path, const char *docker_socket, SbxError *error);

/* The expanded root that admits host_path with mode ("ro"/"rw"): of the roots that
 * contain it (segment boundary) and allow the mode, the deepest one, because the
 * daemon then checks for symlinks from that root downward and an administrator's
 * more specific root is the one that was meant. PolicyViolation when none does.
 * Does not check the protected paths (sbx_policy_check_host_path does). */
int sbx_policy_find_root(const SbxPolicy *p, const SbxOwner *owner, const char *host_path, const char *mode,
                         char **ret_root, SbxError *error);

/* Every volume: canonical absolute host path, not protected, admitted by a root. */
int sbx_policy_check_volumes(const SbxPolicy *p, const SbxOwner *owner, const SbxSpec *spec,
                             const char *docker_socket, SbxError *error);

/* All of the above on a normalized, admissible spec (the image only for image
 * templates; snapshot templates are checked against the owner's snapshots). */
int sbx_policy_check_spec(const SbxPolicy *p, const SbxOwner *owner, const SbxSpec *spec,
                          const char *docker_socket, SbxError *error);

/* The owner has current_count sandboxes: may one more be created? PolicyViolation
 * with the rule max_sandboxes_per_user if not (a host rule, not a transient queue
 * limit, hence not LimitsExceeded). */
int sbx_policy_check_count(const SbxPolicy *p, size_t current_count, SbxError *error);
