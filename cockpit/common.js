/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The administrator's page of xagent-sandboxd (docs/cockpit.md): what every part of it
 * shares — the service's names, the bus connection and the page's model, values
 * without cockpit.dbus's {t, v} wrappers, errors in words, small element makers. */


const BUS_NAME = "org.xagent.Sandbox1";
export const ROOT_PATH = "/org/xagent/Sandbox1";
const MANAGER = "org.xagent.Sandbox1.Manager";
export const SANDBOX = "org.xagent.Sandbox1.Sandbox";
export const EXEC = "org.xagent.Sandbox1.Exec";
export const PROPERTIES = "org.freedesktop.DBus.Properties";
export const OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager";

/* D-Bus errors in words: what the reader should understand, then the service's own
 * message (which names the field, the rule or the limit). */
const ERROR_WORDS = {
    "org.freedesktop.DBus.Error.AccessDenied": "Not authorized: polkit refused this",
    "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
        "Not authorized: polkit asks for an administrator's password, which this page cannot give",
    "org.freedesktop.DBus.Error.InvalidArgs": "Invalid input",
    "org.freedesktop.DBus.Error.LimitsExceeded": "A limit is reached",
    "org.freedesktop.DBus.Error.ServiceUnknown": "The sandbox service is not installed or cannot start",
    "org.freedesktop.DBus.Error.NameHasNoOwner": "The sandbox service is not running",
    "org.freedesktop.DBus.Error.NoReply": "The sandbox service did not answer in time",
    "org.freedesktop.DBus.Error.UnknownObject": "That sandbox or process is gone",
    "org.freedesktop.DBus.Error.UnknownMethod": "The sandbox service does not offer this (an older version?)",
    "org.freedesktop.DBus.Error.IOError": "Input or output failed",
    "org.xagent.Sandbox1.Error.NoSuchSandbox": "There is no such sandbox",
    "org.xagent.Sandbox1.Error.SandboxExists": "A sandbox of that name exists already",
    "org.xagent.Sandbox1.Error.RuntimeConflict": "Conflicts with what Docker has",
    "org.xagent.Sandbox1.Error.RecoveryRequired": "The sandbox cannot be started as it is",
    "org.xagent.Sandbox1.Error.NoSuchSnapshot": "There is no such snapshot",
    "org.xagent.Sandbox1.Error.SnapshotExists": "A snapshot of that name exists already",
    "org.xagent.Sandbox1.Error.PolicyViolation": "The host's policy does not allow this",
    "org.xagent.Sandbox1.Error.BackendUnavailable": "Docker does not answer",
    "org.xagent.Sandbox1.Error.BackendError": "Docker refused",
    "org.xagent.Sandbox1.Error.NotRunning": "The sandbox is not running",
    "org.xagent.Sandbox1.Error.SandboxBusy": "The sandbox is in use",
    "org.xagent.Sandbox1.Error.TimedOut": "Timed out",
    "org.xagent.Sandbox1.Error.StoreUnavailable": "The service's state database cannot be used",
    "org.xagent.Sandbox1.Error.AuthorizationTimedOut": "polkit did not answer in time; nothing was done",
};

export const client = cockpit.dbus(BUS_NAME, { bus: "system", superuser: "try" });
export const model = {
    sandboxes: new Map(),   /* object path → Sandbox (below) */
    policy: null,
    uid: null,              /* whose connection: the login user's, or 0 as superuser */
    owner: undefined,       /* the bus name's owner as last told */
};
export const $ = id => document.getElementById(id);

/* ---- values ----------------------------------------------------------------- */

/* A decoded cockpit.dbus value without its {t, v} wrappers (nested a{sv} too). */
export function plain(value) {
    if (Array.isArray(value))
        return value.map(plain);
    if (value && typeof value === "object") {
        if (typeof value.t === "string" && "v" in value && Object.keys(value).length === 2)
            return plain(value.v);
        const out = {};
        for (const key of Object.keys(value))
            out[key] = plain(value[key]);
        return out;
    }
    return value;
}

export function utf8(base64) {
    if (!base64)
        return "";
    return cockpit.utf8_decoder().decode(cockpit.base64_decode(base64));
}

export function duration(seconds) {
    seconds = Math.max(0, Math.round(seconds));
    if (seconds < 120)
        return `${seconds} s`;
    if (seconds < 7200)
        return `${Math.round(seconds / 60)} min`;
    if (seconds < 172800)
        return `${Math.round(seconds / 3600)} h`;
    return `${Math.round(seconds / 86400)} days`;
}

export function bytes(n) {
    if (n === undefined)
        return "—";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
        n /= 1024;
        i++;
    }
    return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

export function errorText(ex) {
    const words = ERROR_WORDS[ex && ex.name] || "Failed";
    const message = ex ? (ex.message || cockpit.message(ex)) : "";
    return message ? `${words}: ${message}` : words;
}

/* ---- the page's messages ------------------------------------------------------ */

export function showError(what, ex) {
    const alert = element("div", "pf-c-alert pf-m-danger pf-m-inline");
    alert.setAttribute("role", "alert");
    const title = element("p", "pf-c-alert__title", `${what}: ${errorText(ex)}`);
    const dismiss = button("Dismiss", "pf-m-link", () => alert.remove());
    dismiss.setAttribute("aria-label", `Dismiss: ${what}`);
    alert.append(title, dismiss);
    $("errors").append(alert);
}

export function setStatus(text) {
    $("service-status").textContent = text;
}

/* ---- elements ----------------------------------------------------------------- */

export function element(tag, className, text) {
    const e = document.createElement(tag);
    if (className)
        e.className = className;
    if (text !== undefined)
        e.textContent = text;
    return e;
}

/* A button whose accessible name is `label` (visible text `text`, default label). */
export function button(label, modifier, onclick, text) {
    const b = element("button", `pf-c-button ${modifier || "pf-m-secondary"}`, text || label);
    b.type = "button";
    if (text)
        b.setAttribute("aria-label", label);
    b.addEventListener("click", onclick);
    return b;
}

export function labelled(labelText, input) {
    const id = `f${Math.random().toString(36).slice(2)}`;
    const label = element("label", "", labelText);
    label.htmlFor = id;
    input.id = id;
    return [label, input];
}

export function input(type, value) {
    const e = element("input", "pf-c-form-control");
    e.type = type;
    if (value !== undefined)
        e.value = value;
    return e;
}

export function select(options, value) {
    const e = element("select", "pf-c-form-control");
    for (const [v, text] of options)
        e.append(new Option(text, v, false, v === value));
    return e;
}

/* ---- the service ------------------------------------------------------------ */

export function call(path, iface, method, signature, args, timeout) {
    return client.call(path, iface, method, args || [], { type: signature || "", timeout: timeout || 60000 });
}

export function manager(method, signature, args, timeout) {
    return call(ROOT_PATH, MANAGER, method, signature, args, timeout);
}

/* The name the Manager's by-name methods take for this sandbox from this
 * connection: one's own plainly; root reaches another's as "~UID:NAME". */
export function callName(sb) {
    if (model.uid === 0 && sb.props.Owner !== 0)
        return `~${sb.props.Owner}:${sb.props.Name}`;
    return sb.props.Name;
}

/* A call made for a control: its error shown in words; the list is updated by the
 * service's signals, not by the reply. */
export function run(what, fn) {
    return fn().catch(ex => showError(what, ex));
}

export function splitList(text) {
    return text.split(/[,\s]+/).filter(s => s.length > 0);
}
