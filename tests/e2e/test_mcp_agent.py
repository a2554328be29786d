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
            await call("sandbox_ensure", {{ name: {name!r}, image: {h.TEST_IMAGE!r} }});
            const a = await call("process_start", {{ sandbox: {name!r}, command: ["sleep", "600"] }});
            const b = await call("process_start", {{ sandbox: {name!r}, command: ["sleep", "600"] }});
            out.full = await call("run", {{ sandbox: {name!r}, command: "echo no" }});
            const t0 = Date.now();
            const queued = call("run", {{ sandbox: {name!r}, command: "echo queued", wait: 60, timeout: 20 }});
            await sleep(2000);
            await call("process_kill", {{ process: a.process }});
            out.queued = await queued;
            out.waited = Date.now() - t0;
            await call("process_kill", {{ process: b.process }});
            out.badWait = await call("run", {{ sandbox: {name!r}, command: "true", wait: -1 }});
        """)
    assert out["full"]["error"]["name"] == "org.freedesktop.DBus.Error.LimitsExceeded", out["full"]
    assert (out["queued"]["exit_code"], out["queued"]["stdout"], out["queued"]["timed_out"]) == (0, "queued\n", False)
    assert out["waited"] >= 1500
    assert out["badWait"]["error"]["name"] == "org.freedesktop.DBus.Error.InvalidArgs", out["badWait"]
