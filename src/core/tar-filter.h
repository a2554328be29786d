/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A tar stream as it may enter a sandbox (CopyToSandbox), rewritten header by
 * header: only regular files, directories, symbolic and hard links; names
 * relative, without "..", never through a symbolic link made earlier in the same
 * stream; link targets that cannot leave the target directory (a symbolic link's
 * target, resolved lexically from where it lies, stays inside; a hard link's is a
 * plain relative name); modes without setuid, setgid and sticky bits; owner and
 * group numbers set to the sandbox owner's, names cleared. pax extended headers
 * ('x') and GNU long names ('L', 'K') are read for path and linkpath and
 * otherwise dropped (no xattrs, no ACLs); long names go out as a pax header of
 * their own. Anything else refuses the stream with InvalidArgs naming the entry.
 * Incremental: bytes in any chunking, output appended to a growing buffer. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct SbxTarFilter SbxTarFilter;

int sbx_tar_filter_new(uid_t uid, gid_t gid, SbxTarFilter **ret);
SbxTarFilter *sbx_tar_filter_free(SbxTarFilter *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxTarFilter *, sbx_tar_filter_free);

/* Consumes data; what is to be passed on is appended to *out (realloc'd; size in
 * *out_size, capacity in *out_alloc). */
int sbx_tar_filter_feed(SbxTarFilter *f, const char *data, size_t size, char **out, size_t *out_size,
                        size_t *out_alloc, SbxError *error);

/* At end of input: the stream must have ended at an entry boundary (the end
 * blocks are supplied if the sender left them out). */
int sbx_tar_filter_finish(SbxTarFilter *f, char **out, size_t *out_size, size_t *out_alloc, SbxError *error);
