/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The ustar format's blocks, read and written the one way every copy does it: the
 * daemon's filter (tar-filter.c) and the service's program in the sandbox (the
 * init's --unpack and --pack). Pure, no allocation: compiled into the static init
 * as well. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SBX_USTAR_BLOCK 512U
/* A name or link that fits a ustar field; longer ones go in a pax header. */
#define SBX_USTAR_NAME_FIELD 100U

/* A number field: octal (leading spaces allowed, up to the first non-digit), or
 * GNU base-256 when its first byte has the high bit. */
uint64_t sbx_ustar_number(const uint8_t *p, size_t n);

/* Whether the header's checksum is right (as an unsigned or, as old tars wrote
 * it, a signed byte sum). */
bool sbx_ustar_checksum_ok(const uint8_t *b);

bool sbx_ustar_is_zero(const uint8_t *b);

typedef struct SbxUstarEntry {
        const char *name;               /* the first 100 bytes go in the field */
        char type;
        unsigned mode;
        uint64_t size;
        uint64_t mtime;                 /* seconds; unless mtime_field is set */
        const uint8_t *mtime_field;     /* a header's 12 mtime bytes, copied as they are */
        uint64_t uid, gid;
        const char *link;               /* the first 100 bytes go in the field; NULL: none */
} SbxUstarEntry;

/* A header block for the entry, checksum included. A number too large for its
 * octal field is written base-256. */
void sbx_ustar_header(uint8_t h[SBX_USTAR_BLOCK], const SbxUstarEntry *e);

/* A pax record "LEN key=value\n" (its length counting its own digits): its size,
 * and written into buf when it fits in room bytes (else nothing is written). */
size_t sbx_pax_record(char *buf, size_t room, const char *key, const char *value);
