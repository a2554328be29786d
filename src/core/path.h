/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>

#include "macro.h"

/* xagent's canonical_sandbox_path() (xagent-contract.md §1.3): Python's posixpath.normpath(),
 * then a leading "//" collapsed to "/". Purely lexical. Returns a new string, or
 * NULL on allocation failure. */
char *sbx_canonical_path(const char *path);

/* True if path equals root or lies below it on a segment boundary ("/data" holds
 * "/data/x" but not "/database"; "/" holds every absolute path). Both canonical. */
bool sbx_path_is_root_or_descendant(const char *path, const char *root) _pure_;
