/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "bitmask.h"
#include "path.h"
#include "naming.h"
#include "spec.h"
#include "utf8.h"

const char *const sbx_spec_field_names[SBX_SPEC_FIELD_COUNT] = {
        "image", "volumes", "ports", "working_dir", "network_isolated", "cpus", "memory",
        "template_type", "snapshot_id", "env",
};

SBX_DEFINE_BIT_NAMES(SbxSpecField, sbx_spec_field_to_string, sbx_spec_fields_to_names, sbx_spec_field_names,
                     SBX_SPEC_FIELD_COUNT)

const char *sbx_template_type_to_string(SbxTemplateType t) {
        switch (t) {
        case SBX_TEMPLATE_IMAGE:
                return "image";
        case SBX_TEMPLATE_SNAPSHOT:
                return "snapshot";
        default:
                return NULL;
        }
}

SbxSpec *sbx_spec_new(void) {
        return calloc(1, sizeof(SbxSpec));
}

static void env_clear(SbxEnvVar *e) {
        free(e->key);
        free(e->value);
}

static void volume_clear(SbxVolume *v) {
        free(v->host);
        free(v->guest);
        free(v->mode);
}

SbxSpec *sbx_spec_free(SbxSpec *spec) {
        if (!spec)
                return NULL;
        free(spec->image);
        free(spec->snapshot_id);
        free(spec->working_dir);
        for (size_t i = 0; i < spec->n_env; i++)
                env_clear(&spec->env[i]);
        free(spec->env);
        for (size_t i = 0; i < spec->n_volumes; i++)
                volume_clear(&spec->volumes[i]);
        free(spec->volumes);
        free(spec->ports);
        free(spec);
        return NULL;
}

int sbx_spec_add_env(SbxSpec *spec, const char *key, const char *value) {
        SbxEnvVar *n = reallocarray(spec->env, spec->n_env + 1, sizeof(SbxEnvVar));
        if (!n)
                return -ENOMEM;
        spec->env = n;
        n = &spec->env[spec->n_env];
        n->key = strdup(key);
        n->value = strdup(value);
        if (!n->key || !n->value) {
                env_clear(n);
                return -ENOMEM;
        }
        spec->n_env++;
        return 0;
}

int sbx_spec_add_volume(SbxSpec *spec, const char *host, const char *guest, const char *mode) {
        SbxVolume *n = reallocarray(spec->volumes, spec->n_volumes + 1, sizeof(SbxVolume));
        if (!n)
                return -ENOMEM;
        spec->volumes = n;
        n = &spec->volumes[spec->n_volumes];
        n->host = strdup(host);
        n->guest = strdup(guest);
        n->mode = strdup(mode);
        if (!n->host || !n->guest || !n->mode) {
                volume_clear(n);
                return -ENOMEM;
        }
        spec->n_volumes++;
        return 0;
}

int sbx_spec_add_port(SbxSpec *spec, int64_t host, int64_t guest) {
        SbxPort *n = reallocarray(spec->ports, spec->n_ports + 1, sizeof(SbxPort));
        if (!n)
                return -ENOMEM;
        spec->ports = n;
        spec->ports[spec->n_ports++] = (SbxPort) { .host = host, .guest = guest };
        return 0;
}

/* Sorting. strcmp() compares bytes as unsigned char, and for UTF-8 that is code
 * point order, which is Python's string order (xagent-contract.md §1.2). */

typedef struct IndexedEnv {
        SbxEnvVar var;
        size_t index;
} IndexedEnv;

static int indexed_env_cmp(const void *a, const void *b) {
        const IndexedEnv *x = a, *y = b;
        int c = strcmp(x->var.key, y->var.key);
        if (c != 0)
                return c;
        return x->index < y->index ? -1 : x->index > y->index;
}

static int volume_cmp(const void *a, const void *b) {
        const SbxVolume *x = a, *y = b;
        int c = strcmp(x->host, y->host);
        if (c == 0)
                c = strcmp(x->guest, y->guest);
        if (c == 0)
                c = strcmp(x->mode, y->mode);
        return c;
}

static int port_cmp(const void *a, const void *b) {
        const SbxPort *x = a, *y = b;
        if (x->host != y->host)
                return x->host < y->host ? -1 : 1;
        if (x->guest != y->guest)
                return x->guest < y->guest ? -1 : 1;
        return 0;
}

/* dict(env) then sorted(items()): a later duplicate key replaces an earlier one. */
static int normalize_env(SbxSpec *spec) {
        _cleanup_free_ IndexedEnv *ix = NULL;
        size_t n = 0;

        if (spec->n_env == 0)
                return 0;
        ix = calloc(spec->n_env, sizeof(IndexedEnv));
        if (!ix)
                return -ENOMEM;
        for (size_t i = 0; i < spec->n_env; i++)
                ix[i] = (IndexedEnv) { .var = spec->env[i], .index = i };
        qsort(ix, spec->n_env, sizeof(IndexedEnv), indexed_env_cmp);

        for (size_t i = 0; i < spec->n_env; i++) {
                if (i + 1 < spec->n_env && streq(ix[i].var.key, ix[i + 1].var.key)) {
                        env_clear(&ix[i].var);
                        continue;
                }
                spec->env[n++] = ix[i].var;
        }
        spec->n_env = n;
        return 0;
}

static int normalize_volumes(SbxSpec *spec) {
        size_t n = 0;

        for (size_t i = 0; i < spec->n_volumes; i++) {
                SbxVolume *v = &spec->volumes[i];
                char *h = sbx_canonical_path(v->host), *g = sbx_canonical_path(v->guest);

                if (!h || !g) {
                        free(h);
                        free(g);
                        return -ENOMEM;
                }
                free(v->host);
                free(v->guest);
                v->host = h;
                v->guest = g;
        }
        if (spec->n_volumes == 0)
                return 0;
        qsort(spec->volumes, spec->n_volumes, sizeof(SbxVolume), volume_cmp);
        for (size_t i = 0; i < spec->n_volumes; i++) {
                if (n > 0 && volume_cmp(&spec->volumes[n - 1], &spec->volumes[i]) == 0) {
                        volume_clear(&spec->volumes[i]);
                        continue;
                }
                spec->volumes[n++] = spec->volumes[i];
        }
        spec->n_volumes = n;
        return 0;
}

static void normalize_ports(SbxSpec *spec) {
        size_t n = 0;

        if (spec->n_ports == 0)
                return;
        qsort(spec->ports, spec->n_ports, sizeof(SbxPort), port_cmp);
        for (size_t i = 0; i < spec->n_ports; i++)
                if (n == 0 || port_cmp(&spec->ports[n - 1], &spec->ports[i]) != 0)
                        spec->ports[n++] = spec->ports[i];
        spec->n_ports = n;
}

int sbx_spec_normalize(SbxSpec *spec, SbxError *error) {
        char *wd;
        int r;

        if ((r = normalize_env(spec)) < 0 || (r = normalize_volumes(spec)) < 0)
                return r;
        normalize_ports(spec);

        wd = isempty(spec->working_dir) ? strdup(SBX_DEFAULT_WORKING_DIR) : sbx_canonical_path(spec->working_dir);
        if (!wd)
                return -ENOMEM;
        free(spec->working_dir);
        spec->working_dir = wd;

        if (spec->cpus == 0)
                spec->cpus = SBX_DEFAULT_CPUS;
        if (spec->memory == 0)
                spec->memory = SBX_DEFAULT_MEMORY_MIB;

        /* __post_init__, in xagent's order and with its messages. Truthiness, not
         * None-ness: an empty image or snapshot id counts as absent. */
        switch (spec->template_type) {
        case SBX_TEMPLATE_IMAGE:
                if (isempty(spec->image) || !isempty(spec->snapshot_id))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "template_type='image' requires 'image' and forbids 'snapshot_id'");
                break;
        case SBX_TEMPLATE_SNAPSHOT:
                if (isempty(spec->snapshot_id) || !isempty(spec->image))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "template_type='snapshot' requires 'snapshot_id' and forbids 'image'");
                break;
        default:
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "unknown template_type: %d", (int) spec->template_type);
        }
        if (spec->cpus < SBX_MIN_CPUS)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "cpus must be >= 1 to be realizable, got %" PRIi64, spec->cpus);
        if (spec->memory < SBX_MIN_MEMORY_MIB)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "memory must be >= 128 MB to be realizable, got %" PRIi64, spec->memory);
        return 0;
}

/* Contract validity beyond from_parts(): every string must be a Python str,
 * that is valid UTF-8 (a NUL cannot get this far: parsers refuse it). */

static int check_utf8(const char *field, const char *what, const char *s, SbxError *error) {
        if (s && !sbx_utf8_is_valid(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s is not valid UTF-8", field, what);
        return 0;
}

int sbx_spec_validate_contract(const SbxSpec *spec, SbxError *error) {
        int r;

        if ((r = check_utf8("image", "the image", spec->image, error)) < 0 ||
            (r = check_utf8("snapshot", "the snapshot id", spec->snapshot_id, error)) < 0 ||
            (r = check_utf8("working_dir", "the working directory", spec->working_dir, error)) < 0)
                return r;
        for (size_t i = 0; i < spec->n_env; i++)
                if ((r = check_utf8("env", "a variable name", spec->env[i].key, error)) < 0 ||
                    (r = check_utf8("env", "a value", spec->env[i].value, error)) < 0)
                        return r;
        for (size_t i = 0; i < spec->n_volumes; i++)
                if ((r = check_utf8("volumes", "a host path", spec->volumes[i].host, error)) < 0 ||
                    (r = check_utf8("volumes", "a guest path", spec->volumes[i].guest, error)) < 0 ||
                    (r = check_utf8("volumes", "a mode", spec->volumes[i].mode, error)) < 0)
                        return r;
        return 0;
}

/* Admissibility: what this service creates. */

static bool has_control(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        return true;
        return false;
}

static int check_text(const char *field, const char *what, const char *s, size_t max, bool allow_control,
                      SbxError *error) {
        size_t l = strlen(s);

        if (l > max)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s is %zu bytes long, the limit is %zu",
                                     field, what, l, max);
        if (!sbx_utf8_is_valid(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s is not valid UTF-8", field, what);
        if (!allow_control && has_control(s))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s contains control characters",
                                     field, what);
        return 0;
}

static int check_abs_path(const char *field, const char *what, const char *p, SbxError *error) {
        int r = check_text(field, what, p, SBX_MAX_PATH_LEN, false, error);
        if (r < 0)
                return r;
        if (p[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: %s '%s' is not an absolute path",
                                     field, what, p);
        return 0;
}

static bool is_image_char(char c) {
        return c > 0x20 && c < 0x7f;
}

/* On the entries as given too (sbx_spec_finalize() checks them before duplicates
 * collapse), so a list is bounded whatever it repeats. */
static int check_counts(const SbxSpec *spec, SbxError *error) {
        if (spec->n_env > SBX_MAX_ENV)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: %zu variables, the limit is %d",
                                     spec->n_env, SBX_MAX_ENV);
        if (spec->n_volumes > SBX_MAX_VOLUMES)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "volumes: %zu volumes, the limit is %d",
                                     spec->n_volumes, SBX_MAX_VOLUMES);
        if (spec->n_ports > SBX_MAX_PORTS)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "ports: %zu ports, the limit is %d",
                                     spec->n_ports, SBX_MAX_PORTS);
        return 0;
}

static int check_template(const SbxSpec *spec, SbxError *error) {
        int r;

        if (spec->template_type == SBX_TEMPLATE_IMAGE) {
                if (isempty(spec->image))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "image: must not be empty");
                if (strlen(spec->image) > SBX_MAX_IMAGE_LEN)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "image: longer than %d bytes", SBX_MAX_IMAGE_LEN);
                for (const char *c = spec->image; *c; c++)
                        if (!is_image_char(*c))
                                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                                     "image: a Docker image reference is printable ASCII without spaces");
                return 0;
        }
        if (isempty(spec->snapshot_id))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "snapshot: must not be empty");
        /* xagent allows image '' here (falsy); a sandbox made here records None. */
        if (spec->image)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "image: \"image\" and \"snapshot\" are mutually exclusive");
        if ((r = sbx_name_validate("snapshot", spec->snapshot_id, error)) < 0)
                return r;
        if (strlen(spec->snapshot_id) > SBX_MAX_SNAPSHOT_ID_LEN)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "snapshot: longer than %d bytes",
                                     SBX_MAX_SNAPSHOT_ID_LEN);
        return 0;
}

static int check_env(const SbxSpec *spec, SbxError *error) {
        int r;

        for (size_t i = 0; i < spec->n_env; i++) {
                const SbxEnvVar *e = &spec->env[i];

                if (isempty(e->key))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "env: a variable name is empty");
                if (strchr(e->key, '='))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "env: variable name '%s' contains '='", e->key);
                if ((r = check_text("env", "a variable name", e->key, SBX_MAX_ENV_KEY_LEN, false, error)) < 0 ||
                    (r = check_text("env", "a value", e->value, SBX_MAX_ENV_VALUE_LEN, true, error)) < 0)
                        return r;
        }
        return 0;
}

static int check_volumes(const SbxSpec *spec, SbxError *error) {
        int r;

        for (size_t i = 0; i < spec->n_volumes; i++) {
                const SbxVolume *v = &spec->volumes[i];

                if ((r = check_abs_path("volumes", "host path", v->host, error)) < 0 ||
                    (r = check_abs_path("volumes", "guest path", v->guest, error)) < 0)
                        return r;
                if (!streq(v->mode, "ro") && !streq(v->mode, "rw"))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "volumes: mode of '%s' must be \"ro\" or \"rw\"", v->guest);
        }
        return 0;
}

static int check_ports(const SbxSpec *spec, SbxError *error) {
        /* Docker cannot publish the ports of a container without a network. */
        if (spec->network_isolated && spec->n_ports > 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "ports: a network_isolated sandbox cannot publish ports");
        for (size_t i = 0; i < spec->n_ports; i++) {
                const SbxPort *p = &spec->ports[i];

                if (p->host < 0 || p->host > SBX_MAX_PORT)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "ports: host port %" PRIi64 " is outside 0–65535", p->host);
                if (p->guest < 1 || p->guest > SBX_MAX_PORT)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "ports: guest port %" PRIi64 " is outside 1–65535", p->guest);
        }
        return 0;
}

int sbx_spec_check_admissible(const SbxSpec *spec, SbxError *error) {
        int r;

        if ((r = check_template(spec, error)) < 0 ||
            (r = check_abs_path("working_dir", "the working directory", spec->working_dir, error)) < 0)
                return r;
        if (spec->cpus > SBX_MAX_CPUS)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "cpus: %" PRIi64 " is more than %d",
                                     spec->cpus, SBX_MAX_CPUS);
        if (spec->memory > SBX_MAX_MEMORY_MIB)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "memory: %" PRIi64 " MiB is more than %d MiB",
                                     spec->memory, SBX_MAX_MEMORY_MIB);
        if ((r = check_counts(spec, error)) < 0 ||
            (r = check_env(spec, error)) < 0 ||
            (r = check_volumes(spec, error)) < 0)
                return r;
        return check_ports(spec, error);
}

int sbx_name_validate(const char *field, const char *name, SbxError *error) {
        if (isempty(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: the name is empty", field);
        if (sbx_name_is_reserved(name))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '~UID:…' is the form of another owner's name, which no name may take",
                                     field);
        return check_text(field, "the name", name, SBX_MAX_NAME_LEN, false, error);
}

bool sbx_spec_equal(const SbxSpec *a, const SbxSpec *b) {
        if (a->template_type != b->template_type || !streq_ptr(a->image, b->image) ||
            !streq_ptr(a->snapshot_id, b->snapshot_id) || !streq_ptr(a->working_dir, b->working_dir) ||
            a->cpus != b->cpus || a->memory != b->memory || a->network_isolated != b->network_isolated ||
            a->n_env != b->n_env || a->n_volumes != b->n_volumes || a->n_ports != b->n_ports)
                return false;
        for (size_t i = 0; i < a->n_env; i++)
                if (!streq(a->env[i].key, b->env[i].key) || !streq(a->env[i].value, b->env[i].value))
                        return false;
        for (size_t i = 0; i < a->n_volumes; i++)
                if (volume_cmp(&a->volumes[i], &b->volumes[i]) != 0)
                        return false;
        for (size_t i = 0; i < a->n_ports; i++)
                if (port_cmp(&a->ports[i], &b->ports[i]) != 0)
                        return false;
        return true;
}

int sbx_spec_complete(SbxSpec *spec, const char *default_image, SbxError *error) {
        int r;

        if (spec->template_type == SBX_TEMPLATE_IMAGE && !spec->image) {
                spec->image = strdup(default_image);
                if (!spec->image)
                        return -ENOMEM;
        }
        r = sbx_spec_normalize(spec, error);
        if (r < 0)
                return r;
        return sbx_spec_validate_contract(spec, error);
}

int sbx_spec_finalize(SbxSpec *spec, const char *default_image, SbxError *error) {
        int r;

        if ((r = check_counts(spec, error)) < 0 ||
            (r = sbx_spec_complete(spec, default_image, error)) < 0)
                return r;
        return sbx_spec_check_admissible(spec, error);
}
