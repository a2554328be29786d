/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The hardened posture (docs/security.md): the host configuration this service gives
 * every container, independent of the spec, and the judgement whether an
 * observed container still carries it.
 *
 * The result is a bitmask of SbxPostureItem, one bit per item that differs; the
 * bits are in the fixed order of the name table, so the names come out in that
 * order. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "observed.h"

/* The sandbox's first process (State.Pid) as the host shows it: only a local engine's,
 * and only while the process is in the container's cgroup. */
typedef enum SbxHostProcess {
        SBX_HOST_PROCESS_UNSEEN,        /* a remote engine, not running, or not visible here */
        SBX_HOST_PROCESS_GVISOR,        /* runsc's sandbox (argv[0] SBX_RUNSC_SANDBOX_ARGV0) */
        SBX_HOST_PROCESS_OTHER,         /* anything else: runc's init is the service's init */
        SBX_HOST_PROCESS_GONE,          /* it runs, but its first process is not to be found */
} SbxHostProcess;

typedef struct SbxPostureExpect {
        int64_t pids_limit;             /* HostConfig.PidsLimit, from policy */
        const char *publish_address;    /* every port binding's HostIp; required */
        bool network_isolated;          /* NetworkMode "none" if true, the default bridge otherwise */
        int64_t memory_bytes;           /* HostConfig.MemorySwap must equal this (no swap) */
        const char *engine_runtime;     /* HostConfig.Runtime asked for (runtime.h); NULL: the default,
                                         * any runtime but gVisor's */
        SbxHostProcess host_process;    /* what its first process on the host is */
} SbxPostureExpect;

typedef enum SbxPostureItem {
        SBX_POSTURE_USER            = 1u << 0,  /* Config.User != SBX_INIT_USER */
        SBX_POSTURE_PRIVILEGED      = 1u << 1,  /* Privileged */
        SBX_POSTURE_CAP_DROP        = 1u << 2,  /* CapDrop != ["ALL"] */
        SBX_POSTURE_CAP_ADD         = 1u << 3,  /* any CapAdd */
        SBX_POSTURE_SECURITY_OPT    = 1u << 4,  /* no no-new-privileges, or any other option */
        SBX_POSTURE_DEVICES         = 1u << 5,  /* Devices, DeviceCgroupRules or DeviceRequests */
        SBX_POSTURE_IPC_MODE        = 1u << 6,  /* IpcMode not "private" / "none" */
        SBX_POSTURE_PID_MODE        = 1u << 7,  /* PidMode not "" */
        SBX_POSTURE_UTS_MODE        = 1u << 8,  /* UTSMode not "" */
        SBX_POSTURE_VOLUMES_FROM    = 1u << 9,  /* any VolumesFrom */
        SBX_POSTURE_PIDS_LIMIT      = 1u << 10, /* PidsLimit != policy */
        SBX_POSTURE_MEMORY_SWAP     = 1u << 11, /* MemorySwap != memory */
        SBX_POSTURE_NETWORK_MODE    = 1u << 12, /* "none" when isolated, bridge otherwise */
        SBX_POSTURE_PUBLISH_ADDRESS = 1u << 13, /* a port binding's HostIp != publish_address */
        SBX_POSTURE_INIT            = 1u << 14, /* Entrypoint != [SBX_INIT_PATH], or its volume missing or rw */
        SBX_POSTURE_MOUNTS          = 1u << 15, /* a mount other than the binds and the init volume */
        SBX_POSTURE_LOG             = 1u << 16, /* the log is not bounded as SBX_LOG_* says */
        SBX_POSTURE_RUNTIME         = 1u << 17, /* HostConfig.Runtime or the first process on the host
                                                 * is not the runtime asked for */
} SbxPostureItem;

#define SBX_POSTURE_ITEM_COUNT 18

/* Returns the items of the posture the observed container does not carry
 * (0 = hardened). */
unsigned sbx_posture_check(const SbxObserved *o, const SbxPostureExpect *expect) _pure_;

/* The name of one item ("user", "privileged", "cap_drop", …), NULL if not one bit. */
const char *sbx_posture_item_to_string(SbxPostureItem item) _pure_;

/* Fills names with the names of the bits set in mask, in table order, then a
 * NULL. Returns the number of names. */
size_t sbx_posture_items_to_names(unsigned mask, const char *names[static SBX_POSTURE_ITEM_COUNT + 1]);
