/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What policy-parse.c (defaults, parsing) and policy-check.c (decisions) share (private:
 * nothing outside them includes it). */

#include <json-c/json.h>
#include <stdbool.h>

#include "policy.h"

/* policy-check.c: whether one of the policy's allowed_images globs matches image. */
bool policy_image_allowed(const SbxPolicy *p, const char *image);

/* policy-engine.c: the "engine" key; frees what it holds. */
int policy_parse_engine(SbxPolicy *p, const char *key, json_object *v, SbxError *error);
void policy_engine_done(SbxPolicyEngine *e);

/* policy-registry.c: the "registries" key; frees what it holds. */
int policy_parse_registries(SbxPolicy *p, const char *key, json_object *v, SbxError *error);
void policy_registries_free(SbxPolicy *p);

/* policy-pool.c: "warm_pools" (read after every other key: the default image and the
 * python_version), its release, and the policy's digest of its text. */
int policy_parse_pools(SbxPolicy *p, json_object *v, SbxError *error);
void policy_pools_free(SbxPolicy *p);
int policy_digest(SbxPolicy *p, const char *text);
