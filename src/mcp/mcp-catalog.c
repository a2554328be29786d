/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The catalog of the tools (mcp_agent_tools[], mcp-facade.c): finding one by name, the
 * tools/list answer, and a call's arguments checked against its inputSchema. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp-tools.h"

const Tool *mcp_tool_find(const char *name) {
        for (size_t i = 0; i < mcp_n_agent_tools; i++)
                if (streq(mcp_agent_tools[i].name, name))
                        return &mcp_agent_tools[i];
        return NULL;
}

static json_object *tool_json(const Tool *t) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *ann = json_object_new_object();
        json_object *in = json_tokener_parse(t->input_schema), *out = json_tokener_parse(t->output_schema);

        if (!o || !ann || !in || !out) {
                log_error("The schemas of tool %s do not parse", t->name);
                json_object_put(in);
                json_object_put(out);
                return NULL;
        }
        if (sbx_json_put(o, "name", json_object_new_string(t->name)) < 0 ||
            sbx_json_put(o, "title", json_object_new_string(t->title)) < 0 ||
            sbx_json_put(o, "description", json_object_new_string(t->description)) < 0 ||
            sbx_json_put(o, "inputSchema", in) < 0 || sbx_json_put(o, "outputSchema", out) < 0 ||
            sbx_json_put(ann, "title", json_object_new_string(t->title)) < 0 ||
            sbx_json_put(ann, "readOnlyHint", json_object_new_boolean(t->read_only)) < 0 ||
            (!t->read_only && sbx_json_put(ann, "destructiveHint", json_object_new_boolean(t->destructive)) < 0) ||
            sbx_json_put(ann, "idempotentHint", json_object_new_boolean(t->idempotent)) < 0 ||
            /* Sandboxes are the host's, not the open world's; run may reach the network. */
            sbx_json_put(ann, "openWorldHint", json_object_new_boolean(streq(t->name, "run"))) < 0 ||
            sbx_json_put(o, "annotations", TAKE_PTR(ann)) < 0)
                return NULL;
        return TAKE_PTR(o);
}

int mcp_tools_list(json_object **ret) {
        _cleanup_(json_object_putp) json_object *list = json_object_new_array();

        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < mcp_n_agent_tools; i++) {
                json_object *t = tool_json(&mcp_agent_tools[i]);

                if (!t || sbx_json_push(list, t) < 0)
                        return -ENOMEM;
        }
        *ret = TAKE_PTR(list);
        return 0;
}

char *mcp_tool_check_args(const Tool *t, json_object *args) {
        _cleanup_(json_object_putp) json_object *schema = json_tokener_parse(t->input_schema);
        json_object *props, *required;
        char *error = NULL;

        if (!schema || !json_object_object_get_ex(schema, "properties", &props))
                return strdup("the tool's schema does not parse");
        json_object_object_foreach(args, key, v) {
                (void) v;
                if (!json_object_object_get_ex(props, key, NULL)) {
                        if (asprintf(&error, "argument '%s': %s takes no such argument", key, t->name) < 0)
                                return NULL;
                        return error;
                }
        }
        if (json_object_object_get_ex(schema, "required", &required))
                for (size_t i = 0; i < json_object_array_length(required); i++) {
                        const char *want = json_object_get_string(json_object_array_get_idx(required, i));
                        json_object *given;

                        if (!json_object_object_get_ex(args, want, &given) || !given) {
                                if (asprintf(&error, "argument '%s': is required", want) < 0)
                                        return NULL;
                                return error;
                        }
                }
        return NULL;
}
