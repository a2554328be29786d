#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The front ends against the bus call they make: an MCP `run` of `true` through
xagent-sandbox-mcp (tools/call over its stdin/stdout) vs ExecSandbox(["true"]) on a
persistent Gio connection (target: p50 <= 1.15x), and the Python module's
`sb.run(["true"])` vs the same raw ExecSandbox through Gio (target: <= 1.1x). Also
the MCP run with a progressToken (its output as progress notifications; every MCP run is
a StartExec with pipes). Everything runs in one
process as the unprivileged member sbx-member, sides interleaved per round (order
rotating) after a warm-up round. Prints medians; asserts nothing (a benchmark, not
a test).

Needs root, a Docker daemon and the test image (tests/setup-docker.sh); starts the
private bus + polkitd stack of tests/e2e/stack.py."""

import argparse
import os
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

from stack import MEMBER  # noqa: E402
from member_bench import member_sandbox, run_as_member  # noqa: E402

# Runs as the member: one Gio connection, one MCP server, one xagent_sandbox.Sandbox.
DRIVER = textwrap.dedent("""
    import json, subprocess, sys
    from gi.repository import Gio, GLib
    from member_bench import interleaved_medians
    import xagent_sandbox as xs

    server, name, rounds, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    addr = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
    conn = Gio.DBusConnection.new_for_address_sync(
        addr, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)
    sb = xs.Sandbox(name)
    mcp = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    ids = iter(range(1, 10**9))

    def rpc(method, params, token=None):
        i = next(ids)
        if token is not None:
            params = dict(params, _meta={"progressToken": token})
        mcp.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\\n").encode())
        while True:
            m = json.loads(mcp.stdout.readline())
            if m.get("id") == i:
                return m

    rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}})
    mcp.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\\n')

    def raw():
        r = conn.call_sync("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                           "ExecSandbox", GLib.Variant("(sasa{sv})", (name, ["true"], {})), None,
                           Gio.DBusCallFlags.NONE, 90000, None)
        assert r.get_child_value(0).get_int32() == 0

    def mcp_run(streamed=False):
        m = rpc("tools/call", {"name": "run", "arguments": {"sandbox": name, "command": ["true"]}},
                token="t" if streamed else None)
        assert m["result"]["structuredContent"]["exit_code"] == 0, m

    def module():
        assert sb.run(["true"]).exit_code == 0

    sides = {"exec": raw, "mcp": mcp_run, "mcp_streamed": lambda: mcp_run(True), "python": module}
    p50 = interleaved_medians(sides, rounds, calls)
    mcp.stdin.close()
    mcp.wait()
    print(json.dumps(p50))
""")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (after one warm-up)")
    ap.add_argument("--calls", type=int, default=20, help="runs per round and side")
    a = ap.parse_args()

    with member_sandbox(ROOT, "mcp") as (stack, build, name):
        p50 = run_as_member(stack, MEMBER, DRIVER, ["{lib}/xagent-sandbox-mcp", name, str(a.rounds), str(a.calls)],
                            copies=[os.path.join(ROOT, "python", "xagent_sandbox"),
                                    os.path.join(build, "src", "mcp", "xagent-sandbox-mcp")])
        print(f"{'':28} p50 ms   ratio")
        print(f"{'ExecSandbox (Gio, raw)':28} {p50['exec']:6.2f}")
        print(f"{'MCP run':28} {p50['mcp']:6.2f}   {p50['mcp'] / p50['exec']:.2f}x  (target <= 1.15x)")
        print(f"{'MCP run, progressToken':28} {p50['mcp_streamed']:6.2f}   {p50['mcp_streamed'] / p50['exec']:.2f}x")
        print(f"{'xagent_sandbox sb.run':28} {p50['python']:6.2f}   {p50['python'] / p50['exec']:.2f}x  "
              "(target <= 1.1x)")


if __name__ == "__main__":
    main()
