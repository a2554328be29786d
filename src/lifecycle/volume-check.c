/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

typedef struct AccessQuery {
        const Caller *caller;
        int fd;
        int mode;
        int result;     /* 0: granted, else a negative errno */
} AccessQuery;

/* In a thread of its own: file-system credentials and supplementary groups are
 * per thread in the kernel (glibc's setgroups() would set them for every thread of
 * the process; the raw syscall does not). A non-zero fsuid also drops the
 * capabilities that override permissions, so the kernel decides as for the caller:
 * mode bits, POSIX ACLs and all. */
static void *access_as_caller(void *userdata) {
        AccessQuery *q = userdata;
        const Caller *c = q->caller;

        if (syscall(SYS_setgroups, c->n_groups, c->groups) < 0 ||
            syscall(SYS_setfsgid, c->gid) < 0 || (gid_t) syscall(SYS_setfsgid, -1) != c->gid ||
            syscall(SYS_setfsuid, c->uid) < 0 || (uid_t) syscall(SYS_setfsuid, -1) != c->uid) {
                q->result = -EPERM;
                return NULL;
        }
        q->result = faccessat(q->fd, "", q->mode, AT_EACCESS | AT_EMPTY_PATH) < 0 ? -errno : 0;
        return NULL;
}

/* Whether the caller may access what fd refers to with need (R_OK, X_OK): 1 or 0,
 * or a negative errno when that cannot be told. */
static int caller_may(const Caller *c, int fd, int need) {
        AccessQuery q = { .caller = c, .fd = fd, .mode = need };
        pthread_t t;
        int r;

        if (c->uid == 0)
                return 1;
        r = pthread_create(&t, NULL, access_as_caller, &q);
        if (r != 0)
                return -r;
        r = pthread_join(t, NULL);
        if (r != 0)
                return -r;
        if (q.result == -EACCES)
                return 0;
        return q.result < 0 ? q.result : 1;
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
                if ((r = caller_may(c, *fd, X_OK)) < 0)
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
        if ((r = caller_may(c, fd, dir ? R_OK | X_OK : R_OK)) < 0)
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
