/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <unistd.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>
#include <systemd/sd-bus.h>

#include "bus-error.h"
#include "ctl-help.h"
#include "ctl-util.h"
#include "json-util.h"

bool ctl_errors_as_json = false;

/* {"error": name, "message": message[, "usage": usage]} on one line. */
static void print_json_error(const char *name, const char *message, const char *usage) {
        _cleanup_(json_object_putp) json_object *j = json_object_new_object();

        if (!j || sbx_json_put(j, "error", json_object_new_string(name)) < 0 ||
            sbx_json_put(j, "message", json_object_new_string(message)) < 0 ||
            (usage && sbx_json_put(j, "usage", json_object_new_string(usage)) < 0)) {
                /* out of memory: the plain line is still worth printing */
                fprintf(stderr, "xagent-sandboxctl: %s: %s\n", name, message);
                return;
        }
        fprintf(stderr, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void verror(const char *name, bool named, const char *usage, const char *fmt, va_list ap) {
        _cleanup_free_ char *message = NULL;

        if (vasprintf(&message, fmt, ap) < 0) {
                fprintf(stderr, "xagent-sandboxctl: %s\n", name);
                return;
        }
        if (ctl_errors_as_json) {
                _cleanup_free_ char *full = NULL;

                if (usage && asprintf(&full, "xagent-sandboxctl %s", usage) < 0)
                        full = NULL;
                print_json_error(name, message, full ?: usage);
                return;
        }
        if (named)
                fprintf(stderr, "xagent-sandboxctl: %s: %s\n", name, message);
        else
                fprintf(stderr, "xagent-sandboxctl: %s\n", message);
        if (usage)
                fprintf(stderr, "usage: xagent-sandboxctl %s\n", usage);
}

void ctl_error(const char *name, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        verror(name, true, NULL, fmt, ap);
        va_end(ap);
}

void ctl_error_unnamed(const char *name, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        verror(name, false, NULL, fmt, ap);
        va_end(ap);
}

const char *ctl_errno_name(int r) {
        static sd_bus_error e = SD_BUS_ERROR_NULL;

        /* One error at a time is printed; the previous name is no longer needed. */
        sd_bus_error_free(&e);
        (void) sd_bus_error_set_errno(&e, r < 0 ? -r : r);
        return e.name ?: SD_BUS_ERROR_FAILED;
}

static int common_option(int c, const char *verb, CtlOptions *o) {
        switch (c) {
        case 'h':
                ctl_verb_help(verb);
                return 0;
        case CTL_ARG_JSON:
                o->json = true;
                return CTL_PROCEED;
        case CTL_ARG_NO_ASK_PASSWORD:
                o->ask_password = false;
                return CTL_PROCEED;
        case CTL_ARG_OWNER:
                o->owner = optarg;
                return CTL_PROCEED;
        default:
                return CTL_EXIT_USAGE;
        }
}

/* getopt's complaint, in our words (its own would start with the command's name). */
static int bad_option(int c, char **argv) {
        const char *opt = argv[optind - 1];

        if (c == ':')
                return ctl_usage_error(argv[0], "option '%s' needs an argument", opt);
        return ctl_usage_error(argv[0], "unknown option '%s'", opt);
}

int ctl_parse_args(int argc, char **argv, const struct option *options, CtlOptions *o,
                   CtlOptionHandler handler, void *userdata, int min_args, int max_args) {
        int c, r, n;

        optind = 0;     /* a full reset: main() has used getopt on the whole argv */
        opterr = 0;
        while ((c = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                if (c == '?' || c == ':')
                        r = bad_option(c, argv);
                else if (c >= 0x200 && handler)
                        r = handler(c, optarg, userdata);
                else
                        r = common_option(c, argv[0], o);
                if (r != CTL_PROCEED)
                        return r;
        }
        n = argc - optind;
        if (n < min_args)
                return ctl_usage_error(argv[0], "too few arguments");
        if (n > max_args)
                return ctl_usage_error(argv[0], "too many arguments");
        return CTL_PROCEED;
}

int ctl_usage_error(const char *verb, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        verror("usage", false, ctl_verb_usage(verb), fmt, ap);
        va_end(ap);
        return CTL_EXIT_USAGE;
}

int ctl_parse_uint(const char *verb, const char *name, const char *s, uint64_t min, uint64_t max,
                   uint64_t *ret) {
        uint64_t v;
        char *end;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (s[0] < '0' || s[0] > '9' || *end || errno != 0 || v < min || v > max)
                return ctl_usage_error(verb, "%s: '%s' is not a number from %" PRIu64 " to %" PRIu64,
                                       name, s, min, max);
        *ret = v;
        return CTL_PROCEED;
}

int ctl_fail(const char *what, int r, const SbxError *error) {
        if (sbx_error_is_set(error) && error->kind == SBX_ERROR_IO)
                ctl_error_unnamed(sbx_error_bus_name(error->kind), "%s", error->message ?: what);
        else if (sbx_error_is_set(error))
                ctl_error(sbx_error_bus_name(error->kind), "%s", error->message ?: what);
        else
                ctl_error_unnamed(ctl_errno_name(r), "%s: %s", what, strerror(-r));
        return CTL_EXIT_FAILURE;
}

void ctl_print_json(struct json_object *j) {
        puts(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
}

/* A struct's fields joined by ':', a list inside it by ',': 8080:80, /h:/g:rw, /home/u:ro,rw. */
static void print_flat(json_object *v, const char *sep) {
        if (!json_object_is_type(v, json_type_array)) {
                fputs(json_object_get_string(v), stdout);
                return;
        }
        for (size_t j = 0; j < json_object_array_length(v); j++) {
                if (j > 0)
                        fputs(sep, stdout);
                print_flat(json_object_array_get_idx(v, j), ",");
        }
}

/* One value for people: lists one item a line under the same key. */
static void print_value(const char *key, json_object *v) {
        switch (json_object_get_type(v)) {
        case json_type_boolean:
                printf("%s: %s\n", key, json_object_get_boolean(v) ? "yes" : "no");
                break;
        case json_type_object: {
                bool any = false;
                json_object_object_foreach(v, k, item) {
                        printf("%s: %s=%s\n", key, k, json_object_get_string(item));
                        any = true;
                }
                if (!any)
                        printf("%s:\n", key);
                break;
        }
        case json_type_array: {
                size_t n = json_object_array_length(v);
                if (n == 0)
                        printf("%s:\n", key);
                for (size_t i = 0; i < n; i++) {
                        printf("%s: ", key);
                        print_flat(json_object_array_get_idx(v, i), ":");
                        putchar('\n');
                }
                break;
        }
        default:
                printf("%s:%s%s\n", key, *json_object_get_string(v) ? " " : "", json_object_get_string(v));
        }
}

void ctl_print_dict(struct json_object *dict, bool json) {
        if (json) {
                ctl_print_json(dict);
                return;
        }
        json_object_object_foreach(dict, key, value)
                print_value(key, value);
}

int ctl_write_all(int fd, const void *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                p = (const char *) p + k;
                n -= (size_t) k;
        }
        return 0;
}
