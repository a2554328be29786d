/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "json-util.h"
#include "config.h"
#include "labels.h"
#include "sandbox-init.h"


static int add_string(json_object *o, const char *key, const char *value) {
        json_object *v = json_object_new_string(value);

        if (!v)
                return -ENOMEM;
        if (json_object_object_add(o, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

int sbx_labels_build(const char *name, const SbxSpec *spec, const char *fingerprint, uid_t owner,
                     json_object **ret) {
        _cleanup_(json_object_putp) json_object *labels = json_object_new_object();
        char version[16], uid[16];
        bool attest = !isempty(fingerprint);
        const char *type = sbx_template_type_to_string(spec->template_type);

        if (!labels)
                return -ENOMEM;
        if (!type)
                return -EINVAL;

        snprintf(version, sizeof(version), "%d", SBX_CONTRACT_VERSION);
        snprintf(uid, sizeof(uid), "%u", (unsigned) owner);

        if (add_string(labels, SBX_LABEL_MANAGED, SBX_LABEL_MANAGED_VALUE) < 0 ||
            add_string(labels, SBX_LABEL_SANDBOX_NAME, name) < 0 ||
            add_string(labels, SBX_LABEL_TEMPLATE_TYPE, type) < 0 ||
            add_string(labels, SBX_LABEL_SPEC_FINGERPRINT, attest ? fingerprint : "") < 0 ||
            add_string(labels, SBX_LABEL_SPEC_VERSION, attest ? version : "") < 0 ||
            add_string(labels, SBX_LABEL_OWNER, uid) < 0)
                return -ENOMEM;

        if (spec->template_type == SBX_TEMPLATE_SNAPSHOT && !isempty(spec->snapshot_id) &&
            add_string(labels, SBX_LABEL_SNAPSHOT_ID, spec->snapshot_id) < 0)
                return -ENOMEM;

        *ret = TAKE_PTR(labels);
        return 0;
}

/* A copy of v in *ret if it is a non-empty array of strings, else NULL. */
static int string_array_copy(json_object *v, json_object **ret) {
        _cleanup_(json_object_putp) json_object *a = NULL;
        size_t n;

        *ret = NULL;
        if (!json_object_is_type(v, json_type_array) || (n = json_object_array_length(v)) == 0)
                return 0;
        for (size_t i = 0; i < n; i++)
                if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
                        return 0;
        if (!(a = json_object_new_array()))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (sbx_json_push(a, json_object_new_string(json_object_get_string(json_object_array_get_idx(v, i)))) < 0)
                        return -ENOMEM;
        *ret = TAKE_PTR(a);
        return 0;
}

static bool is_service_init(json_object *entrypoint) {
        return json_object_is_type(entrypoint, json_type_array) && json_object_array_length(entrypoint) == 1 &&
                streq_ptr(json_object_get_string(json_object_array_get_idx(entrypoint, 0)), SBX_INIT_PATH);
}

static int commit_labels(const char *token, json_object **ret) {
        static const char *const blanked[] = {
                SBX_LABEL_MANAGED, SBX_LABEL_SANDBOX_NAME, SBX_LABEL_TEMPLATE_TYPE, SBX_LABEL_SNAPSHOT_ID,
                SBX_LABEL_SPEC_FINGERPRINT, SBX_LABEL_SPEC_VERSION, SBX_LABEL_OWNER, SBX_LABEL_SERVICE,
                SBX_LABEL_POOL,
        };
        _cleanup_(json_object_putp) json_object *labels = json_object_new_object();

        if (!labels)
                return -ENOMEM;
        for (size_t i = 0; i < ELEMENTSOF(blanked); i++)
                if (add_string(labels, blanked[i], "") < 0)
                        return -ENOMEM;
        if (add_string(labels, SBX_LABEL_SNAPSHOT_INTENT, token) < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(labels);
        return 0;
}

int sbx_labels_build_commit_config(json_object *source, const char *token, json_object **ret) {
        _cleanup_(json_object_putp) json_object *config = json_object_new_object(), *labels = NULL,
                                                *entrypoint = NULL, *cmd = NULL;
        json_object *e = NULL, *c = NULL, *u = NULL;
        const char *user;
        bool service_made;
        int r;

        if (!config)
                return -ENOMEM;
        if (isempty(token))
                return -EINVAL;
        if (json_object_is_type(source, json_type_object)) {
                json_object_object_get_ex(source, "Entrypoint", &e);
                json_object_object_get_ex(source, "Cmd", &c);
                json_object_object_get_ex(source, "User", &u);
        }
        service_made = is_service_init(e);
        user = json_object_is_type(u, json_type_string) && !service_made ? json_object_get_string(u) : NULL;
        if ((!service_made && (r = string_array_copy(e, &entrypoint)) < 0) || (r = string_array_copy(c, &cmd)) < 0)
                return r;
        if ((r = sbx_json_put(config, "Entrypoint", entrypoint ? TAKE_PTR(entrypoint) : json_object_new_array())) < 0 ||
            (cmd && (r = sbx_json_put(config, "Cmd", TAKE_PTR(cmd))) < 0) ||
            (r = sbx_json_put(config, "User", json_object_new_string(isempty(user) ? "0" : user))) < 0 ||
            (r = commit_labels(token, &labels)) < 0 ||
            (r = sbx_json_put(config, "Labels", TAKE_PTR(labels))) < 0)
                return r;
        *ret = TAKE_PTR(config);
        return 0;
}

const char *sbx_label_attestation(const char *value) {
        return isempty(value) ? NULL : value;
}

int sbx_label_parse_owner(const char *value, uid_t *ret) {
        uint64_t uid = 0;

        if (isempty(value)) {
                *ret = 0;
                return 0;
        }
        if (value[0] == '0' && value[1] != '\0')
                return -EINVAL;
        for (const char *p = value; *p; p++) {
                if (*p < '0' || *p > '9')
                        return -EINVAL;
                uid = uid * 10 + (uint64_t) (*p - '0');
                if (uid >= (uid_t) -1)
                        return -EINVAL;
        }
        *ret = (uid_t) uid;
        return 0;
}

int sbx_label_parse_owner_of(const char *owner, const char *service, uid_t *ret) {
        if (isempty(owner) && !isempty(service))
                return -ENOENT;
        return sbx_label_parse_owner(owner, ret);
}
