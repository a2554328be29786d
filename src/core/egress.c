/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Egress: the policy's object, a sandbox's option and its stored form (egress.h). The
 * ruleset is made in egress-rules.c. */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "json-util.h"

static const char *const base_table[_SBX_EGRESS_BASE_MAX] = {
        [SBX_EGRESS_BASE_PUBLIC] = "public",
        [SBX_EGRESS_BASE_NONE] = "none",
        [SBX_EGRESS_BASE_OPEN] = "open",
};

static const char *const mode_table[_SBX_EGRESS_MODE_MAX] = {
        [SBX_EGRESS_MODE_DEFAULT] = "default",
        [SBX_EGRESS_MODE_NONE] = "none",
        [SBX_EGRESS_MODE_ALLOWLIST] = "allowlist",
};

static const char *const effective_table[_SBX_EGRESS_EFFECTIVE_MAX] = {
        [SBX_EGRESS_EFFECTIVE_OPEN] = "open",
        [SBX_EGRESS_EFFECTIVE_PUBLIC] = "public",
        [SBX_EGRESS_EFFECTIVE_NONE] = "none",
        [SBX_EGRESS_EFFECTIVE_ALLOWLIST] = "allowlist",
};

/* The built-in always_deny (docs/security.md): loopback, link-local, RFC 1918, ULA. The
 * engine's own networks and gateways are added per sandbox when the rules are made. */
static const char *const default_deny[] = {
        "127.0.0.0/8", "169.254.0.0/16", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16",
        "::1/128", "fe80::/10", "fc00::/7",
};

const char *sbx_egress_base_to_string(SbxEgressBase b) {
        return b >= 0 && b < _SBX_EGRESS_BASE_MAX ? base_table[b] : NULL;
}

const char *sbx_egress_mode_to_string(SbxEgressMode m) {
        return m >= 0 && m < _SBX_EGRESS_MODE_MAX ? mode_table[m] : NULL;
}

const char *sbx_egress_effective_to_string(SbxEgressEffective e) {
        return e >= 0 && e < _SBX_EGRESS_EFFECTIVE_MAX ? effective_table[e] : NULL;
}

int sbx_egress_mode_from_string(const char *s, SbxEgressMode *ret) {
        for (int i = 0; i < _SBX_EGRESS_MODE_MAX; i++)
                if (streq(s, mode_table[i])) {
                        *ret = i;
                        return 0;
                }
        return -EINVAL;
}

/* ---- addresses -------------------------------------------------------------- */

static size_t addr_len(int family) {
        return family == AF_INET ? 4 : 16;
}

static void mask_host_bits(SbxCidr *c) {
        size_t n = addr_len(c->family);

        for (size_t i = 0; i < n; i++) {
                unsigned lo = (unsigned) i * 8;

                if (c->prefix <= lo)
                        c->addr[i] = 0;
                else if (c->prefix < lo + 8)
                        c->addr[i] &= (uint8_t) (0xffu << (lo + 8 - c->prefix));
        }
}

/* An address literal with an optional /prefix; -EINVAL when it is not one. */
static int cidr_parse(const char *s, SbxCidr *ret) {
        char buf[INET6_ADDRSTRLEN + 8];
        const char *slash = strchr(s, '/');
        size_t len = slash ? (size_t) (slash - s) : strlen(s);
        SbxCidr c = {};
        char *end;
        long prefix;

        if (len == 0 || len >= INET6_ADDRSTRLEN)
                return -EINVAL;
        memcpy(buf, s, len);
        buf[len] = 0;
        if (inet_pton(AF_INET, buf, c.addr) == 1)
                c.family = AF_INET;
        else if (inet_pton(AF_INET6, buf, c.addr) == 1)
                c.family = AF_INET6;
        else
                return -EINVAL;
        c.prefix = (unsigned) addr_len(c.family) * 8;
        if (slash) {
                if (!slash[1] || slash[1] < '0' || slash[1] > '9')
                        return -EINVAL;
                errno = 0;
                prefix = strtol(slash + 1, &end, 10);
                if (errno || *end || prefix < 0 || prefix > (long) c.prefix)
                        return -EINVAL;
                c.prefix = (unsigned) prefix;
        }
        mask_host_bits(&c);
        *ret = c;
        return 0;
}

int sbx_cidr_parse(const char *field, const char *s, SbxCidr *ret, SbxError *error) {
        if (cidr_parse(s, ret) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: '%s' is not an address or ADDRESS/PREFIX (IPv4 or IPv6)", field, s);
        return 0;
}

const char *sbx_cidr_to_string(const SbxCidr *c, char buf[static SBX_CIDR_STRLEN]) {
        char a[INET6_ADDRSTRLEN];

        if (!inet_ntop(c->family, c->addr, a, sizeof a))
                a[0] = 0;
        snprintf(buf, SBX_CIDR_STRLEN, "%s/%u", a, c->prefix);
        return buf;
}

bool sbx_cidr_within(const SbxCidr *a, const SbxCidr *b) {
        SbxCidr t;

        if (a->family != b->family || a->prefix < b->prefix)
                return false;
        t = *a;
        t.prefix = b->prefix;
        mask_host_bits(&t);
        return memcmp(t.addr, b->addr, addr_len(a->family)) == 0;
}

/* ---- the policy's object ---------------------------------------------------- */

static int cidrs_from_strings(const char *const *v, size_t n, SbxCidr **ret) {
        SbxCidr *c = calloc(n + 1, sizeof(SbxCidr));

        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (cidr_parse(v[i], &c[i]) < 0) {
                        free(c);
                        return -EINVAL;
                }
        *ret = c;
        return 0;
}

int sbx_policy_egress_init(SbxPolicyEgress *p) {
        *p = (SbxPolicyEgress) { .base = SBX_EGRESS_BASE_PUBLIC, .max_rules = SBX_EGRESS_DEFAULT_MAX_RULES,
                                 .names = true };
        p->n_always_deny = ELEMENTSOF(default_deny);
        return cidrs_from_strings(default_deny, ELEMENTSOF(default_deny), &p->always_deny);
}


void sbx_policy_egress_done(SbxPolicyEgress *p) {
        free(p->always_deny);
        free(p->allowed);
        strv_free(p->resolvers);
        *p = (SbxPolicyEgress) {};
}

static int parse_cidr_list(const char *key, json_object *v, SbxCidr **list, size_t *n_list, SbxError *error) {
        SbxCidr *c;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.%s: must be an array of CIDRs", key);
        n = json_object_array_length(v);
        c = calloc(n + 1, sizeof(SbxCidr));
        if (!c)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[64];
                const char *s;

                snprintf(field, sizeof field, "egress.%s[%zu]", key, i);
                if ((r = sbx_json_get_text(field, json_object_array_get_idx(v, i), &s, error)) < 0 ||
                    (r = sbx_cidr_parse(field, s, &c[i], error)) < 0) {
                        free(c);
                        return r;
                }
        }
        free(*list);
        *list = c;
        *n_list = n;
        return 0;
}

/* ADDRESS or ADDRESS:PORT, an IPv6 address with a port in brackets. */
static bool resolver_valid(const char *s) {
        char buf[INET6_ADDRSTRLEN + 8];
        uint8_t a[16];
        const char *port = NULL;
        size_t len = strlen(s);

        if (len == 0 || len >= sizeof buf)
                return false;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || (close[1] && close[1] != ':'))
                        return false;
                len = (size_t) (close - s - 1);
                memcpy(buf, s + 1, len);
                port = close[1] ? close + 2 : NULL;
        } else if (strchr(s, ':') && strchr(s, ':') == strrchr(s, ':')) {
                len = (size_t) (strchr(s, ':') - s);
                memcpy(buf, s, len);
                port = strchr(s, ':') + 1;
        } else
                memcpy(buf, s, len);
        buf[len] = 0;
        if (inet_pton(AF_INET, buf, a) != 1 && inet_pton(AF_INET6, buf, a) != 1)
                return false;
        if (port) {
                char *end;
                long p = strtol(port, &end, 10);

                if (!*port || *end || p < 1 || p > 65535)
                        return false;
        }
        return true;
}

static int parse_resolvers(SbxPolicyEgress *p, json_object *v, SbxError *error) {
        char **list;
        size_t n;
        int r;

        if (!json_object_is_type(v, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.resolvers: must be an array of strings");
        n = json_object_array_length(v);
        list = calloc(n + 1, sizeof(char *));
        if (!list)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                char field[64];
                const char *s;

                snprintf(field, sizeof field, "egress.resolvers[%zu]", i);
                r = sbx_json_get_text(field, json_object_array_get_idx(v, i), &s, error);
                if (r >= 0 && !resolver_valid(s))
                        r = sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: '%s' is not ADDRESS[:PORT]", field, s);
                if (r >= 0 && !(list[i] = strdup(s)))
                        r = -ENOMEM;
                if (r < 0) {
                        strv_free(list);
                        return r;
                }
        }
        strv_free(p->resolvers);
        p->resolvers = list;
        p->n_resolvers = n;
        return 0;
}

static int parse_base(SbxPolicyEgress *p, json_object *v, SbxError *error) {
        const char *s;
        int r;

        if ((r = sbx_json_get_text("egress.default", v, &s, error)) < 0)
                return r;
        for (int i = 0; i < _SBX_EGRESS_BASE_MAX; i++)
                if (streq(s, base_table[i])) {
                        p->base = i;
                        return 0;
                }
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                             "egress.default: '%s' is not one of \"public\", \"none\", \"open\"", s);
}

static int parse_max_rules(SbxPolicyEgress *p, json_object *v, SbxError *error) {
        int64_t x;

        if (!json_object_is_type(v, json_type_int))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.max_rules: must be a whole number");
        x = json_object_get_int64(v);
        if (x < 0 || x > SBX_EGRESS_MAX_RULES_LIMIT)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.max_rules: %" PRIi64 " is outside 0–%d",
                                     x, SBX_EGRESS_MAX_RULES_LIMIT);
        p->max_rules = x;
        return 0;
}

int sbx_policy_egress_parse(SbxPolicyEgress *p, json_object *v, SbxError *error) {
        int r = 0;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress: must be an object");
        json_object_object_foreach(v, key, val) {
                if (streq(key, "default"))
                        r = parse_base(p, val, error);
                else if (streq(key, "always_deny"))
                        r = parse_cidr_list(key, val, &p->always_deny, &p->n_always_deny, error);
                else if (streq(key, "allowed"))
                        r = parse_cidr_list(key, val, &p->allowed, &p->n_allowed, error);
                else if (streq(key, "max_rules"))
                        r = parse_max_rules(p, val, error);
                else if (streq(key, "names")) {
                        if (!json_object_is_type(val, json_type_boolean))
                                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.names: must be true or false");
                        p->names = json_object_get_boolean(val);
                } else if (streq(key, "resolvers"))
                        r = parse_resolvers(p, val, error);
                else
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.%s: unknown key", key);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- a sandbox's entries ---------------------------------------------------- */

/* A DNS name, optionally "*." first: labels of letters, digits and '-', 1–63 bytes,
 * not starting or ending with '-', at least two labels, 253 bytes in all. */
static bool name_valid(const char *s) {
        size_t label = 0, labels = 0;

        if (strncmp(s, "*.", 2) == 0)
                s += 2;
        if (strlen(s) == 0 || strlen(s) > 253)
                return false;
        for (const char *c = s;; c++) {
                if (*c == '.' || *c == 0) {
                        if (label == 0 || c[-1] == '-')
                                return false;
                        labels++;
                        label = 0;
                        if (*c == 0)
                                break;
                        continue;
                }
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      (*c == '-' && label > 0)))
                        return false;
                if (++label > 63)
                        return false;
        }
        return labels >= 2;
}

static int parse_port(const char *s, uint16_t *ret_port, uint8_t *ret_proto, bool proto_allowed) {
        const char *slash = strchr(s, '/');
        char *end;
        long p;

        if (!*s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        p = strtol(s, &end, 10);
        if (errno || p < 1 || p > 65535 || (end != slash && *end))
                return -EINVAL;
        *ret_port = (uint16_t) p;
        *ret_proto = 0;
        if (!slash)
                return 0;
        if (!proto_allowed)
                return -EINVAL;
        if (streq(slash + 1, "tcp"))
                *ret_proto = IPPROTO_TCP;
        else if (streq(slash + 1, "udp"))
                *ret_proto = IPPROTO_UDP;
        else
                return -EINVAL;
        return 0;
}

/* Splits "HOST:PORT…", "[V6/P]:PORT…", a bare IPv6 CIDR (more than one ':'): the host
 * part into buf, the port part (or NULL). */
static int split_entry(const char *s, char *buf, size_t size, const char **ret_port) {
        const char *colon;
        size_t len;

        if (s[0] == '[') {
                const char *close = strchr(s, ']');

                if (!close || (close[1] && close[1] != ':') || (close[1] == ':' && !close[2]))
                        return -EINVAL;
                len = (size_t) (close - s - 1);
                if (len == 0 || len >= size)
                        return -EINVAL;
                memcpy(buf, s + 1, len);
                buf[len] = 0;
                *ret_port = close[1] ? close + 2 : NULL;
                return 0;
        }
        colon = strchr(s, ':');
        if (colon && colon != strrchr(s, ':'))
                colon = NULL;           /* IPv6 without a port */
        len = colon ? (size_t) (colon - s) : strlen(s);
        if (len == 0 || len >= size)
                return -EINVAL;
        memcpy(buf, s, len);
        buf[len] = 0;
        *ret_port = colon ? colon + 1 : NULL;
        return 0;
}

int sbx_egress_entry_parse(const char *s, SbxEgressEntry *ret, SbxError *error) {
        SbxEgressEntry e = {};
        char host[300];
        const char *port;
        bool is_name;

        if (split_entry(s, host, sizeof host, &port) < 0)
                goto bad;
        is_name = cidr_parse(host, &e.cidr) < 0;
        if (is_name && (!name_valid(host) || s[0] == '['))
                goto bad;
        if (port && parse_port(port, &e.port, &e.proto, !is_name) < 0)
                goto bad;
        if (!(e.text = strdup(s)) || (is_name && !(e.name = strdup(host)))) {
                free(e.text);
                return -ENOMEM;
        }
        *ret = e;
        return 0;
bad:
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                             "egress.allow: '%s' is not CIDR[:PORT[/tcp|udp]] or NAME[:PORT] (IPv6 with a port in "
                             "brackets: [2001:db8::/32]:443)", s);
}

void sbx_egress_done(SbxEgress *e) {
        for (size_t i = 0; i < e->n_allow; i++) {
                free(e->allow[i].text);
                free(e->allow[i].name);
        }
        free(e->allow);
        *e = (SbxEgress) {};
}

int sbx_egress_build(const char *mode, char *const *allow, size_t n_allow, SbxEgress *ret, SbxError *error) {
        SbxEgress e = {};
        int r;

        if (mode && sbx_egress_mode_from_string(mode, &e.mode) < 0)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "egress.mode: '%s' is not one of \"default\", \"none\", \"allowlist\"", mode);
        if (n_allow > 0 && !(e.allow = calloc(n_allow, sizeof(SbxEgressEntry))))
                return -ENOMEM;
        for (size_t i = 0; i < n_allow; i++) {
                if ((r = sbx_egress_entry_parse(allow[i], &e.allow[i], error)) < 0) {
                        sbx_egress_done(&e);
                        return r;
                }
                e.n_allow++;
        }
        if (e.mode == SBX_EGRESS_MODE_NONE && e.n_allow > 0) {
                sbx_egress_done(&e);
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress.allow: mode \"none\" takes no entries");
        }
        *ret = e;
        return 0;
}

static bool within_any(const SbxCidr *c, const SbxCidr *list, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (sbx_cidr_within(c, &list[i]))
                        return true;
        return false;
}

int sbx_egress_check(const SbxPolicyEgress *p, const SbxEgress *e, SbxError *error) {
        if ((int64_t) e->n_allow > p->max_rules)
                return sbx_error_set(error, SBX_ERROR_LIMITS_EXCEEDED,
                                     "egress.allow: %zu entries, more than the policy's egress.max_rules (%" PRIi64 ")",
                                     e->n_allow, p->max_rules);
        for (size_t i = 0; i < e->n_allow; i++) {
                const SbxEgressEntry *x = &e->allow[i];

                if (x->name)
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             p->names ? "egress.allow: '%s': name entries are not enforced by this "
                                                        "version of the service yet (egress.names; list addresses)"
                                                      : "egress.allow: '%s': the policy's egress.names is false",
                                             x->text);
                if (within_any(&x->cidr, p->always_deny, p->n_always_deny) &&
                    !within_any(&x->cidr, p->allowed, p->n_allowed))
                        return sbx_error_set(error, SBX_ERROR_POLICY_VIOLATION,
                                             "egress.allow: '%s' lies in the policy's egress.always_deny and not in "
                                             "egress.allowed", x->text);
        }
        return 0;
}

/* ---- the stored form -------------------------------------------------------- */

int sbx_egress_to_json(const SbxEgress *e, char **ret) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object(), *a = json_object_new_array();
        char *s;
        int r;

        if (!o || !a)
                return -ENOMEM;
        for (size_t i = 0; i < e->n_allow; i++)
                if ((r = sbx_json_push(a, json_object_new_string(e->allow[i].text))) < 0)
                        return r;
        if ((r = sbx_json_put(o, "mode", json_object_new_string(mode_table[e->mode]))) < 0 ||
            (r = sbx_json_put(o, "allow", TAKE_PTR(a))) < 0)
                return r;
        s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int sbx_egress_from_json(const char *json, SbxEgress *ret, SbxError *error) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        _cleanup_free_ char **allow = NULL;
        json_object *mode, *a;
        size_t n;
        int r;

        if (isempty(json)) {
                *ret = (SbxEgress) {};
                return 0;
        }
        if ((r = sbx_json_parse_strict(json, "egress", &o, error)) < 0)
                return r;
        if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, "mode", &mode) ||
            !json_object_is_type(mode, json_type_string) || !json_object_object_get_ex(o, "allow", &a) ||
            !json_object_is_type(a, json_type_array))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "egress: the stored form is not {mode, allow}");
        n = json_object_array_length(a);
        allow = calloc(n + 1, sizeof(char *));
        if (!allow)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if ((r = sbx_json_get_text("egress.allow", json_object_array_get_idx(a, i),
                                           (const char **) &allow[i], error)) < 0)
                        return r;
        return sbx_egress_build(json_object_get_string(mode), allow, n, ret, error);
}

SbxEgressEffective sbx_egress_effective(const SbxPolicyEgress *p, const SbxEgress *e, bool network_isolated) {
        if (network_isolated || e->mode == SBX_EGRESS_MODE_NONE)
                return SBX_EGRESS_EFFECTIVE_NONE;
        if (e->mode == SBX_EGRESS_MODE_ALLOWLIST)
                return SBX_EGRESS_EFFECTIVE_ALLOWLIST;
        switch (p->base) {
        case SBX_EGRESS_BASE_NONE:
                return e->n_allow > 0 ? SBX_EGRESS_EFFECTIVE_ALLOWLIST : SBX_EGRESS_EFFECTIVE_NONE;
        case SBX_EGRESS_BASE_OPEN:
                return SBX_EGRESS_EFFECTIVE_OPEN;
        default:
                return SBX_EGRESS_EFFECTIVE_PUBLIC;
        }
}

bool sbx_egress_needs_rules(const SbxPolicyEgress *p, const SbxEgress *e, bool network_isolated) {
        return !network_isolated && sbx_egress_effective(p, e, false) != SBX_EGRESS_EFFECTIVE_OPEN;
}
