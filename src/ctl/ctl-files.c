/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* cat, put, ls, rm: a sandbox's files through ReadFile, WriteFile, ListFiles and
 * RemoveFile (no tar, no process in the sandbox). Above CTL_FD_THRESHOLD the bytes go
 * through a descriptor (the calls' option fd; docs/api.md, "Files"), never in a bus
 * message: cat reads its first piece in a message and, when the file goes on, has
 * the service write the rest to this program's standard output; put sends a regular
 * file of at most the threshold in one message (an atomic write: at most
 * max_file_bytes), and a larger one or a pipe as the descriptor it opened (atomic as
 * well; bounded by the sandbox's disk budget alone). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl-bus.h"
#include "ctl-verbs.h"
#include "fileio.h"
#include "json-util.h"

enum {
        ARG_DEPTH = 0x200,
        ARG_LIMIT,
        ARG_RECURSIVE,
        ARG_MODE,
        ARG_APPEND,
        ARG_PARENTS,
};

typedef struct FileArgs {
        const char *verb;
        uint64_t depth, limit, mode;
        bool have_depth, have_limit, have_mode, recursive, append, parents;
} FileArgs;

static int file_option(int c, const char *arg, void *userdata) {
        FileArgs *a = userdata;
        char *end;

        switch (c) {
        case ARG_DEPTH:
                a->have_depth = true;
                return ctl_parse_uint(a->verb, "--depth", arg, 1, 32, &a->depth);
        case ARG_LIMIT:
                a->have_limit = true;
                return ctl_parse_uint(a->verb, "--limit", arg, 1, 100000, &a->limit);
        case ARG_RECURSIVE:
                a->recursive = true;
                return CTL_PROCEED;
        case ARG_MODE:
                errno = 0;
                a->mode = strtoull(arg, &end, 8);
                if (errno != 0 || end == arg || *end || a->mode > 07777)
                        return ctl_usage_error(a->verb, "--mode: '%s' is not an octal file mode", arg);
                a->have_mode = true;
                return CTL_PROCEED;
        case ARG_APPEND:
                a->append = true;
                return CTL_PROCEED;
        case ARG_PARENTS:
                a->parents = true;
                return CTL_PROCEED;
        default:
                return CTL_EXIT_USAGE;
        }
}

static const struct option file_options[] = {
        CTL_COMMON_OPTIONS,
        { "depth",     required_argument, NULL, ARG_DEPTH     },
        { "limit",     required_argument, NULL, ARG_LIMIT     },
        { "recursive", no_argument,       NULL, ARG_RECURSIVE },
        { "mode",      required_argument, NULL, ARG_MODE      },
        { "append",    no_argument,       NULL, ARG_APPEND    },
        { "parents",   no_argument,       NULL, ARG_PARENTS   },
        {}
};

/* NAME:PATH → name and path (PATH absolute); a usage error otherwise. */
static int split_target(const char *verb, char *s, char **ret_name, char **ret_path) {
        char *colon = strchr(s, ':');

        if (!colon || colon == s || colon[1] != '/')
                return ctl_usage_error(verb, "'%s' is not NAME:PATH (PATH absolute)", s);
        *colon = 0;
        *ret_name = s;
        *ret_path = colon + 1;
        return CTL_PROCEED;
}

/* -r → --recursive, -p → --parents: the shared parser knows long options only. */
static void expand_short(int argc, char **argv) {
        static char recursive[] = "--recursive", parents[] = "--parents";

        for (int i = 1; i < argc && !streq(argv[i], "--"); i++)
                if (streq(argv[i], "-r"))
                        argv[i] = recursive;
                else if (streq(argv[i], "-p"))
                        argv[i] = parents;
}

/* Each command's own options: another command's is a usage error. */
static int check_options(const FileArgs *a) {
        bool ls = streq(a->verb, "ls"), put = streq(a->verb, "put"), rm = streq(a->verb, "rm");

        if ((!ls && (a->have_depth || a->have_limit)) || (!rm && a->recursive) ||
            (!put && (a->have_mode || a->append || a->parents)))
                return ctl_usage_error(a->verb, "an option of another command");
        return CTL_PROCEED;
}

/* Parses argv (n_args arguments, the last NAME:PATH); connects; starts the call. */
static int start(int argc, char **argv, CtlOptions *o, FileArgs *a, int n_args, const char *method, sd_bus **bus,
                 sd_bus_message **m) {
        char *name = NULL, *path = NULL;
        int r;

        expand_short(argc, argv);
        if ((r = ctl_parse_args(argc, argv, file_options, o, file_option, a, n_args, n_args)) != CTL_PROCEED ||
            (r = check_options(a)) != CTL_PROCEED ||
            (r = split_target(argv[0], argv[argc - 1], &name, &path)) != CTL_PROCEED)
                return r;
        if (ctl_bus_connect(o, bus) < 0 || ctl_bus_new_sandbox_call(*bus, o, method, name, m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append(*m, "s", path)) < 0)
                return ctl_bus_fail(method, r);
        return CTL_PROCEED;
}

static int read_info_eof(sd_bus_message *reply, bool *ret_eof) {
        int r = sd_bus_message_enter_container(reply, 'a', "{sv}");

        *ret_eof = true;
        while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
                const char *key;
                int eof;

                if ((r = sd_bus_message_read(reply, "s", &key)) < 0)
                        break;
                if (streq(key, "eof")) {
                        if ((r = sd_bus_message_read(reply, "v", "b", &eof)) < 0)
                                break;
                        *ret_eof = eof;
                } else if ((r = sd_bus_message_skip(reply, "v")) < 0)
                        break;
                r = sd_bus_message_exit_container(reply);
        }
        return r < 0 ? r : sd_bus_message_exit_container(reply);
}

/* Above this, the bytes go through a descriptor (docs/python.md and
 * xagent-sandboxctl(1) say the same threshold). */
#define CTL_FD_THRESHOLD ((uint64_t) 1 << 20)
/* A descriptor transfer's call waits as long as the service's own bound on it
 * (SBX_COPY_TIMEOUT_S) and a margin. */
#define CTL_FD_CALL_TIMEOUT_USEC ((uint64_t) 630 * 1000000U)

/* The rest of the file from offset on, written by the service to standard output. */
static int cat_rest(sd_bus *bus, CtlOptions *o, const char *name, const char *path, uint64_t offset) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        if (ctl_bus_new_sandbox_call(bus, o, "ReadFile", name, &m) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_append(m, "sa{sv}", path, 2, "offset", "t", offset, "fd", "h", STDOUT_FILENO)) < 0)
                return ctl_bus_fail("ReadFile", r);
        return ctl_bus_call(bus, m, CTL_FD_CALL_TIMEOUT_USEC, o, &reply) < 0 ? CTL_EXIT_FAILURE : 0;
}

int verb_cat(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        FileArgs a = { .verb = argv[0] };
        char *name = NULL, *path = NULL;
        uint64_t offset = 0;
        int r;

        expand_short(argc, argv);
        if ((r = ctl_parse_args(argc, argv, file_options, o, file_option, &a, 1, 1)) != CTL_PROCEED ||
            (r = check_options(&a)) != CTL_PROCEED ||
            (r = split_target(argv[0], argv[optind], &name, &path)) != CTL_PROCEED)
                return r;
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        for (bool eof = false; !eof;) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
                const void *data;
                size_t size;

                if (ctl_bus_new_sandbox_call(bus, o, "ReadFile", name, &m) < 0)
                        return CTL_EXIT_FAILURE;
                if ((r = sd_bus_message_append(m, "sa{sv}", path, 2, "offset", "t", offset, "length", "t",
                                               CTL_FD_THRESHOLD)) < 0)
                        return ctl_bus_fail("ReadFile", r);
                if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                        return CTL_EXIT_FAILURE;
                if ((r = sd_bus_message_read_array(reply, 'y', &data, &size)) < 0 ||
                    (r = read_info_eof(reply, &eof)) < 0)
                        return ctl_bus_fail("ReadFile", r);
                if ((r = ctl_write_all(STDOUT_FILENO, data, size)) < 0)
                        return ctl_bus_fail("standard output", r);
                if (size == 0)
                        break;          /* nothing more to read, whatever eof says */
                offset += size;
                if (!eof)
                        return cat_rest(bus, o, name, path, offset);
        }
        return 0;
}

/* What put reads at most locally: the largest max_file_bytes (the service says the
 * host's own bound). */
#define PUT_MAX ((size_t) 16 << 20)

int verb_put(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *data = NULL;
        FileArgs a = { .verb = argv[0] };
        const char *local;
        size_t size = 0;
        struct stat st;
        bool through_fd;
        int r;

        if ((r = start(argc, argv, o, &a, 2, "WriteFile", &bus, &m)) != CTL_PROCEED)
                return r;
        local = argv[optind];
        fd = streq(local, "-") ? dup(STDIN_FILENO) : open(local, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return ctl_fail(local, -errno, NULL);
        if (fstat(fd, &st) < 0)
                return ctl_fail(local, -errno, NULL);
        through_fd = !S_ISREG(st.st_mode) || (uint64_t) st.st_size > CTL_FD_THRESHOLD;
        if (!through_fd && (r = sbx_read_fd(fd, PUT_MAX, &data, &size)) < 0)
                return ctl_fail(local, r, NULL);
        if ((r = sd_bus_message_append_array(m, 'y', data ?: "", size)) < 0 ||
            (r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (through_fd && (r = sd_bus_message_append(m, "{sv}", "fd", "h", fd)) < 0) ||
            (a.have_mode && (r = sd_bus_message_append(m, "{sv}", "mode", "u", (uint32_t) a.mode)) < 0) ||
            (a.append && (r = sd_bus_message_append(m, "{sv}", "append", "b", 1)) < 0) ||
            (a.parents && (r = sd_bus_message_append(m, "{sv}", "make_parents", "b", 1)) < 0) ||
            (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("WriteFile", r);
        return ctl_bus_call(bus, m, through_fd ? CTL_FD_CALL_TIMEOUT_USEC : 0, o, &reply) < 0 ? CTL_EXIT_FAILURE : 0;
}

static int print_entries(sd_bus_message *reply, bool json) {
        _cleanup_(json_object_putp) json_object *list = json ? json_object_new_array() : NULL;
        int truncated, r;

        if (json && !list)
                return ctl_bus_fail("ListFiles", -ENOMEM);
        if ((r = sd_bus_message_enter_container(reply, 'a', "(ssttu)")) < 0)
                return ctl_bus_fail("ListFiles", r);
        for (;;) {
                const char *name, *kind;
                uint64_t size, mtime;
                uint32_t mode;
                json_object *e;

                r = sd_bus_message_read(reply, "(ssttu)", &name, &kind, &size, &mtime, &mode);
                if (r < 0)
                        return ctl_bus_fail("ListFiles", r);
                if (r == 0)
                        break;
                if (!json) {
                        printf("%-12s %04o %12" PRIu64 " %s\n", kind, (unsigned) (mode & 07777), size, name);
                        continue;
                }
                e = json_object_new_object();
                if (!e || json_object_array_add(list, e) < 0 ||
                    sbx_json_put(e, "name", json_object_new_string(name)) < 0 ||
                    sbx_json_put(e, "kind", json_object_new_string(kind)) < 0 ||
                    sbx_json_put(e, "size", json_object_new_uint64(size)) < 0 ||
                    sbx_json_put(e, "mtime_us", json_object_new_uint64(mtime)) < 0 ||
                    sbx_json_put(e, "mode", json_object_new_int((int) mode)) < 0)
                        return ctl_bus_fail("ListFiles", -ENOMEM);
        }
        if ((r = sd_bus_message_exit_container(reply)) < 0 || (r = sd_bus_message_read(reply, "b", &truncated)) < 0)
                return ctl_bus_fail("ListFiles", r);
        if (json) {
                _cleanup_(json_object_putp) json_object *out = json_object_new_object();

                if (!out || sbx_json_put(out, "entries", json_object_get(list)) < 0 ||
                    sbx_json_put(out, "truncated", json_object_new_boolean(truncated)) < 0)
                        return ctl_bus_fail("ListFiles", -ENOMEM);
                ctl_print_json(out);
        } else if (truncated)
                fprintf(stderr, "(truncated: more entries than --limit)\n");
        return 0;
}

int verb_ls(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        FileArgs a = { .verb = argv[0] };
        int r;

        if ((r = start(argc, argv, o, &a, 1, "ListFiles", &bus, &m)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (a.have_depth && (r = sd_bus_message_append(m, "{sv}", "depth", "u", (uint32_t) a.depth)) < 0) ||
            (a.have_limit && (r = sd_bus_message_append(m, "{sv}", "limit", "u", (uint32_t) a.limit)) < 0) ||
            (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("ListFiles", r);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        return print_entries(reply, o->json);
}

int verb_rm(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        FileArgs a = { .verb = argv[0] };
        int r;

        if ((r = start(argc, argv, o, &a, 1, "RemoveFile", &bus, &m)) != CTL_PROCEED)
                return r;
        if ((r = sd_bus_message_open_container(m, 'a', "{sv}")) < 0 ||
            (a.recursive && (r = sd_bus_message_append(m, "{sv}", "recursive", "b", 1)) < 0) ||
            (r = sd_bus_message_close_container(m)) < 0)
                return ctl_bus_fail("RemoveFile", r);
        return ctl_bus_call(bus, m, 0, o, &reply) < 0 ? CTL_EXIT_FAILURE : 0;
}
