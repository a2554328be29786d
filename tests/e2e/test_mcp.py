# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandbox-mcp driven by real MCP clients from the npm registry (tests/mcp:
@modelcontextprotocol/sdk 1.x speaking 2025-11-25, @modelcontextprotocol/client 2.x
probing with server/discover and speaking 2026-07-28, the MCP Inspector's CLI), each
spawning the server as the member or the outsider against the real stack. Then bad
input on its stdin: garbage, a 100 MiB line, deep nesting, 10,000 pipelined requests,
with the server answering afterwards and its peak RSS bounded."""

import json
import os
import shutil
import subprocess
import threading
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
NPM_DIR = os.path.join(SOURCE_ROOT, "tests", "mcp")
BUILD_ROOT = os.environ.get("SBX_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
SERVER = os.path.join(BUILD_ROOT, "src", "mcp", "xagent-sandbox-mcp")
NODE = shutil.which("node") or "/usr/bin/node"
with open(SERVER, "rb") as _f:
    SANITIZED = b"__asan_init" in _f.read()

TOOLS = {
    "sandbox_list", "sandbox_ensure", "sandbox", "sandbox_info", "snapshot", "run", "process_start", "process",
    "file_read", "file_write", "files", "policy",
}
READ_ONLY = {"sandbox_list", "sandbox_info", "file_read", "policy"}
DESTRUCTIVE = {"sandbox_ensure", "sandbox", "snapshot", "process", "file_write", "files"}
DENIALS = ("InteractiveAuthorizationRequired", "AccessDenied")


def _copy_tree(src, dst):
    """node_modules for the test users: hard links where the file system allows."""
    try:
        shutil.copytree(src, dst, copy_function=os.link, symlinks=True)
    except (OSError, shutil.Error):
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(src, dst, symlinks=True)


@pytest.fixture(scope="module")
def mcp(stack, sandboxd):
    """A directory in the stack's temp dir with the server binary and the npm clients,
    readable by the test users; run(user, script) runs a node script there."""
    lock = os.path.join(NPM_DIR, "node_modules", ".package-lock.json")
    if not os.path.exists(lock):
        subprocess.run(["npm", "ci", "--prefix", NPM_DIR, "--no-audit", "--no-fund", "--loglevel=error"],
                       check=True, timeout=600)
    d = os.path.join(stack.tmp, "mcp")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    _copy_tree(os.path.join(NPM_DIR, "node_modules"), os.path.join(d, "node_modules"))
    shutil.copy2(SERVER, os.path.join(d, "xagent-sandbox-mcp"))
    for dirpath, dirnames, filenames in os.walk(d):
        os.chmod(dirpath, 0o755)
    os.chmod(os.path.join(d, "xagent-sandbox-mcp"), 0o755)

    class Mcp:
        dir = d
        server = os.path.join(d, "xagent-sandbox-mcp")

        def node(self, user, body, sdk=1, timeout=180):
            path = os.path.join(d, f"{h.unique('mcp')}.mjs")
            with open(path, "w") as f:
                f.write((PRELUDE_V1 if sdk == 1 else PRELUDE_V2) + PRELUDE_COMMON + body + EPILOGUE)
            os.chmod(path, 0o644)
            r = stack.run_as(user, [NODE, path, self.server], timeout=timeout)
            assert r.returncode == 0, f"node failed ({r.returncode}):\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
            assert "Sanitizer" not in r.stderr, r.stderr[-5000:]      # a -Db_sanitize build's findings
            return json.loads(r.stdout.strip().splitlines()[-1])

        def spawn(self, user):
            """The server itself, as user, with binary pipes."""
            return subprocess.Popen(stack._as_user(user, [self.server]), stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=stack.tmp,
                                    env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    return Mcp()


# The node side: connect, list the tools, compile each outputSchema (Ajv, as the SDKs
# do), and call() checks every structured result against its tool's schema.
PRELUDE_V1 = """
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
const client = new Client({ name: "xagent-e2e", version: "1.0.0" });
const callTool = (params, opts) => client.callTool(params, undefined, opts);
"""
PRELUDE_V2 = """
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
const client = new Client({ name: "xagent-e2e", version: "2.0.0" }, { versionNegotiation: { mode: "auto" } });
const callTool = (params, opts) => client.callTool(params, opts);
"""
PRELUDE_COMMON = """
import AjvModule from "ajv";
const Ajv = AjvModule.default ?? AjvModule;
const transport = new StdioClientTransport({ command: process.argv[2], args: [], env: { ...process.env },
                                             stderr: "inherit" });
await client.connect(transport);
const out = {};
const { tools } = await client.listTools();
const ajv = new Ajv({ strict: false });
const validators = Object.fromEntries(tools.map(t => [t.name, ajv.compile(t.outputSchema)]));
async function call(name, args = {}, opts = {}) {
    const r = await callTool({ name, arguments: args }, { timeout: 120000, ...opts });
    const text = r.content.map(c => c.text).join("");
    if (r.isError)
        return { error: r._meta?.["org.xagent.sandbox/error"] ?? null, text };
    if (!validators[name](r.structuredContent))
        throw new Error(`${name}: structuredContent does not match outputSchema: ${ajv.errorsText(validators[name].errors)}`);
    return { ...r.structuredContent, _text: text };
}
"""
EPILOGUE = """
await client.close();
console.log(JSON.stringify(out));
"""


def test_sdk1_member_every_tool(mcp, cleanup):
    name, other = h.unique("mcp"), h.unique("mcpc")
    snap = h.unique("mcps")
    cleanup.sandbox(name)
    cleanup.sandbox(other)
    cleanup.snapshot(snap)
    out = mcp.node(MEMBER, f"""
        out.version = client.getServerVersion();
        out.tools = tools.map(t => ({{ name: t.name, annotations: t.annotations,
                                      hasSchemas: !!t.inputSchema && !!t.outputSchema }}));
        out.policy = await call("policy");
        out.ensure = await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r},
                                                    env: {{ A: "1" }}, ports: [{{ guest: 8080 }}] }});
        out.again = await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r},
                                                   env: {{ A: "1" }}, ports: [{{ guest: 8080 }}] }});
        out.list = await call("sandbox_list");
        out.inspect = await call("sandbox_info", {{ action: "inspect", sandbox: {name!r} }});
        out.verify = await call("sandbox_info", {{ action: "verify", sandbox: {name!r}, image: {h.TEST_IMAGE!r},
                                                    env: {{ A: "2" }}, ports: [{{ guest: 8080 }}] }});
        out.ports = await call("sandbox_info", {{ action: "ports", sandbox: {name!r} }});
        out.usage = await call("sandbox_info", {{ action: "usage", sandbox: {name!r} }});
        out.run = await call("run", {{ sandbox: {name!r}, command: "echo $A; id -u; echo err >&2; exit 3" }});
        out.argv = await call("run", {{ sandbox: {name!r}, command: ["cat"], stdin: "piped" }});
        out.big = await call("run", {{ sandbox: {name!r}, command: "head -c 1048576 /dev/zero | tr '\\\\0' a" }});
        out.quiet = await call("run", {{ sandbox: {name!r}, command: "sleep 100", timeout: 1 }});
        out.write = await call("file_write", {{ sandbox: {name!r}, path: "/tmp/f.txt", content: "héllo\\n" }});
        out.read = await call("file_read", {{ sandbox: {name!r}, path: "/tmp/f.txt" }});
        out.write64 = await call("file_write", {{ sandbox: {name!r}, path: "/tmp/b.bin", content: "AP+A",
                                                 encoding: "base64", mode: 384 }});
        out.read64 = await call("file_read", {{ sandbox: {name!r}, path: "/tmp/b.bin", encoding: "base64" }});
        out.stat = await call("run", {{ sandbox: {name!r}, command: "stat -c %a /tmp/b.bin" }});
        out.readdir = await call("file_read", {{ sandbox: {name!r}, path: "/tmp" }});
        out.ls = await call("files", {{ action: "list", sandbox: {name!r}, path: "/tmp" }});
        out.rm = await call("files", {{ action: "remove", sandbox: {name!r}, path: "/tmp/f.txt" }});
        out.lsAfter = await call("files", {{ action: "list", sandbox: {name!r}, path: "/tmp", limit: 100 }});
        out.rmMissing = await call("files", {{ action: "remove", sandbox: {name!r}, path: "/tmp/f.txt" }});
        out.snapshot = await call("sandbox", {{ action: "snapshot", sandbox: {name!r}, snapshot_id: {snap!r} }});
        out.snapshots = await call("snapshot", {{ action: "list" }});
        out.snapdel = await call("snapshot", {{ action: "delete", snapshot_id: {snap!r} }});
        out.stop = await call("sandbox", {{ action: "stop", sandbox: {name!r}, timeout: 1 }});
        out.stopped = await call("sandbox_info", {{ action: "inspect", sandbox: {name!r} }});
        out.notRunning = await call("run", {{ sandbox: {name!r}, command: "true" }});
        out.start = await call("sandbox", {{ action: "start", sandbox: {name!r} }});
        out.create = await call("sandbox_ensure", {{ sandbox: {other!r}, image: {h.TEST_IMAGE!r} }});
        out.exists = await call("sandbox_ensure", {{ sandbox: {other!r}, image: {h.TEST_IMAGE!r} }});
        out.del = await call("sandbox", {{ action: "delete", sandbox: {other!r} }});
        out.missing = await call("sandbox_info", {{ action: "inspect", sandbox: {other!r} }});
        out.badArg = await call("run", {{ sandbox: {name!r}, command: "true", bogus: 1 }});
        out.badSpec = await call("sandbox_ensure", {{ sandbox: {other!r}, image: {h.TEST_IMAGE!r}, memory: 1 }});
        out.policyViolation = await call("sandbox_ensure", {{ sandbox: {other!r}, image: {h.TEST_IMAGE!r},
                                                              volumes: [{{ host: "/etc", guest: "/x", mode: "ro" }}] }});
        try {{ await callTool({{ name: "no_such_tool", arguments: {{}} }}); }}
        catch (e) {{ out.unknownTool = e.code; }}
    """)
    assert out["version"]["name"] == "xagent-sandbox-mcp"
    assert {t["name"] for t in out["tools"]} == TOOLS
    for t in out["tools"]:
        a = t["annotations"]
        assert t["hasSchemas"], t
        assert a["readOnlyHint"] is (t["name"] in READ_ONLY), t
        if t["name"] not in READ_ONLY:
            assert a["destructiveHint"] is (t["name"] in DESTRUCTIVE), t
    assert out["policy"]["default_image"] and "max_cpus" in out["policy"]
    assert out["ensure"]["outcome"] == "created" and out["again"]["outcome"] == "reused"
    assert name in [s["name"] for s in out["list"]["sandboxes"]]
    assert out["inspect"]["state"] == "running" and out["inspect"]["env"]["A"] == "1"
    assert out["verify"]["verdict"] == "mismatch" and "env" in out["verify"]["mismatched_fields"]
    (port,) = out["ports"]["ports"]
    assert port["host_address"] == "127.0.0.1" and port["host_port"] > 0 and port["guest_port"] == 8080
    assert out["usage"]["memory_limit_bytes"] == 512 << 20
    r = out["run"]
    assert (r["exit_code"], r["stdout"], r["stderr"], r["timed_out"]) == (3, f"1\n{h.uid_of(MEMBER)}\n", "err\n",
                                                                           False)
    assert "[exit code 3]" in r["_text"] and "err" in r["_text"]
    assert out["argv"]["stdout"] == "piped"
    assert len(out["big"]["stdout"]) == 1 << 20 and set(out["big"]["stdout"]) == {"a"}
    assert not out["big"]["truncated"]
    assert [out["quiet"]["exit_code"], out["quiet"]["timed_out"]] == [124, True]
    assert out["write"]["size"] == len("héllo\n".encode()) and out["read"]["content"] == "héllo\n"
    assert out["read64"]["content"] == "AP+A" and out["read64"]["size"] == 3
    assert out["stat"]["stdout"].strip() == "600"
    assert out["readdir"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs"
    assert "directory" in out["readdir"]["error"]["message"]
    ls = {e["name"]: e for e in out["ls"]["entries"]}
    assert ls["f.txt"]["kind"] == "file" and ls["f.txt"]["size"] == len("héllo\n".encode())
    assert ls["b.bin"]["mode"] & 0o777 == 0o600 and out["ls"]["truncated"] is False
    assert (out["rm"]["path"], out["rm"]["removed"]) == ("/tmp/f.txt", True)
    assert "f.txt" not in {e["name"] for e in out["lsAfter"]["entries"]}
    assert out["rmMissing"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs"
    assert out["snapshot"]["image_id"].startswith("sha256:")
    assert snap in [s["snapshot_id"] for s in out["snapshots"]["snapshots"]]
    assert out["snapdel"]["deleted"] is True
    assert out["stop"]["state"] == "stopped" and out["stopped"]["state"] == "stopped"
    assert out["notRunning"]["error"]["name"] == h.ERR + "NotRunning"
    assert out["start"]["state"] == "running"
    assert out["create"]["outcome"] == "created"
    assert out["exists"]["outcome"] == "reused"
    assert out["del"]["deleted"] is True
    assert out["missing"]["error"]["name"] == h.ERR + "NoSuchSandbox"
    assert out["missing"]["text"].startswith(h.ERR + "NoSuchSandbox: ")
    assert "bogus" in out["badArg"]["error"]["message"]
    assert "memory" in out["badSpec"]["error"]["message"]
    assert out["policyViolation"]["error"]["name"] == h.ERR + "PolicyViolation"
    assert out["unknownTool"] == -32602


def _gone_check(name):
    """A captured run counting the processes whose command line is `sleep 100`."""
    return (f"""await call("run", {{ sandbox: {name!r}, command: "for p in /proc/[0-9]*; do tr '\\\\0' ' ' """
            f"""< $p/cmdline 2>/dev/null; echo; done | grep -c '^sleep 100' || true" }})""")


def test_sdk1_streamed_run_progress_timeout_cancel(mcp, cleanup):
    name = h.unique("mcpst")
    cleanup.sandbox(name)
    out = mcp.node(MEMBER, f"""
        await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
        const seen = [];
        const t0 = Date.now();
        out.stream = await call("run", {{ sandbox: {name!r},
                                         command: "for i in 1 2 3; do echo line$i; sleep 0.3; done; echo e >&2; exit 4" }},
                                {{ onprogress: p => seen.push([Date.now() - t0, p.progress, p.message]) }});
        out.streamDone = Date.now() - t0;
        out.seen = seen;
        const t1 = Date.now();
        out.slow = await call("run", {{ sandbox: {name!r}, command: "echo started; sleep 100", timeout: 1 }},
                              {{ onprogress: () => {{}} }});
        out.slowTook = Date.now() - t1;
        // Cancelled: the client aborts once the process has printed; its process must go.
        const ac = new AbortController();
        try {{
            await call("run", {{ sandbox: {name!r}, command: "echo up; exec sleep 100" }},
                       {{ signal: ac.signal, onprogress: () => ac.abort("enough") }});
            out.cancel = "not cancelled";
        }} catch (e) {{ out.cancel = String(e.name || e); }}
        await new Promise(r => setTimeout(r, 1500));
        out.left = {_gone_check(name)};
        // Cancelled without a progressToken (no onprogress): killed all the same.
        const ac2 = new AbortController();
        setTimeout(() => ac2.abort("enough"), 1500);
        try {{
            await call("run", {{ sandbox: {name!r}, command: "exec sleep 100" }}, {{ signal: ac2.signal }});
            out.cancel2 = "not cancelled";
        }} catch (e) {{ out.cancel2 = String(e.name || e); }}
        await new Promise(r => setTimeout(r, 1500));
        out.left2 = {_gone_check(name)};
        out.stillServing = await call("sandbox_list");
    """)
    seen = out["seen"]
    assert "".join(m for _, _, m in seen) == "line1\nline2\nline3\ne\n"
    assert len(seen) >= 3 and seen[-1][0] - seen[0][0] > 400, "progress came while the run streamed"
    assert all(b[1] > a[1] for a, b in zip(seen, seen[1:])), "progress increases"
    assert seen[-1][0] <= out["streamDone"]
    s = out["stream"]
    assert (s["exit_code"], s["stdout"], s["stderr"]) == (4, "line1\nline2\nline3\n", "e\n")
    assert [out["slow"]["exit_code"], out["slow"]["timed_out"], out["slow"]["stdout"]] == [124, True, "started\n"]
    assert out["slowTook"] < 10000
    assert out["cancel"] != "not cancelled"
    assert out["left"]["stdout"].strip() == "0", "the cancelled run's process is gone"
    assert out["cancel2"] != "not cancelled"
    assert out["left2"]["stdout"].strip() == "0", "a run cancelled without a progressToken is gone too"
    assert name in [x["name"] for x in out["stillServing"]["sandboxes"]]


def test_client2_speaks_2026_07_28(mcp, cleanup):
    name = h.unique("mcp2")
    cleanup.sandbox(name)
    out = mcp.node(MEMBER, f"""
        out.era = client.getProtocolEra();
        out.version = client.getNegotiatedProtocolVersion();
        out.tools = tools.map(t => t.name);
        out.ensure = await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
        out.run = await call("run", {{ sandbox: {name!r}, command: "echo hi; id -u" }});
        const seen = [];
        out.stream = await call("run", {{ sandbox: {name!r}, command: "echo a; sleep 0.3; echo b" }},
                                {{ onprogress: p => seen.push(p.message) }});
        out.seen = seen;
        out.write = await call("file_write", {{ sandbox: {name!r}, path: "/tmp/x", content: "2026" }});
        out.read = await call("file_read", {{ sandbox: {name!r}, path: "/tmp/x" }});
        out.missing = await call("sandbox_info", {{ action: "inspect", sandbox: "no-such-" + {name!r} }});
        out.del = await call("sandbox", {{ action: "delete", sandbox: {name!r} }});
    """, sdk=2)
    assert out["era"] == "modern" and out["version"] == "2026-07-28"
    assert set(out["tools"]) == TOOLS
    assert out["ensure"]["outcome"] == "created"
    assert out["run"]["stdout"] == f"hi\n{h.uid_of(MEMBER)}\n"
    assert "".join(out["seen"]) == "a\nb\n" and out["stream"]["exit_code"] == 0
    assert out["read"]["content"] == "2026"
    assert out["missing"]["error"]["name"] == h.ERR + "NoSuchSandbox"
    assert out["del"]["deleted"] is True


@pytest.mark.parametrize("sdk", [1, 2])
def test_the_outsider_gets_polkits_answer_as_tool_errors(mcp, sdk):
    out = mcp.node(OTHER, """
        out.create = await call("sandbox_ensure", { sandbox: "x", image: "img" });
        out.run = await call("run", { sandbox: "x", command: "true" });
        out.read = await call("file_read", { sandbox: "x", path: "/etc/passwd" });
        out.snapshot = await call("sandbox", { action: "snapshot", sandbox: "x", snapshot_id: "y" });
        out.policy = await call("policy");
    """, sdk=sdk)
    for key in ("create", "run", "read", "snapshot"):
        err = out[key]["error"]
        assert err and err["name"].rsplit(".", 1)[-1] in DENIALS + ("NoSuchSandbox",), (key, err)
        assert out[key]["text"].startswith(err["name"] + ": ")
    assert out["create"]["error"]["name"].endswith("InteractiveAuthorizationRequired")
    assert "default_image" in out["policy"], "GetPolicy asks no polkit: what applies to the caller"


def test_inspector_cli_lists_the_tools(mcp, stack):
    catalog = os.path.join(mcp.dir, f"catalog-{h.unique('i')}.json")
    env = [f"MCP_CATALOG_PATH={catalog}"]
    r = stack.run_as(MEMBER, ["/usr/bin/env"] + env + [NODE, os.path.join(mcp.dir, "node_modules", ".bin",
                                                                          "mcp-inspector"),
                                                        "--cli", mcp.server, "--method", "tools/list"], timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    listed = json.loads(r.stdout[r.stdout.index("{"):])
    assert {t["name"] for t in listed["tools"]} == TOOLS


# ---- the raw protocol ------------------------------------------------------------------

def _exchange(proc, lines, expect, timeout=120):
    """Writes lines (bytes, each ending in \\n) from a thread and reads answers until
    `expect` of them came; the answers parsed."""
    def feed():
        try:
            for line in lines:
                proc.stdin.write(line)
            proc.stdin.flush()
        except BrokenPipeError:
            pass
    t = threading.Thread(target=feed, daemon=True)
    t.start()
    answers = []
    deadline = time.monotonic() + timeout
    while len(answers) < expect:
        assert time.monotonic() < deadline, f"only {len(answers)} of {expect} answers"
        line = proc.stdout.readline()
        assert line, f"the server closed stdout after {len(answers)} answers: {proc.stderr.read()[-2000:]!r}"
        answers.append(json.loads(line))
    t.join(timeout)
    return answers


def _req(i, method, params=None, modern=False):
    params = dict(params or {})
    if modern:
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                           "io.modelcontextprotocol/clientCapabilities": {}}
    m = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
    return (json.dumps(m) + "\n").encode()


def _server_pid(proc, server):
    """The server: runuser itself once it exec'd, or its child."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for pid in [proc.pid] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                if (pid == proc.pid or ppid == proc.pid) and os.readlink(f"/proc/{pid}/exe") == server:
                    return pid
            except (OSError, IndexError, ValueError):
                pass
        time.sleep(0.05)
    raise AssertionError("no server process")


def _peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM:")).split()[1])


def test_a_2026_request_needs_no_initialize(mcp):
    p = mcp.spawn(MEMBER)
    try:
        a = _exchange(p, [_req(1, "tools/list", modern=True),
                          _req(2, "tools/call", {"name": "sandbox_list"}, modern=True),
                          _req(3, "ping", modern=True),
                          _req(4, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "1999-01-01"}}),
                          _req(5, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "clientInfo": {"name": "x", "version": "1"}})], 5)
    finally:
        p.stdin.close()
        p.wait(30)
    by_id = {x["id"]: x for x in a}
    assert {t["name"] for t in by_id[1]["result"]["tools"]} == TOOLS
    assert by_id[1]["result"]["resultType"] == "complete" and by_id[1]["result"]["ttlMs"] > 0
    assert by_id[2]["result"]["isError"] is False and by_id[2]["result"]["resultType"] == "complete"
    assert by_id[3]["error"]["code"] == -32601, "ping is not part of 2026-07-28"
    assert by_id[4]["error"]["code"] == -32022
    assert by_id[4]["error"]["data"]["requested"] == "1999-01-01"
    assert by_id[5]["error"]["code"] == -32600, "the connection already speaks 2026-07-28"
    assert p.returncode == 0


def test_2025_ping_logging_and_era(mcp):
    p = mcp.spawn(MEMBER)
    try:
        a = _exchange(p, [_req(1, "tools/list"),
                          _req(2, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                 "clientInfo": {"name": "x", "version": "1"}}),
                          b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n',
                          _req(3, "ping"), _req(4, "logging/setLevel", {"level": "info"}),
                          _req(5, "tools/call", {"name": "sandbox_list"}),
                          _req(6, "tools/list", modern=True), _req(7, "logging/setLevel", {"level": "loud"})], 8)
    finally:
        p.stdin.close()
        p.wait(30)
    by_id = {x["id"]: x for x in a if "id" in x}
    logs = [x["params"] for x in a if x.get("method") == "notifications/message"]
    assert by_id[1]["error"]["code"] == -32600, "initialize first"
    assert by_id[2]["result"]["protocolVersion"] == "2025-11-25" and "logging" in by_id[2]["result"]["capabilities"]
    assert by_id[3]["result"] == {} and by_id[4]["result"] == {}
    assert by_id[5]["result"]["isError"] is False and "resultType" not in by_id[5]["result"]
    assert [m["logger"] for m in logs] == ["sandbox_list"] and logs[0]["level"] == "info"
    assert by_id[6]["error"]["code"] == -32600, "this connection began with initialize"
    assert by_id[7]["error"]["code"] == -32602
    assert p.returncode == 0


def test_bad_input_is_refused_and_the_server_goes_on(mcp):
    init = _req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "x", "version": "1"}})
    bad = [b"garbage\n", b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \n", b"[1, 2]\n",
           b"{\"jsonrpc\": \"1.0\", \"id\": 2, \"method\": \"ping\"}\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": 3, \"method\": \"no/such\"}\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": 4, \"method\": \"tools/call\", \"params\": [1]}\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": \"tools/call\", \"params\": {\"name\": 7}}\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": {}, \"method\": \"ping\"}\n",
           b"\xff\xfe{\"not\": \"utf-8\"}\n",
           b"[" * 100000 + b"\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": 6, \"method\": \"ping\", \"params\": {\"a\": " + b"[" * 65 + b"]" * 65 +
           b"}}\n",
           b"{\"jsonrpc\": \"2.0\", \"id\": \"" + b"x" * (100 << 20) + b"\"}\n",
           _req(7, "ping")]
    p = mcp.spawn(MEMBER)
    try:
        pid = _server_pid(p, mcp.server)
        a = _exchange(p, [init] + bad, 1 + 12)
        codes = [x.get("error", {}).get("code") for x in a[1:]]
        assert codes == [-32700, -32700, -32600, -32600, -32601, -32602, -32602, -32600, -32700, -32700, -32700,
                         -32700], a[1:]
        assert "longer than" in a[-1]["error"]["message"]
        assert "deeper than 64" in a[10]["error"]["message"]
        # The ping after the 100 MiB line.
        (pong,) = _exchange(p, [], 1)
        assert pong == {"jsonrpc": "2.0", "id": 7, "result": {}}

        # 10,000 pipelined requests: pings answered, tool calls beyond the bound refused
        # with a tool error at once, none lost.
        n = 10000
        reqs = [_req(100 + i, "ping") if i % 2 else _req(100 + i, "tools/call", {"name": "sandbox_list"})
                for i in range(n)] + [_req(99, "ping")]
        a = _exchange(p, reqs, n + 1, timeout=300)
        ids = {x["id"] for x in a}
        assert ids == set(range(100, 100 + n)) | {99}
        calls = [x["result"] for x in a if x["id"] >= 100 and x["id"] % 2 == 0]
        refused = [c for c in calls if c["isError"] and "too many tool calls" in c["content"][0]["text"]]
        assert refused and len(refused) < len(calls), "some went to the bus, the rest were refused"
        peak = _peak_rss_kib(pid)
        print(f"xagent-sandbox-mcp peak RSS after the bad input: {peak} KiB")
        if not SANITIZED:       # ASan's shadow and quarantine are not the server's memory
            assert peak < 96 * 1024, f"peak RSS {peak} KiB"
    finally:
        p.stdin.close()
        p.wait(60)
    assert p.returncode == 0
