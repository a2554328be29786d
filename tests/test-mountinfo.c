/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>

#include "mountinfo.h"
#include "sbx-test.h"

/* Real lines of a sandbox's /proc/self/mountinfo (Docker 20.10, overlay2), one with
 * a space and a backslash in its paths. */
#define ROOTFS "74 49 0:39 / / rw,relatime master:2 - overlay overlay rw,lowerdir=/l\n"
#define PROC "75 74 0:42 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n"
#define INIT "153 136 254:0 /usr/libexec/xagent-sandbox-init /.xagent-sandbox ro,relatime master:4 - ext4 /dev/vda rw\n"
#define WS "154 136 254:0 /home/m/my\\040work\\134x /work\\040space rw,relatime - ext4 /dev/vda rw,discard\n"

START_TEST(test_parse) {
        SbxMountInfo *m = NULL;
        size_t n = 0;

        ck_assert_int_eq(sbx_mountinfo_parse(ROOTFS PROC INIT WS, &m, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_int_eq(m[0].mount_id, 74);
        ck_assert_uint_eq(m[0].major, 0);
        ck_assert_uint_eq(m[0].minor, 39);
        ck_assert_str_eq(m[2].root, "/usr/libexec/xagent-sandbox-init");
        ck_assert(m[2].read_only);
        ck_assert_uint_eq(m[3].major, 254);
        ck_assert_str_eq(m[3].root, "/home/m/my work\\x");
        ck_assert_str_eq(m[3].mount_point, "/work space");
        ck_assert(!m[3].read_only);
        ck_assert_ptr_eq(sbx_mountinfo_at(m, n, "/work space"), &m[3]);
        ck_assert_ptr_null(sbx_mountinfo_at(m, n, "/work"));
        ck_assert_ptr_eq(sbx_mountinfo_by_id(m, n, 75), &m[1]);
        ck_assert_ptr_null(sbx_mountinfo_by_id(m, n, 1));
        sbx_mountinfo_free(m, n);

        /* the last mount at a path is the visible one */
        ck_assert_int_eq(sbx_mountinfo_parse(WS "155 154 0:50 / /work\\040space ro - tmpfs t ro\n", &m, &n), 0);
        ck_assert_int_eq(sbx_mountinfo_at(m, n, "/work space")->mount_id, 155);
        sbx_mountinfo_free(m, n);

        ck_assert_int_eq(sbx_mountinfo_parse("", &m, &n), 0);
        ck_assert_uint_eq(n, 0);
        sbx_mountinfo_free(m, n);
        ck_assert_int_eq(sbx_mountinfo_parse("74 49 0:39 / /\n", &m, &n), -EBADMSG);
        ck_assert_int_eq(sbx_mountinfo_parse("x 49 0:39 / / rw - a b c\n", &m, &n), -EBADMSG);
        ck_assert_int_eq(sbx_mountinfo_parse("1 49 zero / / rw - a b c\n", &m, &n), -EBADMSG);
}
END_TEST

START_TEST(test_fs_path) {
        SbxMountInfo root = { .root = (char *) "/", .mount_point = (char *) "/" };
        SbxMountInfo home = { .root = (char *) "/home", .mount_point = (char *) "/home" };
        SbxMountInfo sub = { .root = (char *) "/srv/h", .mount_point = (char *) "/mnt/x" };
        char *p = NULL;

        ck_assert_int_eq(sbx_mountinfo_fs_path(&root, "/home/m/ws", &p), 0);
        ck_assert_str_eq(p, "/home/m/ws");
        free(p);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&root, "/", &p), 0);
        ck_assert_str_eq(p, "/");
        free(p);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&home, "/home/m/ws", &p), 0);
        ck_assert_str_eq(p, "/home/m/ws");
        free(p);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&sub, "/mnt/x", &p), 0);
        ck_assert_str_eq(p, "/srv/h");
        free(p);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&sub, "/mnt/x/a/b", &p), 0);
        ck_assert_str_eq(p, "/srv/h/a/b");
        free(p);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&sub, "/mnt/xy", &p), -EINVAL);
        ck_assert_int_eq(sbx_mountinfo_fs_path(&home, "/etc", &p), -EINVAL);
}
END_TEST

#define T(s) "2026-11-30T17:38:48." s "Z "
#define SINCE UINT64_C(1796060328000000)        /* 2026-11-30T17:38:48.000000Z */

START_TEST(test_init_log) {
        char *t = NULL;

        /* one report of this start */
        ck_assert_int_eq(sbx_mountinfo_from_init_log(
                T("100") "xagent-sandbox-init: mounts begin\n" T("101") ROOTFS T("102") WS
                T("103") "xagent-sandbox-init: mounts end\n", SINCE, &t), 1);
        ck_assert_str_eq(t, ROOTFS WS);
        free(t);
        /* an earlier start's report, then this one's: this one */
        ck_assert_int_eq(sbx_mountinfo_from_init_log(
                "2026-11-30T17:00:00.1Z xagent-sandbox-init: mounts begin\n2026-11-30T17:00:00.2Z " INIT
                "2026-11-30T17:00:00.3Z xagent-sandbox-init: mounts end\n"
                T("100") "xagent-sandbox-init: mounts begin\n" T("102") WS
                T("103") "xagent-sandbox-init: mounts end\n", SINCE, &t), 1);
        ck_assert_str_eq(t, WS);
        free(t);
        /* only an earlier start's report, or this one's still incomplete: none yet */
        ck_assert_int_eq(sbx_mountinfo_from_init_log(
                "2026-11-30T17:00:00.1Z xagent-sandbox-init: mounts begin\n2026-11-30T17:00:00.2Z " INIT
                "2026-11-30T17:00:00.3Z xagent-sandbox-init: mounts end\n", SINCE, &t), 0);
        ck_assert_int_eq(sbx_mountinfo_from_init_log(
                T("100") "xagent-sandbox-init: mounts begin\n" T("102") WS, SINCE, &t), 0);
        ck_assert_int_eq(sbx_mountinfo_from_init_log("", SINCE, &t), 0);
        /* an end without a begin of this start says nothing */
        ck_assert_int_eq(sbx_mountinfo_from_init_log(
                "2026-11-30T17:00:00.1Z xagent-sandbox-init: mounts begin\n"
                T("103") "xagent-sandbox-init: mounts end\n", SINCE, &t), 0);
        /* the init's error, or a line that is not Docker's */
        ck_assert_int_eq(sbx_mountinfo_from_init_log(T("100") "xagent-sandbox-init: mounts error\n", SINCE, &t),
                         -EBADMSG);
        ck_assert_int_eq(sbx_mountinfo_from_init_log("garbage\n", SINCE, &t), -EBADMSG);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("mountinfo");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_fs_path);
        tcase_add_test(tc, test_init_log);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
