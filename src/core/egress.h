/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Egress (docs/security.md, "Egress"): the network a bridge sandbox may reach. The host
 * policy's `egress` object, a sandbox's own `egress` option (mode and allow-list), their
 * stored form, and the nftables ruleset that enforces them in the sandbox's own network
 * namespace, with the judgement of a ruleset read back from there. Pure: the daemon
 * loads the rules (src/lifecycle/egress-apply.c). */

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define SBX_EGRESS_DEFAULT_MAX_RULES 64
#define SBX_EGRESS_MAX_RULES_LIMIT 4096
/* The nftables table the service owns in a sandbox's network namespace. */
#define SBX_EGRESS_TABLE "xagent_egress"
/* The first rule's comment: this, a space and the ruleset's digest (64 hex). */
#define SBX_EGRESS_COMMENT_PREFIX "xagent-egress"

/* The policy's default for a sandbox that asks for nothing. */
typedef enum SbxEgressBase {
        SBX_EGRESS_BASE_PUBLIC,         /* anything but always_deny */
        SBX_EGRESS_BASE_NONE,           /* nothing */
        SBX_EGRESS_BASE_OPEN,           /* no rules at all (the administrator's choice) */
        _SBX_EGRESS_BASE_MAX,
} SbxEgressBase;

/* What a sandbox asked for. */
typedef enum SbxEgressMode {
        SBX_EGRESS_MODE_DEFAULT,        /* the policy's default, plus its allow entries */
        SBX_EGRESS_MODE_NONE,
        SBX_EGRESS_MODE_ALLOWLIST,      /* nothing but its allow entries */
        _SBX_EGRESS_MODE_MAX,
} SbxEgressMode;

typedef struct SbxCidr {
        int family;                     /* AF_INET or AF_INET6 */
        uint8_t addr[16];               /* network byte order, host bits zero */
        unsigned prefix;
} SbxCidr;

/* One allow entry: CIDR[:PORT[/tcp|udp]] or NAME[:PORT] ("*." prefix allowed). */
typedef struct SbxEgressEntry {
        char *text;                     /* as given */
        char *name;                     /* a DNS name entry, else NULL */
        SbxCidr cidr;                   /* an address entry */
        uint16_t port;                  /* 0: any */
        uint8_t proto;                  /* 0: tcp and udp (with a port) or any; IPPROTO_TCP, IPPROTO_UDP */
} SbxEgressEntry;

typedef struct SbxEgress {
        SbxEgressMode mode;
        SbxEgressEntry *allow;
        size_t n_allow;
} SbxEgress;

typedef struct SbxPolicyEgress {
        SbxEgressBase base;             /* the key "default" */
        SbxCidr *always_deny;
        size_t n_always_deny;
        SbxCidr *allowed;
        size_t n_allowed;
        int64_t max_rules;
        bool names;
        char **resolvers;               /* ADDRESS[:PORT]; NULL-terminated; none: the host's resolv.conf */
        size_t n_resolvers;
} SbxPolicyEgress;

const char *sbx_egress_base_to_string(SbxEgressBase b) _pure_;
const char *sbx_egress_mode_to_string(SbxEgressMode m) _pure_;
int sbx_egress_mode_from_string(const char *s, SbxEgressMode *ret);

/* "10.0.0.0/8", "fe80::/10", "192.0.2.1" (a host: /32, /128); InvalidArgs naming field. */
int sbx_cidr_parse(const char *field, const char *s, SbxCidr *ret, SbxError *error);
/* The CIDR as nftables and people write it. buf: at least SBX_CIDR_STRLEN. */
#define SBX_CIDR_STRLEN 64
const char *sbx_cidr_to_string(const SbxCidr *c, char buf[static SBX_CIDR_STRLEN]);
/* a lies within b (same family, b's prefix no longer, same leading bits). */
bool sbx_cidr_within(const SbxCidr *a, const SbxCidr *b) _pure_;

/* The policy part: defaults (always_deny as docs/security.md lists it), the key's
 * parser (InvalidArgs naming "egress.KEY"), and its release. */
int sbx_policy_egress_init(SbxPolicyEgress *p);
int sbx_policy_egress_parse(SbxPolicyEgress *p, json_object *v, SbxError *error);
void sbx_policy_egress_done(SbxPolicyEgress *p);

/* One entry: InvalidArgs naming it when it is neither form. */
int sbx_egress_entry_parse(const char *s, SbxEgressEntry *ret, SbxError *error);
void sbx_egress_done(SbxEgress *e);
/* *e handed over (left empty). */
static inline SbxEgress sbx_egress_take(SbxEgress *e) {
        SbxEgress t = *e;

        *e = (SbxEgress) {};
        return t;
}
/* mode and allow given as strings (the bus reads them); NULL mode: default. */
int sbx_egress_build(const char *mode, char *const *allow, size_t n_allow, SbxEgress *ret, SbxError *error);

/* Whether the policy admits e: more entries than max_rules is LimitsExceeded; a name
 * entry where names are off, an address entry wholly inside always_deny and not
 * inside allowed, are PolicyViolation naming the entry and the key. */
int sbx_egress_check(const SbxPolicyEgress *p, const SbxEgress *e, SbxError *error);

/* The stored form, a JSON object {"mode": …, "allow": […]}; "" or NULL reads as the
 * default with no entries (a row from before egress). */
int sbx_egress_to_json(const SbxEgress *e, char **ret);
int sbx_egress_from_json(const char *json, SbxEgress *ret, SbxError *error);

/* What is in force for a sandbox: none for an isolated one (it has no network), the
 * policy's base for mode default. */
typedef enum SbxEgressEffective {
        SBX_EGRESS_EFFECTIVE_OPEN,
        SBX_EGRESS_EFFECTIVE_PUBLIC,
        SBX_EGRESS_EFFECTIVE_NONE,
        SBX_EGRESS_EFFECTIVE_ALLOWLIST,
        _SBX_EGRESS_EFFECTIVE_MAX,
} SbxEgressEffective;

SbxEgressEffective sbx_egress_effective(const SbxPolicyEgress *p, const SbxEgress *e, bool network_isolated) _pure_;
const char *sbx_egress_effective_to_string(SbxEgressEffective e) _pure_;
/* Whether rules are loaded for it at all (not open, not isolated). */
bool sbx_egress_needs_rules(const SbxPolicyEgress *p, const SbxEgress *e, bool network_isolated) _pure_;

/* The ruleset for `nft -f -`: one transaction that creates the table if missing, deletes
 * it and makes it again (an atomic, idempotent reload). engine: the engine's own
 * networks and gateways for this sandbox (always refused unless allowed lists them).
 * *ret_digest (65 bytes) is what the first rule's comment carries. */
int sbx_egress_ruleset(const SbxPolicyEgress *p, const SbxEgress *e, const SbxCidr *engine, size_t n_engine,
                       char **ret, char ret_digest[static 65]);
/* How many rules sbx_egress_ruleset() puts in the chain. */
size_t sbx_egress_rule_count(const SbxPolicyEgress *p, const SbxEgress *e, const SbxCidr *engine,
                             size_t n_engine) _pure_;

/* `nft -j list ruleset` of the sandbox's namespace against what should be there: the
 * table with one output chain (hook output, policy drop), n_rules rules, the first
 * carrying the digest. 1 if it is so, 0 if not (*ret_why says what differs), negative
 * errno on a listing that is not nft's JSON. */
int sbx_egress_listing_matches(const char *json, const char *digest, size_t n_rules, const char **ret_why);
