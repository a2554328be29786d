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
 * Incremental: bytes in any chunking, output appended to a growing buffer.
 *
 * The work is linear in the stream: the names of the archive's symbolic links
 * are a hash set (a polynomial hash with a random base), a name is checked
 * against it prefix by prefix in one pass, a link target is resolved component
 * by component with the hash of each level kept. What one stream may hold is
 * capped (SbxTarLimits, each refusal naming its cap), and the caller's
 * should_stop() is consulted inside the work, not only between chunks. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

typedef struct SbxTarFilter SbxTarFilter;

/* What one stream may hold (docs/security.md, "Copies"): generous for real trees (a
 * whole /usr is ~170,000 entries, 7,000 symbolic links, targets under 100 bytes). */
typedef struct SbxTarLimits {
        uint64_t entries;               /* entries (extended headers not counted) */
        uint64_t symlinks;              /* symbolic links */
        uint64_t symlink_bytes;         /* their names together, all kept for the checks */
        size_t name;                    /* bytes of a name (ustar, GNU or pax path) */
        size_t target;                  /* bytes of a link's target */
        size_t components;              /* components of a symbolic link's target */
} SbxTarLimits;

#define SBX_TAR_LIMITS_DEFAULT                                                                  \
        ((SbxTarLimits) { .entries = 1000000, .symlinks = 65536, .symlink_bytes = 64U << 20,   \
                          .name = 4096, .target = 4096, .components = 1024 })

int sbx_tar_filter_new(uid_t uid, gid_t gid, SbxTarFilter **ret);
void sbx_tar_filter_set_limits(SbxTarFilter *f, const SbxTarLimits *limits);
/* Consulted every few thousand steps of work; when it says stop, feed() and
 * finish() fail with TimedOut (the copy's deadline has passed). */
void sbx_tar_filter_set_stop(SbxTarFilter *f, bool (*should_stop)(void *userdata), void *userdata);
SbxTarFilter *sbx_tar_filter_free(SbxTarFilter *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(SbxTarFilter *, sbx_tar_filter_free);

/* Consumes data; what is to be passed on is appended to *out (realloc'd; size in
 * *out_size, capacity in *out_alloc). */
int sbx_tar_filter_feed(SbxTarFilter *f, const char *data, size_t size, char **out, size_t *out_size,
                        size_t *out_alloc, SbxError *error);

/* At end of input: the stream must have ended at an entry boundary (the end
 * blocks are supplied if the sender left them out). */
int sbx_tar_filter_finish(SbxTarFilter *f, char **out, size_t *out_size, size_t *out_alloc, SbxError *error);
