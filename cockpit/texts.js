/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * What a sandbox's cells say (docs/cockpit.md): its owner, verdict, labels,
 * lifetimes, egress and processes as text, from its properties and its inspection.
 * The table's row (xagent-sandbox.js) shows them all; the details (details.js) show
 * the lifetimes and the egress again beside their forms. */

import { duration } from "./common.js";

export function ownerName(uid) {
    if (uid === undefined)
        return "—";
    return uid === 0 ? "root (0)" : `uid ${uid}`;
}

export function verdictText(sb) {
    const verdict = sb.props.Verdict || "unverified";
    if (verdict !== "mismatch")
        return verdict;
    const fields = sb.inspection && sb.inspection.mismatched_fields;
    if (fields && fields.length)
        return `mismatch: ${fields.join(", ")}`;
    return "mismatch";
}

export function lifetimesText(sb) {
    const p = sb.props;
    const parts = [];
    if (p.IdleTimeout) {
        let text = `${p.OnIdle === "pause" ? "pauses" : "stops"} after ${duration(p.IdleTimeout)} idle`;
        if (p.State === "running" && p.LastActivity)
            text += ` (in ${duration(p.LastActivity / 1e6 + p.IdleTimeout - Date.now() / 1000)})`;
        parts.push(text);
    }
    if (p.ExpiresAt)
        parts.push(`deleted in ${duration(p.ExpiresAt / 1e6 - Date.now() / 1000)}`);
    return parts.length ? parts.join("; ") : "none";
}

export function egressText(sb) {
    const egress = sb.inspection && sb.inspection.egress;
    if (!egress)
        return sb.inspection && sb.inspection.network_isolated ? "none (no network)" : "—";
    let text = egress.mode || "default";
    if (egress.effective && egress.effective !== text)
        text += ` (${egress.effective})`;
    if (egress.allow && egress.allow.length)
        text += `: ${egress.allow.join(", ")}`;
    if (egress.enforced === false)
        text += " (not enforced)";
    return text;
}

export function labelsText(labels) {
    const keys = Object.keys(labels || {}).sort();
    return keys.length ? keys.map(k => `${k}=${labels[k]}`).join(", ") : "—";
}

export function processesText(sb) {
    const execs = [...sb.execs.values()];
    const running = execs.filter(e => e.running).length;
    return execs.length ? `${running} running, ${execs.length - running} ended` : "—";
}
