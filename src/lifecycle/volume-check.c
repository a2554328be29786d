/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "path.h"
#include "volume-check.h"

/* Why not openat2(RESOLVE_NO_SYMLINKS|RESOLVE_BENEATH)? It would refuse the same
 * paths, but only with ELOOP for the whole path; walking one component at a time
 * names the offending component, checks search permission on the way, and works on
 * every kernel. Each step is relative to the previous descriptor and never follows
 * a symlink, and a canonical path has no "." or ".." to climb out with. */

typedef struct Caller {
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t n_groups;
} Caller;

static bool caller_in_group(const Caller *c, gid_t g) {
        if (c->gid == g)
                return true;
        for (size_t i = 0; i < c->n_groups; i++)
                if (c->groups[i] == g)
                        return true;
        return false;
}

/* Without an ACL: exactly one class of the mode bits applies. */
static bool mode_permits(const Caller *c, const struct stat *st, unsigned need) {
        unsigned bits;

        if (st->st_uid == c->uid)
                bits = (st->st_mode >> 6) & 07;
        else if (caller_in_group(c, st->st_gid))
                bits = (st->st_mode >> 3) & 07;
        else
                bits = st->st_mode & 07;
        return (bits & need) == need;
}

/* The on-disk form of a POSIX access ACL (the kernel's xattr), sorted by tag. */
#define ACL_XATTR "system.posix_acl_access"
#define ACL_XATTR_VERSION 2
enum { ACL_USER_OBJ = 0x01, ACL_USER = 0x02, ACL_GROUP_OBJ = 0x04, ACL_GROUP = 0x08, ACL_MASK = 0x10,
       ACL_OTHER = 0x20 };
typedef struct AclEntry {
        uint16_t tag, perm;
        uint32_t id;
} AclEntry;
_Static_assert(sizeof(AclEntry) == 8, "an ACL entry is 8 bytes on disk");

/* The kernel's posix_acl_permission(): the owner's entry; else a named user's,
 * masked; else any matching group entry (owning or named) that grants, masked, and
 * if some group matched but none grants, refused; else the other entry. 1 granted,
 * 0 refused, -EIO for a malformed ACL. */
static int acl_permits(const Caller *c, const struct stat *st, const AclEntry *e, size_t n, unsigned need) {
        bool group_matched = false;
        size_t i;

        for (i = 0; i < n; i++) {
                switch (e[i].tag) {
                case ACL_USER_OBJ:
                        if (st->st_uid == c->uid)
                                return (e[i].perm & need) == need;
                        continue;
                case ACL_USER:
                        if (e[i].id == c->uid)
                                goto masked;
                        continue;
                case ACL_GROUP_OBJ:
                case ACL_GROUP:
                        if (caller_in_group(c, e[i].tag == ACL_GROUP_OBJ ? st->st_gid : (gid_t) e[i].id)) {
                                group_matched = true;
                                if ((e[i].perm & need) == need)
                                        goto masked;
                        }
                        continue;
                case ACL_MASK:
                        continue;
                case ACL_OTHER:
                        return !group_matched && (e[i].perm & need) == need;
                default:
                        return -EIO;
                }
        }
        return -EIO;
masked:
        for (size_t m = i + 1; m < n; m++)
                if (e[m].tag == ACL_MASK)
                        return (e[i].perm & e[m].perm & need) == need;
        return (e[i].perm & need) == need;
}

/* The access ACL of what fd (O_PATH) refers to: 1 and *ret (n entries), 0 when it
 * has none (or the file system knows none), or a negative errno. */
static int read_acl(int fd, AclEntry **ret, size_t *ret_n) {
        _cleanup_free_ uint8_t *buf = NULL;
        char path[64];
        ssize_t size, got;
        uint32_t version;

        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        size = getxattr(path, ACL_XATTR, NULL, 0);
        if (size < 0)
                return errno == ENODATA || errno == EOPNOTSUPP ? 0 : -errno;
        if (size < 4 || (size - 4) % (ssize_t) sizeof(AclEntry) != 0)
                return -EIO;
        buf = malloc((size_t) size);
        if (!buf)
                return -ENOMEM;
        got = getxattr(path, ACL_XATTR, buf, (size_t) size);
        if (got < 0)
                return errno == ERANGE ? -EAGAIN : -errno;
        if (got != size)
                return -EAGAIN;
        memcpy(&version, buf, 4);
        if (le32toh(version) != ACL_XATTR_VERSION)
                return -EIO;
        *ret_n = (size_t) (size - 4) / sizeof(AclEntry);
        *ret = malloc(*ret_n * sizeof(AclEntry) ?: 1);
        if (!*ret)
                return -ENOMEM;
        memcpy(*ret, buf + 4, *ret_n * sizeof(AclEntry));
        for (size_t i = 0; i < *ret_n; i++)
                (*ret)[i] = (AclEntry) { le16toh((*ret)[i].tag), le16toh((*ret)[i].perm), le32toh((*ret)[i].id) };
        return 1;
}

/* Whether the caller may access what fd refers to (stat st) with need (R_OK, X_OK),
 * as the kernel decides it for the caller's uid and groups: its POSIX ACL when it has
 * one, else its mode bits. 1 or 0, or a negative errno when that cannot be told.
 * (Not faccessat() under the caller's fsuid: the unit's capability bounding set and
 * system call filter deny this service setfsuid() and setgroups().) */
static int caller_may(const Caller *c, int fd, const struct stat *st, unsigned need) {
        _cleanup_free_ AclEntry *acl = NULL;
        size_t n = 0;
        int r;

        if (c->uid == 0)
                return 1;
        r = read_acl(fd, &acl, &n);
        if (r < 0)
                return r;
        if (r == 0)
                return mode_permits(c, st, need);
        return acl_permits(c, st, acl, n, need);
}

static const char *special_file_type(mode_t m) {
        if (S_ISSOCK(m))
                return "a socket";
        if (S_ISFIFO(m))
                return "a FIFO";
        if (S_ISCHR(m))
                return "a character device";
        if (S_ISBLK(m))
                return "a block device";
        return "a special file";
}

static int check_args(const char *root, const char *host_path, const char *mode, SbxError *error) {
        _cleanup_free_ char *cr = NULL, *ch = NULL;

        if (!streq_ptr(mode, "ro") && !streq_ptr(mode, "rw"))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "volumes: mode of '%s' must be \"ro\" or \"rw\"", host_path ?: "");
        if (!root || root[0] != '/' || !host_path || host_path[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "volumes: host path '%s' and volume root '%s' must be absolute paths",
                                     host_path ?: "", root ?: "");
        cr = sbx_canonical_path(root);
        ch = sbx_canonical_path(host_path);
        if (!cr || !ch)
                return -ENOMEM;
        if (!streq(cr, root) || !streq(ch, host_path))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "volumes: host path '%s' and volume root '%s' must be canonical paths",
                                     host_path, root);
        if (!sbx_path_is_root_or_descendant(host_path, root))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "volumes: host path '%s' does not lie below the volume root '%s'",
                                     host_path, root);
        return 0;
}

/* The administrator chose the root, so symlinks in its own path (a symlinked home
 * for %h, /var/run → /run) are theirs to allow; only what lies below is checked. */
static int open_root(const char *root, const char *host_path, SbxError *error) {
        int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);

        if (fd >= 0)
                return fd;
        if (errno == ENOENT)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: '%s': the volume root '%s' does not exist (rule: the path must exist)",
                                     host_path, root);
        if (errno == ENOTDIR)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: '%s': the volume root '%s' is not a directory "
                                     "(rule: volume roots are directories)", host_path, root);
        return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot open the volume root '%s': %m",
                             host_path, root);
}

/* Moves *fd from the root down to host_path, one component at a time, leaving *st
 * the stat of the final object. */
static int walk_below_root(int *fd, struct stat *st, const char *root, const char *host_path, const Caller *c,
                           SbxError *error) {
        _cleanup_free_ char *rel = NULL;
        size_t offset;

        if (streq(host_path, root))
                return 0;

        offset = strlen(root) + !streq(root, "/");      /* host_path + offset: the path below root */
        rel = strdup(host_path + offset);
        if (!rel)
                return -ENOMEM;

        for (char *name = rel, *next; name; name = next) {
                int nfd, r;
                /* host_path up to and including this component */
                int len = (int) (offset + (size_t) (name - rel) + strcspn(name, "/"));

                next = strchr(name, '/');
                if (next)
                        *next++ = 0;

                nfd = openat(*fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0) {
                        if (errno == ENOENT && !next)
                                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                                     "volumes: '%s' does not exist (rule: the path must exist)",
                                                     host_path);
                        if (errno == ENOENT)
                                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                                     "volumes: '%s': '%.*s' does not exist (rule: the path must exist)",
                                                     host_path, len, host_path);
                        return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot open '%.*s': %m",
                                             host_path, len, host_path);
                }
                (void) close(*fd);
                *fd = nfd;
                if (fstat(*fd, st) < 0)
                        return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot stat '%.*s': %m",
                                             host_path, len, host_path);

                if (S_ISLNK(st->st_mode))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: '%s': '%.*s' is a symbolic link "
                                             "(rule: no symlinks below the volume root '%s')",
                                             host_path, len, host_path, root);
                if (!next)
                        break;
                if (!S_ISDIR(st->st_mode))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: '%s': '%.*s' is not a directory (rule: the path must exist)",
                                             host_path, len, host_path);
                if ((r = caller_may(c, *fd, st, X_OK)) < 0)
                        return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot check access to '%.*s': %s",
                                             host_path, len, host_path, strerror(-r));
                if (r == 0)
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: '%s': the caller (uid %u) may not search the directory "
                                             "'%.*s' (mode %04o, owner %u, group %u; ACLs included) "
                                             "(rule: the caller must be able to reach the path)",
                                             host_path, (unsigned) c->uid, len, host_path,
                                             (unsigned) (st->st_mode & 07777), (unsigned) st->st_uid,
                                             (unsigned) st->st_gid);
        }
        return 0;
}

static int check_access(int fd, const struct stat *st, const char *host_path, const char *mode, const Caller *c,
                        SbxError *error) {
        bool dir = S_ISDIR(st->st_mode);
        int r;

        if (c->uid == 0)
                return 0;

        if (streq(mode, "rw")) {
                if (st->st_uid != c->uid)
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "volumes: '%s' is owned by uid %u, not by the caller (uid %u) "
                                             "(rule: rw volumes must be owned by the caller)",
                                             host_path, (unsigned) st->st_uid, (unsigned) c->uid);
                return 0;
        }

        /* A directory is of use read-only only if it can be listed and entered. */
        if ((r = caller_may(c, fd, st, dir ? R_OK | X_OK : R_OK)) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot check access: %s", host_path,
                                     strerror(-r));
        if (r == 0)
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: '%s' is not %s by the caller (uid %u): mode %04o, owner %u, group %u; "
                                     "ACLs included "
                                     "(rule: ro volumes must be readable by the caller)",
                                     host_path, dir ? "readable and searchable" : "readable", (unsigned) c->uid,
                                     (unsigned) (st->st_mode & 07777), (unsigned) st->st_uid, (unsigned) st->st_gid);
        return 0;
}

int sbx_volume_open_checked(const char *root, const char *host_path, const char *mode, uid_t uid, gid_t gid,
                            const gid_t *groups, size_t n_groups, SbxError *error) {
        const Caller c = { .uid = uid, .gid = gid, .groups = groups, .n_groups = groups ? n_groups : 0 };
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        int r;

        if ((r = check_args(root, host_path, mode, error)) < 0)
                return r;

        fd = open_root(root, host_path, error);
        if (fd < 0)
                return fd;
        if (fstat(fd, &st) < 0)
                return sbx_error_set(error, SBX_ERROR_IO, "volumes: '%s': cannot stat the volume root '%s': %m",
                                     host_path, root);

        if ((r = walk_below_root(&fd, &st, root, host_path, &c, error)) < 0)
                return r;

        /* A socket could be the Docker socket under another name; devices and FIFOs
         * have no business in a sandbox either. */
        if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
                return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                     "volumes: '%s' is %s (rule: only files and directories can be volumes)",
                                     host_path, special_file_type(st.st_mode));

        if ((r = check_access(fd, &st, host_path, mode, &c, error)) < 0)
                return r;
        return TAKE_FD(fd);
}

int sbx_volume_check_fs(const char *root, const char *host_path, const char *mode, uid_t uid, gid_t gid,
                        const gid_t *groups, size_t n_groups, SbxError *error) {
        int fd = sbx_volume_open_checked(root, host_path, mode, uid, gid, groups, n_groups, error);

        if (fd < 0)
                return fd;
        (void) close(fd);
        return 0;
}

int sbx_volume_check_working_dir(int volume_fd, const char *host_path, const char *rest, const char *working_dir,
                                 SbxError *error) {
        _cleanup_free_ char *rel = strdup(rest);
        _cleanup_close_ int fd = fcntl(volume_fd, F_DUPFD_CLOEXEC, 3);
        struct stat st;

        if (!rel || fd < 0)
                return -ENOMEM;
        for (char *name = rel, *next; name; name = next) {
                int nfd;

                next = strchr(name, '/');
                if (next)
                        *next++ = 0;
                nfd = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0 || fstat(nfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
                        if (nfd >= 0)
                                (void) close(nfd);
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "working_dir: '%s' lies in the volume '%s' but '%s/%s' is not an existing "
                                             "directory there (rule: a working directory inside a volume must exist, "
                                             "without symlinks)", working_dir, host_path, host_path, rest);
                }
                (void) close(fd);
                fd = nfd;
        }
        return 0;
}
