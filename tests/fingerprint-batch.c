/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The C side of tests/fingerprint-oracle.py. Modes (X.Y: a Python version):
 *   specs X.Y    stdin: one JSON spec per line (xagent from_parts() arguments;
 *                env as a list of pairs, a later key wins); stdout per line:
 *                "<hex of the canonical bytes> <fingerprint>" under Python X.Y,
 *                or "error" when sbx_spec_normalize() refuses the spec.
 *   json X.Y     the same for specs in this service's JSON format, through
 *                sbx_spec_from_json_string() and sbx_spec_complete() (the
 *                contract level; default image "img:default").
 *   ints         stdin: one JSON string per line; stdout: "ok <value>",
 *                "EINVAL" or "ERANGE" from sbx_py_int_parse().
 *   strings X.Y  stdin: one JSON string per line; stdout: its repr().
 *   ranges X.Y   stdout: the non-printable ranges of X.Y's table, "<first> <last>"
 *                in hex, one per line.
 *   code-points X.Y
 *                stdout for every code point U+0001…U+10FFFF but surrogates:
 *                "<repr>\t<decimal value or -1>\t<space 0/1>\t<printable 0/1>". */

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "json-util.h"
#include "fingerprint.h"
#include "macro.h"
#include "pyint.h"
#include "pyrepr.h"
#include "spec-json.h"
#include "unicode-tables.h"
#include "unicode.h"

static SbxPythonVersion version = SBX_PYTHON_DEFAULT;


static int get_string(json_object *o, const char **ret) {
        if (json_object_is_type(o, json_type_null)) {
                *ret = NULL;
                return 0;
        }
        if (!json_object_is_type(o, json_type_string))
                return -EINVAL;
        /* SbxSpec strings are C strings: an embedded NUL cannot be represented. */
        if ((size_t) json_object_get_string_len(o) != strlen(json_object_get_string(o)))
                return -EINVAL;
        *ret = json_object_get_string(o);
        return 0;
}

static int get_member_string(json_object *obj, const char *key, const char **ret) {
        json_object *o;

        if (!json_object_object_get_ex(obj, key, &o))
                return -EINVAL;
        return get_string(o, ret);
}

static int get_tuple_string(json_object *tuple, size_t i, const char **ret) {
        const char *s;
        int r = get_string(json_object_array_get_idx(tuple, i), &s);

        if (r < 0 || !s)
                return -EINVAL;
        *ret = s;
        return 0;
}

static int64_t get_member_int(json_object *obj, const char *key) {
        json_object *o;

        return json_object_object_get_ex(obj, key, &o) ? json_object_get_int64(o) : 0;
}

static json_object *get_array(json_object *obj, const char *key) {
        json_object *o;

        return json_object_object_get_ex(obj, key, &o) && json_object_is_type(o, json_type_array) ? o : NULL;
}

static int parse_lists(json_object *obj, SbxSpec *spec) {
        json_object *a;
        int r;

        if ((a = get_array(obj, "env")))
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *t = json_object_array_get_idx(a, i);
                        const char *k, *v;

                        if ((r = get_tuple_string(t, 0, &k)) < 0 || (r = get_tuple_string(t, 1, &v)) < 0 ||
                            (r = sbx_spec_add_env(spec, k, v)) < 0)
                                return r;
                }
        if ((a = get_array(obj, "volumes")))
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *t = json_object_array_get_idx(a, i);
                        const char *h, *g, *m;

                        if ((r = get_tuple_string(t, 0, &h)) < 0 || (r = get_tuple_string(t, 1, &g)) < 0 ||
                            (r = get_tuple_string(t, 2, &m)) < 0 || (r = sbx_spec_add_volume(spec, h, g, m)) < 0)
                                return r;
                }
        if ((a = get_array(obj, "ports")))
                for (size_t i = 0; i < json_object_array_length(a); i++) {
                        json_object *t = json_object_array_get_idx(a, i);

                        r = sbx_spec_add_port(spec, json_object_get_int64(json_object_array_get_idx(t, 0)),
                                              json_object_get_int64(json_object_array_get_idx(t, 1)));
                        if (r < 0)
                                return r;
                }
        return 0;
}

static int parse_spec(json_object *obj, SbxSpec **ret) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = sbx_spec_new();
        const char *type, *image, *snapshot_id, *working_dir;
        json_object *o;
        int r;

        if (!spec)
                return -ENOMEM;
        if ((r = get_member_string(obj, "template_type", &type)) < 0 ||
            (r = get_member_string(obj, "image", &image)) < 0 ||
            (r = get_member_string(obj, "snapshot_id", &snapshot_id)) < 0 ||
            (r = get_member_string(obj, "working_dir", &working_dir)) < 0)
                return r;
        if (!type || (!streq(type, "image") && !streq(type, "snapshot")))
                return -EINVAL;
        spec->template_type = streq(type, "image") ? SBX_TEMPLATE_IMAGE : SBX_TEMPLATE_SNAPSHOT;
        if ((image && !(spec->image = strdup(image))) ||
            (snapshot_id && !(spec->snapshot_id = strdup(snapshot_id))) ||
            (working_dir && !(spec->working_dir = strdup(working_dir))))
                return -ENOMEM;
        spec->cpus = get_member_int(obj, "cpus");
        spec->memory = get_member_int(obj, "memory");
        spec->network_isolated = json_object_object_get_ex(obj, "network_isolated", &o) &&
                                 json_object_get_boolean(o);
        if ((r = parse_lists(obj, spec)) < 0)
                return r;
        *ret = TAKE_PTR(spec);
        return 0;
}

static void print_hex(const char *s) {
        for (; *s; s++)
                printf("%02x", (unsigned char) *s);
}

static int print_spec(const SbxSpec *spec) {
        _cleanup_free_ char *canonical = NULL;
        char fp[SBX_FINGERPRINT_HEX_LEN + 1];
        int r;

        if ((r = sbx_spec_repr(spec, version, &canonical)) < 0 || (r = sbx_spec_fingerprint(spec, version, fp)) < 0)
                return r;
        print_hex(canonical);
        printf(" %s\n", fp);
        return 0;
}

static int run_spec(const char *line) {
        _cleanup_(json_object_putp) json_object *obj = json_tokener_parse(line);
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;
        int r;

        if (!obj)
                return -EBADMSG;
        if ((r = parse_spec(obj, &spec)) < 0)
                return r;
        if (sbx_spec_normalize(spec, NULL) < 0) {
                puts("error");
                return 0;
        }
        return print_spec(spec);
}

static int run_json(const char *line) {
        _cleanup_(sbx_spec_freep) SbxSpec *spec = NULL;

        if (sbx_spec_from_json_string(line, &spec, NULL) < 0 || sbx_spec_complete(spec, "img:default", NULL) < 0) {
                puts("error");
                return 0;
        }
        return print_spec(spec);
}

static int run_int(const char *line) {
        _cleanup_(json_object_putp) json_object *obj = json_tokener_parse(line);
        const char *s;
        int64_t v;
        int r;

        if (!obj || get_string(obj, &s) < 0 || !s)
                return -EBADMSG;
        r = sbx_py_int_parse(s, &v);
        if (r == -EINVAL)
                puts("EINVAL");
        else if (r == -ERANGE)
                puts("ERANGE");
        else if (r < 0)
                return r;
        else
                printf("ok %" PRIi64 "\n", v);
        return 0;
}

static int run_string(const char *line) {
        _cleanup_(json_object_putp) json_object *obj = json_tokener_parse(line);
        _cleanup_free_ char *repr = NULL;
        const char *s;
        int r;

        if (!obj || get_string(obj, &s) < 0 || !s)
                return -EBADMSG;
        if ((r = sbx_pyrepr_str_to_string(version, s, &repr)) < 0)
                return r;
        puts(repr);
        return 0;
}

static void print_ranges(void) {
        const SbxUnicodeNonprintable *t = &sbx_unicode_nonprintable[version];

        for (size_t i = 0; i < t->n_ranges; i++)
                printf("%" PRIx32 " %" PRIx32 "\n", t->ranges[i].first, t->ranges[i].last);
}

static int run_code_points(void) {
        for (uint32_t cp = 1; cp <= 0x10ffff; cp++) {
                _cleanup_free_ char *repr = NULL;
                char utf8[5] = {};
                int r;

                if (cp >= 0xd800 && cp <= 0xdfff)
                        continue;
                if (cp < 0x80)
                        utf8[0] = (char) cp;
                else if (cp < 0x800) {
                        utf8[0] = (char) (0xc0 | (cp >> 6));
                        utf8[1] = (char) (0x80 | (cp & 0x3f));
                } else if (cp < 0x10000) {
                        utf8[0] = (char) (0xe0 | (cp >> 12));
                        utf8[1] = (char) (0x80 | ((cp >> 6) & 0x3f));
                        utf8[2] = (char) (0x80 | (cp & 0x3f));
                } else {
                        utf8[0] = (char) (0xf0 | (cp >> 18));
                        utf8[1] = (char) (0x80 | ((cp >> 12) & 0x3f));
                        utf8[2] = (char) (0x80 | ((cp >> 6) & 0x3f));
                        utf8[3] = (char) (0x80 | (cp & 0x3f));
                }
                if ((r = sbx_pyrepr_str_to_string(version, utf8, &repr)) < 0)
                        return r;
                printf("%s\t%d\t%d\t%d\n", repr, sbx_unicode_decimal_value(cp), sbx_unicode_is_space(cp),
                       sbx_unicode_is_printable(version, cp));
        }
        return 0;
}

int main(int argc, char *argv[]) {
        int (*run)(const char *line);
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        ssize_t n;

        if (argc < 2 || argc > 3 || (argc == 3 && sbx_python_version_from_string(argv[2], &version) < 0))
                goto usage;
        if (streq(argv[1], "code-points"))
                return run_code_points() < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (streq(argv[1], "ranges")) {
                print_ranges();
                return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
        }
        if (streq(argv[1], "specs"))
                run = run_spec;
        else if (streq(argv[1], "json"))
                run = run_json;
        else if (streq(argv[1], "strings"))
                run = run_string;
        else if (streq(argv[1], "ints"))
                run = run_int;
        else
                goto usage;

        while ((n = getline(&line, &size, stdin)) > 0) {
                int r = run(line);

                if (r < 0) {
                        fprintf(stderr, "fingerprint-batch: cannot process %s: %s\n", line, strerror(-r));
                        return EXIT_FAILURE;
                }
        }
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
usage:
        fprintf(stderr, "usage: fingerprint-batch specs|json|ints|strings|ranges|code-points [3.11|3.12|3.13|3.14]\n");
        return EXIT_FAILURE;
}
