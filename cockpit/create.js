/* SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The create form: images offered from GetPolicy, limits within the policy's. */

import { model, $, showError, manager, run, splitList } from "./common.js";

/* ---- create ----------------------------------------------------------------- */

export function fillPolicy() {
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

export function create(ev) {
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
