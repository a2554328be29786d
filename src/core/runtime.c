/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "runtime.h"

static void items_free_n(SbxPolicyRuntime *items, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(items[i].name);
                free(items[i].engine_runtime);
        }
        free(items);
}

void sbx_runtimes_done(SbxRuntimes *r) {
        items_free_n(r->items, r->n);
        *r = (SbxRuntimes) {};
}

bool sbx_runtime_name_valid(const char *name) {
        size_t n = name ? strlen(name) : 0;

        if (n == 0 || n > SBX_RUNTIME_NAME_MAX || !strchr("abcdefghijklmnopqrstuvwxyz0123456789", name[0]))
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789._-", name[i]))
                        return false;
        return true;
}

static int parse_entry(const char *field, json_object *v, char **ret, SbxError *error) {
        json_object *engine = NULL;
        const char *s;
        char sub[128];
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an object { \"engine_runtime\": … }",
                                     field);
        json_object_object_foreach(v, k, val) {
                if (!streq(k, "engine_runtime"))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: unknown key '%s'", field, k);
                engine = val;
        }
        snprintf(sub, sizeof sub, "%s.engine_runtime", field);
        if (!engine)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: missing", sub);
        if ((r = sbx_json_get_text(sub, engine, &s, error)) < 0)
                return r;
        if (!sbx_runtime_name_valid(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: '%s' is not a runtime name", sub, s);
        return (*ret = strdup(s)) ? 0 : -ENOMEM;
}

int sbx_runtimes_parse(SbxRuntimes *r, const char *key, json_object *v, SbxError *error) {
        SbxPolicyRuntime *items;
        size_t n = 0;
        int k = 0;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be an object of runtimes", key);
        if (json_object_object_length(v) > SBX_POLICY_MAX_RUNTIMES)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: more than %d runtimes", key,
                                     SBX_POLICY_MAX_RUNTIMES);
        if (!(items = calloc((size_t) json_object_object_length(v) + 1, sizeof(SbxPolicyRuntime))))
                return -ENOMEM;
        json_object_object_foreach(v, name, val) {
                char field[96];

                snprintf(field, sizeof field, "%s.%s", key, name);
                if (!sbx_runtime_name_valid(name))
                        k = sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                          "%s: '%s' is not a runtime name ([a-z0-9][a-z0-9._-]*, at most %d bytes)",
                                          key, name, SBX_RUNTIME_NAME_MAX);
                else if (streq(name, SBX_RUNTIME_DEFAULT))
                        k = sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                          "%s: '%s' is the default runtime, always offered", field, name);
                else if (!(items[n].name = strdup(name)))
                        k = -ENOMEM;
                else
                        k = parse_entry(field, val, &items[n++].engine_runtime, error);
                if (k < 0) {
                        items_free_n(items, n);
                        return k;
                }
        }
        sbx_runtimes_done(r);
        *r = (SbxRuntimes) { .items = items, .n = n };
        return 0;
}

const char *sbx_runtimes_engine(const SbxRuntimes *r, const char *name) {
        if (!name || streq(name, SBX_RUNTIME_DEFAULT))
                return SBX_RUNTIME_DEFAULT;
        for (size_t i = 0; r && i < r->n; i++)
                if (streq(r->items[i].name, name))
                        return r->items[i].engine_runtime;
        return NULL;
}

bool sbx_runtime_engine_is_gvisor(const char *engine_runtime) {
        return streq_ptr(engine_runtime, SBX_RUNSC_ENGINE_RUNTIME);
}

int sbx_runtimes_check(const SbxRuntimes *r, const char *name, SbxError *error) {
        _cleanup_free_ char *offered = NULL;
        size_t size = 0;
        FILE *f;

        if (!sbx_runtime_name_valid(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "runtime: '%s' is not a runtime name ([a-z0-9][a-z0-9._-]*, at most %d bytes)",
                                     name, SBX_RUNTIME_NAME_MAX);
        if (sbx_runtimes_engine(r, name))
                return 0;
        if (!(f = open_memstream(&offered, &size)))
                return -ENOMEM;
        fputs(SBX_RUNTIME_DEFAULT, f);
        for (size_t i = 0; r && i < r->n; i++)
                fprintf(f, ", %s", r->items[i].name);
        if (fclose(f) != 0)
                return -ENOMEM;
        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                             "runtime: '%s' is not offered by the host policy's runtimes (offered: %s)", name, offered);
}

int sbx_runtimes_check_sandbox(const SbxRuntimes *r, const char *name, bool network_isolated, size_t n_volumes,
                               SbxError *error) {
        int k = sbx_runtimes_check(r, name, error);

        if (k < 0 || !sbx_runtime_engine_is_gvisor(sbx_runtimes_engine(r, name)))
                return k;
        if (!network_isolated)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "runtime: '%s' (gVisor's runsc) runs only network_isolated sandboxes: this "
                                     "runsc's own network stack cannot start on this kernel (upstream gvisor#10704; "
                                     "gVisor release %s or later lifts it)", name, SBX_RUNSC_NETWORK_FIX_RELEASE);
        if (n_volumes > 0)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "runtime: '%s' (gVisor's runsc) takes no volumes: the guest reports its own "
                                     "mount table, so what is mounted cannot be checked (docs/security.md)", name);
        return 0;
}

int sbx_runtimes_check_engine(const SbxRuntimes *r, json_object *info, SbxError *error) {
        json_object *registered = NULL;

        if (r->n == 0)
                return 0;
        if (!json_object_object_get_ex(info, "Runtimes", &registered) ||
            !json_object_is_type(registered, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "runtimes: the engine reports no registered runtimes (GET /info)");
        for (size_t i = 0; i < r->n; i++)
                if (!json_object_object_get_ex(registered, r->items[i].engine_runtime, NULL))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "runtimes.%s.engine_runtime: '%s' is not a runtime the engine has "
                                             "registered (GET /info)", r->items[i].name, r->items[i].engine_runtime);
        return 0;
}

int64_t sbx_runtime_pids_limit(const char *engine_runtime, int64_t pids_limit) {
        if (!sbx_runtime_engine_is_gvisor(engine_runtime))
                return pids_limit;
        return pids_limit * SBX_RUNSC_TASKS_PER_PROCESS + SBX_RUNSC_BASE_TASKS;
}

int64_t sbx_runtime_guest_nproc(const char *engine_runtime, int64_t pids_limit) {
        return sbx_runtime_engine_is_gvisor(engine_runtime) ? pids_limit : 0;
}
