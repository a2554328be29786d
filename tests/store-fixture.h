/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The store's unit tests: each test's store in a fresh temporary directory. Define
 * STORE_DIR_TEMPLATE (a mkdtemp() template) before including this; setup() and
 * teardown() are the test case's checked fixture, open_ok() opens the store there. */

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sbx-test.h"
#include "store.h"

static char dir[] = STORE_DIR_TEMPLATE;
static char db_path[sizeof dir + sizeof "/" SBX_STORE_FILENAME];

static void setup(void) {
        memcpy(dir, STORE_DIR_TEMPLATE, sizeof dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(db_path, sizeof db_path, "%s/%s", dir, SBX_STORE_FILENAME);
}

static void teardown(void) {
        DIR *d = opendir(dir);
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        ck_assert_int_eq(unlinkat(dirfd(d), de->d_name, 0), 0);
        closedir(d);
        ck_assert_int_eq(rmdir(dir), 0);
}

static SbxStore *open_ok(void) {
        SbxError e = SBX_ERROR_NULL;
        SbxStore *s = NULL;
        int r = sbx_store_open(dir, &s, &e);

        ck_assert_msg(r == 0, "open failed: %d %s", r, e.message);
        return s;
}
