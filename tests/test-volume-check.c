/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "volume-check.h"

/* Runs as root (it chowns): a tree under /tmp with files of several owners. */

#define ALICE 1000      /* the caller */
#define BOB 1234
#define SHARED_GID 2000
#define STRANGER 4321

static char base[PATH_MAX];

/* base + "/" + rel, in one of a few rotating buffers. */
static const char *P(const char *rel) {
        static char bufs[8][PATH_MAX];
        static unsigned i;
        char *b = bufs[i++ % ELEMENTSOF(bufs)];

        ck_assert_int_lt(snprintf(b, PATH_MAX, "%s/%s", base, rel), PATH_MAX);
        return b;
}

static void mk(const char *rel, mode_t type, mode_t mode, uid_t uid, gid_t gid) {
        const char *p = P(rel);

        if (S_ISDIR(type))
                ck_assert_int_eq(mkdir(p, mode), 0);
        else if (S_ISREG(type)) {
                int fd = open(p, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(close(fd), 0);
        } else if (S_ISFIFO(type))
                ck_assert_int_eq(mkfifo(p, mode), 0);
        else if (S_ISCHR(type))
                ck_assert_msg(mknod(p, S_IFCHR | mode, makedev(1, 3)) == 0, "mknod %s: %m", p);
        ck_assert_int_eq(chown(p, uid, gid), 0);
        ck_assert_int_eq(chmod(p, mode), 0);      /* not the umask's */
}

static void mk_socket(const char *rel) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_lt(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", P(rel)), (int) sizeof(sa.sun_path));
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(close(fd), 0);
}

static void mk_link(const char *rel, const char *target) {
        ck_assert_int_eq(symlink(target, P(rel)), 0);
}

/* A POSIX access ACL in the kernel's xattr form (no libacl): entries sorted by tag. */
typedef struct AclEntry { uint16_t tag, perm; uint32_t id; } AclEntry;
#define ACL_NO_ID UINT32_MAX

static void set_acl(const char *rel, const AclEntry *entries, size_t n) {
        unsigned char blob[4 + 16 * sizeof(AclEntry)];
        const uint32_t version = 2;

        ck_assert_int_le(n, 16);
        memcpy(blob, &version, 4);
        memcpy(blob + 4, entries, n * sizeof(AclEntry));
        ck_assert_msg(setxattr(P(rel), "system.posix_acl_access", blob, 4 + n * sizeof(AclEntry), 0) == 0,
                      "setxattr %s: %m", P(rel));
}

/* The mode's three classes plus a named-user entry and the mask it needs. */
static void set_acl_user(const char *rel, uid_t user, unsigned perm) {
        struct stat st;

        ck_assert_int_eq(stat(P(rel), &st), 0);
        set_acl(rel, (const AclEntry[]) {
                { 0x01, (st.st_mode >> 6) & 7, ACL_NO_ID },     /* user:: */
                { 0x02, perm, user },                           /* user:ID: */
                { 0x04, (st.st_mode >> 3) & 7, ACL_NO_ID },     /* group:: */
                { 0x10, 7, ACL_NO_ID },                         /* mask:: */
                { 0x20, st.st_mode & 7, ACL_NO_ID },            /* other:: */
        }, 5);
}

static void setup(void) {
        char tmpl[] = "/tmp/sbx-volcheck-XXXXXX";

        ck_assert_int_eq(geteuid(), 0);
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        /* Resolved, so that nothing above the tree is a symlink (for root "/"). */
        ck_assert_ptr_nonnull(realpath(tmpl, base));
        ck_assert_int_eq(chmod(base, 0755), 0);

        mk("root", S_IFDIR, 0755, 0, 0);
        mk("root/mine", S_IFDIR, 0755, ALICE, ALICE);
        mk("root/mine/sub", S_IFDIR, 0755, ALICE, ALICE);
        mk("root/mine/file", S_IFREG, 0644, ALICE, ALICE);
        mk("root/mine-0044", S_IFREG, 0044, ALICE, ALICE);
        mk("root/bob-open", S_IFDIR, 0755, BOB, BOB);
        mk("root/bob-file-public", S_IFREG, 0644, BOB, BOB);
        mk("root/bob-file-private", S_IFREG, 0600, BOB, BOB);
        mk("root/bob-noexec", S_IFDIR, 0744, BOB, BOB);
        mk("root/bob-group", S_IFDIR, 0750, BOB, SHARED_GID);
        mk("root/bob-private", S_IFDIR, 0700, BOB, BOB);
        mk("root/bob-private/pub", S_IFDIR, 0755, BOB, BOB);
        mk("root/bob-private/alices", S_IFDIR, 0755, ALICE, ALICE);
        mk("root/fifo", S_IFIFO, 0666, ALICE, ALICE);
        mk("root/null", S_IFCHR, 0666, ALICE, ALICE);
        mk_socket("root/sock");
        ck_assert_int_eq(chown(P("root/sock"), ALICE, ALICE), 0);
        mk_link("root/link-final", "mine");
        mk_link("root/link-mid", "mine");
        mk_link("root/link-abs", P("root/mine"));

        /* ACLs: a denying entry on a parent and on the path, a granting one */
        mk("root/bob-acl", S_IFDIR, 0755, BOB, BOB);
        mk("root/bob-acl/inner", S_IFDIR, 0755, BOB, BOB);
        mk("root/bob-acl/inner/secret", S_IFREG, 0644, BOB, BOB);
        set_acl_user("root/bob-acl", ALICE, 0);
        mk("root/bob-acl-file", S_IFREG, 0644, BOB, BOB);
        set_acl_user("root/bob-acl-file", ALICE, 0);
        mk("root/bob-acl-grant", S_IFDIR, 0700, BOB, BOB);
        set_acl_user("root/bob-acl-grant", ALICE, 5);
        /* a named group grants; the mask limits a named user; a matching group that
         * grants nothing refuses, whatever "other" says */
        mk("root/bob-acl-group", S_IFDIR, 0700, BOB, BOB);
        set_acl("root/bob-acl-group", (const AclEntry[]) {
                { 0x01, 7, ACL_NO_ID }, { 0x04, 0, ACL_NO_ID }, { 0x08, 5, SHARED_GID }, { 0x10, 5, ACL_NO_ID },
                { 0x20, 0, ACL_NO_ID } }, 5);
        mk("root/bob-acl-mask", S_IFDIR, 0700, BOB, BOB);
        set_acl("root/bob-acl-mask", (const AclEntry[]) {
                { 0x01, 7, ACL_NO_ID }, { 0x02, 7, ALICE }, { 0x04, 0, ACL_NO_ID }, { 0x10, 4, ACL_NO_ID },
                { 0x20, 0, ACL_NO_ID } }, 5);
        mk("root/bob-acl-group-deny", S_IFREG, 0604, BOB, BOB);
        set_acl("root/bob-acl-group-deny", (const AclEntry[]) {
                { 0x01, 6, ACL_NO_ID }, { 0x04, 0, ACL_NO_ID }, { 0x08, 0, SHARED_GID }, { 0x10, 7, ACL_NO_ID },
                { 0x20, 4, ACL_NO_ID } }, 5);

        mk("real", S_IFDIR, 0755, 0, 0);
        mk("real/vol", S_IFDIR, 0755, ALICE, ALICE);
        mk_link("alias", "real");
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void teardown(void) {
        if (base[0])
                ck_assert_int_eq(nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static int check_as(uid_t uid, gid_t gid, const gid_t *groups, size_t n, const char *root, const char *host,
                    const char *mode, SbxError *e) {
        return sbx_volume_check_fs(root, host, mode, uid, gid, groups, n, e);
}

static void assert_ok(uid_t uid, const char *root, const char *host, const char *mode) {
        SbxError e = SBX_ERROR_NULL;
        int r = check_as(uid, uid, NULL, 0, root, host, mode, &e);

        ck_assert_msg(r == 0, "%s %s (uid %u) refused: %s", host, mode, (unsigned) uid, e.message);
        ck_assert(!sbx_error_is_set(&e));
}

/* A refusal of the given kind whose message holds every needle (NULL-terminated). */
static void assert_refused_kind(int r, SbxError *e, SbxErrorKind kind, ...) {
        va_list ap;

        ck_assert_int_lt(r, 0);
        ck_assert_msg(e->kind == kind, "kind %s, expected %s (message \"%s\")",
                      sbx_error_kind_name(e->kind), sbx_error_kind_name(kind), e->message);
        ck_assert_int_eq(r, -sbx_error_errno(kind));
        ck_assert_ptr_nonnull(e->message);
        va_start(ap, kind);
        for (const char *n; (n = va_arg(ap, const char *));)
                ck_assert_msg(strstr(e->message, n), "message \"%s\" lacks \"%s\"", e->message, n);
        va_end(ap);
        sbx_error_free(e);
}

/* Refused as a PolicyViolation naming the host path (in quotes), the rule and more. */
#define assert_violation(uid, root, host, mode, rule, ...)                                      \
        do {                                                                                    \
                SbxError _e = SBX_ERROR_NULL;                                                   \
                char _quoted[PATH_MAX + 2];                                                     \
                int _r = check_as((uid), (uid), NULL, 0, (root), (host), (mode), &_e);          \
                snprintf(_quoted, sizeof(_quoted), "'%s'", (host));                             \
                assert_refused_kind(_r, &_e, SBX_ERROR_POLICY_VIOLATION, _quoted,               \
                                    "(rule: " rule, ##__VA_ARGS__, NULL);                       \
        } while (0)

START_TEST(test_rw_own) {
        assert_ok(ALICE, P("root"), P("root/mine"), "rw");
        assert_ok(ALICE, P("root"), P("root/mine/sub"), "rw");
        assert_ok(ALICE, P("root"), P("root/mine/file"), "rw");
        assert_ok(ALICE, P("root"), P("root/mine"), "ro");
        assert_ok(ALICE, P("root"), P("root/mine/file"), "ro");
        /* the root itself as the volume */
        assert_ok(ALICE, P("root/mine"), P("root/mine"), "rw");
        assert_ok(ALICE, P("root/mine"), P("root/mine/sub"), "rw");
}
END_TEST

START_TEST(test_rw_other_refused) {
        assert_violation(ALICE, P("root"), P("root/bob-open"), "rw", "rw volumes must be owned by the caller",
                         "owned by uid 1234", "caller (uid 1000)");
        assert_violation(ALICE, P("root"), P("root/bob-file-public"), "rw", "rw volumes must be owned by the caller");
        /* a directory owned by root, readable by all */
        assert_violation(ALICE, P("root"), P("root"), "rw", "rw volumes must be owned by the caller",
                         "owned by uid 0");
}
END_TEST

START_TEST(test_ro_world_readable) {
        assert_ok(ALICE, P("root"), P("root/bob-open"), "ro");
        assert_ok(ALICE, P("root"), P("root/bob-file-public"), "ro");
        assert_ok(STRANGER, P("root"), P("root/mine"), "ro");
}
END_TEST

START_TEST(test_ro_private_refused) {
        assert_violation(ALICE, P("root"), P("root/bob-private"), "ro", "ro volumes must be readable by the caller",
                         "readable and searchable", "mode 0700", "owner 1234");
        assert_violation(ALICE, P("root"), P("root/bob-file-private"), "ro",
                         "ro volumes must be readable by the caller", "is not readable by", "mode 0600");
        /* readable but not searchable: of no use as a directory */
        assert_violation(ALICE, P("root"), P("root/bob-noexec"), "ro", "ro volumes must be readable by the caller",
                         "readable and searchable", "mode 0744");
}
END_TEST

START_TEST(test_ro_group) {
        const gid_t shared[] = { 3000, SHARED_GID };
        const gid_t others[] = { 3000, 3001 };
        SbxError e = SBX_ERROR_NULL;

        /* supplementary group */
        ck_assert_int_eq(check_as(ALICE, ALICE, shared, ELEMENTSOF(shared), P("root"), P("root/bob-group"), "ro", &e), 0);
        /* primary group */
        ck_assert_int_eq(check_as(ALICE, SHARED_GID, NULL, 0, P("root"), P("root/bob-group"), "ro", &e), 0);
        ck_assert(!sbx_error_is_set(&e));
        /* neither: the other class has nothing */
        assert_refused_kind(check_as(ALICE, ALICE, others, ELEMENTSOF(others), P("root"), P("root/bob-group"), "ro", &e),
                            &e, SBX_ERROR_POLICY_VIOLATION, P("root/bob-group"),
                            "(rule: ro volumes must be readable by the caller)", "group 2000", NULL);
        /* n_groups is ignored without groups */
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 5, P("root"), P("root/bob-group"), "ro", &e),
                            &e, SBX_ERROR_POLICY_VIOLATION, "(rule: ro volumes must be readable by the caller)", NULL);
        /* group membership never makes a path the caller's own */
        assert_refused_kind(check_as(ALICE, SHARED_GID, shared, 2, P("root"), P("root/bob-group"), "rw", &e),
                            &e, SBX_ERROR_POLICY_VIOLATION, "(rule: rw volumes must be owned by the caller)", NULL);
}
END_TEST

/* Only the one class that applies counts, as in the kernel. */
START_TEST(test_owner_class_only) {
        assert_violation(ALICE, P("root"), P("root/mine-0044"), "ro", "ro volumes must be readable by the caller",
                         "mode 0044");
        assert_ok(STRANGER, P("root"), P("root/mine-0044"), "ro");
        assert_ok(ALICE, P("root"), P("root/mine-0044"), "rw");         /* the owner may chmod it */
}
END_TEST

START_TEST(test_traversal) {
        assert_violation(ALICE, P("root"), P("root/bob-private/pub"), "ro",
                         "the caller must be able to reach the path", "may not search the directory",
                         P("root/bob-private"), "mode 0700");
        assert_violation(ALICE, P("root"), P("root/bob-private/alices"), "rw",
                         "the caller must be able to reach the path", P("root/bob-private"));
        /* the root itself is the administrator's: a private root does not refuse */
        assert_ok(ALICE, P("root/bob-private"), P("root/bob-private/alices"), "rw");
        assert_ok(BOB, P("root"), P("root/bob-private/pub"), "ro");
}
END_TEST

START_TEST(test_symlink_final) {
        char component[PATH_MAX + 2];

        snprintf(component, sizeof(component), "'%s' is a symbolic link", P("root/link-final"));
        assert_violation(ALICE, P("root"), P("root/link-final"), "rw", "no symlinks below the volume root",
                         component, P("root") /* the root is named */);
        assert_violation(0, P("root"), P("root/link-final"), "ro", "no symlinks below the volume root");
        assert_violation(ALICE, P("root"), P("root/link-abs"), "ro", "no symlinks below the volume root");
}
END_TEST

START_TEST(test_symlink_middle) {
        char component[PATH_MAX + 2], rule[PATH_MAX + 64];

        snprintf(component, sizeof(component), "'%s' is a symbolic link", P("root/link-mid"));
        snprintf(rule, sizeof(rule), "no symlinks below the volume root '%s')", P("root"));
        assert_violation(ALICE, P("root"), P("root/link-mid/sub"), "rw", "no symlinks below the volume root",
                         component, rule);
        assert_violation(0, P("root"), P("root/link-mid/sub"), "rw", "no symlinks below the volume root", component);
        /* from "/" every component counts */
        assert_violation(ALICE, "/", P("root/link-mid/sub"), "rw", "no symlinks below the volume root '/'",
                         component);
}
END_TEST

START_TEST(test_symlink_above_root) {
        assert_ok(ALICE, P("alias"), P("alias/vol"), "rw");
        assert_ok(ALICE, P("alias"), P("alias/vol"), "ro");
        assert_ok(0, P("alias"), P("alias"), "rw");
        /* the same below a root higher up is refused */
        assert_violation(ALICE, base, P("alias/vol"), "rw", "no symlinks below the volume root", P("alias"));
}
END_TEST

START_TEST(test_root_slash) {
        assert_ok(ALICE, "/", P("root/mine"), "rw");
        assert_ok(ALICE, "/", P("root/bob-open"), "ro");
}
END_TEST

START_TEST(test_missing) {
        char component[PATH_MAX + 2];

        snprintf(component, sizeof(component), "'%s' does not exist (rule: the path must exist)", P("root/nope"));
        assert_violation(ALICE, P("root"), P("root/nope"), "rw", "the path must exist", component);
        snprintf(component, sizeof(component), "'%s' does not exist", P("root/nope"));
        assert_violation(ALICE, P("root"), P("root/nope/deeper"), "ro", "the path must exist", component);
        assert_violation(0, P("root"), P("root/nope"), "ro", "the path must exist");
        /* the root itself */
        assert_violation(ALICE, P("gone"), P("gone/x"), "ro", "the path must exist", "the volume root", P("gone"));
        /* a file where a directory should be */
        snprintf(component, sizeof(component), "'%s' is not a directory", P("root/mine/file"));
        assert_violation(ALICE, P("root"), P("root/mine/file/x"), "ro", "the path must exist", component);
        assert_violation(ALICE, P("root/mine/file"), P("root/mine/file"), "ro", "volume roots are directories");
}
END_TEST

START_TEST(test_special_files) {
        static const char *const names[] = { "root/fifo", "root/sock", "root/null" };
        static const char *const types[] = { "is a FIFO", "is a socket", "is a character device" };

        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                assert_violation(ALICE, P("root"), P(names[i]), "rw", "only files and directories can be volumes",
                                 types[i]);
                assert_violation(0, P("root"), P(names[i]), "ro", "only files and directories can be volumes",
                                 types[i]);
        }
}
END_TEST

START_TEST(test_invalid_args) {
        SbxError e = SBX_ERROR_NULL;

        /* segment boundary: /…/root does not hold /…/root-x */
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root"), P("root-x"), "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "does not lie below the volume root", P("root-x"), NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root/mine"), P("root"), "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "does not lie below the volume root", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root"), P("root/mine/../bob-open"), "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be canonical", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root/"), P("root/mine"), "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be canonical", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root"), "root/mine", "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be absolute", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, NULL, P("root/mine"), "ro", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be absolute", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root"), P("root/mine"), "rx", &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be \"ro\" or \"rw\"", NULL);
        assert_refused_kind(check_as(ALICE, ALICE, NULL, 0, P("root"), P("root/mine"), NULL, &e),
                            &e, SBX_ERROR_INVALID_ARGS, "must be \"ro\" or \"rw\"", NULL);
}
END_TEST

START_TEST(test_uid0) {
        static const char *const paths[] = {
                "root", "root/mine", "root/mine/file", "root/mine-0044", "root/bob-private", "root/bob-private/pub",
                "root/bob-private/alices", "root/bob-file-private", "root/bob-noexec", "root/bob-group",
        };

        for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                assert_ok(0, P("root"), P(paths[i]), "ro");
                assert_ok(0, P("root"), P(paths[i]), "rw");
        }
}
END_TEST

/* POSIX ACLs count as the kernel counts them, on every directory on the way and on
 * the path itself: mode bits alone would admit the first two. */
START_TEST(test_acl) {
        const gid_t groups[] = { 3000 };
        SbxError e = SBX_ERROR_NULL;

        assert_violation(ALICE, P("root"), P("root/bob-acl/inner"), "ro",
                         "the caller must be able to reach the path", "may not search the directory",
                         P("root/bob-acl"), "ACLs included");
        assert_violation(ALICE, P("root"), P("root/bob-acl/inner/secret"), "ro",
                         "the caller must be able to reach the path", P("root/bob-acl"));
        assert_violation(ALICE, P("root"), P("root/bob-acl-file"), "ro", "ro volumes must be readable by the caller",
                         "ACLs included");
        /* with supplementary groups set as well */
        assert_refused_kind(check_as(ALICE, ALICE, groups, 1, P("root"), P("root/bob-acl/inner"), "ro", &e), &e,
                            SBX_ERROR_POLICY_VIOLATION, P("root/bob-acl"), NULL);
        /* the entry names Alice only */
        assert_ok(STRANGER, P("root"), P("root/bob-acl/inner/secret"), "ro");
        assert_ok(STRANGER, P("root"), P("root/bob-acl-file"), "ro");
        /* and an ACL may grant what the mode bits do not */
        assert_ok(ALICE, P("root"), P("root/bob-acl-grant"), "ro");
        assert_violation(STRANGER, P("root"), P("root/bob-acl-grant"), "ro", "ro volumes must be readable by the caller");

        const gid_t shared[] = { 3000, SHARED_GID };
        ck_assert_int_eq(check_as(ALICE, ALICE, shared, 2, P("root"), P("root/bob-acl-group"), "ro", &e), 0);
        assert_violation(ALICE, P("root"), P("root/bob-acl-group"), "ro", "ro volumes must be readable by the caller");
        /* user:alice:rwx under mask::r-- : no search */
        assert_violation(ALICE, P("root"), P("root/bob-acl-mask"), "ro", "ro volumes must be readable by the caller");
        ck_assert_int_eq(check_as(ALICE, ALICE, shared, 2, P("root"), P("root/bob-acl-group-deny"), "ro", &e),
                         -EPERM);
        sbx_error_free(&e);
        assert_ok(ALICE, P("root"), P("root/bob-acl-group-deny"), "ro");
        assert_ok(BOB, P("root"), P("root/bob-acl-group-deny"), "ro");
}
END_TEST

START_TEST(test_no_error_struct) {
        ck_assert_int_eq(sbx_volume_check_fs(P("root"), P("root/link-final"), "rw", ALICE, ALICE, NULL, 0, NULL),
                         -EPERM);
        ck_assert_int_eq(sbx_volume_check_fs(P("root"), P("root/mine"), "rw", ALICE, ALICE, NULL, 0, NULL), 0);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("volume-check");
        TCase *tc = tcase_create("fs");

        tcase_add_unchecked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_rw_own);
        tcase_add_test(tc, test_rw_other_refused);
        tcase_add_test(tc, test_ro_world_readable);
        tcase_add_test(tc, test_ro_private_refused);
        tcase_add_test(tc, test_ro_group);
        tcase_add_test(tc, test_owner_class_only);
        tcase_add_test(tc, test_traversal);
        tcase_add_test(tc, test_symlink_final);
        tcase_add_test(tc, test_symlink_middle);
        tcase_add_test(tc, test_symlink_above_root);
        tcase_add_test(tc, test_root_slash);
        tcase_add_test(tc, test_missing);
        tcase_add_test(tc, test_special_files);
        tcase_add_test(tc, test_invalid_args);
        tcase_add_test(tc, test_uid0);
        tcase_add_test(tc, test_no_error_struct);
        tcase_add_test(tc, test_acl);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
