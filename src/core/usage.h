/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a sandbox consumes, from Docker's one-shot stats
 * (GET /containers/{id}/stats?stream=false&one-shot=true). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"

typedef struct SbxUsage {
        uint64_t cpu_usage_ns;          /* cpu_stats.cpu_usage.total_usage */
        uint64_t memory_bytes;          /* memory_stats.usage */
        uint64_t memory_limit_bytes;    /* memory_stats.limit */
        uint64_t pids;                  /* pids_stats.current */
        bool has_net;                   /* networks reported (not for network "none") */
        uint64_t net_rx_bytes;          /* summed over networks */
        uint64_t net_tx_bytes;
} SbxUsage;

/* Absent members count as 0; a member of the wrong type is BackendError naming it. */
int sbx_usage_from_json(json_object *stats, SbxUsage *ret, SbxError *error);
