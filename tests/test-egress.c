/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "sbx-test.h"
#include <netinet/in.h>

#include "egress.h"

static void entry_ok(const char *s, const char *name, const char *cidr, unsigned port, unsigned proto) {
        SbxEgressEntry e = {};
        char buf[SBX_CIDR_STRLEN];

        ck_assert_msg(sbx_egress_entry_parse(s, &e, NULL) == 0, "'%s' refused", s);
        if (name)
                ck_assert_str_eq(e.name, name);
        else
                ck_assert_str_eq(sbx_cidr_to_string(&e.cidr, buf), cidr);
        ck_assert_uint_eq(e.port, port);
        ck_assert_uint_eq(e.proto, proto);
        free(e.text);
        free(e.name);
}

static void entry_bad(const char *s) {
        SbxError err = SBX_ERROR_NULL;
        SbxEgressEntry e = {};

        ck_assert_int_lt(sbx_egress_entry_parse(s, &e, &err), 0);
        ck_assert_int_eq(err.kind, SBX_ERROR_INVALID_ARGS);
        ck_assert_msg(strstr(err.message, s), "'%s' does not name '%s'", err.message, s);
        sbx_error_free(&err);
}

START_TEST(test_entries) {
        entry_ok("203.0.113.7", NULL, "203.0.113.7/32", 0, 0);
        entry_ok("203.0.113.7/24:443", NULL, "203.0.113.0/24", 443, 0);
        entry_ok("198.51.100.1:53/udp", NULL, "198.51.100.1/32", 53, IPPROTO_UDP);
        entry_ok("2001:db8::/32", NULL, "2001:db8::/32", 0, 0);
        entry_ok("[2001:db8::1]:443/tcp", NULL, "2001:db8::1/128", 443, IPPROTO_TCP);
        entry_ok("pypi.org:443", "pypi.org", NULL, 443, 0);
        entry_ok("*.github.com", "*.github.com", NULL, 0, 0);
        entry_bad("");
        entry_bad("10.0.0.0/33");
        entry_bad("1.2.3.4:0");
        entry_bad("1.2.3.4:70000");
        entry_bad("1.2.3.4:80/icmp");
        entry_bad("pypi.org:443/tcp");
        entry_bad("localhost");
        entry_bad("-a.example");
        entry_bad("a..example");
        entry_bad("[pypi.org]:443");
        entry_bad("*.");
}
END_TEST

static void build(SbxEgress *e, const char *mode, char **allow) {
        size_t n = 0;

        while (allow && allow[n])
                n++;
        ck_assert_int_eq(sbx_egress_build(mode, allow, n, e, NULL), 0);
}

START_TEST(test_policy_check) {
        SbxPolicyEgress p;
        SbxEgress e = {};
        SbxError err = SBX_ERROR_NULL;

        ck_assert_int_eq(sbx_policy_egress_init(&p), 0);
        build(&e, "allowlist", (char *[]) { (char *) "10.1.2.3:3128", NULL });
        ck_assert_int_lt(sbx_egress_check(&p, &e, &err), 0);
        ck_assert_int_eq(err.kind, SBX_ERROR_POLICY_VIOLATION);
        ck_assert_ptr_nonnull(strstr(err.message, "'10.1.2.3:3128'"));
        ck_assert_ptr_nonnull(strstr(err.message, "egress.always_deny"));
        sbx_error_free(&err);
        /* allowed lists it: an owner may open it */
        p.allowed = calloc(1, sizeof(SbxCidr));
        p.n_allowed = 1;
        ck_assert_int_eq(sbx_cidr_parse("t", "10.1.0.0/16", &p.allowed[0], NULL), 0);
        ck_assert_int_eq(sbx_egress_check(&p, &e, NULL), 0);
        sbx_egress_done(&e);
        /* more than max_rules */
        p.max_rules = 1;
        build(&e, "allowlist", (char *[]) { (char *) "203.0.113.1", (char *) "203.0.113.2", NULL });
        ck_assert_int_lt(sbx_egress_check(&p, &e, &err), 0);
        ck_assert_int_eq(err.kind, SBX_ERROR_LIMITS_EXCEEDED);
        sbx_error_free(&err);
        sbx_egress_done(&e);
        /* none takes no entries; an unknown mode is named */
        ck_assert_int_lt(sbx_egress_build("none", (char *[]) { (char *) "203.0.113.1" }, 1, &e, &err), 0);
        sbx_error_free(&err);
        ck_assert_int_lt(sbx_egress_build("closed", NULL, 0, &e, &err), 0);
        ck_assert_ptr_nonnull(strstr(err.message, "'closed'"));
        sbx_error_free(&err);
        sbx_policy_egress_done(&p);
}
END_TEST

START_TEST(test_stored_form) {
        _cleanup_free_ char *json = NULL;
        SbxEgress e = {}, back = {};

        build(&e, "allowlist", (char *[]) { (char *) "203.0.113.0/24:80/tcp", NULL });
        ck_assert_int_eq(sbx_egress_to_json(&e, &json), 0);
        ck_assert_str_eq(json, "{\"mode\":\"allowlist\",\"allow\":[\"203.0.113.0\\/24:80\\/tcp\"]}");
        ck_assert_int_eq(sbx_egress_from_json(json, &back, NULL), 0);
        ck_assert_int_eq(back.mode, SBX_EGRESS_MODE_ALLOWLIST);
        ck_assert_uint_eq(back.n_allow, 1);
        ck_assert_uint_eq(back.allow[0].port, 80);
        sbx_egress_done(&back);
        ck_assert_int_eq(sbx_egress_from_json("", &back, NULL), 0);
        ck_assert_int_eq(back.mode, SBX_EGRESS_MODE_DEFAULT);
        sbx_egress_done(&e);
}
END_TEST

START_TEST(test_ruleset) {
        _cleanup_free_ char *text = NULL, *listing = NULL;
        char digest[65];
        const char *why = NULL;
        SbxPolicyEgress p;
        SbxEgress e = {};
        SbxCidr engine;

        ck_assert_int_eq(sbx_policy_egress_init(&p), 0);
        ck_assert_int_eq(sbx_cidr_parse("t", "198.18.0.1/32", &engine, NULL), 0);
        build(&e, "default", (char *[]) { (char *) "203.0.113.9:8080/tcp", NULL });
        ck_assert_int_eq(sbx_egress_ruleset(&p, &e, &engine, 1, &text, digest), 0);
        ck_assert_ptr_nonnull(strstr(text, "delete table inet xagent_egress"));
        ck_assert_ptr_nonnull(strstr(text, "policy drop;"));
        ck_assert_ptr_nonnull(strstr(text, "198.18.0.1/32"));
        ck_assert_ptr_nonnull(strstr(text, "ip daddr 203.0.113.9/32 tcp dport 8080 accept"));
        ck_assert_ptr_nonnull(strstr(text, digest));
        /* lo, reply, the entry, 2 + 2 refusals (IPv4, IPv6), accept, 2 rejects */
        ck_assert_uint_eq(sbx_egress_rule_count(&p, &e, &engine, 1), 10);
        ck_assert_int_gt(asprintf(&listing,
                "{\"nftables\": [{\"metainfo\": {}}, {\"table\": {\"family\": \"inet\", \"name\": \"xagent_egress\"}},"
                " {\"chain\": {\"family\": \"inet\", \"table\": \"xagent_egress\", \"name\": \"output\", \"type\":"
                " \"filter\", \"hook\": \"output\", \"prio\": 0, \"policy\": \"drop\"}},"
                " {\"rule\": {\"family\": \"inet\", \"table\": \"xagent_egress\", \"chain\": \"output\","
                " \"comment\": \"xagent-egress %s\"}}]}", digest), 0);
        ck_assert_int_eq(sbx_egress_listing_matches(listing, digest, 1, &why), 1);
        ck_assert_int_eq(sbx_egress_listing_matches(listing, digest, 10, &why), 0);
        ck_assert_int_eq(sbx_egress_listing_matches("{\"nftables\": []}", digest, 9, &why), 0);
        ck_assert_ptr_nonnull(strstr(why, "missing"));
        ck_assert_int_lt(sbx_egress_listing_matches("garbage", digest, 9, &why), 0);
        sbx_egress_done(&e);
        sbx_policy_egress_done(&p);
}
END_TEST

static Suite *make_suite(void) {
        Suite *s = suite_create("egress");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_entries);
        tcase_add_test(tc, test_policy_check);
        tcase_add_test(tc, test_stored_form);
        tcase_add_test(tc, test_ruleset);
        suite_add_tcase(s, tc);
        return s;
}

SBX_TEST_MAIN(make_suite)
