/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-util.h"
#include "macro.h"
#include "user-labels.h"
#include "utf8.h"

static bool key_char_ok(char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '/' || c == '-';
}

static bool reserved(const char *key) {
        return streq(key, "xagent") || strncmp(key, "xagent.", 7) == 0 || strncmp(key, "org.xagent.", 11) == 0;
}

static size_t labels_bytes(json_object *labels) {
        size_t n = 0;

        json_object_object_foreach(labels, k, v)
                n += strlen(k) + strlen(json_object_get_string(v) ?: "");
        return n;
}

static int check_key(const char *key, SbxError *error) {
        if (isempty(key))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "labels: an empty key");
        for (const char *p = key; *p; p++)
                if (!key_char_ok(*p))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "labels: key '%.64s' has a character outside [a-z0-9._/-]", key);
        if (reserved(key))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "labels: key '%.64s' is in the service's own namespace (xagent.*, org.xagent.*), "
                                     "which is never writable", key);
        return 0;
}

int sbx_user_labels_add(json_object *labels, const char *key, const char *value, SbxError *error) {
        json_object *v;
        int r;

        if ((r = check_key(key, error)) < 0)
                return r;
        if (!value || !sbx_utf8_is_valid(value))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "labels: the value of '%s' is not UTF-8", key);
        if (json_object_object_get_ex(labels, key, NULL))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "labels: key '%s' given twice", key);
        if ((unsigned) json_object_object_length(labels) >= SBX_USER_LABELS_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "labels: more than %u keys", SBX_USER_LABELS_MAX);
        if (labels_bytes(labels) + strlen(key) + strlen(value) > SBX_USER_LABELS_MAX_BYTES)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "labels: more than %u bytes of keys and values in all (at '%s')",
                                     SBX_USER_LABELS_MAX_BYTES, key);
        v = json_object_new_string(value);
        if (!v || json_object_object_add(labels, key, v) < 0) {
                json_object_put(v);
                return -ENOMEM;
        }
        return 0;
}

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

int sbx_user_labels_to_string(json_object *labels, char **ret) {
        _cleanup_(json_object_putp) json_object *sorted = json_object_new_object();
        const char *keys[SBX_USER_LABELS_MAX];
        size_t n = 0;

        if (!sorted)
                return -ENOMEM;
        if (!labels)
                labels = sorted;
        json_object_object_foreach(labels, k, v) {
                if (n >= ELEMENTSOF(keys))
                        return -E2BIG;
                keys[n++] = k;
                (void) v;
        }
        qsort(keys, n, sizeof keys[0], cmp_str);
        for (size_t i = 0; i < n; i++)
                if (json_object_object_add(sorted, keys[i], json_object_get(json_object_object_get(labels, keys[i]))) < 0)
                        return -ENOMEM;
        *ret = strdup(json_object_to_json_string_ext(sorted, JSON_C_TO_STRING_PLAIN));
        return *ret ? 0 : -ENOMEM;
}

int sbx_user_labels_from_string(const char *s, json_object **ret) {
        json_object *o = isempty(s) ? json_object_new_object() : json_tokener_parse(s);

        if (!o)
                return isempty(s) ? -ENOMEM : -EBADMSG;
        if (!json_object_is_type(o, json_type_object)) {
                json_object_put(o);
                return -EBADMSG;
        }
        json_object_object_foreach(o, k, v)
                if (!json_object_is_type(v, json_type_string) || !k) {
                        json_object_put(o);
                        return -EBADMSG;
                }
        *ret = o;
        return 0;
}

int sbx_user_labels_to_docker(json_object *labels, json_object *docker_labels) {
        if (!labels)
                return 0;
        json_object_object_foreach(labels, k, v) {
                _cleanup_free_ char *key = NULL;

                if (asprintf(&key, SBX_USER_LABEL_PREFIX "%s", k) < 0)
                        return -ENOMEM;
                if (json_object_object_add(docker_labels, key, json_object_get(v)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int sbx_user_labels_blank_docker(json_object *container_labels, json_object *commit_labels) {
        if (!json_object_is_type(container_labels, json_type_object))
                return 0;
        json_object_object_foreach(container_labels, k, v) {
                json_object *blank;

                (void) v;
                if (strncmp(k, SBX_USER_LABEL_PREFIX, strlen(SBX_USER_LABEL_PREFIX)) != 0)
                        continue;
                blank = json_object_new_string("");
                if (!blank || json_object_object_add(commit_labels, k, blank) < 0) {
                        json_object_put(blank);
                        return -ENOMEM;
                }
        }
        return 0;
}

int sbx_user_labels_from_docker(const SbxEnvVar *labels, size_t n, json_object *image_labels, json_object **ret) {
        _cleanup_(json_object_putp) json_object *out = json_object_new_object();
        size_t prefix = strlen(SBX_USER_LABEL_PREFIX);

        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const char *key = labels[i].key, *value = labels[i].value;
                json_object *inherited;
                SbxError e = SBX_ERROR_NULL;
                int r;

                if (!key || strncmp(key, SBX_USER_LABEL_PREFIX, prefix) != 0 || !value || !*value)
                        continue;
                if (json_object_is_type(image_labels, json_type_object) &&
                    json_object_object_get_ex(image_labels, key, &inherited) &&
                    streq_ptr(json_object_get_string(inherited), value))
                        continue;
                r = sbx_user_labels_add(out, key + prefix, value, &e);
                sbx_error_free(&e);
                if (r == -ENOMEM)
                        return r;
        }
        *ret = TAKE_PTR(out);
        return 0;
}

bool sbx_user_labels_match(json_object *have, json_object *want) {
        if (!want)
                return true;
        json_object_object_foreach(want, k, v) {
                json_object *h;

                if (!have || !json_object_object_get_ex(have, k, &h) ||
                    !streq_ptr(json_object_get_string(h), json_object_get_string(v)))
                        return false;
        }
        return true;
}

bool sbx_user_labels_equal(json_object *a, json_object *b) {
        return sbx_user_labels_match(a, b) && sbx_user_labels_match(b, a);
}
