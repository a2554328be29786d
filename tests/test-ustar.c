/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The ustar blocks every copy reads and writes (src/core/ustar.c). */

#include "sbx-test.h"

#include "ustar.h"

START_TEST(test_numbers) {
        static const uint8_t spaced[8] = "  0755 ", octal[12] = "00000001750", big[12] = { 0x80, 0, 0, 0, 0, 0, 0,
                                                                                          0, 2, 0, 0, 1 };

        ck_assert_uint_eq(sbx_ustar_number(spaced, sizeof spaced), 0755);
        ck_assert_uint_eq(sbx_ustar_number(octal, sizeof octal), 01750);
        ck_assert_uint_eq(sbx_ustar_number(big, sizeof big), (2ULL << 24) | 1);
        ck_assert_uint_eq(sbx_ustar_number((const uint8_t *) "", 0), 0);
}
END_TEST

START_TEST(test_header_round_trip) {
        uint8_t h[SBX_USTAR_BLOCK];
        const uint64_t huge = 9ULL << 30;       /* 9 GiB: past the 11 octal digits */

        sbx_ustar_header(h, &(SbxUstarEntry) { .name = "dir/file", .type = '0', .mode = 0640, .size = huge,
                                               .mtime = 1700000000, .uid = 3000000, .gid = 5, .link = NULL });
        ck_assert(sbx_ustar_checksum_ok(h));
        ck_assert_str_eq((const char *) h, "dir/file");
        ck_assert_uint_eq(sbx_ustar_number(h + 100, 8), 0640);
        ck_assert_uint_eq(sbx_ustar_number(h + 108, 8), 3000000);      /* base-256: above 7 octal digits */
        ck_assert_uint_eq(sbx_ustar_number(h + 116, 8), 5);
        ck_assert_uint_eq(sbx_ustar_number(h + 124, 12), huge);
        ck_assert_uint_eq(sbx_ustar_number(h + 136, 12), 1700000000);
        ck_assert_int_eq(h[156], '0');
        ck_assert_mem_eq(h + 257, "ustar\0" "00", 8);
        h[0] ^= 1;
        ck_assert(!sbx_ustar_checksum_ok(h));
        h[0] ^= 1;
        ck_assert(!sbx_ustar_is_zero(h));
        ck_assert(sbx_ustar_is_zero((const uint8_t[SBX_USTAR_BLOCK]) {}));
}
END_TEST

/* Old tars summed signed bytes: a header with bytes above 127 checks either way. */
START_TEST(test_signed_checksum) {
        uint8_t h[SBX_USTAR_BLOCK];
        int64_t s = 0;

        sbx_ustar_header(h, &(SbxUstarEntry) { .name = "\xc3\xa9t\xc3\xa9", .type = '0', .mode = 0644 });
        for (size_t i = 0; i < SBX_USTAR_BLOCK; i++)
                s += (int8_t) (i >= 148 && i < 156 ? ' ' : h[i]);
        snprintf((char *) h + 148, 8, "%06llo", (unsigned long long) s);
        ck_assert(sbx_ustar_checksum_ok(h));
}
END_TEST

/* A record's length counts its own digits, also where they grow by one. */
START_TEST(test_pax_record) {
        char buf[256], value[128];

        for (size_t n = 80; n < 100; n++) {
                size_t len;

                memset(value, 'x', n);
                value[n] = 0;
                len = sbx_pax_record(buf, sizeof buf, "path", value);
                ck_assert_uint_eq(strlen(buf), len);
                ck_assert_uint_eq(strtoul(buf, NULL, 10), len);
                ck_assert_int_eq(buf[len - 1], '\n');
        }
        ck_assert_uint_eq(sbx_pax_record(buf, 4, "path", "abc"), strlen("12 path=abc\n"));
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("ustar");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_numbers);
        tcase_add_test(tc, test_header_round_trip);
        tcase_add_test(tc, test_signed_checksum);
        tcase_add_test(tc, test_pax_record);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
