# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandbox-mcp's tools of the later API, driven by the official SDK clients as
the member (and the outsider) against the real stack: labels on create/ensure and
sandbox_list's label and state filter (FindSandboxes), sandbox_pause/sandbox_resume,
and the detached processes (process_start, process_list, process_output with hostile
bytes, process_kill), a process outliving the server that started it."""

import base64
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_mcp import mcp  # noqa: F401  (the fixture)

# Reads a process's output to its end: (stdout, stderr, exit_code, reads), or the
# error of a read.
DRAIN = """
async function drain(p, encoding = "text", tries = 150) {
    let cursor = undefined, stdout = "", stderr = "", r = null, reads = 0;
    for (; reads < tries; reads++) {
        r = await call("process", { action: "output", process: p, cursor, encoding });
        if (r.error) return r;
        stdout += r.stdout; stderr += r.stderr; cursor = r.next_cursor;
        if (!r.running) break;
        await new Promise(res => setTimeout(res, 200));
    }
    return { stdout, stderr, exit_code: r.exit_code, running: r.running, reads };
}
"""


def test_labels_find_pause_resume(mcp, cleanup):  # noqa: F811
    a, b = h.unique("mcpla"), h.unique("mcplb")
    team = h.unique("t")
    cleanup.sandbox(a)
    cleanup.sandbox(b)
    out = mcp.node(MEMBER, f"""
        out.a = await call("sandbox_ensure", {{ sandbox: {a!r}, image: {h.TEST_IMAGE!r},
                                               labels: {{ team: {team!r}, role: "web" }} }});
        out.b = await call("sandbox_ensure", {{ sandbox: {b!r}, image: {h.TEST_IMAGE!r},
                                               labels: {{ team: {team!r}, role: "db" }},
                                               idle_timeout: 600, expire_after: 3600, on_idle: "pause" }});
        out.inspectB = await call("sandbox_info", {{ action: "inspect", sandbox: {b!r} }});
        out.tooIdle = await call("sandbox_ensure", {{ sandbox: {b!r} + "y", image: {h.TEST_IMAGE!r},
                                                     idle_timeout: 86401 }});
        out.again = await call("sandbox_ensure", {{ sandbox: {a!r}, image: {h.TEST_IMAGE!r},
                                                   labels: {{ team: {team!r}, role: "web" }} }});
        out.otherLabels = await call("sandbox_ensure", {{ sandbox: {a!r}, image: {h.TEST_IMAGE!r},
                                                         labels: {{ team: {team!r}, role: "cache" }} }});
        out.inspect = await call("sandbox_info", {{ action: "inspect", sandbox: {a!r} }});
        out.team = await call("sandbox_list", {{ labels: {{ team: {team!r} }} }});
        out.db = await call("sandbox_list", {{ labels: {{ team: {team!r}, role: "db" }} }});
        out.none = await call("sandbox_list", {{ labels: {{ team: {team!r}, role: "nope" }} }});
        out.all = await call("sandbox_list");
        out.pause = await call("sandbox", {{ action: "pause", sandbox: {a!r} }});
        out.pauseAgain = await call("sandbox", {{ action: "pause", sandbox: {a!r} }});
        out.paused = await call("sandbox_list", {{ labels: {{ team: {team!r} }}, state: "paused" }});
        out.running = await call("sandbox_list", {{ labels: {{ team: {team!r} }}, state: "running" }});
        out.runPaused = await call("run", {{ sandbox: {a!r}, command: "true" }});
        out.resume = await call("sandbox", {{ action: "resume", sandbox: {a!r} }});
        out.runResumed = await call("run", {{ sandbox: {a!r}, command: "echo back" }});
        out.badLabel = await call("sandbox_ensure", {{ sandbox: {b!r} + "x", image: {h.TEST_IMAGE!r},
                                                      labels: {{ k: 1 }} }});
        out.badKey = await call("sandbox_ensure", {{ sandbox: {b!r} + "x", image: {h.TEST_IMAGE!r},
                                                    labels: {{ "Upper Case": "v" }} }});
        out.badState = await call("sandbox_list", {{ state: "asleep" }});
        await call("sandbox", {{ action: "stop", sandbox: {b!r}, timeout: 1 }});
        out.pauseStopped = await call("sandbox", {{ action: "pause", sandbox: {b!r} }});
        out.stoppedFound = await call("sandbox_list", {{ labels: {{ team: {team!r} }}, state: "stopped" }});
    """)
    names = lambda r: sorted(s["name"] for s in r["sandboxes"])  # noqa: E731
    assert out["a"]["outcome"] == "created" and out["b"]["outcome"] == "created"
    assert out["again"]["outcome"] == "reused"
    assert out["otherLabels"]["error"]["name"] == h.INVALID_ARGS
    assert "labels" in out["otherLabels"]["error"]["message"]
    assert out["inspect"]["sandbox_labels"] == {"team": team, "role": "web"}
    # the lifetimes reach the service (issue 23): shown by its inspection
    ib = out["inspectB"]
    assert ib["idle_timeout"] == 600 and ib["on_idle"] == "pause", ib
    assert ib["expires_at"] > 0 and out["inspect"]["idle_timeout"] == 0, (ib, out["inspect"])
    assert out["tooIdle"]["error"]["name"] == h.ERR + "PolicyViolation", out["tooIdle"]
    assert "max_idle_timeout" in out["tooIdle"]["error"]["message"]
    assert names(out["team"]) == sorted([a, b])
    assert names(out["db"]) == [b] and names(out["none"]) == []
    assert {a, b} <= set(names(out["all"]))
    assert out["pause"] == {"name": a, "state": "paused", "_text": out["pause"]["_text"]}
    assert out["pauseAgain"]["state"] == "paused", "idempotent"
    assert names(out["paused"]) == [a] and names(out["running"]) == [b]
    assert out["paused"]["sandboxes"][0]["state"] == "paused"
    assert out["runPaused"]["error"]["name"] == h.ERR + "NotRunning"
    assert out["resume"]["state"] == "running"
    assert out["runResumed"]["stdout"] == "back\n"
    assert out["badLabel"]["error"]["name"] == h.INVALID_ARGS and "labels.k" in out["badLabel"]["error"]["message"]
    assert out["badKey"]["error"]["name"] == h.INVALID_ARGS and "Upper Case" in out["badKey"]["error"]["message"]
    assert out["badState"]["error"]["name"] == h.INVALID_ARGS
    assert out["pauseStopped"]["error"]["name"] == h.ERR + "NotRunning"
    assert names(out["stoppedFound"]) == [b]


def test_processes_start_list_output_kill(mcp, cleanup):  # noqa: F811
    name = h.unique("mcpp")
    cleanup.sandbox(name)
    out = mcp.node(MEMBER, DRAIN + f"""
        await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
        out.start = await call("process_start", {{ sandbox: {name!r}, env: {{ W: "world" }},
            command: "echo hello $W; echo oops >&2; printf 'bad\\\\377\\\\n'; sleep 4; echo late; exit 5" }});
        const p = out.start.process;
        out.first = await call("process", {{ action: "output", process: p }});
        out.list = await call("process", {{ action: "list", sandbox: {name!r} }});
        out.drained = await drain(p);
        out.afterEnd = await call("process", {{ action: "output", process: p }});
        out.bin = await call("process_start", {{ sandbox: {name!r}, command: ["printf", "\\\\000\\\\377A"] }});
        out.binOut = await drain(out.bin.process, "base64");
        out.sleeper = await call("process_start", {{ sandbox: {name!r}, command: ["sleep", "100"] }});
        out.listSleeper = await call("process", {{ action: "list", sandbox: {name!r} }});
        out.kill = await call("process", {{ action: "kill", process: out.sleeper.process, signal: "TERM" }});
        out.killed = await drain(out.sleeper.process);
        out.killGone = await call("process", {{ action: "kill", process: out.sleeper.process }});
        out.noCommand = await call("process_start", {{ sandbox: {name!r}, command: ["/no/such/program"] }});
        out.badId = await call("process", {{ action: "output", process: "../../org/x" }});
        out.badPath = await call("process", {{ action: "kill", process: "/org/xagent/Sandbox1/sandbox/x" }});
        out.badOffset = await call("process", {{ action: "output", process: p, cursor: "-1" }});
        out.bigOffset = await call("process", {{ action: "output", process: p, cursor: "18446744073709551616" }});
        out.noSandbox = await call("process_start", {{ sandbox: "no-such-" + {name!r}, command: "true" }});
        // Hostile output: 3 MiB of random bytes (the policy keeps the newest 1 MiB of
        // each stream), read as text and as base64.
        out.flood = await call("process_start", {{ sandbox: {name!r},
                                                  command: "head -c 3145728 /dev/urandom; echo done >&2; sleep 60" }});
        let b = null;
        // stdout's position in the low 32 bits of the cursor, stderr's in the high ones
        const end = ((5n << 32n) | 3145728n).toString();
        for (let i = 0; i < 100 && !(b && b.next_cursor === end); i++) {{
            await new Promise(res => setTimeout(res, 200));
            b = await call("process", {{ action: "output", process: out.flood.process, encoding: "base64" }});
        }}
        const t = await call("process", {{ action: "output", process: out.flood.process }});
        out.floodText = {{ chars: t.stdout.length, bytes: Buffer.byteLength(t.stdout), next: t.next_cursor,
                          running: t.running, stderr: t.stderr }};
        out.floodB64 = {{ bytes: Buffer.from(b.stdout, "base64").length, errBytes: Buffer.from(b.stderr, "base64").length,
                         next: b.next_cursor }};
        await call("process", {{ action: "kill", process: out.flood.process }});
        // A process left running when this server goes: read by the next one.
        out.survivor = await call("process_start", {{ sandbox: {name!r},
                                                     command: "echo from-before; sleep 2; echo after; exit 7" }});
    """)
    p = out["start"]["process"]
    assert out["start"] == {"process": p, "sandbox": name, "running": True, "_text": out["start"]["_text"]}
    assert out["first"]["exit_code"] is None or out["first"]["running"] is False
    rows = {r["process"]: r for r in out["list"]["processes"]}
    assert rows[p]["command"] == "/bin/sh" and rows[p]["running"] is True and rows[p]["exit_code"] is None
    d = out["drained"]
    assert d["stdout"] == "hello world\nbad\ufffd\nlate\n" and d["stderr"] == "oops\n"
    assert (d["running"], d["exit_code"]) == (False, 5)
    assert out["afterEnd"]["error"]["name"] == "org.freedesktop.DBus.Error.UnknownObject", \
        "the read that returned running false was the last"
    assert base64.b64decode(out["binOut"]["stdout"]) == b"\x00\xffA" and out["binOut"]["exit_code"] == 0
    assert out["sleeper"]["process"] in {r["process"] for r in out["listSleeper"]["processes"]}
    assert out["kill"] == {"process": out["sleeper"]["process"], "signal": "TERM", "sent": True,
                           "_text": out["kill"]["_text"]}
    assert (out["killed"]["running"], out["killed"]["exit_code"]) == (False, 128 + 15)
    assert out["killGone"]["error"]["name"] in ("org.freedesktop.DBus.Error.UnknownObject", h.ERR + "NotRunning")
    assert out["noCommand"]["error"]["name"] == h.INVALID_ARGS and "/no/such/program" in out["noCommand"]["error"]["message"]
    assert out["badId"]["error"]["name"] == h.INVALID_ARGS and "'process'" in out["badId"]["error"]["message"]
    assert out["badPath"]["error"]["name"] == h.INVALID_ARGS and "'process'" in out["badPath"]["error"]["message"]
    for bad in ("badOffset", "bigOffset"):
        assert out[bad]["error"]["name"] == h.INVALID_ARGS and "'cursor'" in out[bad]["error"]["message"], out[bad]
    assert out["noSandbox"]["error"]["name"] == h.NO_SUCH_SANDBOX
    ft, fb = out["floodText"], out["floodB64"]
    # The newest 1 MiB of stdout (max_process_output), stderr whole; a cursor beyond
    # JSON's exact integers comes back exact; text at most 3 bytes a raw byte.
    assert fb["bytes"] == 1 << 20 and fb["errBytes"] == 5, fb
    assert fb["next"] == str((5 << 32) | 3145728) and ft["next"] == fb["next"]
    assert ft["bytes"] <= 3 * (1 << 20) and ft["chars"] <= 1 << 20, ft
    assert ft["stderr"] == "done\n"

    # The next server (another client session, the same user) reads the survivor.
    survivor = out["survivor"]["process"]
    later = mcp.node(MEMBER, DRAIN + f"""
        out.list = await call("process", {{ action: "list", sandbox: {name!r} }});
        out.drained = await drain({survivor!r});
    """, sdk=2)
    assert survivor in {r["process"] for r in later["list"]["processes"]}
    assert later["drained"]["stdout"] == "from-before\nafter\n" and later["drained"]["exit_code"] == 7


@pytest.mark.parametrize("sdk", [1, 2])
def test_the_outsider_cannot_touch_the_members_processes(mcp, cleanup, sdk):  # noqa: F811
    name = h.unique("mcppo")
    cleanup.sandbox(name)
    mine = mcp.node(MEMBER, f"""
        await call("sandbox_ensure", {{ sandbox: {name!r}, image: {h.TEST_IMAGE!r} }});
        out.p = await call("process_start", {{ sandbox: {name!r}, command: "echo secret; sleep 30" }});
    """, sdk=sdk)
    p = mine["p"]["process"]
    # The outsider's name is its own (names belong to their owner): only the process
    # id reaches the member's.
    out = mcp.node(OTHER, f"""
        out.read = await call("process", {{ action: "output", process: {p!r} }});
        out.kill = await call("process", {{ action: "kill", process: {p!r} }});
        out.list = await call("process", {{ action: "list", sandbox: {name!r} }});
        out.pause = await call("sandbox", {{ action: "pause", sandbox: {name!r} }});
        out.start = await call("process_start", {{ sandbox: {name!r}, command: "true" }});
    """, sdk=sdk)
    for key in ("read", "kill"):
        assert out[key]["error"]["name"] == h.ACCESS_DENIED, (key, out[key])
    for key in ("pause", "start"):
        assert out[key]["error"]["name"] == h.INTERACTIVE, (key, out[key])
    assert "secret" not in str(out)
    assert out["list"]["processes"] == [], "the outsider's own name: nothing of the member's"
    after = mcp.node(MEMBER, f"""
        out.list = await call("process", {{ action: "list", sandbox: {name!r} }});
        out.kill = await call("process", {{ action: "kill", process: {p!r} }});
    """, sdk=sdk)
    row = next(r for r in after["list"]["processes"] if r["process"] == p)
    assert row["running"] is True, "the outsider's kill did nothing"
    assert after["kill"]["sent"] is True


SPOOF = """
import sys, dbus, dbus.lowlevel
bus = dbus.SystemBus()
m = dbus.lowlevel.SignalMessage(sys.argv[2], "org.xagent.Sandbox1.Exec", "Exited")
m.set_destination(sys.argv[1])
m.append(dbus.Int32(99))
bus.send_message(m)
bus.flush()
"""


def test_a_spoofed_exited_signal_is_not_believed(mcp, stack, cleanup):  # noqa: F811
    """A unicast Exited can come from any client of the bus: the outsider sends one
    for the member's running exec to the member's server, which must keep the status
    the service reports."""
    import rootbus
    from test_mcp import _exchange, _req, _server_pid
    name = h.unique("mcpsp")
    cleanup.sandbox(name)
    init = _req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "x", "version": "1"}})
    p = mcp.spawn(MEMBER)
    try:
        pid = _server_pid(p, mcp.server)
        _exchange(p, [init, _req(1, "tools/call", {"name": "sandbox_ensure",
                                                   "arguments": {"sandbox": name, "image": h.TEST_IMAGE}})], 2)
        p.stdin.write(_req(2, "tools/call", {"name": "run", "arguments": {"sandbox": name,
                                                                          "command": "sleep 4; exit 3"}}))
        p.stdin.flush()
        root = rootbus.connect(stack)
        dbus_ = root.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")
        server = next(n for n in dbus_.ListNames(dbus_interface="org.freedesktop.DBus") if n.startswith(":") and
                      dbus_.GetConnectionUnixProcessID(n, dbus_interface="org.freedesktop.DBus") == pid)
        sandbox = root.get_object(h.BUS_NAME, h.object_path(name, MEMBER))
        deadline, execs = time.monotonic() + 3, []
        while not execs and time.monotonic() < deadline:
            execs = [str(e[0]) for e in sandbox.ListExecs(dbus_interface=h.SANDBOX) if e[2]]
        root.close()
        (path,) = execs
        r = stack.run_as(OTHER, ["/usr/bin/python3", "-c", SPOOF, str(server), path])
        assert r.returncode == 0, r.stderr
        (answer,) = _exchange(p, [], 1)
    finally:
        p.stdin.close()
        p.wait(30)
    assert answer["id"] == 2
    assert answer["result"]["structuredContent"]["exit_code"] == 3, answer["result"]
