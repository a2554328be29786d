/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "spec-json.h"
#include "spec-memo.h"

typedef struct Entry {
        char *json;                     /* NULL: unused */
        SbxSpec *spec;                  /* NULL: json cannot be read back */
        SbxFingerprints fingerprints;
} Entry;

struct SbxSpecMemo {
        Entry entries[SBX_SPEC_MEMO_SIZE];
        unsigned next;                  /* the entry replaced next */
};

SbxSpecMemo *sbx_spec_memo_new(void) {
        return calloc(1, sizeof(SbxSpecMemo));
}

static void entry_done(Entry *e) {
        e->json = mfree(e->json);
        e->spec = sbx_spec_free(e->spec);
}

SbxSpecMemo *sbx_spec_memo_free(SbxSpecMemo *m) {
        if (m)
                for (size_t i = 0; i < SBX_SPEC_MEMO_SIZE; i++)
                        entry_done(&m->entries[i]);
        return mfree(m);
}

/* Parsed, normalized and fingerprinted: 0, or < 0 (-ENOMEM among them). */
static int read_back(const char *json, SbxSpec **ret, SbxFingerprints *ret_fingerprints) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if ((r = sbx_spec_from_json_string(json, &spec, NULL)) < 0 || (r = sbx_spec_normalize(spec, NULL)) < 0 ||
            (r = sbx_spec_fingerprints(spec, ret_fingerprints)) < 0)
                return r;
        *ret = TAKE_PTR(spec);
        return 0;
}

int sbx_spec_memo_get(SbxSpecMemo *m, const char *json, const SbxSpec **ret_spec,
                      const SbxFingerprints **ret_fingerprints) {
        Entry *e = NULL;
        int r;

        if (!json)
                return 0;
        for (size_t i = 0; i < SBX_SPEC_MEMO_SIZE && !e; i++)
                if (streq_ptr(m->entries[i].json, json))
                        e = &m->entries[i];
        if (!e) {
                _cleanup_free_ char *copy = strdup(json);
                SbxSpec *spec = NULL;
                SbxFingerprints fingerprints = {};

                if (!copy)
                        return -ENOMEM;
                r = read_back(json, &spec, &fingerprints);
                if (r == -ENOMEM)
                        return r;
                e = &m->entries[m->next];
                m->next = (m->next + 1) % SBX_SPEC_MEMO_SIZE;
                entry_done(e);
                *e = (Entry) { .json = TAKE_PTR(copy), .spec = r < 0 ? NULL : spec, .fingerprints = fingerprints };
        }
        if (!e->spec)
                return 0;
        *ret_spec = e->spec;
        *ret_fingerprints = &e->fingerprints;
        return 1;
}
