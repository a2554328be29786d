/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The nftables ruleset that enforces a sandbox's egress in its own network namespace,
 * and the judgement of what `nft -j list ruleset` reads back there (egress.h).
 *
 * One chain on the output hook, policy drop:
 *   1. the sandbox's own loopback (its own services; the host's is not reachable from
 *      its namespace) — this rule carries the digest of the whole ruleset;
 *   2. packets of connections made *to* the sandbox (published ports): replies only;
 *   with name entries: DNS to the service's resolver in the namespace (the chain "dns"
 *   redirects every query there), DNS anywhere else refused, and the addresses the
 *   resolver opened for a listed name's answer (the timed sets names4/6 and
 *   names4/6_any: it admits only addresses outside always_deny or inside allowed);
 *   3. the entries that lie inside the policy's `allowed` (they may open always_deny);
 *   4. always_deny and the engine's own networks and gateways: refused at once;
 *   5. the other entries;
 *   6. for `public`: everything else;
 *   7. the rest refused at once (a TCP reset, ICMP administratively prohibited). */

#include <errno.h>
#include <gnutls/crypto.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "egress.h"
#include "json-util.h"

/* put_name_rules() and put_dns_chain()'s */
#define NAME_RULES 8

#define ZERO_DIGEST "0000000000000000000000000000000000000000000000000000000000000000"

static bool entry_first(const SbxPolicyEgress *p, const SbxEgressEntry *x) {
        for (size_t i = 0; i < p->n_allowed; i++)
                if (sbx_cidr_within(&x->cidr, &p->allowed[i]))
                        return true;
        return false;
}

static void put_entry(FILE *f, const SbxEgressEntry *x) {
        char c[SBX_CIDR_STRLEN];
        const char *fam = x->cidr.family == AF_INET ? "ip" : "ip6";

        fprintf(f, "\t\t%s daddr %s", fam, sbx_cidr_to_string(&x->cidr, c));
        if (x->port && x->proto)
                fprintf(f, " %s dport %u", x->proto == IPPROTO_TCP ? "tcp" : "udp", x->port);
        else if (x->port)
                fprintf(f, " meta l4proto { tcp, udp } th dport %u", x->port);
        fputs(" accept\n", f);
}

/* The always_deny and engine addresses of one family, as an anonymous set; false if none. */
static bool put_deny_set(FILE *f, const SbxPolicyEgress *p, const SbxCidr *engine, size_t n_engine, int family) {
        char c[SBX_CIDR_STRLEN];
        bool any = false;

        for (size_t i = 0; i < p->n_always_deny + n_engine; i++) {
                const SbxCidr *x = i < p->n_always_deny ? &p->always_deny[i] : &engine[i - p->n_always_deny];

                if (x->family != family)
                        continue;
                fprintf(f, "%s%s", any ? ", " : "{ ", sbx_cidr_to_string(x, c));
                any = true;
        }
        if (any)
                fputs(" }", f);
        return any;
}

static bool has_family(const SbxPolicyEgress *p, const SbxCidr *engine, size_t n_engine, int family) {
        for (size_t i = 0; i < p->n_always_deny + n_engine; i++)
                if ((i < p->n_always_deny ? &p->always_deny[i] : &engine[i - p->n_always_deny])->family == family)
                        return true;
        return false;
}

static void put_deny(FILE *f, const SbxPolicyEgress *p, const SbxCidr *engine, size_t n_engine) {
        static const int families[] = { AF_INET, AF_INET6 };

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                const char *fam = families[i] == AF_INET ? "ip" : "ip6";

                if (!has_family(p, engine, n_engine, families[i]))
                        continue;
                fprintf(f, "\t\t%s daddr ", fam);
                put_deny_set(f, p, engine, n_engine, families[i]);
                fputs(" meta l4proto tcp reject with tcp reset\n", f);
                fprintf(f, "\t\t%s daddr ", fam);
                put_deny_set(f, p, engine, n_engine, families[i]);
                fputs(" reject with icmpx type admin-prohibited\n", f);
        }
}

size_t sbx_egress_rule_count(const SbxPolicyEgress *p, const SbxEgress *e, const SbxCidr *engine,
                             size_t n_engine) {
        size_t n = 4 + e->n_allow - sbx_egress_n_names(e);

        if (sbx_egress_n_names(e) > 0)
                n += NAME_RULES;

        n += 2 * has_family(p, engine, n_engine, AF_INET) + 2 * has_family(p, engine, n_engine, AF_INET6);
        return n + (sbx_egress_effective(p, e, false) == SBX_EGRESS_EFFECTIVE_PUBLIC);
}

/* Name entries: the resolver's sets, and every DNS query redirected to it. */
static void put_name_sets(FILE *f) {
        fputs("\tset names4 { type ipv4_addr . inet_proto . inet_service; flags timeout; }\n"
              "\tset names6 { type ipv6_addr . inet_proto . inet_service; flags timeout; }\n"
              "\tset names4_any { type ipv4_addr; flags timeout; }\n"
              "\tset names6_any { type ipv6_addr; flags timeout; }\n", f);
}

static void put_name_rules(FILE *f) {
        fprintf(f, "\t\tip daddr 127.0.0.1 udp dport %u accept\n"
                   "\t\tip6 daddr ::1 udp dport %u accept\n"
                   "\t\tmeta l4proto { tcp, udp } th dport 53 reject with icmpx type admin-prohibited\n"
                   "\t\tip daddr . meta l4proto . th dport @names4 accept\n"
                   "\t\tip6 daddr . meta l4proto . th dport @names6 accept\n"
                   "\t\tip daddr @names4_any accept\n"
                   "\t\tip6 daddr @names6_any accept\n",
                SBX_EGRESS_DNS_PORT, SBX_EGRESS_DNS_PORT);
}

static void put_dns_chain(FILE *f) {
        fprintf(f, "\tchain dns {\n"
                   "\t\ttype nat hook output priority -100; policy accept;\n"
                   "\t\tmeta l4proto { tcp, udp } th dport 53 redirect to :%u\n"
                   "\t}\n", SBX_EGRESS_DNS_PORT);
}

static int digest_of(const char *text, char ret[static 65]) {
        unsigned char d[32];
        gnutls_datum_t datum = { .data = d, .size = sizeof d };
        size_t size = 65;

        if (gnutls_hash_fast(GNUTLS_DIG_SHA256, text, strlen(text), d) < 0 ||
            gnutls_hex_encode(&datum, ret, &size) < 0)
                return -EIO;
        return 0;
}

int sbx_egress_ruleset(const SbxPolicyEgress *p, const SbxEgress *e, const SbxCidr *engine, size_t n_engine,
                       char **ret, char ret_digest[static 65]) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        char *mark;
        bool names = sbx_egress_n_names(e) > 0;

        if (!f)
                return -ENOMEM;
        fputs("table inet " SBX_EGRESS_TABLE "\n"
              "delete table inet " SBX_EGRESS_TABLE "\n"
              "table inet " SBX_EGRESS_TABLE " {\n", f);
        if (names)
                put_name_sets(f);
        fputs("\tchain output {\n"
              "\t\ttype filter hook output priority 0; policy drop;\n"
              "\t\toif \"lo\" accept comment \"" SBX_EGRESS_COMMENT_PREFIX " " ZERO_DIGEST "\"\n"
              "\t\tct direction reply accept\n", f);
        if (names)
                put_name_rules(f);
        for (size_t i = 0; i < e->n_allow; i++)
                if (!e->allow[i].name && entry_first(p, &e->allow[i]))
                        put_entry(f, &e->allow[i]);
        put_deny(f, p, engine, n_engine);
        for (size_t i = 0; i < e->n_allow; i++)
                if (!e->allow[i].name && !entry_first(p, &e->allow[i]))
                        put_entry(f, &e->allow[i]);
        if (sbx_egress_effective(p, e, false) == SBX_EGRESS_EFFECTIVE_PUBLIC)
                fputs("\t\taccept\n", f);
        fputs("\t\tmeta l4proto tcp reject with tcp reset\n"
              "\t\treject with icmpx type admin-prohibited\n"
              "\t}\n", f);
        if (names)
                put_dns_chain(f);
        fputs("}\n", f);
        /* The names are in no rule (their addresses come and go in the sets): a comment
         * nft ignores, so the digest changes with them and a change reloads the rules. */
        for (size_t i = 0; i < e->n_allow; i++)
                if (e->allow[i].name)
                        fprintf(f, "# name %s\n", e->allow[i].text);
        if (fclose(f) != 0)
                return -ENOMEM;
        /* The digest is of the text with zeros in its place, then put there. */
        mark = strstr(text, ZERO_DIGEST);
        if (!mark || digest_of(text, ret_digest) < 0)
                return -EIO;
        memcpy(mark, ret_digest, 64);
        *ret = TAKE_PTR(text);
        return 0;
}

/* ---- reading back ----------------------------------------------------------- */

static bool is_ours(json_object *o) {
        json_object *family, *table;

        return json_object_object_get_ex(o, "family", &family) && streq_ptr(json_object_get_string(family), "inet") &&
                ((json_object_object_get_ex(o, "name", &table) && !json_object_object_get_ex(o, "table", NULL) &&
                  streq_ptr(json_object_get_string(table), SBX_EGRESS_TABLE)) ||
                 (json_object_object_get_ex(o, "table", &table) &&
                  streq_ptr(json_object_get_string(table), SBX_EGRESS_TABLE)));
}

static const char *get_str(json_object *o, const char *key) {
        json_object *v;

        return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : NULL;
}

/* The output filter (policy drop), or with name entries the DNS redirect. */
static bool chain_right(json_object *c) {
        if (streq_ptr(get_str(c, "name"), "dns"))
                return streq_ptr(get_str(c, "hook"), "output") && streq_ptr(get_str(c, "type"), "nat");
        return streq_ptr(get_str(c, "name"), "output") && streq_ptr(get_str(c, "hook"), "output") &&
                streq_ptr(get_str(c, "type"), "filter") && streq_ptr(get_str(c, "policy"), "drop");
}

int sbx_egress_listing_matches(const char *json, const char *digest, size_t n_rules, const char **ret_why) {
        _cleanup_(json_object_putp) json_object *doc = json_tokener_parse(json);
        char comment[sizeof(SBX_EGRESS_COMMENT_PREFIX) + 65];
        size_t tables = 0, chains = 0, rules = 0, output_rules = 0;
        bool first_right = false;
        json_object *list;

        if (!doc || !json_object_object_get_ex(doc, "nftables", &list) || !json_object_is_type(list, json_type_array))
                return -EBADMSG;
        snprintf(comment, sizeof comment, SBX_EGRESS_COMMENT_PREFIX " %s", digest);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
                json_object *item = json_object_array_get_idx(list, i), *o;

                if (json_object_object_get_ex(item, "table", &o) && is_ours(o))
                        tables++;
                else if (json_object_object_get_ex(item, "chain", &o) && is_ours(o)) {
                        if (!chain_right(o)) {
                                *ret_why = "a chain is not the output hook with policy drop (nor the DNS redirect)";
                                return 0;
                        }
                        chains += streq_ptr(get_str(o, "name"), "output");
                } else if (json_object_object_get_ex(item, "rule", &o) && is_ours(o)) {
                        /* the output chain's first rule (the DNS redirect's may be listed first) */
                        rules++;
                        if (streq_ptr(get_str(o, "chain"), "output") && output_rules++ == 0)
                                first_right = streq_ptr(get_str(o, "comment"), comment);
                }
        }
        if (tables != 1)
                *ret_why = tables == 0 ? "no rules in force (the table is missing)" : "more than one table";
        else if (chains != 1)
                *ret_why = "not exactly one output chain";
        else if (!first_right)
                *ret_why = "the rules in force are not the ones stored (their digest differs)";
        else if (rules != n_rules)
                *ret_why = "the number of rules in force differs";
        else
                return 1;
        return 0;
}
