/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The host policy's max_disk_mib, kept by the service (docs/security.md, "Disk"):
 * what the service's own calls — WriteFile, CopyToSandbox — put into each sandbox
 * and RemoveFile took out, by the blocks the in-sandbox program reports (a sparse
 * file counts what it takes, not its length), per container, for as long as the
 * daemon runs. No call asks the engine to measure the writable layer (Docker's
 * `size=1`, a walk by root of every entry in it). Thread-safe. */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

typedef struct SbxDiskEntry SbxDiskEntry;

typedef struct SbxDiskLedger {
        pthread_mutex_t lock;
        SbxDiskEntry *entries;
        size_t n;
} SbxDiskLedger;

void sbx_disk_ledger_init(SbxDiskLedger *d);
void sbx_disk_ledger_done(SbxDiskLedger *d);

/* Reserves bytes for a call into container_id within bound: 0; -ENOSPC when the
 * container's count and bytes would pass it (*ret_used: its count now). */
int sbx_disk_ledger_reserve(SbxDiskLedger *d, const char *container_id, uint64_t bound, uint64_t bytes,
                            uint64_t *ret_used);

/* Settles a call: its reservation goes, what it added and released count
 * (saturating at 0: what the service did not count is never taken off). */
void sbx_disk_ledger_settle(SbxDiskLedger *d, const char *container_id, uint64_t reserved, uint64_t added,
                            uint64_t released);

/* The container's count now (0 when unknown). */
uint64_t sbx_disk_ledger_used(SbxDiskLedger *d, const char *container_id);

/* Bytes on disk of n bytes of data, in 4 KiB blocks. */
uint64_t sbx_disk_blocks(uint64_t n);
