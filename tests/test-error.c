/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "error.h"
#include "sbx-test.h"

/* The one list of kinds gives every kind a name, an errno and a D-Bus name; the
 * kinds with a D-Bus name of their own are told apart by it and by their errno. */
START_TEST(test_every_kind) {
        for (SbxErrorKind k = SBX_ERROR_NONE + 1; k < _SBX_ERROR_KIND_MAX; k++) {
                const char *bus = sbx_error_bus_name(k);

                ck_assert_ptr_nonnull(sbx_error_kind_name(k));
                ck_assert_int_gt(sbx_error_errno(k), 0);
                ck_assert_msg(startswith(bus, "org.xagent.Sandbox1.Error.") ||
                              startswith(bus, "org.freedesktop.DBus.Error."), "%s", bus);
                for (SbxErrorKind j = SBX_ERROR_NONE + 1; j < k; j++) {
                        ck_assert_str_ne(sbx_error_kind_name(j), sbx_error_kind_name(k));
                        ck_assert_int_ne(sbx_error_errno(j), sbx_error_errno(k));
                        if (k != SBX_ERROR_DOCKER_NOT_FOUND && k != SBX_ERROR_DOCKER_CONFLICT)
                                ck_assert_str_ne(sbx_error_bus_name(j), bus);
                }
        }
        /* Docker's 404 and 409 are the caller's to name; unnamed they say BackendError */
        ck_assert_str_eq(sbx_error_bus_name(SBX_ERROR_DOCKER_NOT_FOUND), "org.xagent.Sandbox1.Error.BackendError");
        ck_assert_str_eq(sbx_error_bus_name(SBX_ERROR_DOCKER_CONFLICT), "org.xagent.Sandbox1.Error.BackendError");
        ck_assert_str_eq(sbx_error_bus_name(SBX_ERROR_NO_SUCH_SANDBOX), "org.xagent.Sandbox1.Error.NoSuchSandbox");
        ck_assert_int_eq(sbx_error_errno(SBX_ERROR_NO_SUCH_SANDBOX), ENXIO);
}
END_TEST

START_TEST(test_first_error_wins) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_error_set(&e, SBX_ERROR_DOCKER_NOT_FOUND, "no %s", "x"), -ENODATA);
        ck_assert(sbx_error_is(&e, SBX_ERROR_DOCKER_NOT_FOUND));
        ck_assert_int_eq(sbx_error_set(&e, SBX_ERROR_IO, "later"), -EIO);
        ck_assert(sbx_error_is(&e, SBX_ERROR_DOCKER_NOT_FOUND));
        ck_assert_str_eq(e.message, "no x");
        sbx_error_free(&e);
        ck_assert(!sbx_error_is_set(&e));
        ck_assert(!sbx_error_is(NULL, SBX_ERROR_IO));
        ck_assert_int_eq(sbx_error_set(NULL, SBX_ERROR_IO, "dropped"), -EIO);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("error");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_every_kind);
        tcase_add_test(tc, test_first_error_wins);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
