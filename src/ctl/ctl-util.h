/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "macro.h"

/* Global options of xagent-sandboxctl; every command accepts them after its name too. */
typedef struct CtlOptions {
        bool json;
        bool ask_password;      /* on a terminal, unless --no-ask-password */
        const char *owner;      /* --owner USER: another user's sandbox, through its object */
} CtlOptions;

/* Exit statuses: 0 success, 1 any failure (a refused call, a local error, a verdict
 * other than "match"), 2 a usage error. */
#define CTL_EXIT_FAILURE 1
#define CTL_EXIT_USAGE 2

/* ctl_parse_args() returns this when the command should go on. */
#define CTL_PROCEED (-1)

/* Long options every command shares; commands number their own from 0x200. */
enum {
        CTL_ARG_JSON = 0x100,
        CTL_ARG_NO_ASK_PASSWORD,
        CTL_ARG_VERSION,
        CTL_ARG_OWNER,
};
#define CTL_COMMON_OPTIONS                                                      \
        { "help",            no_argument, NULL, 'h'                     },      \
        { "json",            no_argument, NULL, CTL_ARG_JSON            },      \
        { "no-ask-password", no_argument, NULL, CTL_ARG_NO_ASK_PASSWORD },     \
        { "owner",     required_argument, NULL, CTL_ARG_OWNER           }

/* A command's handler for its own options: returns CTL_PROCEED or an exit status. */
typedef int (*CtlOptionHandler)(int c, const char *arg, void *userdata);

/* Parses a command's argv (argv[0] = the command) with getopt_long: the shared options,
 * then handler for the rest (may be NULL). --help prints the command's help. Afterwards
 * between min_args and max_args arguments must remain, from optind on. Returns
 * CTL_PROCEED or the exit status to return now. */
int ctl_parse_args(int argc, char **argv, const struct option *options, CtlOptions *o,
                   CtlOptionHandler handler, void *userdata, int min_args, int max_args);

/* Prints "xagent-sandboxctl: <message>" and the command's usage line; returns 2. */
int ctl_usage_error(const char *verb, const char *fmt, ...) _printf_(2, 3);

/* Parses a decimal number in [min, max] for option name; usage error otherwise. */
int ctl_parse_uint(const char *verb, const char *name, const char *s, uint64_t min, uint64_t max,
                   uint64_t *ret);


/* Prints a local failure — "xagent-sandboxctl: <D-Bus error name>: <message>" as the
 * daemon would have named it, or the plain message for local I/O — and returns 1. */
int ctl_fail(const char *what, int r, const SbxError *error);

/* How failures are printed on standard error: for people, "xagent-sandboxctl: NAME:
 * MESSAGE" (ctl_error) or "xagent-sandboxctl: MESSAGE" (ctl_error_unnamed); with
 * --json (ctl_errors_as_json), whichever of the two, one line of JSON
 * {"error": NAME, "message": MESSAGE}. NAME is a D-Bus error name, or "usage" for a
 * usage error (which also carries "usage": the command's usage line). */
extern bool ctl_errors_as_json;
void ctl_error(const char *name, const char *fmt, ...) _printf_(2, 3);
void ctl_error_unnamed(const char *name, const char *fmt, ...) _printf_(2, 3);

/* The D-Bus name sd-bus gives a local errno (org.freedesktop.DBus.Error.NoMemory,
 * System.Error.ENOTDIR, ...), for failures that come with no name of their own. The
 * string is static or lives until the program ends. */
const char *ctl_errno_name(int r);

/* Writes all n bytes to fd (again after EINTR); 0 or a negative errno. */
int ctl_write_all(int fd, const void *p, size_t n);

/* Prints a JSON value for programs (pretty, '/' unescaped) on standard output. */
struct json_object;
void ctl_print_json(struct json_object *j);

/* Prints an a{sv} read as a JSON object: as JSON, or for people one "key: value" line
 * per value (a list: one line per item; a struct's fields joined by ':'). */
void ctl_print_dict(struct json_object *dict, bool json);
