/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <stdio.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "audit.h"
#include "docker-tls.h"
#include "log.h"
#include "macro.h"

/* Reasons can carry what a caller sent (a key, a path): '"' and '\\' escaped, every
 * control character as \xNN, so a record is one line that says what it says. */
static char *quote(const char *s) {
        char *out = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&out, &size);

        if (!f)
                return NULL;
        for (const unsigned char *c = (const unsigned char *) s; *c; c++)
                if (*c == '"' || *c == '\\')
                        fprintf(f, "\\%c", *c);
                else if (*c < 0x20 || *c == 0x7f)
                        fprintf(f, "\\x%02x", *c);
                else
                        fputc(*c, f);
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

static void to_journal(const AuditRecord *a, const char *message) {
        const char *fields[] = {
                "MESSAGE_ID=" SBX_AUDIT_MESSAGE_ID,
                "SYSLOG_IDENTIFIER=xagent-sandboxd",
        };
        char *owned[8] = {};
        struct iovec iov[16];
        size_t n = 0, k = 0;
        bool ok = streq(a->outcome, "ok");

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                iov[n++] = (struct iovec) { (char *) fields[i], strlen(fields[i]) };
        if (asprintf(&owned[k++], "MESSAGE=%s", message) < 0 ||
            asprintf(&owned[k++], "PRIORITY=%i", ok ? LOG_INFO : LOG_NOTICE) < 0 ||
            asprintf(&owned[k++], "XAGENT_UID=%u", (unsigned) a->uid) < 0 ||
            asprintf(&owned[k++], "XAGENT_VERB=%s", a->verb) < 0 ||
            asprintf(&owned[k++], "XAGENT_SANDBOX=%s", a->target) < 0 ||
            asprintf(&owned[k++], "XAGENT_OUTCOME=%s", a->outcome) < 0 ||
            (a->owner && asprintf(&owned[k++], "XAGENT_OWNER=%s", a->owner) < 0) ||
            (a->reason && asprintf(&owned[k++], "XAGENT_REASON=%s", a->reason) < 0))
                goto finish;
        for (size_t i = 0; i < k; i++)
                iov[n++] = (struct iovec) { owned[i], strlen(owned[i]) };
        (void) sd_journal_sendv(iov, (int) n);
finish:
        for (size_t i = 0; i < k; i++)
                free(owned[i]);
}

void audit_record(const AuditRecord *a) {
        _cleanup_free_ char *target = quote(a->target), *reason = a->reason ? quote(a->reason) : NULL,
                            *message = NULL;

        char engine[SBX_DOCKER_TLS_FINGERPRINT_MAX];

        /* A remote engine's identity: the certificate it proved itself with (local: none). */
        (void) sbx_docker_tls_engine_identity(engine);
        if (!target || asprintf(&message, "AUDIT uid=%u verb=%s sandbox=\"%s\" outcome=%s owner=%s%s%s%s%s%s",
                                (unsigned) a->uid, a->verb, target, a->outcome, a->owner ?: "-",
                                reason ? " reason=\"" : "", reason ?: "", reason ? "\"" : "",
                                engine[0] ? " engine=" : "", engine) < 0) {
                log_oom();
                return;
        }
        if (log_to_journal())
                to_journal(a, message);
        else
                fprintf(stderr, "%s\n", message);
}
