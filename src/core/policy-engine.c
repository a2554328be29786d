/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The host policy's "engine" key (docs/engines.md): which Docker engine, and for a tcp://
 * one the TLS files. Only the text is judged here; the files themselves (root's
 * alone, loadable) are the daemon's check at start-up. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "json-util.h"
#include "policy-internal.h"

#define UNIX_PREFIX "unix://"
#define TCP_PREFIX "tcp://"
#define ENGINE_TEXT_MAX 1024U

void policy_engine_done(SbxPolicyEngine *e) {
        free(e->host);
        free(e->tls_ca);
        free(e->tls_cert);
        free(e->tls_key);
        free(e->server_name);
        *e = (SbxPolicyEngine) {};
}

bool sbx_policy_engine_remote(const SbxPolicy *p) {
        return p && p->engine.host && strncmp(p->engine.host, TCP_PREFIX, strlen(TCP_PREFIX)) == 0;
}

static bool is_host_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("-._", c);
}

/* HOST:PORT with HOST a name or IPv4 literal, or [IPv6]:PORT; PORT 1–65535. */
static bool valid_host_port(const char *s) {
        const char *colon, *host_end;
        unsigned long port;
        char *end;

        if (s[0] == '[') {
                host_end = strchr(s, ']');
                if (!host_end || host_end == s + 1 || host_end[1] != ':')
                        return false;
                for (const char *c = s + 1; c < host_end; c++)
                        if (!strchr("0123456789abcdefABCDEF:.", *c))
                                return false;
                colon = host_end + 1;
        } else {
                colon = strrchr(s, ':');
                if (!colon || colon == s)
                        return false;
                for (const char *c = s; c < colon; c++)
                        if (!is_host_char(*c))
                                return false;
        }
        if (!strchr("0123456789", colon[1]))
                return false;
        errno = 0;
        port = strtoul(colon + 1, &end, 10);
        return errno == 0 && *end == 0 && port >= 1 && port <= 65535;
}

static int check_host(const char *field, const char *s, SbxError *error) {
        if (strlen(s) > ENGINE_TEXT_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: longer than %u bytes", field,
                                     ENGINE_TEXT_MAX);
        if (strncmp(s, UNIX_PREFIX, strlen(UNIX_PREFIX)) == 0) {
                if (s[strlen(UNIX_PREFIX)] != '/')
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: '%s' does not name an absolute socket path", field, s);
                return 0;
        }
        if (strncmp(s, TCP_PREFIX, strlen(TCP_PREFIX)) == 0) {
                if (!valid_host_port(s + strlen(TCP_PREFIX)))
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: '%s' is not tcp://HOST:PORT", field, s);
                return 0;
        }
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                             "%s: '%s' is neither unix:///PATH nor tcp://HOST:PORT", field, s);
}

static int check_file(const char *field, const char *s, SbxError *error) {
        if (s[0] != '/')
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: '%s' is not an absolute path", field, s);
        if (strlen(s) > ENGINE_TEXT_MAX)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: longer than %u bytes", field,
                                     ENGINE_TEXT_MAX);
        return 0;
}

static int check_server_name(const char *field, const char *s, SbxError *error) {
        if (isempty(s) || strlen(s) > 253)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s: must be 1–253 bytes", field);
        for (const char *c = s; *c; c++)
                if (!is_host_char(*c) && *c != ':')
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: '%s' is not a host name or address", field, s);
        return 0;
}

static const struct {
        const char *name;
        size_t offset;
        int (*check)(const char *field, const char *s, SbxError *error);
} engine_keys[] = {
        { "host",        offsetof(SbxPolicyEngine, host),        check_host },
        { "tls_ca",      offsetof(SbxPolicyEngine, tls_ca),      check_file },
        { "tls_cert",    offsetof(SbxPolicyEngine, tls_cert),    check_file },
        { "tls_key",     offsetof(SbxPolicyEngine, tls_key),     check_file },
        { "server_name", offsetof(SbxPolicyEngine, server_name), check_server_name },
};

static int parse_member(SbxPolicyEngine *e, const char *key, const char *k, json_object *v, SbxError *error) {
        char field[64];
        const char *s = NULL;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(engine_keys); i++) {
                char **dst = (char **) ((uint8_t *) e + engine_keys[i].offset);

                if (!streq(k, engine_keys[i].name))
                        continue;
                snprintf(field, sizeof field, "%s.%s", key, k);
                if ((r = sbx_json_get_text(field, v, &s, error)) < 0 || (r = engine_keys[i].check(field, s, error)) < 0)
                        return r;
                free(*dst);
                *dst = strdup(s);
                return *dst ? 0 : -ENOMEM;
        }
        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                             "%s: unknown key '%s' (known: host, tls_ca, tls_cert, tls_key, server_name)", key, k);
}

/* tcp:// is TLS only: all three files; unix:// has none of them. */
static int check_engine(const SbxPolicyEngine *e, const char *key, SbxError *error) {
        bool tls = e->tls_ca || e->tls_cert || e->tls_key || e->server_name;

        if (!e->host)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS, "%s.host: missing", key);
        if (strncmp(e->host, TCP_PREFIX, strlen(TCP_PREFIX)) != 0) {
                if (tls)
                        return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                             "%s: tls_ca, tls_cert, tls_key and server_name are for a tcp:// host "
                                             "only, not '%s'", key, e->host);
                return 0;
        }
        if (!e->tls_ca || !e->tls_cert || !e->tls_key)
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: the tcp:// host '%s' needs tls_ca, tls_cert and tls_key (missing: %s%s%s): "
                                     "plain TCP is refused, a remote engine is mutual TLS only", key, e->host,
                                     e->tls_ca ? "" : "tls_ca ", e->tls_cert ? "" : "tls_cert ",
                                     e->tls_key ? "" : "tls_key");
        return 0;
}

int policy_parse_engine(SbxPolicy *p, const char *key, json_object *v, SbxError *error) {
        _cleanup_(policy_engine_done) SbxPolicyEngine e = {};
        int r;

        if (!json_object_is_type(v, json_type_object))
                return sbx_error_set(error, SBX_ERROR_INVALID_ARGS,
                                     "%s: must be an object { \"host\": …, \"tls_ca\": …, … }", key);
        json_object_object_foreach(v, k, val)
                if ((r = parse_member(&e, key, k, val, error)) < 0)
                        return r;
        if ((r = check_engine(&e, key, error)) < 0)
                return r;
        policy_engine_done(&p->engine);
        p->engine = e;
        e = (SbxPolicyEngine) {};
        return 0;
}
