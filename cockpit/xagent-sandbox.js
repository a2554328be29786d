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

import { ROOT_PATH, SANDBOX, EXEC, PROPERTIES, OBJECT_MANAGER, client, model, $, plain, errorText, setStatus, element, button, call, manager, run } from "./common.js";
import { fillPolicy, create } from "./create.js";
import { setDetailsPage, toggleDetails, updateDetails, closeTerminal, openTerminal, terminalSend } from "./details.js";
import { ownerName, verdictText, lifetimesText, egressText, labelsText, processesText } from "./texts.js";

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
    setDetailsPage({ update, render, inspect });
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
