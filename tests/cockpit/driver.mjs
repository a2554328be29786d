// SPDX-License-Identifier: LGPL-2.1-or-later
// The browser of tests/e2e/test_cockpit.py: Debian's chromium driven by playwright-core.
// Reads one JSON command a line on stdin, answers one JSON line on stdout:
// {"ok": true, "value": …} or {"ok": false, "error": "…"}. The test decides what to
// check; this file only acts and reports (see tests/e2e/cockpitws.py, Browser).
//
// Locators: "sel" is a Playwright selector ("role=button[name=\"Create\"]",
// "#id >> text=…"), taken in the page's frame when "frame" is "app" (the default: the
// package's iframe inside Cockpit's shell) or in the shell itself when "top".
import { chromium } from "playwright-core";
import readline from "node:readline";

const APP_FRAME = 'iframe[name="cockpit1:localhost/xagent-sandbox"]';
let browser = null;
let context = null;
let page = null;
const messages = [];   // console messages of type error/warning, and page errors

function record(kind, text, url) {
    messages.push({ kind, text, url: url || "" });
}

function scope(cmd) {
    if (cmd.frame === "top")
        return page;
    return page.frameLocator(APP_FRAME);
}

function sleep(ms) {
    return new Promise(resolve => setTimeout(resolve, ms));
}

// Polls fn() until it returns something truthy or the deadline passes; the last value
// (or error) is in the failure's message.
async function poll(fn, timeout, what) {
    const deadline = Date.now() + (timeout ?? 10000);
    let last;
    for (;;) {
        try {
            last = await fn();
            if (last.done)
                return last.value;
        } catch (e) {
            last = { value: String(e) };
        }
        if (Date.now() > deadline)
            throw new Error(`${what}: not within ${timeout ?? 10000} ms; last seen: ${JSON.stringify(last.value)}`);
        await sleep(100);
    }
}

const commands = {
    async launch(cmd) {
        browser = await chromium.launch({
            executablePath: cmd.executable || "/usr/bin/chromium",
            headless: true,
            // The test runs as root: chromium's own sandbox refuses root.
            args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
        });
        context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
        page = await context.newPage();
        page.setDefaultTimeout(cmd.timeout || 60000);
        page.on("console", m => {
            if (m.type() === "error" || m.type() === "warning")
                record(m.type(), m.text(), m.location().url);
        });
        page.on("pageerror", e => record("pageerror", String(e.stack || e), ""));
        return browser.version();
    },
    // cmd.superuser: ask for Cockpit's administrative access at login (what its login
    // page does when the user chose it before: the X-Superuser header, from
    // localStorage), so the session's superuser bridge runs sudo with the password.
    async login(cmd) {
        // "load": the login page's script must have set up its button first.
        await page.goto(cmd.url, { waitUntil: "load" });
        if (cmd.superuser) {
            await page.evaluate(user => window.localStorage.setItem(`superuser:${user}`, "any"), cmd.user);
            await page.reload({ waitUntil: "load" });
        }
        await page.fill("#login-user-input", cmd.user);
        await page.fill("#login-password-input", cmd.password);
        await page.click("#login-button");
        // The shell's navigation, or the login page's error. Polled: the page navigates
        // while this waits (waitForSelector would wait for that navigation's "load").
        return await poll(async () => {
            if (await page.locator("#host-apps").isVisible())
                return { done: true, value: page.url() };
            const errors = (await page.locator("#login-error-message, #login-fatal").allInnerTexts())
                    .filter(t => t.trim());
            if (errors.length)
                throw new Error(`login failed: ${errors.join(" ")}`);
            return { done: false, value: page.url() };
        }, cmd.timeout || 60000, "the shell after the login");
    },
    // Waits for the response only: the shell's "load" can take long on a busy
    // machine, and every check after polls for what it needs.
    async goto(cmd) {
        await page.goto(cmd.url, { waitUntil: "commit" });
        return page.url();
    },
    async reload() {
        await page.reload();
        return page.url();
    },
    async url() {
        return page.url();
    },
    async click(cmd) {
        await scope(cmd).locator(cmd.sel).click({ timeout: cmd.timeout });
        return true;
    },
    async fill(cmd) {
        await scope(cmd).locator(cmd.sel).fill(cmd.value, { timeout: cmd.timeout });
        return true;
    },
    async select(cmd) {
        return await scope(cmd).locator(cmd.sel).selectOption(cmd.value, { timeout: cmd.timeout });
    },
    async check(cmd) {
        await scope(cmd).locator(cmd.sel).setChecked(cmd.value !== false, { timeout: cmd.timeout });
        return true;
    },
    async press(cmd) {
        await scope(cmd).locator(cmd.sel).press(cmd.key, { timeout: cmd.timeout });
        return true;
    },
    // The texts of every element the selector finds now (maybe none).
    async texts(cmd) {
        return await scope(cmd).locator(cmd.sel).allInnerTexts();
    },
    async count(cmd) {
        return await scope(cmd).locator(cmd.sel).count();
    },
    async attr(cmd) {
        return await scope(cmd).locator(cmd.sel).getAttribute(cmd.name, { timeout: cmd.timeout });
    },
    // Waits until one element the selector finds has a text containing cmd.contains
    // (or matching cmd.regex); returns that text.
    async wait_text(cmd) {
        const re = cmd.regex ? new RegExp(cmd.regex) : null;
        return await poll(async () => {
            const texts = await scope(cmd).locator(cmd.sel).allInnerTexts();
            const hit = texts.find(t => re ? re.test(t) : t.includes(cmd.contains));
            return hit !== undefined ? { done: true, value: hit } : { done: false, value: texts };
        }, cmd.timeout, `text ${cmd.regex || JSON.stringify(cmd.contains)} in ${cmd.sel}`);
    },
    // Waits until the selector finds exactly cmd.n elements.
    async wait_count(cmd) {
        return await poll(async () => {
            const n = await scope(cmd).locator(cmd.sel).count();
            return { done: n === cmd.n, value: n };
        }, cmd.timeout, `${cmd.n} of ${cmd.sel}`);
    },
    async screenshot(cmd) {
        await page.screenshot({ path: cmd.path, fullPage: !!cmd.full });
        return cmd.path;
    },
    async messages() {
        return messages.slice();
    },
    async close() {
        if (browser)
            await browser.close();
        browser = null;
        return true;
    },
};

const rl = readline.createInterface({ input: process.stdin });
for await (const line of rl) {
    if (!line.trim())
        continue;
    let cmd;
    let answer;
    try {
        cmd = JSON.parse(line);
        const fn = commands[cmd.cmd];
        if (!fn)
            throw new Error(`unknown command ${cmd.cmd}`);
        answer = { ok: true, value: await fn(cmd) };
    } catch (e) {
        answer = { ok: false, error: String(e && e.message ? e.message : e) };
    }
    process.stdout.write(JSON.stringify(answer) + "\n");
    if (cmd && cmd.cmd === "close")
        break;
}
if (browser)
    await browser.close();
