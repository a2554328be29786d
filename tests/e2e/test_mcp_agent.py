# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandbox-mcp for agents (issue 39), as the member: the server works with its
stdout a regular file (written synchronously: epoll cannot watch a file), appending
when opened to append; and `run` takes `wait`, queueing behind a full
max_execs_per_user share (through the official 1.x SDK client) instead of
LimitsExceeded."""

import json
import os
import subprocess

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_mcp import _req, mcp  # noqa: F401 (the fixture)


def test_stdout_to_a_regular_file(stack, mcp):  # noqa: F811
    out_path = os.path.join(stack.tmp, f"{h.unique('mcpout')}.jsonl")
    with open(out_path, "w") as f:
        f.write("kept\n")
    os.chown(out_path, h.uid_of(MEMBER), h.gid_of(MEMBER))
    # >>: the line already there stays.
    argv = ["/bin/sh", "-c", f'exec "$0" >>"$1"', mcp.server, out_path]
    p = subprocess.Popen(stack._as_user(MEMBER, argv), stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=stack.tmp, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
    _, err = p.communicate(_req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                  "clientInfo": {"name": "x", "version": "1"}}) +
                           b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n' +
                           _req(2, "tools/list") + _req(3, "tools/call", {"name": "policy"}), timeout=60)
    assert p.returncode == 0, err.decode()
    assert b"Watching stdin/stdout failed" not in err
    with open(out_path) as f:
        lines = f.read().splitlines()
    assert lines[0] == "kept"
    by_id = {m["id"]: m for m in map(json.loads, lines[1:])}
    assert by_id[1]["result"]["serverInfo"]["name"]
    assert any(t["name"] == "run" for t in by_id[2]["result"]["tools"])
    assert by_id[3]["result"]["isError"] is False
    assert "max_execs_per_user" in by_id[3]["result"]["structuredContent"]


def test_run_waits_for_a_full_share(stack, mcp, cleanup):  # noqa: F811
    name = h.unique("mcpwait")
    cleanup.sandbox(name)
    with h.daemon_config(stack, {"max_execs_per_user": 2}):
        out = mcp.node(MEMBER, f"""
            const sleep = ms => new Promise(r => setTimeout(r, ms));
            await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
            const a = await call("process_start", {{ sandbox: {name!r}, command: ["sleep", "600"] }});
            const b = await call("process_start", {{ sandbox: {name!r}, command: ["sleep", "600"] }});
            out.full = await call("run", {{ sandbox: {name!r}, command: "echo no" }});
            const t0 = Date.now();
            const queued = call("run", {{ sandbox: {name!r}, command: "echo queued", wait: 60, timeout: 20 }});
            await sleep(2000);
            await call("process", {{ action: "kill", process: a.process }});
            out.queued = await queued;
            out.waited = Date.now() - t0;
            await call("process", {{ action: "kill", process: b.process }});
            out.badWait = await call("run", {{ sandbox: {name!r}, command: "true", wait: -1 }});
        """)
    assert out["full"]["error"]["name"] == "org.freedesktop.DBus.Error.LimitsExceeded", out["full"]
    assert (out["queued"]["exit_code"], out["queued"]["stdout"], out["queued"]["timed_out"]) == (0, "queued\n", False)
    assert out["waited"] >= 1500
    assert out["badWait"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs", out["badWait"]


def test_twelve_tools_one_name_per_concept(mcp):  # noqa: F811
    p = mcp.spawn(MEMBER)
    try:
        out, _ = p.communicate(_req(1, "tools/list", modern=True), timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    line = out.decode().splitlines()[0]
    tools = json.loads(line)["result"]["tools"]
    assert len(tools) <= 12
    assert len(json.dumps(tools, separators=(",", ":"))) <= 12000
    assert len(line) <= 12500, "the whole answer, envelope too"
    for t in tools:
        props = t["inputSchema"]["properties"]
        assert "name" not in props, (t["name"], "a sandbox is `sandbox` in every tool")
        assert "process_id" not in props and "id" not in props
        assert len(t["description"]) > 60 and t["outputSchema"]["type"] == "object"
    by_name = {t["name"]: t for t in tools}
    assert "sandbox" in by_name["run"]["inputSchema"]["properties"]
    assert "process" in by_name["process"]["inputSchema"]["properties"]
    assert "wait" in by_name["run"]["inputSchema"]["properties"]
    assert {"lease", "release", "lifetimes"} <= set(by_name["sandbox"]["inputSchema"]["properties"]["action"]["enum"])


def test_a_session_lease_and_lifetimes(mcp, sandboxd, cleanup):  # noqa: F811
    name = h.unique("mcplease")
    cleanup.sandbox(name)
    out = mcp.node(MEMBER, f"""
        await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
        // Another session: another MCP server, another bus connection.
        const other = new Client({{ name: "other", version: "1.0.0" }});
        await other.connect(new StdioClientTransport({{ command: process.argv[2], args: [], env: {{ ...process.env }},
                                                      stderr: "inherit" }}));
        const otherCall = async (args) => {{
            const r = await other.callTool({{ name: "sandbox", arguments: args }});
            return r.isError ? {{ error: r._meta?.["org.xagent.sandbox/error"] }} : r.structuredContent;
        }};
        out.lease = await call("sandbox", {{ action: "lease", sandbox: {name!r} }});
        out.leases = (await call("sandbox_info", {{ sandbox: {name!r} }})).leases;
        out.busy = await otherCall({{ action: "stop", sandbox: {name!r}, timeout: 1 }});
        out.lifetimes = await call("sandbox", {{ action: "lifetimes", sandbox: {name!r}, idle_timeout: 900,
                                                expire_after: 600, idle_counts_processes: true }});
        out.info = await call("sandbox_info", {{ sandbox: {name!r} }});
        out.noLifetimes = await call("sandbox", {{ action: "lifetimes", sandbox: {name!r} }});
        out.tooLong = await call("sandbox", {{ action: "lifetimes", sandbox: {name!r}, idle_timeout: 4000000000 }});
        out.release = await call("sandbox", {{ action: "release", sandbox: {name!r} }});
        out.releasedAgain = await call("sandbox", {{ action: "release", sandbox: {name!r} }});
        out.stop = await otherCall({{ action: "stop", sandbox: {name!r}, timeout: 1 }});
        // A lease revoked by a forced stop of the other session.
        await call("sandbox", {{ action: "start", sandbox: {name!r} }});
        await call("sandbox", {{ action: "lease", sandbox: {name!r} }});
        out.forced = await otherCall({{ action: "stop", sandbox: {name!r}, timeout: 1, force: true }});
        out.badAction = await call("sandbox", {{ action: "explode", sandbox: {name!r} }});
        await other.close();
    """)
    assert out["lease"] == {"sandbox": name, "leased": True, "_text": out["lease"]["_text"]}
    assert out["leases"] == 1
    assert out["busy"]["error"]["name"] == h.ERR + "SandboxBusy", out["busy"]
    assert out["lifetimes"]["changed"] is True
    info = out["info"]
    assert (info["idle_timeout"], info["idle_counts_processes"]) == (900, True) and info["expires_at"] > 0
    assert out["noLifetimes"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs"
    assert out["tooLong"]["error"]["name"] == h.ERR + "PolicyViolation"
    assert out["release"]["released"] is True and out["releasedAgain"]["released"] is False
    assert out["stop"]["state"] == "stopped"
    assert out["forced"]["state"] == "stopped"
    assert out["badAction"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs"
