/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The administrator's page of xagent-sandboxd (docs/cockpit.md): plain JavaScript on
 * Cockpit's own cockpit.js, no build step.
 *
 * Everything goes through the service's own API on the system bus as the logged-in
 * user (or root, with Cockpit's administrative access: superuser "try"), so polkit
 * decides each verb as it does for any other client. The list follows the service's
 * signals: they are unicasts to the connections that called it (docs/api.md), so the
 * page subscribes and then calls GetManagedObjects, and does both again whenever the
 * bus name gets a new owner (an idle exit and a re-activation). Nothing polls.
 *
 * cockpit.dbus sends a{sv} values as {t, v} and `ay` as base64, and cannot pass a
 * descriptor: StartExec, Attach, the copies and leases are out of reach of a page; the
 * terminal is `xagent-sandboxctl shell` run with cockpit.spawn on a pseudo-terminal.
 */
"use strict";

(function () {
    const BUS_NAME = "org.xagent.Sandbox1";
    const ROOT_PATH = "/org/xagent/Sandbox1";
    const MANAGER = "org.xagent.Sandbox1.Manager";
    const SANDBOX = "org.xagent.Sandbox1.Sandbox";
    const EXEC = "org.xagent.Sandbox1.Exec";
    const PROPERTIES = "org.freedesktop.DBus.Properties";
    const OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager";

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

    const client = cockpit.dbus(BUS_NAME, { bus: "system", superuser: "try" });
    const model = {
        sandboxes: new Map(),   /* object path → Sandbox (below) */
        policy: null,
        uid: null,              /* whose connection: the login user's, or 0 as superuser */
        owner: undefined,       /* the bus name's owner as last told */
    };
    let terminal = null;
    const $ = id => document.getElementById(id);

    /* ---- values ----------------------------------------------------------------- */

    /* A decoded cockpit.dbus value without its {t, v} wrappers (nested a{sv} too). */
    function plain(value) {
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

    function utf8(base64) {
        if (!base64)
            return "";
        return cockpit.utf8_decoder().decode(cockpit.base64_decode(base64));
    }

    function duration(seconds) {
        seconds = Math.max(0, Math.round(seconds));
        if (seconds < 120)
            return `${seconds} s`;
        if (seconds < 7200)
            return `${Math.round(seconds / 60)} min`;
        if (seconds < 172800)
            return `${Math.round(seconds / 3600)} h`;
        return `${Math.round(seconds / 86400)} days`;
    }

    function bytes(n) {
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

    function errorText(ex) {
        const words = ERROR_WORDS[ex && ex.name] || "Failed";
        const message = ex ? (ex.message || cockpit.message(ex)) : "";
        return message ? `${words}: ${message}` : words;
    }

    /* ---- the page's messages ------------------------------------------------------ */

    function showError(what, ex) {
        const alert = element("div", "pf-c-alert pf-m-danger pf-m-inline");
        alert.setAttribute("role", "alert");
        const title = element("p", "pf-c-alert__title", `${what}: ${errorText(ex)}`);
        const dismiss = button("Dismiss", "pf-m-link", () => alert.remove());
        dismiss.setAttribute("aria-label", `Dismiss: ${what}`);
        alert.append(title, dismiss);
        $("errors").append(alert);
    }

    function setStatus(text) {
        $("service-status").textContent = text;
    }

    /* ---- elements ----------------------------------------------------------------- */

    function element(tag, className, text) {
        const e = document.createElement(tag);
        if (className)
            e.className = className;
        if (text !== undefined)
            e.textContent = text;
        return e;
    }

    /* A button whose accessible name is `label` (visible text `text`, default label). */
    function button(label, modifier, onclick, text) {
        const b = element("button", `pf-c-button ${modifier || "pf-m-secondary"}`, text || label);
        b.type = "button";
        if (text)
            b.setAttribute("aria-label", label);
        b.addEventListener("click", onclick);
        return b;
    }

    function labelled(labelText, input) {
        const id = `f${Math.random().toString(36).slice(2)}`;
        const label = element("label", "", labelText);
        label.htmlFor = id;
        input.id = id;
        return [label, input];
    }

    function input(type, value) {
        const e = element("input", "pf-c-form-control");
        e.type = type;
        if (value !== undefined)
            e.value = value;
        return e;
    }

    function select(options, value) {
        const e = element("select", "pf-c-form-control");
        for (const [v, text] of options)
            e.append(new Option(text, v, false, v === value));
        return e;
    }

    /* ---- the service ------------------------------------------------------------ */

    function call(path, iface, method, signature, args, timeout) {
        return client.call(path, iface, method, args || [], { type: signature || "", timeout: timeout || 60000 });
    }

    function manager(method, signature, args, timeout) {
        return call(ROOT_PATH, MANAGER, method, signature, args, timeout);
    }

    /* The name the Manager's by-name methods take for this sandbox from this
     * connection: one's own plainly; root reaches another's as "~UID:NAME". */
    function callName(sb) {
        if (model.uid === 0 && sb.props.Owner !== 0)
            return `~${sb.props.Owner}:${sb.props.Name}`;
        return sb.props.Name;
    }

    class Sandbox {
        constructor(path) {
            this.path = path;
            this.props = {};
            this.inspection = null;
            this.usage = null;
            this.output = new Map();      /* exec path → {text, offset} */
            this.execs = new Map();       /* exec path → {argv0, running, status}: ListExecs */
            this.expanded = false;
            this.row = null;
            this.details = null;
            this.inspecting = null;
        }
    }

    /* Everything anew: the objects the caller may read, the policy, each inspection. */
    function synchronize() {
        return call(ROOT_PATH, OBJECT_MANAGER, "GetManagedObjects", "", [])
                .then(([objects]) => {
                    const seen = new Set();
                    for (const path of Object.keys(objects)) {
                        seen.add(path);
                        added(path, objects[path]);
                    }
                    for (const path of [...model.sandboxes.keys()])
                        if (!seen.has(path))
                            removed(path, [SANDBOX]);
                    render();
                    return manager("GetPolicy", "", []);
                })
                .then(([policy]) => {
                    model.policy = plain(policy);
                    fillPolicy();
                })
                .catch(ex => {
                    setStatus(`The sandbox service cannot be reached. ${errorText(ex)}`);
                });
    }

    /* A sandbox object: its properties (all of them: a signal may leave out those it
     * only invalidates), its inspection, its processes. An exec object is found
     * through its sandbox's ListExecs. */
    function added(path, interfaces) {
        if (interfaces[SANDBOX]) {
            let sb = model.sandboxes.get(path);
            if (!sb) {
                sb = new Sandbox(path);
                model.sandboxes.set(path, sb);
            }
            Object.assign(sb.props, plain(interfaces[SANDBOX]));
            call(path, PROPERTIES, "GetAll", "s", [SANDBOX])
                    .then(([all]) => {
                        Object.assign(sb.props, plain(all));
                        update(sb);
                    })
                    .catch(() => {});
            inspect(sb);
            loadExecs(sb);
        }
        if (interfaces[EXEC])
            execChanged(path, {});
    }

    /* An exec object changed (or appeared): its sandbox's list, else every list. */
    function execChanged(path, changes) {
        for (const sb of model.sandboxes.values()) {
            const e = sb.execs.get(path);
            if (e) {
                if ("Running" in changes)
                    e.running = changes.Running;
                if ("ExitStatus" in changes)
                    e.status = changes.ExitStatus;
                update(sb);
                return;
            }
        }
        for (const sb of model.sandboxes.values())
            loadExecs(sb);
    }

    function removed(path, interfaces) {
        if (interfaces.includes(SANDBOX)) {
            const sb = model.sandboxes.get(path);
            if (sb) {
                model.sandboxes.delete(path);
                if (sb.row)
                    sb.row.remove();
                if (sb.details)
                    sb.details.remove();
            }
        }
        if (interfaces.includes(EXEC))
            for (const sb of model.sandboxes.values())
                if (sb.execs.delete(path))
                    update(sb);
    }

    /* The inspection tells what the properties do not: the mismatched fields, egress. */
    function inspect(sb) {
        if (sb.inspecting)
            return sb.inspecting;
        sb.inspecting = call(sb.path, SANDBOX, "Inspect", "", [])
                .then(([inspection]) => {
                    sb.inspection = plain(inspection);
                })
                .catch(ex => {
                    if (model.sandboxes.has(sb.path))
                        sb.inspectionError = errorText(ex);
                })
                .finally(() => {
                    sb.inspecting = null;
                    update(sb);
                });
        return sb.inspecting;
    }

    function propertiesChanged(path, iface, changed, invalidated) {
        if (iface === EXEC) {
            execChanged(path, plain(changed));
            return;
        }
        const sb = model.sandboxes.get(path);
        if (iface !== SANDBOX || !sb)
            return;
        const values = plain(changed);
        Object.assign(sb.props, values);
        update(sb);
        /* A process started or ended, or the sandbox stopped: its processes anew. */
        if ("LastActivity" in values || "State" in values)
            loadExecs(sb);
        /* Image, Fingerprint, Labels are only invalidated: ask for them. */
        for (const name of invalidated)
            call(path, PROPERTIES, "Get", "ss", [SANDBOX, name])
                    .then(([value]) => {
                        sb.props[name] = plain(value);
                        update(sb);
                    })
                    .catch(() => {});
        inspect(sb);
    }

    function onSignal(path, iface, member, args) {
        if (iface === OBJECT_MANAGER && member === "InterfacesAdded") {
            added(args[0], args[1]);
            render();
        } else if (iface === OBJECT_MANAGER && member === "InterfacesRemoved") {
            removed(args[0], args[1]);
            render();
        } else if (iface === PROPERTIES && member === "PropertiesChanged") {
            propertiesChanged(path, args[0], args[1], args[2] || []);
        } else if (iface === EXEC && member === "Exited") {
            execChanged(path, { Running: false, ExitStatus: args[0] });
        }
    }

    /* ---- the table ----------------------------------------------------------------- */

    function ownerName(uid) {
        if (uid === undefined)
            return "—";
        return uid === 0 ? "root (0)" : `uid ${uid}`;
    }

    function verdictText(sb) {
        const verdict = sb.props.Verdict || "unverified";
        if (verdict !== "mismatch")
            return verdict;
        const fields = sb.inspection && sb.inspection.mismatched_fields;
        if (fields && fields.length)
            return `mismatch: ${fields.join(", ")}`;
        return "mismatch";
    }

    function lifetimesText(sb) {
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

    function egressText(sb) {
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

    function labelsText(labels) {
        const keys = Object.keys(labels || {}).sort();
        return keys.length ? keys.map(k => `${k}=${labels[k]}`).join(", ") : "—";
    }

    function processesText(sb) {
        const execs = [...sb.execs.values()];
        const running = execs.filter(e => e.running).length;
        return execs.length ? `${running} running, ${execs.length - running} ended` : "—";
    }

    function rowActions(sb) {
        const name = sb.props.Name;
        const state = sb.props.State;
        const act = (label, fn) => button(`${label} ${name}`, label === "Delete" ? "pf-m-danger pf-m-small" : "pf-m-secondary pf-m-small",
                                          () => run(`${label} ${name}`, fn), label);
        const actions = [];
        if (state === "stopped")
            actions.push(act("Start", () => call(sb.path, SANDBOX, "Start", "", [])));
        if (state === "running")
            actions.push(act("Pause", () => call(sb.path, SANDBOX, "Pause", "", [])));
        if (state === "paused")
            actions.push(act("Resume", () => call(sb.path, SANDBOX, "Resume", "", [])));
        if (state !== "stopped")
            actions.push(act("Stop", () => call(sb.path, SANDBOX, "Stop", "a{sv}", [{}], 90000)));
        if (state === "running")
            actions.push(button(`Terminal ${name}`, "pf-m-secondary pf-m-small", () => openTerminal(sb), "Terminal"));
        actions.push(act("Delete", () => call(sb.path, SANDBOX, "Delete", "", [])));
        actions.push(button(`${sb.expanded ? "Hide details" : "Details"} ${name}`, "pf-m-link pf-m-small",
                            () => toggleDetails(sb), sb.expanded ? "Hide details" : "Details"));
        return actions;
    }

    /* A call made for a control: its error shown in words; the list is updated by the
     * service's signals, not by the reply. */
    function run(what, fn) {
        return fn().catch(ex => showError(what, ex));
    }

    const COLUMNS = ["Name", "Owner", "State", "Verdict", "Image", "Labels", "Lifetimes", "Leases",
        "Egress", "Processes"];

    function rowCells(sb) {
        const p = sb.props;
        return {
            Name: p.Name || "",
            Owner: ownerName(p.Owner),
            State: p.State || "—",
            Verdict: verdictText(sb),
            Image: p.Image || "—",
            Labels: labelsText(p.Labels),
            Lifetimes: lifetimesText(sb),
            Leases: String(p.Leases ?? 0),
            Egress: egressText(sb),
            Processes: processesText(sb),
        };
    }

    /* The row's cells change their text; its buttons are made anew only when what they
     * offer changes (so a control is not replaced under a pointer). */
    function update(sb) {
        if (!model.sandboxes.has(sb.path))
            return;
        const p = sb.props;
        if (!sb.row) {
            sb.row = element("tr");
            sb.row.dataset.path = sb.path;
            sb.cells = {};
            for (const column of COLUMNS) {
                sb.cells[column] = element("td");
                sb.cells[column].dataset.label = column;
                sb.row.append(sb.cells[column]);
            }
            sb.actions = element("td");
            sb.actions.dataset.label = "Actions";
            sb.row.append(sb.actions);
        }
        sb.row.dataset.name = p.Name || "";
        sb.row.dataset.owner = String(p.Owner);
        const texts = rowCells(sb);
        for (const column of COLUMNS)
            if (sb.cells[column].textContent !== texts[column])
                sb.cells[column].textContent = texts[column];
        sb.cells.Verdict.classList.toggle("sbx-mismatch", p.Verdict === "mismatch");
        const offer = `${p.State}/${sb.expanded}`;
        if (sb.offer !== offer) {
            sb.offer = offer;
            const box = element("div", "sbx-actions");
            box.append(...rowActions(sb));
            sb.actions.replaceChildren(box);
        }
        if (sb.expanded)
            updateDetails(sb);
    }

    function render() {
        const tbody = $("sandbox-rows");
        const sorted = [...model.sandboxes.values()].sort((a, b) =>
            (a.props.Owner - b.props.Owner) || String(a.props.Name).localeCompare(String(b.props.Name)));
        const rows = [];
        for (const sb of sorted) {
            update(sb);
            rows.push(sb.row);
            if (sb.expanded && sb.details)
                rows.push(sb.details);
        }
        tbody.replaceChildren(...rows);
        $("empty").hidden = sorted.length > 0;
    }

    /* The clock in "deleted in …" moves without the service: the text only. */
    function tick() {
        for (const sb of model.sandboxes.values())
            if (sb.row && (sb.props.ExpiresAt || sb.props.IdleTimeout))
                update(sb);
    }

    /* ---- details: usage, egress, lifetimes, snapshot, processes ---------------------- */

    function toggleDetails(sb) {
        sb.expanded = !sb.expanded;
        if (sb.expanded) {
            buildDetails(sb);
            loadUsage(sb);
        }
        render();
    }

    function section(title) {
        const s = element("section");
        s.append(element("h3", "", title));
        return s;
    }

    function buildDetails(sb) {
        const name = sb.props.Name;
        const tr = element("tr", "sbx-details");
        const td = element("td");
        td.colSpan = 11;
        tr.append(td);

        const usage = section(`Usage of ${name}`);
        sb.usageText = element("p");
        usage.append(sb.usageText, button(`Refresh usage of ${name}`, "pf-m-secondary", () => loadUsage(sb), "Refresh usage"));

        const egress = section(`Egress of ${name}`);
        sb.egressText = element("p");
        const mode = select([["default", "The policy's default"], ["none", "None"],
            ["allowlist", "Only the allowed destinations"]], "default");
        const allow = input("text");
        const egressForm = element("form", "sbx-inline-form");
        egressForm.append(...labelled("Egress mode", mode), ...labelled("Allowed destinations", allow),
                          button(`Set egress of ${name}`, "pf-m-secondary", () => run(`Set egress of ${name}`, () => {
                              const egressArg = { mode: cockpit.variant("s", mode.value) };
                              const list = splitList(allow.value);
                              if (list.length)
                                  egressArg.allow = cockpit.variant("as", list);
                              return call(sb.path, SANDBOX, "SetEgress", "a{sv}", [egressArg])
                                      .then(() => inspect(sb));
                          }), "Set egress"));
        egress.append(sb.egressText, egressForm);

        const lifetimes = section(`Lifetimes of ${name}`);
        sb.lifetimesText = element("p");
        const idle = input("number");
        idle.min = "0";
        const onIdle = select([["stop", "Stop"], ["pause", "Pause"]], sb.props.OnIdle || "stop");
        const expire = input("number");
        expire.min = "0";
        const lifetimesForm = element("form", "sbx-inline-form");
        lifetimesForm.append(...labelled("Idle timeout (seconds, 0: never)", idle),
                             ...labelled("When idle", onIdle),
                             ...labelled("Delete after (seconds from now, 0: never)", expire),
                             button(`Set lifetimes of ${name}`, "pf-m-secondary",
                                    () => run(`Set lifetimes of ${name}`, () => {
                                        const options = { on_idle: cockpit.variant("s", onIdle.value) };
                                        if (idle.value !== "")
                                            options.idle_timeout = cockpit.variant("u", Number(idle.value));
                                        if (expire.value !== "")
                                            options.expire_after = cockpit.variant("u", Number(expire.value));
                                        return manager("SetSandboxLifetimes", "sa{sv}", [callName(sb), options]);
                                    }), "Set lifetimes"));
        lifetimes.append(sb.lifetimesText, lifetimesForm);

        const snapshot = section(`Snapshot of ${name}`);
        const snapshotId = input("text");
        const snapshotForm = element("form", "sbx-inline-form");
        sb.snapshotText = element("p");
        snapshotForm.append(...labelled("Snapshot name", snapshotId),
                            button(`Snapshot ${name}`, "pf-m-secondary", () => run(`Snapshot ${name}`, () =>
                                call(sb.path, SANDBOX, "Snapshot", "s", [snapshotId.value], 300000)
                                        .then(([image]) => {
                                            sb.snapshotText.textContent = `Snapshot ${snapshotId.value}: image ${image}`;
                                        })), "Snapshot"));
        snapshot.append(snapshotForm, sb.snapshotText);

        const processes = section(`Processes in ${name}`);
        sb.execList = element("ul");
        processes.append(sb.execList);

        for (const form of [egressForm, lifetimesForm, snapshotForm])
            form.addEventListener("submit", ev => ev.preventDefault());
        td.append(usage, egress, lifetimes, snapshot, processes);
        sb.details = tr;
    }

    function splitList(text) {
        return text.split(/[,\s]+/).filter(s => s.length > 0);
    }

    function updateDetails(sb) {
        if (!sb.details)
            buildDetails(sb);
        const u = sb.usage;
        sb.usageText.textContent = u
            ? `CPU time ${(u.cpu_usage_ns / 1e9).toFixed(2)} s; memory ${bytes(u.memory_bytes)} of ${bytes(u.memory_limit_bytes)}; ` +
              `${u.pids} processes` +
              (u.net_rx_bytes !== undefined ? `; network in ${bytes(u.net_rx_bytes)}, out ${bytes(u.net_tx_bytes)}` : "")
            : (sb.usageError || "Usage is read when the sandbox runs.");
        sb.egressText.textContent = `Now: ${egressText(sb)}`;
        const p = sb.props;
        sb.lifetimesText.textContent = `Now: ${lifetimesText(sb)}` +
            (p.LastActivity ? `; last used ${new Date(p.LastActivity / 1000).toLocaleString()}` : "") +
            (p.CreatedAt ? `; created ${new Date(p.CreatedAt / 1000).toLocaleString()}` : "");
        const execs = [...sb.execs.entries()];
        const key = JSON.stringify(execs.map(([path, e]) => [path, e, (sb.output.get(path) || {}).text]));
        if (sb.execKey === key)
            return;
        sb.execKey = key;
        const items = [];
        for (const [path, e] of execs) {
            const li = element("li");
            const id = path.split("/").pop();
            const argv0 = e.argv0;
            const state = e.running ? "running" : `ended with status ${e.status}`;
            li.append(element("span", "", `Process ${id} ${argv0 ? `(${argv0}) ` : ""}${state} `),
                      button(`Read output of process ${id}`, "pf-m-secondary", () => readOutput(sb, path), "Read output"));
            const out = sb.output.get(path);
            if (out) {
                const pre = element("pre", "sbx-output", out.text);
                pre.setAttribute("aria-label", `Output of process ${id}`);
                li.append(pre);
            }
            items.push(li);
        }
        if (!items.length)
            items.push(element("li", "", "No detached processes."));
        sb.execList.replaceChildren(...items);
    }

    function loadUsage(sb) {
        if (sb.props.State !== "running") {
            sb.usage = null;
            sb.usageError = "Usage is read when the sandbox runs.";
            update(sb);
            return;
        }
        call(sb.path, SANDBOX, "GetUsage", "", [])
                .then(([usage]) => {
                    sb.usage = plain(usage);
                    sb.usageError = null;
                })
                .catch(ex => {
                    sb.usage = null;
                    sb.usageError = `Usage: ${errorText(ex)}`;
                })
                .finally(() => update(sb));
    }

    /* The processes in it the caller may read (ListExecs: its owner and root). */
    function loadExecs(sb) {
        call(sb.path, SANDBOX, "ListExecs", "", [])
                .then(([list]) => {
                    sb.execs = new Map(list.map(([path, argv0, running, status]) =>
                        [path, { argv0, running, status }]));
                    update(sb);
                })
                .catch(() => {});
    }

    function readOutput(sb, path) {
        const out = sb.output.get(path) || { text: "", offset: 0 };
        run(`Read output of ${path.split("/").pop()}`, () =>
            call(path, EXEC, "ReadOutput", "t", [out.offset])
                    .then(([stdout, stderr, next]) => {
                        out.text += utf8(stdout);
                        const err = utf8(stderr);
                        if (err)
                            out.text += `\n[stderr]\n${err}`;
                        out.offset = next;
                        sb.output.set(path, out);
                        update(sb);
                    }));
    }

    /* ---- the terminal: xagent-sandboxctl shell on a pseudo-terminal ------------------- */

    /* What a terminal shows as text: no escape sequences, no carriage returns. */
    function terminalText(data) {
        return data
                .replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "")
                .replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "")
                .replace(/\x1b[()][A-Za-z0-9]/g, "")
                .replace(/\x1b[=>]/g, "")
                .replace(/\r\n/g, "\n")
                .replace(/\r/g, "");
    }

    function closeTerminal() {
        if (terminal) {
            terminal.closed = true;
            terminal.proc.close("terminated");
            terminal = null;
        }
        $("terminal-card").hidden = true;
    }

    function openTerminal(sb) {
        closeTerminal();
        const name = sb.props.Name;
        const argv = ["xagent-sandboxctl", "shell"];
        if (model.uid === 0 && sb.props.Owner !== 0)
            argv.push("--owner", String(sb.props.Owner));
        argv.push(name);
        const output = $("terminal-output");
        output.textContent = "";
        $("terminal-title").textContent = `Terminal in ${name}`;
        $("terminal-card").hidden = false;
        const proc = cockpit.spawn(argv, {
            pty: true, err: "out", superuser: "try",
            environ: ["TERM=dumb", "LANG=C.UTF-8"], window: { rows: 24, cols: 100 },
        });
        const session = { proc, name, closed: false };
        terminal = session;
        proc.stream(data => {
            output.textContent += terminalText(data);
            output.scrollTop = output.scrollHeight;
        });
        proc.then(() => {
            output.textContent += "\n[The shell ended.]\n";
        }).catch(ex => {
            if (!session.closed)
                output.textContent += `\n[The terminal ended: ${ex.message || cockpit.message(ex)}]\n`;
        });
        $("terminal-input").focus();
    }

    function terminalSend(text) {
        if (terminal)
            terminal.proc.input(text, true);
    }

    /* ---- create ----------------------------------------------------------------- */

    function fillPolicy() {
        const p = model.policy || {};
        const images = new Set();
        if (p.default_image)
            images.add(p.default_image);
        for (const glob of p.allowed_images || [])
            if (!/[*?[]/.test(glob))
                images.add(glob);
        $("create-images").replaceChildren(...[...images].map(i => new Option(i, i)));
        if (!$("create-image").value && p.default_image)
            $("create-image").value = p.default_image;
        $("create-image-help").textContent = (p.allowed_images || []).length
            ? `Allowed by the host's policy: ${p.allowed_images.join(", ")}`
            : "";
        if (p.max_cpus)
            $("create-cpus").max = String(p.max_cpus);
        if (p.max_memory_mib)
            $("create-memory").max = String(p.max_memory_mib);
        if (p.max_idle_timeout)
            $("create-idle").max = String(p.max_idle_timeout);
        if (p.max_expire_after)
            $("create-expire").max = String(p.max_expire_after);
    }

    function parseLabels(text) {
        const labels = {};
        for (const pair of text.split(",").map(s => s.trim())
                .filter(s => s)) {
            const eq = pair.indexOf("=");
            if (eq <= 0)
                throw new Error(`the label "${pair}" is not key=value`);
            labels[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
        }
        return labels;
    }

    function numberField(id, label) {
        const e = $(id);
        if (e.value === "")
            return undefined;
        const n = Number(e.value);
        if (!Number.isInteger(n) || n < 0)
            throw new Error(`${label} must be a whole number`);
        if (e.max && n > Number(e.max))
            throw new Error(`${label} may be at most ${e.max} (the host's policy)`);
        return n;
    }

    function createArgs() {
        const name = $("create-name").value.trim();
        if (!name)
            throw new Error("a name is needed");
        const image = $("create-image").value.trim();
        if (!image)
            throw new Error("an image is needed");
        const spec = { image: cockpit.variant("s", image) };
        const options = {};
        const cpus = numberField("create-cpus", "CPUs");
        const memory = numberField("create-memory", "Memory");
        const idle = numberField("create-idle", "Idle timeout");
        const expire = numberField("create-expire", "Delete after");
        if (cpus !== undefined)
            spec.cpus = cockpit.variant("u", cpus);
        if (memory !== undefined)
            spec.memory = cockpit.variant("u", memory);
        if ($("create-isolated").checked)
            spec.network_isolated = cockpit.variant("b", true);
        const labels = parseLabels($("create-labels").value);
        if (Object.keys(labels).length)
            options.labels = cockpit.variant("a{ss}", labels);
        if (idle !== undefined) {
            options.idle_timeout = cockpit.variant("u", idle);
            options.on_idle = cockpit.variant("s", $("create-on-idle").value);
        }
        if (expire !== undefined)
            options.expire_after = cockpit.variant("u", expire);
        const egress = $("create-egress").value;
        if (egress) {
            const e = { mode: cockpit.variant("s", egress) };
            const allow = splitList($("create-allow").value);
            if (allow.length)
                e.allow = cockpit.variant("as", allow);
            options.egress = cockpit.variant("a{sv}", e);
        }
        return [name, spec, options];
    }

    function create(ev) {
        ev.preventDefault();
        let args;
        try {
            args = createArgs();
        } catch (ex) {
            showError("Create", { name: "org.freedesktop.DBus.Error.InvalidArgs", message: ex.message });
            return;
        }
        const createButton = $("create-button");
        createButton.disabled = true;
        run(`Create ${args[0]}`, () => manager("CreateSandbox", "sa{sv}a{sv}", args, 120000)
                .then(() => {
                    $("create-name").value = "";
                }))
                .finally(() => {
                    createButton.disabled = false;
                });
    }

    /* ---- start ------------------------------------------------------------------ */

    function whoAmI() {
        /* With administrative access the page's bus connection is root's. */
        const superuser = cockpit.dbus(null, { bus: "internal" }).proxy("cockpit.Superuser", "/superuser");
        return Promise.all([cockpit.user(), superuser.wait().then(() => superuser.Current, () => "none")])
                .then(([user, current]) => {
                    model.uid = current && current !== "none" && current !== "init" ? 0 : user.id;
                }, () => {
                    model.uid = null;
                });
    }

    function init() {
        $("create-form").addEventListener("submit", create);
        $("terminal-form").addEventListener("submit", ev => {
            ev.preventDefault();
            terminalSend(`${$("terminal-input").value}\n`);
            $("terminal-input").value = "";
        });
        $("terminal-interrupt").addEventListener("click", () => terminalSend("\x03"));
        $("terminal-eof").addEventListener("click", () => terminalSend("\x04"));
        $("terminal-close").addEventListener("click", closeTerminal);

        /* The service's signals come to connections that called it: subscribe, then
         * call (synchronize); and again for every new owner of the name. */
        client.subscribe({ path_namespace: ROOT_PATH }, onSignal);
        client.addEventListener("owner", (event, owner) => {
            if (owner === model.owner)
                return;
            model.owner = owner;
            if (owner) {
                setStatus("The sandbox service is running; this list follows its signals.");
                synchronize();
            } else {
                setStatus("The sandbox service is not running now (it exits when idle); it starts again at the next call, and the list follows it then.");
            }
        });
        client.addEventListener("close", (event, options) => {
            setStatus(`The connection to the system bus closed: ${cockpit.message(options)}`);
        });
        whoAmI().then(synchronize);
        window.setInterval(tick, 5000);
    }

    document.addEventListener("DOMContentLoaded", init);
}());
