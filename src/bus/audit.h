/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* One structured record per authorized or refused state change (docs/api.md,
 * "Audit"). In the journal it carries MESSAGE_ID=SBX_AUDIT_MESSAGE_ID and the fields
 * XAGENT_UID, XAGENT_VERB, XAGENT_SANDBOX, XAGENT_OWNER, XAGENT_OUTCOME and
 * XAGENT_REASON, so `journalctl MESSAGE_ID=… XAGENT_OUTCOME=…` finds them; on
 * stderr it is one line: AUDIT uid=… verb=… sandbox="…" outcome=… owner=… reason="…". */

#include <sys/types.h>

#define SBX_AUDIT_MESSAGE_ID "649d49922cb842e39d429c30a4e3c7f1"

typedef struct AuditRecord {
        uid_t uid;              /* the caller */
        const char *verb;       /* "create", "start", … */
        const char *target;     /* the sandbox name or snapshot id, "-" if none */
        const char *owner;      /* whose object, as a decimal uid; NULL if not known */
        const char *outcome;    /* "ok", or the D-Bus error name */
        const char *reason;     /* the error's message; NULL for "ok" */
} AuditRecord;

void audit_record(const AuditRecord *a);
