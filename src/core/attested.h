/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The spec a container attests: the desired spec rebuilt from what Docker
 * reports about a container this service created, proven by the container's
 * fingerprint label. For adopting a container whose store row was lost (crash
 * consistency): the row's spec is then this one.
 *
 * The rebuild is the inverse of sbx_container_body() and Docker's create:
 *
 *   template_type   the label xagent.sandbox.template.type ("image"/"snapshot")
 *   image           Config.Image for an image template; None for a snapshot
 *                   template (its container runs the snapshot's image id, which
 *                   the spec never holds)
 *   snapshot_id     the label xagent.sandbox.snapshot_id (snapshot templates)
 *   working_dir     Config.WorkingDir
 *   cpus, memory    HostConfig.NanoCpus / 10^9 and HostConfig.Memory / MiB, which
 *                   must be whole and positive
 *   env             Config.Env minus what Docker merged in from the image (below)
 *   volumes         the bind Mounts (the first process's volume is not one)
 *   network         Config.NetworkDisabled
 *   ports           every HostConfig.PortBindings entry, HostPort "" or "0" = 0
 *
 * Docker merges the image's environment into the container's at create: a
 * variable the request sets has the request's value, the image's others are
 * added. A variable the image does not have, or has with another value, came
 * from the spec; one the image has with the same value may or may not have been
 * in the spec. Every subset of those ambiguous
 * variables is a candidate, and the one whose fingerprint (under some Python
 * version, sbx_spec_fingerprints()) is the label is the spec. */

#include "observed.h"
#include "spec.h"

/* More ambiguous variables than this (2^10 candidates) and nothing is proven. */
#define SBX_ATTESTED_MAX_AMBIGUOUS_ENV 10

/* image_env: the image's own Config.Env ("K=V" strings, NULL-terminated; NULL =
 * none), which Docker merged into the container's. Returns 1 and the normalized,
 * contract-valid spec in *ret; 0 when nothing is proven (no fingerprint label, a
 * template, cpus or memory that no spec yields, too many ambiguous variables, or
 * no candidate's fingerprint is the label); -ENOMEM. */
int sbx_spec_from_container(const SbxObserved *o, char *const *image_env, SbxSpec **ret);
