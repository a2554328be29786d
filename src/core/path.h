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

/* The same form of an absolute path — "." and empty components dropped, ".."
 * taking away the component before it and never going above "/" — written to out
 * (size bytes; out may be path itself), allocating nothing (the in-sandbox program
 * uses it too). 0; -EINVAL when path is not absolute; -ENAMETOOLONG when the result
 * does not fit. One rule for every file call (docs/api.md, "Files"): "//", "/.",
 * "/tmp/.." all name "/". */
int sbx_path_normalize_absolute(const char *path, char *out, size_t size);
