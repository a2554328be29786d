/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "usage.h"

/* The unsigned number at path (NULL-terminated keys) below j; 0 when absent. */
static int number(json_object *j, const char *name, const char *const *path, uint64_t *ret, SbxError *error) {
        for (const char *const *k = path; *k && j; k++)
                if (!json_object_object_get_ex(j, *k, &j))
                        j = NULL;
        if (!j || json_object_is_type(j, json_type_null)) {
                *ret = 0;
                return 0;
        }
        if (!json_object_is_type(j, json_type_int) || json_object_get_int64(j) < 0)
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker stats: %s is not a count", name);
        *ret = json_object_get_uint64(j);
        return 0;
}

static int networks(json_object *stats, SbxUsage *u, SbxError *error) {
        json_object *n;

        if (!json_object_object_get_ex(stats, "networks", &n) || !json_object_is_type(n, json_type_object))
                return 0;
        u->has_net = true;
        json_object_object_foreach(n, key, v) {
                uint64_t rx, tx;
                int r;

                (void) key;
                if ((r = number(v, "networks.rx_bytes", (const char *const[]) { "rx_bytes", NULL }, &rx, error)) < 0 ||
                    (r = number(v, "networks.tx_bytes", (const char *const[]) { "tx_bytes", NULL }, &tx, error)) < 0)
                        return r;
                u->net_rx_bytes += rx;
                u->net_tx_bytes += tx;
        }
        return 0;
}

int sbx_usage_from_json(json_object *stats, SbxUsage *ret, SbxError *error) {
        SbxUsage u = {};
        int r;

        if (!json_object_is_type(stats, json_type_object))
                return sbx_error_set(error, SBX_ERROR_BACKEND_ERROR, "Docker stats: not a JSON object");
        if ((r = number(stats, "cpu_stats.cpu_usage.total_usage",
                        (const char *const[]) { "cpu_stats", "cpu_usage", "total_usage", NULL }, &u.cpu_usage_ns, error)) < 0 ||
            (r = number(stats, "memory_stats.usage", (const char *const[]) { "memory_stats", "usage", NULL },
                        &u.memory_bytes, error)) < 0 ||
            (r = number(stats, "memory_stats.limit", (const char *const[]) { "memory_stats", "limit", NULL },
                        &u.memory_limit_bytes, error)) < 0 ||
            (r = number(stats, "pids_stats.current", (const char *const[]) { "pids_stats", "current", NULL },
                        &u.pids, error)) < 0 ||
            (r = networks(stats, &u, error)) < 0)
                return r;
        *ret = u;
        return 0;
}
