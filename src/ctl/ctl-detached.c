/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* ps, output, attach: detached processes (exec --detach, ctl-exec.c).
 *
 * ps lists a sandbox's exec objects (ListExecs). output prints what a detached
 * process's output keeps (ReadOutput, each stream to this process's own), and with
 * --follow goes on until the process ended: through StreamOutput (descriptors: two
 * pipes of this process's, the bytes in no bus message) from where the first read
 * ended, or, where no session can be had (LimitsExceeded), by polling ReadOutput;
 * reading it to its end after the end lets its object go, as the service does.
 * attach passes this process's standard descriptors to Attach and waits for the
 * process's end: the service replays the kept output, then relays both ways. Leaving (^C, or anything that ends this
 * process) ends the attach, never the process. An EXEC is the id exec --detach
 * printed or the object's whole path. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl-bus.h"
#include "ctl-exec.h"
#include "ctl-table.h"
#include "ctl-verbs.h"
#include "json-util.h"
#include "ring.h"

#define EXEC_ID_LEN 32
#define FOLLOW_INTERVAL_NSEC (500L * 1000 * 1000)
#define ENDED_WAIT_TRIES 30U

/* The object path of EXEC: an id (32 hex digits) or the path itself. */
static int exec_path(const char *verb, const char *arg, char **ret) {
        const char *id = startswith(arg, CTL_EXEC_PREFIX) ?: arg;

        if (strlen(id) != EXEC_ID_LEN || strspn(id, "0123456789abcdef") != EXEC_ID_LEN)
                return ctl_usage_error(verb, "'%s' is not an exec id (32 hex digits) or an exec object's path", arg);
        if (asprintf(ret, CTL_EXEC_PREFIX "%s", id) < 0)
                return ctl_bus_fail(verb, -ENOMEM);
        return CTL_PROCEED;
}

static const struct option common_options[] = { CTL_COMMON_OPTIONS, {} };

/* ps ------------------------------------------------------------------------ */

static int print_execs(sd_bus_message *reply, bool json) {
        static const char *const titles[] = { "ID", "COMMAND", "STATE" };
        _cleanup_(json_object_putp) json_object *list = json_object_new_array();
        _cleanup_(ctl_table_freep) CtlTable *t = ctl_table_new(3, titles);
        const char *path, *argv0;
        int running, r;
        int32_t status;

        if (!list || !t)
                return ctl_bus_fail("ListExecs", -ENOMEM);
        if ((r = sd_bus_message_enter_container(reply, 'a', "(osbi)")) < 0)
                return ctl_bus_fail("ListExecs", r);
        while ((r = sd_bus_message_read(reply, "(osbi)", &path, &argv0, &running, &status)) > 0) {
                char state[32];
                json_object *e = json_object_new_object();

                if (running)
                        snprintf(state, sizeof state, "running");
                else
                        snprintf(state, sizeof state, "exited %" PRIi32, status);
                if (!e || json_object_array_add(list, e) < 0 ||
                    json_object_object_add(e, "exec", json_object_new_string(path)) < 0 ||
                    json_object_object_add(e, "id", json_object_new_string(ctl_exec_id(path))) < 0 ||
                    json_object_object_add(e, "argv0", json_object_new_string(argv0)) < 0 ||
                    json_object_object_add(e, "running", json_object_new_boolean(running)) < 0 ||
                    json_object_object_add(e, "exit_status", json_object_new_int(status)) < 0 ||
                    ctl_table_add_row(t, (const char *const[]) { ctl_exec_id(path), argv0, state }) < 0)
                        return ctl_bus_fail("ListExecs", -ENOMEM);
        }
        if (r < 0)
                return ctl_bus_fail("ListExecs", r);
        if (json)
                ctl_print_json(list);
        else
                ctl_table_print(t, stdout, true);
        return 0;
}

int verb_ps(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        int r;

        if ((r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 1, 1)) != CTL_PROCEED)
                return r;
        if (ctl_bus_connect(o, &bus) < 0 || ctl_bus_new_sandbox_call(bus, o, "ListExecs", argv[optind], &m) < 0 ||
            ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        return print_execs(reply, o->json);
}

/* output ---------------------------------------------------------------------- */

enum { ARG_FOLLOW = 0x200 };

static int output_option(int c, const char *arg, void *userdata) {
        *(bool *) userdata = true;
        return CTL_PROCEED;
}

/* One ReadOutput from *offset: both streams written out (unless passed: what a
 * StreamOutput that ran to the process's end passed on already); *running, *got:
 * whether it runs (or more is kept) and whether this call returned anything. */
static int read_once(sd_bus *bus, const char *path, const CtlOptions *o, uint64_t *offset, bool passed,
                     bool *running, bool *got) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        const void *out, *err;
        size_t n_out, n_err;
        int more, r;

        if ((r = sd_bus_message_new_method_call(bus, &m, CTL_BUS_SERVICE, path, CTL_EXEC_INTERFACE,
                                                "ReadOutput")) < 0 ||
            (r = sd_bus_message_append(m, "t", *offset)) < 0)
                return ctl_bus_fail("ReadOutput", r);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_read_array(reply, 'y', &out, &n_out)) < 0 ||
            (r = sd_bus_message_read_array(reply, 'y', &err, &n_err)) < 0 ||
            (r = sd_bus_message_read(reply, "tb", offset, &more)) < 0)
                return ctl_bus_fail("ReadOutput", r);
        if (!passed && ((n_out > 0 && ctl_write_all(STDOUT_FILENO, out, n_out) < 0) ||
                        (n_err > 0 && ctl_write_all(STDERR_FILENO, err, n_err) < 0)))
                return ctl_bus_fail("standard output", -EIO);
        *running = more;
        *got = n_out > 0 || n_err > 0;
        return CTL_PROCEED;
}

/* Both pipes to this process's stdout and stderr until both ended; the bytes of each. */
static int copy_streams(int fds[2], uint64_t counts[2]) {
        static uint8_t buf[65536];

        while (fds[0] >= 0 || fds[1] >= 0) {
                struct pollfd p[2] = { { .fd = fds[0], .events = POLLIN }, { .fd = fds[1], .events = POLLIN } };

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                for (int s = 0; s < 2; s++) {
                        ssize_t k;

                        if (!p[s].revents)
                                continue;
                        k = read(fds[s], buf, sizeof buf);
                        if (k < 0 && (errno == EINTR || errno == EAGAIN))
                                continue;
                        if (k <= 0) {
                                fds[s] = safe_close(fds[s]);
                                continue;
                        }
                        if (ctl_write_all(s == 0 ? STDOUT_FILENO : STDERR_FILENO, buf, (size_t) k) < 0)
                                return -EIO;
                        counts[s] += (uint64_t) k;
                }
        }
        return 0;
}

/* Whether the process ended, by its ExitStatus, asked for up to ENDED_WAIT_TRIES tenths
 * of a second: the service learns of an end by a poll about once a second. */
static bool process_ended(sd_bus *bus, const char *path) {
        for (unsigned i = 0; i < ENDED_WAIT_TRIES; i++) {
                int32_t status = -1;

                if (sd_bus_get_property_trivial(bus, CTL_BUS_SERVICE, path, CTL_EXEC_INTERFACE, "ExitStatus", NULL,
                                                'i', &status) >= 0 && status >= 0)
                        return true;
                (void) nanosleep(&(struct timespec) { .tv_nsec = 100L * 1000 * 1000 }, NULL);
        }
        return false;
}

/* StreamOutput from *offset until the process ended, into two pipes copied out here;
 * *offset then counted on, *ended whether the process had ended once the session did
 * (else the session was cut short). CTL_PROCEED when it ran, 0 when no session can be
 * had now (its 4 sessions run: LimitsExceeded), else the exit status. */
static int stream_follow(sd_bus *bus, const char *path, uint64_t *offset, bool *ended) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        int out[2] = { -1, -1 }, err[2] = { -1, -1 }, fds[2], r;
        uint64_t counts[2] = {};

        if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0) {
                r = -errno;
                goto fail;
        }
        if ((r = sd_bus_message_new_method_call(bus, &m, CTL_BUS_SERVICE, path, CTL_EXEC_INTERFACE,
                                                "StreamOutput")) < 0 ||
            (r = sd_bus_message_append(m, "hha{sv}", out[1], err[1], 2, "offset", "t", *offset,
                                       "follow", "b", 1)) < 0)
                goto fail;
        r = sd_bus_call(bus, m, CTL_BUS_CALL_TIMEOUT_USEC, &error, &reply);
        /* The message holds copies of the write ends: the end comes once it and we let go. */
        m = sd_bus_message_unref(m);
        out[1] = safe_close(out[1]);
        err[1] = safe_close(err[1]);
        if (r < 0 && sd_bus_error_has_name(&error, SD_BUS_ERROR_LIMITS_EXCEEDED)) {
                r = 0;
                goto fail;
        }
        if (r < 0) {
                ctl_error(error.name, "%s", error.message ?: strerror(-r));
                safe_close(out[0]);
                safe_close(err[0]);
                return CTL_EXIT_FAILURE;
        }
        fds[0] = out[0];
        fds[1] = err[0];
        r = copy_streams(fds, counts);
        safe_close(fds[0]);
        safe_close(fds[1]);
        if (r < 0)
                return ctl_bus_fail("standard output", r);
        *offset = sbx_ring_cursor_advance(*offset, counts);
        *ended = process_ended(bus, path);
        return CTL_PROCEED;
fail:
        for (int i = 0; i < 2; i++) {
                safe_close(out[i]);
                safe_close(err[i]);
        }
        return r == 0 ? 0 : ctl_bus_fail("StreamOutput", r);
}

int verb_output(int argc, char **argv, CtlOptions *o) {
        static const struct option options[] = {
                CTL_COMMON_OPTIONS,
                { "follow", no_argument, NULL, ARG_FOLLOW },
                {}
        };
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_free_ char *path = NULL;
        bool follow = false, running = true, got = true, streamed = false, passed = false;
        uint64_t offset = 0;
        int r;

        if ((r = ctl_parse_args(argc, argv, options, o, output_option, &follow, 1, 1)) != CTL_PROCEED ||
            (r = exec_path(argv[0], argv[optind], &path)) != CTL_PROCEED)
                return r;
        if (o->json)
                return ctl_usage_error(argv[0], "--json: the output is the process's own bytes");
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        /* Without --follow: what is kept now (a reply holds at most 4 MiB a stream). */
        while (running && (got || follow)) {
                if ((r = read_once(bus, path, o, &offset, passed, &running, &got)) != CTL_PROCEED)
                        break;
                if (follow && running && !streamed) {
                        /* Once. When it ran to the process's end, the reads after it only
                         * say the end (and let the object go): the stream skips what the
                         * process overwrote while it was read, so the cursor counted from
                         * it may be behind, and what they return was passed on already. */
                        streamed = true;
                        if ((r = stream_follow(bus, path, &offset, &passed)) != CTL_PROCEED && r != 0)
                                break;
                        got = true;
                        continue;
                }
                if (follow && running && !got)
                        (void) nanosleep(&(struct timespec) { .tv_nsec = FOLLOW_INTERVAL_NSEC }, NULL);
                r = 0;
        }
        return r == CTL_PROCEED ? 0 : r;
}

/* attach ---------------------------------------------------------------------- */

int verb_attach(int argc, char **argv, CtlOptions *o) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL, *reply = NULL;
        _cleanup_free_ char *path = NULL;
        sigset_t none;
        int r;

        if ((r = ctl_parse_args(argc, argv, common_options, o, NULL, NULL, 1, 1)) != CTL_PROCEED ||
            (r = exec_path(argv[0], argv[optind], &path)) != CTL_PROCEED)
                return r;
        if (ctl_bus_connect(o, &bus) < 0)
                return CTL_EXIT_FAILURE;
        if ((r = sd_bus_message_new_method_call(bus, &m, CTL_BUS_SERVICE, path, CTL_EXEC_INTERFACE, "Attach")) < 0 ||
            (r = sd_bus_message_append(m, "hhh", STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO)) < 0)
                return ctl_bus_fail("Attach", r);
        if (ctl_bus_call(bus, m, 0, o, &reply) < 0)
                return CTL_EXIT_FAILURE;
        /* No signal is forwarded: ^C ends this attach, not the process. */
        sigemptyset(&none);
        return ctl_exec_wait_exited(bus, path, &none);
}
