/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <stdio.h>

#include "policy.h"

static const SbxOwner alice = { .uid = 1000, .gid = 1000, .name = "alice", .home = "/home/alice" };

static void assert_error(int r, SbxError *e, SbxErrorKind kind, const char *needle) {
        ck_assert_int_lt(r, 0);
        ck_assert_msg(e->kind == kind, "kind %s, expected %s (message \"%s\")",
                      sbx_error_kind_name(e->kind), sbx_error_kind_name(kind), e->message);
        ck_assert_int_eq(r, -sbx_error_errno(kind));
        ck_assert_msg(e->message && strstr(e->message, needle), "message \"%s\" lacks \"%s\"", e->message, needle);
        sbx_error_free(e);
}

static void assert_violation(int r, SbxError *e, const char *needle) {
        assert_error(r, e, SBX_ERROR_POLICY_VIOLATION, needle);
}

static SbxPolicy *parse_ok(const char *json) {
        SbxError e = SBX_ERROR_NULL;
        SbxPolicy *p = NULL;
        int r = sbx_policy_parse(json, &p, &e);

        ck_assert_msg(r == 0, "parse of %s failed: %s", json, e.message);
        ck_assert_ptr_nonnull(p);
        return p;
}

static SbxSpec *spec_new(const char *image) {
        SbxSpec *s = sbx_spec_new();
        ck_assert_ptr_nonnull(s);
        s->template_type = SBX_TEMPLATE_IMAGE;
        s->image = strdup(image);
        return s;
}

static void spec_finish(SbxSpec *s) {
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_spec_normalize(s, &e), 0);
        ck_assert_int_eq(sbx_spec_check_admissible(s, &e), 0);
}

static void assert_policy_equal(const SbxPolicy *a, const SbxPolicy *b) {
        ck_assert_str_eq(a->default_image, b->default_image);
        ck_assert_int_eq(a->n_allowed_images, b->n_allowed_images);
        for (size_t i = 0; i < a->n_allowed_images; i++)
                ck_assert_str_eq(a->allowed_images[i], b->allowed_images[i]);
        ck_assert_int_eq(a->n_volume_roots, b->n_volume_roots);
        for (size_t i = 0; i < a->n_volume_roots; i++) {
                ck_assert_str_eq(a->volume_roots[i].path, b->volume_roots[i].path);
                ck_assert_uint_eq(a->volume_roots[i].modes, b->volume_roots[i].modes);
        }
        ck_assert_int_eq(a->max_cpus, b->max_cpus);
        ck_assert_int_eq(a->max_memory_mib, b->max_memory_mib);
        ck_assert_int_eq(a->max_sandboxes_per_user, b->max_sandboxes_per_user);
        ck_assert_int_eq(a->pids_limit, b->pids_limit);
        ck_assert_int_eq(a->host_port_min, b->host_port_min);
        ck_assert_str_eq(a->publish_address, b->publish_address);
        ck_assert_int_eq(a->python_version, b->python_version);
}

START_TEST(test_defaults) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();

        ck_assert_ptr_nonnull(d);
        ck_assert_str_eq(d->default_image, "xprobe/xagent-sandbox:latest");
        ck_assert_str_eq(d->default_image, SBX_POLICY_DEFAULT_IMAGE);
        ck_assert_int_eq(d->n_allowed_images, 1);
        ck_assert_str_eq(d->allowed_images[0], "*");
        ck_assert_int_eq(d->n_volume_roots, 1);
        ck_assert_str_eq(d->volume_roots[0].path, "%h");
        ck_assert_uint_eq(d->volume_roots[0].modes, SBX_VOLUME_MODE_RO | SBX_VOLUME_MODE_RW);
        ck_assert_int_eq(d->max_cpus, 4);
        ck_assert_int_eq(d->max_memory_mib, 8192);
        ck_assert_int_eq(d->max_disk_mib, 10240);
        ck_assert_int_eq(d->max_file_bytes, 16 << 20);
        ck_assert_int_eq(d->max_process_output, 1 << 20);
        ck_assert_int_eq(d->max_leases_per_user, 64);
        ck_assert_int_eq(d->max_leases_per_sandbox, 64);
        ck_assert_int_eq(d->observation_max_age, 2);
        ck_assert_int_eq(d->max_sandboxes_per_user, 16);
        ck_assert_int_eq(d->pids_limit, 512);
        ck_assert_int_eq(d->host_port_min, 1024);
        ck_assert_str_eq(d->publish_address, "127.0.0.1");
        ck_assert_int_eq(d->python_version, SBX_PYTHON_3_11);

        static const char *const empties[] = {
                "{}", "  {}  ", "\n{\n}\n", "/* comment */ {}", "{} // trailing comment",
                "// leading\n{ /* inside */ }\n/* after */",
        };
        for (size_t i = 0; i < ELEMENTSOF(empties); i++) {
                _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(empties[i]);
                assert_policy_equal(p, d);
        }
}
END_TEST

/* The shipped, commented example parses and states exactly the built-in defaults. */
START_TEST(test_example_file) {
        const char *root = getenv("SBX_SOURCE_ROOT");
        _cleanup_free_ char *path = NULL;
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f;

        ck_assert_msg(root, "SBX_SOURCE_ROOT is not set");
        ck_assert_int_gt(asprintf(&path, "%s/conf/sandboxd.json", root), 0);
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s", path);
        ck_assert_int_eq(getdelim(&text, &size, '\0', f) > 0, 1);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(text, "//"));
        ck_assert_ptr_nonnull(strstr(text, "/*"));

        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(text);
        assert_policy_equal(p, d);
}
END_TEST

START_TEST(test_parse_all_keys) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"default_image\": \"xprobe/other:1\",\n"
                "  \"allowed_images\": [\"xprobe/*\", \"debian:bookworm*\"],\n"
                "  \"volume_roots\": [ { \"path\": \"%h/work\", \"modes\": [\"rw\"] },\n"
                "                    { \"modes\": [\"ro\", \"ro\"], \"path\": \"/srv/%u/%U/100%%\" } ],\n"
                "  \"max_cpus\": 1024, \"max_memory_mib\": 128, \"max_sandboxes_per_user\": 1,\n"
                "  \"pids_limit\": 4194304, \"host_port_min\": 65535, \"publish_address\": \"::1\",\n"
                "  \"python_version\": \"3.14\" }");

        ck_assert_str_eq(p->default_image, "xprobe/other:1");
        ck_assert_int_eq(p->n_allowed_images, 2);
        ck_assert_str_eq(p->allowed_images[1], "debian:bookworm*");
        ck_assert_int_eq(p->n_volume_roots, 2);
        ck_assert_str_eq(p->volume_roots[0].path, "%h/work");
        ck_assert_uint_eq(p->volume_roots[0].modes, SBX_VOLUME_MODE_RW);
        ck_assert_str_eq(p->volume_roots[1].path, "/srv/%u/%U/100%%");
        ck_assert_uint_eq(p->volume_roots[1].modes, SBX_VOLUME_MODE_RO);
        ck_assert_int_eq(p->max_cpus, 1024);
        ck_assert_int_eq(p->max_memory_mib, 128);
        ck_assert_int_eq(p->max_sandboxes_per_user, 1);
        ck_assert_int_eq(p->pids_limit, 4194304);
        ck_assert_int_eq(p->host_port_min, 65535);
        ck_assert_str_eq(p->publish_address, "::1");
        ck_assert_int_eq(p->python_version, SBX_PYTHON_3_14);

        _cleanup_(sbx_policy_freep) SbxPolicy *disk = parse_ok("{ \"max_disk_mib\": 2048 }");
        ck_assert_int_eq(disk->max_disk_mib, 2048);
        _cleanup_(sbx_policy_freep) SbxPolicy *files = parse_ok("{ \"max_file_bytes\": 4096 }");
        ck_assert_int_eq(files->max_file_bytes, 4096);
        _cleanup_(sbx_policy_freep) SbxPolicy *out = parse_ok("{ \"max_process_output\": 65536 }");
        ck_assert_int_eq(out->max_process_output, 65536);
        _cleanup_(sbx_policy_freep) SbxPolicy *leases = parse_ok("{ \"max_leases_per_user\": 2 }");
        ck_assert_int_eq(leases->max_leases_per_user, 2);
        _cleanup_(sbx_policy_freep) SbxPolicy *off = parse_ok("{ \"observation_max_age\": 0 }");
        ck_assert_int_eq(off->observation_max_age, 0);

        /* empty lists are meaningful: no volumes at all */
        _cleanup_(sbx_policy_freep) SbxPolicy *q = parse_ok("{ \"volume_roots\": [] }");
        ck_assert_int_eq(q->n_volume_roots, 0);
        _cleanup_(sbx_policy_freep) SbxPolicy *r = parse_ok("{ \"publish_address\": \"0.0.0.0\" }");
        ck_assert_str_eq(r->publish_address, "0.0.0.0");
}
END_TEST

static const struct {
        const char *json;
        const char *needle;
} parse_errors[] = {
        /* malformed documents */
        { "",                                   "exactly one JSON object" },
        /* warm pools: the pool named */
        { "{\"warm_pools\": [{\"user\": \"a\", \"spec\": {\"image\": \"x\", \"volumes\": [[\"/h\", \"/g\", "
          "\"ro\"]]}, \"size\": 1}]}",        "warm_pools[0].spec: a warm pool's spec has no volumes" },
        { "{\"warm_pools\": [{\"user\": 1000, \"spec\": {}, \"size\": 1}, {\"user\": 1000, \"spec\": "
          "{\"ports\": [[8080, 80]]}, \"size\": 1}]}", "warm_pools[1].spec: a warm pool's spec has no fixed host port" },
        { "{\"warm_pools\": [{\"user\": 1000, \"spec\": {}, \"size\": 0}]}", "warm_pools[0].size" },
        { "{\"warm_pools\": [{\"user\": 1000, \"spec\": {}}]}", "warm_pools[0].size: missing" },
        { "{\"warm_pools\": [{\"user\": -1, \"spec\": {}, \"size\": 1}]}", "warm_pools[0].user" },
        { "{\"warm_pools\": [{\"user\": 1, \"spec\": {}, \"size\": 1, \"options\": {\"name_prefix\": \"~x\"}}]}",
          "warm_pools[0].options.name_prefix" },
        { "{\"warm_pools\": [{\"user\": 1, \"spec\": {}, \"size\": 1, \"options\": {\"labels\": {}}}]}",
          "warm_pools[0].options.labels: unknown key" },
        { "{\"warm_pools\": {}}",              "warm_pools: must be an array" },
        { "{\"max_pooled\": 5000}",             "max_pooled" },
        { "{",                                  "policy: malformed JSON at line 1" },
        { "{} /* unterminated",                 "unexpected end of input" },
        { "{\n\"max_cpus\": }",                 "malformed JSON at line 2" },
        { "{} {}",                              "policy: malformed JSON" },
        { "{}, {}",                             "exactly one JSON object" },
        { "{}]",                                "exactly one JSON object" },
        { "{} x",                               "malformed JSON" },
        { "[]",                                 "policy: the document must be a JSON object" },
        { "4",                                  "policy: the document must be a JSON object" },
        { "null",                               "policy: the document must be a JSON object" },
        /* keys and types */
        { "{\"max_cpu\": 4}",                   "max_cpu: unknown key" },
        { "{\"max_cpus\": \"4\"}",              "max_cpus: must be a whole number" },
        { "{\"max_cpus\": 4.0}",                "max_cpus: must be a whole number" },
        { "{\"max_cpus\": null}",               "max_cpus: must be a whole number" },
        { "{\"max_cpus\": true}",               "max_cpus: must be a whole number" },
        /* ranges */
        { "{\"max_cpus\": 0}",                  "max_cpus: 0 is outside 1–1024" },
        { "{\"max_cpus\": -1}",                 "max_cpus: -1 is outside" },
        { "{\"max_cpus\": 1025}",               "max_cpus: 1025 is outside" },
        { "{\"max_cpus\": 99999999999999999999999}", "max_cpus:" },
        { "{\"max_memory_mib\": 127}",          "max_memory_mib: 127 is outside 128–" },
        { "{\"max_memory_mib\": 0}",            "max_memory_mib: 0 is outside" },
        { "{\"max_sandboxes_per_user\": 0}",    "max_sandboxes_per_user: 0 is outside 1–65536" },
        { "{\"pids_limit\": 0}",                "pids_limit: 0 is outside 1–4194304" },
        { "{\"max_disk_mib\": 0}",              "max_disk_mib: 0 is outside 1–16777216" },
        { "{\"max_disk_mib\": 1.5}",            "max_disk_mib: must be a whole number" },
        { "{\"max_file_bytes\": 16777217}",     "max_file_bytes: 16777217 is outside 1–16777216" },
        { "{\"max_leases_per_user\": 0}",       "max_leases_per_user: 0 is outside 1–1024" },
        { "{\"max_leases_per_sandbox\": 1025}", "max_leases_per_sandbox: 1025 is outside 1–1024" },
        { "{\"observation_max_age\": 3601}",    "observation_max_age: 3601 is outside 0–3600" },
        { "{\"max_process_output\": 65535}",    "max_process_output: 65535 is outside 65536–67108864" },
        { "{\"max_process_output\": 67108865}", "max_process_output: 67108865 is outside" },
        { "{\"observation_max_age\": -1}",      "observation_max_age: -1 is outside 0–3600" },
        { "{\"pids_limit\": -1}",               "pids_limit: -1 is outside" },
        { "{\"host_port_min\": 0}",             "host_port_min: 0 is outside 1–65535" },
        { "{\"host_port_min\": 65536}",         "host_port_min: 65536 is outside" },
        /* engine (docs/engines.md) */
        { "{\"engine\": \"tcp://h:2376\"}",   "engine: must be an object" },
        { "{\"engine\": {}}",                 "engine.host: missing" },
        { "{\"engine\": {\"host\": \"tcp://h:2376\"}}", "plain TCP is refused" },
        { "{\"engine\": {\"host\": \"tcp://h:2376\", \"tls_ca\": \"/c\", \"tls_cert\": \"/k\"}}",
          "(missing: tls_key)" },
        { "{\"engine\": {\"host\": \"http://h:2375\"}}", "neither unix:///PATH nor tcp://HOST:PORT" },
        { "{\"engine\": {\"host\": \"tcp://h\"}}", "'tcp://h' is not tcp://HOST:PORT" },
        { "{\"engine\": {\"host\": \"tcp://h:0\"}}", "is not tcp://HOST:PORT" },
        { "{\"engine\": {\"host\": \"tcp://h/x:1\"}}", "is not tcp://HOST:PORT" },
        { "{\"engine\": {\"host\": \"unix://rel\"}}", "does not name an absolute socket path" },
        { "{\"engine\": {\"host\": \"unix:///s\", \"tls_ca\": \"/c\"}}", "for a tcp:// host only" },
        { "{\"engine\": {\"host\": \"tcp://h:1\", \"tls_ca\": \"c\"}}", "engine.tls_ca: 'c' is not an absolute" },
        { "{\"engine\": {\"hots\": \"tcp://h:1\"}}", "engine: unknown key 'hots'" },
        { "{\"egress\": []}",                          "egress: must be an object" },
        { "{\"egress\": {\"default\": \"closed\"}}",   "egress.default: 'closed' is not one of" },
        { "{\"egress\": {\"always_deny\": [\"10.0.0.0/33\"]}}", "egress.always_deny[0]: '10.0.0.0/33' is not an address" },
        { "{\"egress\": {\"allowed\": [\"lan\"]}}",     "egress.allowed[0]: 'lan' is not an address" },
        { "{\"egress\": {\"max_rules\": -1}}",          "egress.max_rules: -1 is outside" },
        { "{\"egress\": {\"names\": 1}}",               "egress.names: must be true or false" },
        { "{\"egress\": {\"resolvers\": [\"dns:53\"]}}", "egress.resolvers[0]: 'dns:53' is not ADDRESS[:PORT]" },
        { "{\"egress\": {\"proxy\": 1}}",               "egress.proxy: unknown key" },
        { "{\"engine\": {\"host\": 1}}",      "engine.host: must be a string" },
        /* publish_address */
        { "{\"publish_address\": 1}",           "publish_address: must be a string" },
        { "{\"publish_address\": \"localhost\"}", "publish_address: 'localhost' is not an IPv4 or IPv6" },
        { "{\"publish_address\": \"127.0.0.1:80\"}", "publish_address: '127.0.0.1:80' is not" },
        { "{\"publish_address\": \"fe80::1%eth0\"}", "publish_address: 'fe80::1%eth0' is not" },
        { "{\"publish_address\": \"\"}",        "publish_address: '' is not" },
        { "{\"publish_address\": \"\xff\"}",    "publish_address: is not valid UTF-8" },
        /* images */
        { "{\"default_image\": \"\"}",          "default_image: must not be empty" },
        { "{\"default_image\": \"a b\"}",       "default_image: 'a b' is not printable ASCII" },
        { "{\"default_image\": \"\\u00e9\"}",   "default_image:" },
        { "{\"default_image\": \"a\\u0000b\"}", "default_image: contains a NUL character" },
        { "{\"default_image\": [\"x\"]}",       "default_image: must be a string" },
        { "{\"default_image\": \"foo\", \"allowed_images\": [\"bar*\"]}",
                                                "default_image: 'foo' is not matched by allowed_images" },
        { "{\"allowed_images\": []}",           "default_image: 'xprobe/xagent-sandbox:latest' is not matched" },
        { "{\"allowed_images\": \"*\"}",        "allowed_images: must be an array" },
        { "{\"allowed_images\": [\"*\", 1]}",   "allowed_images[1]: must be a string" },
        { "{\"allowed_images\": [\"*\", \"\"]}", "allowed_images[1]: must not be empty" },
        /* volume roots */
        { "{\"volume_roots\": {}}",             "volume_roots: must be an array" },
        { "{\"volume_roots\": [\"%h\"]}",       "volume_roots[0]: must be an object" },
        { "{\"volume_roots\": [{\"modes\": [\"ro\"]}]}", "volume_roots[0].path: missing" },
        { "{\"volume_roots\": [{\"path\": \"/x\"}]}", "volume_roots[0].modes: missing" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [\"ro\"], \"mode\": \"rw\"}]}",
                                                "volume_roots[0]: unknown key 'mode'" },
        { "{\"volume_roots\": [{\"path\": 1, \"modes\": [\"ro\"]}]}", "volume_roots[0].path: must be a string" },
        { "{\"volume_roots\": [{\"path\": null, \"modes\": [\"ro\"]}]}", "volume_roots[0].path: must be a string" },
        { "{\"volume_roots\": [{\"path\": \"\", \"modes\": [\"ro\"]}]}", "volume_roots[0].path: must not be empty" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [\"ro\"]}, {\"path\": \"home\", \"modes\": [\"ro\"]}]}",
                                                "volume_roots[1].path: 'home' is not an absolute path" },
        { "{\"volume_roots\": [{\"path\": \"%u/x\", \"modes\": [\"ro\"]}]}", "volume_roots[0].path: '%u/x' is not an absolute" },
        { "{\"volume_roots\": [{\"path\": \"%hx\", \"modes\": [\"ro\"]}]}", "volume_roots[0].path: '%hx' is not an absolute" },
        { "{\"volume_roots\": [{\"path\": \"/srv/%x\", \"modes\": [\"ro\"]}]}",
                                                "volume_roots[0].path: unknown escape '%x'" },
        { "{\"volume_roots\": [{\"path\": \"/srv/%\", \"modes\": [\"ro\"]}]}", "volume_roots[0].path: '/srv/%' ends in a lone '%'" },
        { "{\"volume_roots\": [{\"path\": \"/srv\\n\", \"modes\": [\"ro\"]}]}", "volume_roots[0].path: contains control" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [\"ro\"]}, {\"path\": \"/y\", \"modes\": []}]}",
                                                "volume_roots[1].modes: must name at least one" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [\"ro\", \"rx\"]}]}",
                                                "volume_roots[0].modes: unknown mode 'rx'" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [\"RW\"]}]}", "volume_roots[0].modes: unknown mode 'RW'" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": \"ro\"}]}", "volume_roots[0].modes: must be an array" },
        { "{\"volume_roots\": [{\"path\": \"/x\", \"modes\": [1]}]}", "volume_roots[0].modes: must be a string" },
        { "{\"python_version\": \"3.10\"}", "python_version: '3.10' is not one of" },
        { "{\"python_version\": 3.12}", "python_version" },
};

START_TEST(test_parse_errors) {
        SbxError e = SBX_ERROR_NULL;
        SbxPolicy *p = NULL;
        int r = sbx_policy_parse(parse_errors[_i].json, &p, &e);

        ck_assert_msg(r < 0, "%s parsed", parse_errors[_i].json);
        ck_assert_ptr_null(p);
        assert_error(r, &e, SBX_ERROR_INVALID_ARGS, parse_errors[_i].needle);
}
END_TEST

static void assert_expands(const char *pattern, const SbxOwner *o, const char *expected) {
        _cleanup_free_ char *got = NULL;
        int r = sbx_policy_expand_root(pattern, o, &got);

        if (!expected) {
                ck_assert_msg(r == 0, "%s expanded (%d) to %s", pattern, r, got);
                ck_assert_ptr_null(got);
                return;
        }
        ck_assert_msg(r == 1, "%s did not expand: %d", pattern, r);
        ck_assert_str_eq(got, expected);
}

START_TEST(test_expand_root) {
        SbxOwner o = alice;

        assert_expands("%h", &o, "/home/alice");
        assert_expands("%h/", &o, "/home/alice");
        assert_expands("%h/work", &o, "/home/alice/work");
        assert_expands("/srv/%u/data", &o, "/srv/alice/data");
        assert_expands("/run/user/%U", &o, "/run/user/1000");
        assert_expands("/x/%%h/100%%", &o, "/x/%h/100%");
        assert_expands("//srv//%u/./", &o, "/srv/alice");

        o.home = "/home/alice/";
        assert_expands("%h", &o, "/home/alice");
        o.home = "/";
        assert_expands("%h", &o, NULL);                 /* a home of "/" is never a root */
        o.home = "//";
        assert_expands("%h", &o, NULL);
        o.home = "relative";
        assert_expands("%h", &o, NULL);
        o.home = NULL;
        assert_expands("%h", &o, NULL);
        assert_expands("/srv/%U", &o, "/srv/1000");     /* roots without %h still apply */

        o = alice;
        o.name = NULL;
        assert_expands("/srv/%u", &o, NULL);
        o.name = "..";
        assert_expands("/srv/%u", &o, NULL);
        o.name = "a/b";
        assert_expands("/srv/%u", &o, NULL);
        o.name = "";
        assert_expands("/srv/%u", &o, NULL);
        assert_expands("%h", &o, "/home/alice");

        o = alice;
        o.uid = 0;
        assert_expands("/srv/%U", &o, "/srv/0");
        o.uid = 4294967294u;
        assert_expands("/srv/%U", &o, "/srv/4294967294");
}
END_TEST

static void assert_root(const SbxPolicy *p, const SbxOwner *o, const char *path, const char *mode,
                        const char *expected) {
        SbxError e = SBX_ERROR_NULL;
        _cleanup_free_ char *root = NULL;
        int r = sbx_policy_find_root(p, o, path, mode, &root, &e);

        ck_assert_msg(r == 0, "%s %s refused: %s", path, mode, e.message);
        ck_assert_str_eq(root, expected);
}

static void assert_no_root(const SbxPolicy *p, const SbxOwner *o, const char *path, const char *mode,
                           const char *needle) {
        SbxError e = SBX_ERROR_NULL;
        char *root = NULL;
        int r = sbx_policy_find_root(p, o, path, mode, &root, &e);

        ck_assert_ptr_null(root);
        assert_violation(r, &e, needle);
}

START_TEST(test_find_root) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"volume_roots\": [ { \"path\": \"%h\", \"modes\": [\"ro\", \"rw\"] },\n"
                "                      { \"path\": \"/srv/data\", \"modes\": [\"ro\"] },\n"
                "                      { \"path\": \"/srv/users/%u\", \"modes\": [\"rw\"] },\n"
                "                      { \"path\": \"/scratch/%U\", \"modes\": [\"rw\", \"ro\"] } ] }");
        SbxError e = SBX_ERROR_NULL;

        /* the default root: the owner's home, both modes, on a segment boundary */
        assert_root(d, &alice, "/home/alice", "rw", "/home/alice");
        assert_root(d, &alice, "/home/alice/proj", "ro", "/home/alice");
        assert_root(d, &alice, "/home/alice/proj/sub", "rw", "/home/alice");
        assert_no_root(d, &alice, "/home/alicex", "ro", "host path '/home/alicex' is not inside any of the host policy's volume_roots");
        assert_no_root(d, &alice, "/home/bob/x", "ro", "volume_roots");
        assert_no_root(d, &alice, "/home", "ro", "volume_roots");
        assert_no_root(d, &alice, "/srv/data", "ro", "volume_roots");

        /* mode per root */
        assert_root(p, &alice, "/srv/data/set", "ro", "/srv/data");
        assert_no_root(p, &alice, "/srv/data/set", "rw",
                       "host path '/srv/data/set' may not be mounted rw: its volume root /srv/data allows only ro");
        assert_no_root(p, &alice, "/srv/database", "ro", "is not inside any");

        /* %u and %U */
        assert_root(p, &alice, "/srv/users/alice/x", "rw", "/srv/users/alice");
        assert_no_root(p, &alice, "/srv/users/alice/x", "ro", "allows only rw");
        assert_no_root(p, &alice, "/srv/users/bob/x", "rw", "is not inside any");
        assert_root(p, &alice, "/scratch/1000", "ro", "/scratch/1000");
        assert_no_root(p, &alice, "/scratch/1001/x", "rw", "is not inside any");

        /* a NULL ret_root is allowed */
        ck_assert_int_eq(sbx_policy_find_root(p, &alice, "/home/alice/x", "rw", NULL, NULL), 0);

        /* non-canonical or relative paths and unknown modes are refused */
        assert_violation(sbx_policy_find_root(d, &alice, "/home/alice/../bob", "ro", NULL, &e), &e,
                         "host path '/home/alice/../bob' is not canonical (it means '/home/bob')");
        assert_violation(sbx_policy_find_root(d, &alice, "/home/alice/", "ro", NULL, &e), &e, "not canonical");
        assert_violation(sbx_policy_find_root(d, &alice, "home/alice", "ro", NULL, &e), &e, "not an absolute path");
        assert_error(sbx_policy_find_root(d, &alice, "/home/alice", "RW", NULL, &e), &e, SBX_ERROR_INVALID_ARGS,
                     "must be \"ro\" or \"rw\"");
        assert_error(sbx_policy_find_root(d, &alice, "/home/alice", NULL, NULL, &e), &e, SBX_ERROR_INVALID_ARGS,
                     "must be \"ro\" or \"rw\"");

        /* an owner without a home gets no %h root */
        SbxOwner homeless = alice;
        homeless.home = NULL;
        assert_no_root(d, &homeless, "/home/alice", "ro", "is not inside any");
        homeless.home = "/";
        assert_no_root(d, &homeless, "/home/alice", "ro", "is not inside any");
}
END_TEST

/* Overlapping roots: any root allowing the mode suffices; the deepest one is returned. */
START_TEST(test_find_root_overlap) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"volume_roots\": [ { \"path\": \"/\", \"modes\": [\"ro\"] },\n"
                "                      { \"path\": \"%h\", \"modes\": [\"ro\", \"rw\"] },\n"
                "                      { \"path\": \"%h/ro-only\", \"modes\": [\"ro\"] } ] }");

        assert_root(p, &alice, "/opt/x", "ro", "/");
        assert_no_root(p, &alice, "/opt/x", "rw", "may not be mounted rw: its volume root / allows only ro");
        assert_root(p, &alice, "/home/alice/x", "ro", "/home/alice");
        assert_root(p, &alice, "/home/alice/x", "rw", "/home/alice");
        assert_root(p, &alice, "/home/alice/ro-only/x", "ro", "/home/alice/ro-only");
        /* the deeper root allows only ro, but %h allows rw: that suffices */
        assert_root(p, &alice, "/home/alice/ro-only/x", "rw", "/home/alice");
}
END_TEST

static const struct {
        const char *path;
        const char *socket;     /* NULL = default */
        const char *needle;     /* NULL = allowed */
} host_paths[] = {
        { "/",                          NULL, "host path '/' is the root directory, which is never mounted" },
        { "/etc",                       NULL, "host path '/etc' is /etc, which is never mounted" },
        { "/etc/shadow",                NULL, "host path '/etc/shadow' lies below /etc" },
        { "/etcetera",                  NULL, NULL },
        { "/proc",                      NULL, "is /proc" },
        { "/proc/self/root",            NULL, "lies below /proc" },
        { "/sys/fs/cgroup",             NULL, "lies below /sys" },
        { "/dev",                       NULL, "is /dev" },
        { "/dev/null",                  NULL, "lies below /dev" },
        { "/devices",                   NULL, NULL },
        { "/boot/efi",                  NULL, "lies below /boot" },
        { "/usr",                       NULL, "is /usr" },
        { "/usr/local/src",             NULL, "lies below /usr" },
        { "/lib/x86_64-linux-gnu",      NULL, "lies below /lib" },
        { "/bin",                       NULL, "is /bin" },
        { "/library",                   NULL, NULL },
        { "/var",                       NULL, "host path '/var' is an ancestor of /var/run/dbus" },
        { "/var/lib",                   NULL, "host path '/var/lib' is an ancestor of /var/lib/docker" },
        { "/var/lib/docker",            NULL, "is /var/lib/docker" },
        { "/var/lib/docker/volumes/x",  NULL, "lies below /var/lib/docker" },
        { "/var/lib/dockerd",           NULL, NULL },
        { "/var/lib/postgresql",        NULL, NULL },
        { "/var/cache",                 NULL, NULL },
        { "/run",                       NULL, "host path '/run' is an ancestor of /run/dbus" },
        { "/var/run",                   NULL, "is an ancestor of /var/run/dbus" },
        { "/run/dbus",                  NULL, "is /run/dbus" },
        { "/run/dbus/system_bus_socket", NULL, "lies below /run/dbus" },
        { "/var/run/dbus/system_bus_socket", NULL, "lies below /var/run/dbus" },
        { "/run/user/1000",             NULL, NULL },
        { "/var/run/docker.sock",       NULL, "is /var/run/docker.sock" },
        { "/run/docker.sock",           NULL, "is /run/docker.sock" },
        { "/run/docker.sock/x",         NULL, "lies below /run/docker.sock" },
        { "/run/docker",                NULL, NULL },
        { "/home/alice",                NULL, NULL },
        { "/home",                      NULL, NULL },
        { "/srv",                       NULL, NULL },
        /* a configured socket elsewhere: it, its ancestors and its /run twin */
        { "/run/user/1000",             "/run/user/1000/docker.sock", "is an ancestor of /run/user/1000/docker.sock" },
        { "/run/user/1000/docker.sock", "/run/user/1000/docker.sock", "is /run/user/1000/docker.sock" },
        { "/var/run/user/1000/docker.sock", "/run/user/1000/docker.sock", "is /var/run/user/1000/docker.sock" },
        { "/var/run/user/1000",         "/run/user/1000/docker.sock", "is an ancestor of /var/run/user/1000/docker.sock" },
        { "/run/user/1001",             "/run/user/1000/docker.sock", NULL },
        { "/run/docker.sock",           "/run/user/1000/docker.sock", "is /run/docker.sock" },
        { "/srv/docker",                "/srv/docker/docker.sock", "is an ancestor of /srv/docker/docker.sock" },
        { "/srv",                       "/srv/docker/docker.sock", "is an ancestor of /srv/docker/docker.sock" },
        { "/srv/docker2",               "/srv/docker/docker.sock", NULL },
        { "/srv/docker",                "/srv//docker/./docker.sock", "is an ancestor of /srv/docker/docker.sock" },
        { "/srv/docker",                "", NULL },     /* no unix socket (tcp docker host) */
        /* the checked path must be the used path */
        { "/home/alice/../../etc",      NULL, "is not canonical (it means '/etc')" },
        { "//etc",                      NULL, "is not canonical" },
        { "etc",                        NULL, "host path 'etc' is not an absolute path" },
        { "",                           NULL, "host path '' is not an absolute path" },
};

START_TEST(test_host_path) {
        SbxError e = SBX_ERROR_NULL;
        int r = sbx_policy_check_host_path(host_paths[_i].path, host_paths[_i].socket, &e);

        if (!host_paths[_i].needle)
                ck_assert_msg(r == 0, "%s refused: %s", host_paths[_i].path, e.message);
        else
                assert_violation(r, &e, host_paths[_i].needle);
}
END_TEST

static int check_one_volume(const SbxPolicy *p, const char *host, const char *mode, SbxError *e) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");

        sbx_spec_add_volume(s, host, "/mnt", mode);
        spec_finish(s);
        return sbx_policy_check_volumes(p, &alice, s, NULL, e);
}

/* Protected paths stay protected even when a root is "/" with rw. */
START_TEST(test_volumes_root_slash) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"volume_roots\": [ { \"path\": \"/\", \"modes\": [\"ro\", \"rw\"] } ] }");
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(check_one_volume(p, "/home/alice/x", "rw", NULL), 0);
        ck_assert_int_eq(check_one_volume(p, "/opt/data", "ro", NULL), 0);
        assert_violation(check_one_volume(p, "/", "ro", &e), &e, "'/' is the root directory");
        assert_violation(check_one_volume(p, "/etc/passwd", "ro", &e), &e, "'/etc/passwd' lies below /etc");
        assert_violation(check_one_volume(p, "/var", "rw", &e), &e, "'/var' is an ancestor of");
        assert_violation(check_one_volume(p, "/var/run/docker.sock", "rw", &e), &e, "is /var/run/docker.sock");
        assert_violation(check_one_volume(p, "/run/docker.sock", "rw", &e), &e, "is /run/docker.sock");
        assert_violation(check_one_volume(p, "/run/dbus", "ro", &e), &e, "is /run/dbus");
        assert_violation(check_one_volume(p, "/var/lib/docker/overlay2", "ro", &e), &e, "lies below /var/lib/docker");
        /* the normalized spec turns "/x/../etc" into "/etc" before the check */
        assert_violation(check_one_volume(p, "/home/../etc", "ro", &e), &e, "is /etc");

        /* under the default policy, outside the home is refused by volume_roots */
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        assert_violation(check_one_volume(d, "/opt/data", "ro", &e), &e, "volume_roots");
        ck_assert_int_eq(check_one_volume(d, "/home/alice/data", "rw", NULL), 0);

        /* volume_roots = [] forbids every volume, but not a spec without volumes */
        _cleanup_(sbx_policy_freep) SbxPolicy *none = parse_ok("{ \"volume_roots\": [] }");
        assert_violation(check_one_volume(none, "/home/alice/data", "ro", &e), &e, "is not inside any");
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        spec_finish(s);
        ck_assert_int_eq(sbx_policy_check_volumes(none, &alice, s, NULL, NULL), 0);

        /* the docker socket argument reaches the check */
        _cleanup_(sbx_spec_freep) SbxSpec *t = spec_new("img");
        sbx_spec_add_volume(t, "/home/alice/.docker", "/mnt", "rw");
        spec_finish(t);
        ck_assert_int_eq(sbx_policy_check_volumes(p, &alice, t, NULL, NULL), 0);
        assert_violation(sbx_policy_check_volumes(p, &alice, t, "/home/alice/.docker/run/docker.sock", &e), &e,
                         "is an ancestor of /home/alice/.docker/run/docker.sock");
}
END_TEST

START_TEST(test_image) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"allowed_images\": [\"xprobe/*\", \"debian:bookworm*\"] }");
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_policy_check_image(d, "anything/at:all", NULL), 0);
        ck_assert_int_eq(sbx_policy_check_image(d, "sha256:0123abcd", NULL), 0);

        ck_assert_int_eq(sbx_policy_check_image(p, "xprobe/xagent-sandbox:latest", NULL), 0);
        ck_assert_int_eq(sbx_policy_check_image(p, "xprobe/a/b:c", NULL), 0);
        ck_assert_int_eq(sbx_policy_check_image(p, "debian:bookworm", NULL), 0);
        ck_assert_int_eq(sbx_policy_check_image(p, "debian:bookworm-slim", NULL), 0);
        assert_violation(sbx_policy_check_image(p, "debian:trixie", &e), &e,
                         "image: 'debian:trixie' is not matched by the host policy's allowed_images");
        assert_violation(sbx_policy_check_image(p, "evil/xprobe/x", &e), &e, "allowed_images");
        assert_violation(sbx_policy_check_image(p, "xprobe", &e), &e, "allowed_images");
        assert_violation(sbx_policy_check_image(p, "docker.io/xprobe/x", &e), &e, "allowed_images");
        assert_error(sbx_policy_check_image(p, "", &e), &e, SBX_ERROR_INVALID_ARGS, "image: must not be empty");
        assert_error(sbx_policy_check_image(p, NULL, &e), &e, SBX_ERROR_INVALID_ARGS, "image: must not be empty");

        /* check_spec applies the globs to image templates only */
        _cleanup_(sbx_spec_freep) SbxSpec *img = spec_new("debian:trixie");
        spec_finish(img);
        assert_violation(sbx_policy_check_spec(p, &alice, img, NULL, &e), &e, "allowed_images");
        _cleanup_(sbx_spec_freep) SbxSpec *snap = sbx_spec_new();
        snap->template_type = SBX_TEMPLATE_SNAPSHOT;
        snap->snapshot_id = strdup("snap-1");
        spec_finish(snap);
        ck_assert_int_eq(sbx_policy_check_spec(p, &alice, snap, NULL, NULL), 0);
}
END_TEST

START_TEST(test_limits) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        SbxError e = SBX_ERROR_NULL;

        spec_finish(s);
        ck_assert_int_eq(sbx_policy_check_limits(d, s, NULL), 0);
        s->cpus = 4;
        s->memory = 8192;
        ck_assert_int_eq(sbx_policy_check_limits(d, s, NULL), 0);
        s->cpus = 5;
        assert_violation(sbx_policy_check_limits(d, s, &e), &e, "cpus: 5 is more than the host policy's max_cpus 4");
        s->cpus = 1;
        s->memory = 8193;
        assert_violation(sbx_policy_check_limits(d, s, &e), &e,
                         "memory: 8193 MiB is more than the host policy's max_memory_mib 8192");
        assert_violation(sbx_policy_check_spec(d, &alice, s, NULL, &e), &e, "max_memory_mib");

        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok("{ \"max_cpus\": 16, \"max_memory_mib\": 256 }");
        s->cpus = 16;
        s->memory = 256;
        ck_assert_int_eq(sbx_policy_check_limits(p, s, NULL), 0);
        s->memory = 512;
        assert_violation(sbx_policy_check_limits(p, s, &e), &e, "max_memory_mib 256");
}
END_TEST

START_TEST(test_ports) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_policy_freep) SbxPolicy *low = parse_ok("{ \"host_port_min\": 1 }");
        SbxError e = SBX_ERROR_NULL;
        static const struct {
                int64_t host;
                bool ok;
        } cases[] = {
                { 0, true }, { 1024, true }, { 8080, true }, { 65535, true },
                { 1023, false }, { 80, false }, { 1, false }, { 65536, false },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");

                sbx_spec_add_port(s, 0, 22);
                sbx_spec_add_port(s, cases[i].host, 80);
                ck_assert_int_eq(sbx_spec_normalize(s, NULL), 0);
                if (cases[i].ok)
                        ck_assert_int_eq(sbx_policy_check_ports(d, s, NULL), 0);
                else
                        assert_violation(sbx_policy_check_ports(d, s, &e), &e, "host_port_min 1024–65535");
        }

        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        sbx_spec_add_port(s, 80, 80);
        spec_finish(s);
        ck_assert_int_eq(sbx_policy_check_ports(low, s, NULL), 0);
        assert_violation(sbx_policy_check_ports(d, s, &e), &e,
                         "ports: host port 80 is outside the host policy's host_port_min 1024–65535");
        assert_violation(sbx_policy_check_spec(d, &alice, s, NULL, &e), &e, "host port 80");
}
END_TEST

static const struct {
        const char *working_dir;
        const char *guest;
        const char *needle;
} guest_cases[] = {
        { "/home",      "/mnt",         NULL },
        { "/procx",     "/developer",   NULL },
        { "/work",      "/system",      NULL },
        { "/proc",      "/mnt",         "working_dir: the working directory '/proc' is or lies below /proc" },
        { "/proc/1",    "/mnt",         "working_dir: the working directory '/proc/1' is or lies below /proc" },
        { "/dev/shm",   "/mnt",         "lies below /dev" },
        { "/home",      "/proc",        "volumes: guest path '/proc' is or lies below /proc" },
        { "/home",      "/sys/fs",      "volumes: guest path '/sys/fs' is or lies below /sys" },
        { "/home",      "/dev",         "volumes: guest path '/dev' is or lies below /dev" },
        { "/home",      "/dev/sda",     "lies below /dev" },
        { "/home",      "/",            "volumes: guest path '/' would cover the sandbox's root directory" },
};

START_TEST(test_guest_paths) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        SbxError e = SBX_ERROR_NULL;
        int r;

        s->working_dir = strdup(guest_cases[_i].working_dir);
        sbx_spec_add_volume(s, "/home/alice/x", guest_cases[_i].guest, "ro");
        spec_finish(s);
        r = sbx_policy_check_guest_paths(s, &e);
        if (!guest_cases[_i].needle) {
                ck_assert_msg(r == 0, "refused: %s", e.message);
                _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
                ck_assert_int_eq(sbx_policy_check_spec(d, &alice, s, NULL, NULL), 0);
        } else
                assert_violation(r, &e, guest_cases[_i].needle);
}
END_TEST

/* Paths that did not go through normalization are refused, not reinterpreted. */
START_TEST(test_guest_paths_raw) {
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        SbxError e = SBX_ERROR_NULL;

        s->working_dir = strdup("/x/../proc");
        assert_violation(sbx_policy_check_guest_paths(s, &e), &e, "'/x/../proc' is not canonical (it means '/proc')");
        free(s->working_dir);
        s->working_dir = strdup("work");
        assert_violation(sbx_policy_check_guest_paths(s, &e), &e, "'work' is not an absolute path");
        free(s->working_dir);
        s->working_dir = NULL;
        assert_violation(sbx_policy_check_guest_paths(s, &e), &e, "working_dir");
        s->working_dir = strdup("/home");
        sbx_spec_add_volume(s, "/home/alice", "mnt", "ro");
        assert_violation(sbx_policy_check_guest_paths(s, &e), &e, "volumes: guest path 'mnt' is not an absolute path");
}
END_TEST

START_TEST(test_count) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_policy_freep) SbxPolicy *one = parse_ok("{ \"max_sandboxes_per_user\": 1 }");
        SbxError e = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_policy_check_count(d, 0, NULL), 0);
        ck_assert_int_eq(sbx_policy_check_count(d, 15, NULL), 0);
        assert_violation(sbx_policy_check_count(d, 16, &e), &e,
                         "max_sandboxes_per_user: the owner already has 16 sandboxes, the limit is 16");
        assert_violation(sbx_policy_check_count(d, 1000, &e), &e, "max_sandboxes_per_user");
        ck_assert_int_eq(sbx_policy_check_count(one, 0, NULL), 0);
        assert_violation(sbx_policy_check_count(one, 1, &e), &e, "the limit is 1");
}
END_TEST

/* A full, allowed spec passes every check; the first failing check names itself. */
START_TEST(test_check_spec) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new(SBX_POLICY_DEFAULT_IMAGE);
        SbxError e = SBX_ERROR_NULL;

        s->working_dir = strdup("/work");
        s->cpus = 2;
        s->memory = 1024;
        s->network_isolated = false;
        sbx_spec_add_env(s, "A", "b");
        sbx_spec_add_volume(s, "/home/alice/proj", "/work", "rw");
        sbx_spec_add_volume(s, "/home/alice/.cache/pip", "/root/.cache/pip", "ro");
        sbx_spec_add_port(s, 0, 8000);
        sbx_spec_add_port(s, 18080, 80);
        spec_finish(s);
        ck_assert_int_eq(sbx_policy_check_spec(d, &alice, s, NULL, &e), 0);
        ck_assert_int_eq(sbx_policy_check_spec(d, &alice, s, "/run/docker.sock", &e), 0);
        ck_assert(!sbx_error_is_set(&e));

        SbxOwner bob = { .uid = 1001, .gid = 1001, .name = "bob", .home = "/home/bob" };
        assert_violation(sbx_policy_check_spec(d, &bob, s, NULL, &e), &e,
                         "host path '/home/alice/.cache/pip' is not inside any");
}
END_TEST

START_TEST(test_engine) {
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();
        ck_assert_ptr_null(d->engine.host);
        ck_assert(!sbx_policy_engine_remote(d));

        _cleanup_(sbx_policy_freep) SbxPolicy *u = parse_ok("{ \"engine\": { \"host\": \"unix:///run/d.sock\" } }");
        ck_assert_str_eq(u->engine.host, "unix:///run/d.sock");
        ck_assert(!sbx_policy_engine_remote(u));

        _cleanup_(sbx_policy_freep) SbxPolicy *t = parse_ok(
                "{ \"engine\": { \"host\": \"tcp://[::1]:2376\", \"tls_ca\": \"/etc/x/ca.pem\", "
                "\"tls_cert\": \"/etc/x/cert.pem\", \"tls_key\": \"/etc/x/key.pem\", "
                "\"server_name\": \"engine.example\" } }");
        ck_assert(sbx_policy_engine_remote(t));
        ck_assert_str_eq(t->engine.tls_key, "/etc/x/key.pem");
        ck_assert_str_eq(t->engine.server_name, "engine.example");

        /* host volumes are not offered on a remote engine; a spec without any is fine */
        SbxError e = SBX_ERROR_NULL;
        _cleanup_(sbx_spec_freep) SbxSpec *s = spec_new("img");
        sbx_spec_add_volume(s, "/home/alice/data", "/mnt", "ro");
        spec_finish(s);
        ck_assert_int_eq(sbx_policy_check_volumes(d, &alice, s, NULL, NULL), 0);
        assert_violation(sbx_policy_check_volumes(t, &alice, s, NULL, &e), &e,
                         "host volumes are not offered on the remote engine tcp://[::1]:2376");
        _cleanup_(sbx_spec_freep) SbxSpec *none = spec_new("img");
        spec_finish(none);
        ck_assert_int_eq(sbx_policy_check_spec(t, &alice, none, NULL, NULL), 0);
}
END_TEST

START_TEST(test_warm_pools) {
        _cleanup_(sbx_policy_freep) SbxPolicy *p = parse_ok(
                "{ \"warm_pools\": [ { \"user\": \"sbx-member\", \"spec\": { \"network_isolated\": true }, "
                "\"size\": 2 }, { \"user\": 1000, \"spec\": { \"ports\": [[0, 80]] }, \"size\": 1, "
                "\"options\": { \"name_prefix\": \"agent\", \"egress\": { \"mode\": \"none\" } } } ],\n"
                "  \"default_image\": \"xprobe/other:1\", \"max_pooled\": 3 }");
        _cleanup_(sbx_policy_freep) SbxPolicy *q = parse_ok("{ \"max_pooled\": 3 }");
        _cleanup_(sbx_policy_freep) SbxPolicy *d = sbx_policy_new_default();

        ck_assert_uint_eq(p->n_warm_pools, 2);
        ck_assert_str_eq(p->warm_pools[0].user, "sbx-member");
        /* the default image of the policy, whichever key came first */
        ck_assert_str_eq(p->warm_pools[0].spec->image, "xprobe/other:1");
        ck_assert_str_eq(p->warm_pools[0].name_prefix, SBX_POOL_DEFAULT_NAME_PREFIX);
        ck_assert_int_eq(p->warm_pools[0].size, 2);
        ck_assert_ptr_null(p->warm_pools[1].user);
        ck_assert_uint_eq(p->warm_pools[1].uid, 1000);
        ck_assert_str_eq(p->warm_pools[1].name_prefix, "agent");
        ck_assert_ptr_nonnull(strstr(p->warm_pools[1].egress_json, "none"));
        ck_assert_uint_eq(strlen(p->warm_pools[1].fingerprint), SBX_FINGERPRINT_HEX_LEN);
        ck_assert_int_eq(p->max_pooled, 3);
        ck_assert_int_eq(d->max_pooled, SBX_POLICY_DEFAULT_MAX_POOLED);
        /* another text, another digest */
        ck_assert_uint_eq(strlen(p->digest), SBX_POLICY_DIGEST_LEN);
        ck_assert_str_ne(p->digest, q->digest);
        ck_assert_str_ne(q->digest, d->digest);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("policy");
        TCase *tc = tcase_create("policy");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_example_file);
        tcase_add_test(tc, test_parse_all_keys);
        tcase_add_test(tc, test_engine);
        tcase_add_test(tc, test_warm_pools);
        tcase_add_loop_test(tc, test_parse_errors, 0, ELEMENTSOF(parse_errors));
        tcase_add_test(tc, test_expand_root);
        tcase_add_test(tc, test_find_root);
        tcase_add_test(tc, test_find_root_overlap);
        tcase_add_loop_test(tc, test_host_path, 0, ELEMENTSOF(host_paths));
        tcase_add_test(tc, test_volumes_root_slash);
        tcase_add_test(tc, test_image);
        tcase_add_test(tc, test_limits);
        tcase_add_test(tc, test_ports);
        tcase_add_loop_test(tc, test_guest_paths, 0, ELEMENTSOF(guest_cases));
        tcase_add_test(tc, test_guest_paths_raw);
        tcase_add_test(tc, test_count);
        tcase_add_test(tc, test_check_spec);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
