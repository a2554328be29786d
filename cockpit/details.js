/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A sandbox's details (usage, egress, lifetimes, snapshot, its detached processes'
 * output) and the terminal: `xagent-sandboxctl shell` run by Cockpit's bridge on a
 * pseudo-terminal, since cockpit.dbus cannot pass the descriptors StartExec takes. */

import { SANDBOX, EXEC, model, $, plain, utf8, bytes, errorText, element, button, labelled, input, select, call, manager, callName, run, splitList } from "./common.js";
import { lifetimesText, egressText } from "./texts.js";

/* What the page does for the details, which are drawn inside its table
 * (xagent-sandbox.js hands them over at start): a sandbox's row shown anew, the
 * whole list shown anew, a sandbox's inspection read anew. */
const page = { update: null, render: null, inspect: null };

export function setDetailsPage(ops) {
    Object.assign(page, ops);
}

/* ---- details: usage, egress, lifetimes, snapshot, processes ---------------------- */

export function toggleDetails(sb) {
    sb.expanded = !sb.expanded;
    if (sb.expanded) {
        buildDetails(sb);
        loadUsage(sb);
    }
    page.render();
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
    sb.runtimeText = element("p");
    usage.append(sb.runtimeText, sb.usageText, button(`Refresh usage of ${name}`, "pf-m-secondary", () => loadUsage(sb), "Refresh usage"));

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
                                  .then(() => page.inspect(sb));
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

export function updateDetails(sb) {
    if (!sb.details)
        buildDetails(sb);
    const u = sb.usage;
    sb.usageText.textContent = u
        ? `CPU time ${(u.cpu_usage_ns / 1e9).toFixed(2)} s; memory ${bytes(u.memory_bytes)} of ${bytes(u.memory_limit_bytes)}; ` +
          `${u.pids} processes` +
          (u.net_rx_bytes !== undefined ? `; network in ${bytes(u.net_rx_bytes)}, out ${bytes(u.net_tx_bytes)}` : "")
        : (sb.usageError || "Usage is read when the sandbox runs.");
    sb.egressText.textContent = `Now: ${egressText(sb)}`;
    /* the runtime it asked for (docs/security.md, "Runtimes"); hardened: it runs under it */
    const i = sb.inspection;
    sb.runtimeText.textContent = i ? `Runtime: ${i.runtime || "runc"}${i.hardened ? "" : " (not hardened)"}` : "";
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
        page.update(sb);
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
            .finally(() => page.update(sb));
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
                    page.update(sb);
                }));
}

let terminal = null;
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

export function closeTerminal() {
    if (terminal) {
        terminal.closed = true;
        terminal.proc.close("terminated");
        terminal = null;
    }
    $("terminal-card").hidden = true;
}

export function openTerminal(sb) {
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

export function terminalSend(text) {
    if (terminal)
        terminal.proc.input(text, true);
}
