/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared boilerplate for the check-based test binaries. */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Runs the suite built by make_suite() and exits non-zero on any failure. */
#define SBX_TEST_MAIN(make_suite)                                       \
        int main(void) {                                                \
                SRunner *sr = srunner_create(make_suite());             \
                int failed;                                             \
                srunner_run_all(sr, CK_NORMAL);                         \
                failed = srunner_ntests_failed(sr);                     \
                srunner_free(sr);                                       \
                return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;       \
        }
