/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>

#include "json-util.h"
#include "config.h"
#include "labels.h"


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

int sbx_labels_build_commit_blank(json_object **ret) {
        _cleanup_(json_object_putp) json_object *labels = json_object_new_object();

        if (!labels)
                return -ENOMEM;
        if (add_string(labels, SBX_LABEL_SPEC_FINGERPRINT, "") < 0 ||
            add_string(labels, SBX_LABEL_SPEC_VERSION, "") < 0 ||
            add_string(labels, SBX_LABEL_OWNER, "") < 0)
                return -ENOMEM;
        *ret = TAKE_PTR(labels);
        return 0;
}

const char *const *sbx_labels_commit_changes(void) {
        static const char *const changes[] = {
                "LABEL " SBX_LABEL_SPEC_FINGERPRINT "=",
                "LABEL " SBX_LABEL_SPEC_VERSION "=",
                "LABEL " SBX_LABEL_OWNER "=",
                NULL,
        };
        return changes;
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
