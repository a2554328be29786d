# SPDX-License-Identifier: LGPL-2.1-or-later
"""Detached processes (StartExec's detach), as the member and the outsider through the
real bus: one outlives its caller and a SIGKILL of the daemon, its object is back after
the restart, its output is read from offset 0 and it is killed; a flood of output stays
bounded per stream (the oldest of that stream dropped, the other stream's kept whole),
by the policy's max_process_output a process was started with; the per-user exec limit
holds for 20 detach requests at once; a command that cannot start is InvalidArgs."""

import json
import signal
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

EXEC = "org.xagent.Sandbox1.Exec"
DETACH = {"detach": ["b", True]}
CAP = 1 << 20          # max_process_output's default: per stream
FLOOD = "head -c 10000000 /dev/zero | tr '\\0' a; echo END >&2"
TICKER = "echo start; echo oops >&2; i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.2; done"


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "detach")


def detach(sandboxd, user, name, argv, options=None):
    return sandboxd.call(user, "StartExec", "sasa{sv}hhh",
                         [name, argv, {**DETACH, **(options or {})}, "</dev/null", ">/dev/null", ">/dev/null"])


def list_execs(sandboxd, user, name):
    return [tuple(x) for x in sandboxd.call(user, "ListExecs", "s", [name]).result[0]]


def list_execs_after_restart(sandboxd, user, name):
    """ListExecs right after a restart: [] while it says BackendUnavailable (how the
    processes given back are is being asked)."""
    r = sandboxd.call(user, "ListExecs", "s", [name])
    if not r.ok:
        r.error(h.ERR + "BackendUnavailable")
        return []
    return [tuple(x) for x in r.result[0]]


def listed_after_restart(sandboxd, user, name, entry):
    """Right after a daemon restart ListExecs lists entry, or says BackendUnavailable
    while it asks how the processes given back are — never leaves it out (an absence is
    what a process that ended and was read gets)."""
    r = sandboxd.call(user, "ListExecs", "s", [name])
    if not r.ok:
        r.error(h.ERR + "BackendUnavailable")
        return False
    assert entry in [tuple(x) for x in r.result[0]], r.result
    return True


def read_output(sandboxd, user, path, offset=0):
    out, err, nxt, running = sandboxd.call(user, "ReadOutput", "t", [offset], path=path, iface=EXEC).result
    return bytes(out).decode(), bytes(err).decode(), nxt, running


def cursor(out_pos, err_pos):
    """ReadOutput's offset: stdout's position in the low 32 bits, stderr's above."""
    return (out_pos & 0xFFFFFFFF) | (err_pos << 32)


def ended(sandboxd, path):
    props = sandboxd.call(MEMBER, "GetAll", "s", [EXEC], path=path, iface=h.PROPERTIES).result[0]
    return None if props["Running"] else props["ExitStatus"]


def test_survives_its_caller_and_a_killed_daemon(stack, sandboxd, box):
    # Each call is a client process of its own: the caller is gone once it returns.
    path = detach(sandboxd, MEMBER, box, ["sh", "-c", TICKER]).result[0]
    assert (path, "sh", True, -1) in list_execs(sandboxd, MEMBER, box)
    old = stack.stop_daemon(signal.SIGKILL)
    assert old is not None
    # The next call activates a new daemon; the object is back once it swept.
    h.wait_until(lambda: listed_after_restart(sandboxd, MEMBER, box, (path, "sh", True, -1)), 30, step=0.3,
                 what="the object back")
    assert stack.daemon_pid() != old
    assert any("while :" in c for c in h.command_lines(box))
    # An orderly exit (as the idle exit is) leaves it running too.
    assert stack.stop_daemon(signal.SIGTERM) is not None
    h.wait_until(lambda: listed_after_restart(sandboxd, MEMBER, box, (path, "sh", True, -1)), 30, step=0.3,
                 what="the object back again")
    assert any("while :" in c for c in h.command_lines(box))
    time.sleep(0.5)
    out, err, nxt, running = read_output(sandboxd, MEMBER, path, 0)
    assert out.startswith("start\ntick 0\ntick 1\n") and err == "oops\n" and running, (out, err)
    assert nxt == cursor(len(out), len(err))
    # The outsider neither reads nor kills it; it is not in the outsider's list.
    assert "another user" in sandboxd.call(OTHER, "ReadOutput", "t", [0], path=path,
                                           iface=EXEC).error(h.ACCESS_DENIED)
    assert "another user" in sandboxd.call(OTHER, "Kill", "s", ["KILL"], path=path, iface=EXEC).error(h.ACCESS_DENIED)
    sandboxd.call(MEMBER, "Kill", "s", ["TERM"], path=path, iface=EXEC).result
    assert h.wait_until(lambda: ended(sandboxd, path), 15, step=0.3, what="the end") == 128 + 15
    assert not any("while :" in c for c in h.command_lines(box))
    assert (path, "sh", False, 128 + 15) in list_execs(sandboxd, MEMBER, box)
    # Read to its end after it ended: the object goes, and its directory.
    out2, err2, nxt2, running = read_output(sandboxd, MEMBER, path, nxt)
    assert not running and err2 == "" and nxt2 == cursor(len(out) + len(out2), len(err))
    h.wait_until(lambda: not [x for x in list_execs(sandboxd, MEMBER, box) if x[0] == path], 10, step=0.3, what="the object gone")
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["ls", "-A", "/tmp/.xagent-sandbox-exec"], {}])
    assert bytes(r.result[1]).decode() == ""


def flood(sandboxd, box):
    path = detach(sandboxd, MEMBER, box, ["sh", "-c", FLOOD]).result[0]
    assert h.wait_until(lambda: ended(sandboxd, path) is not None or None, 60, step=0.3, what="the flood's end") is not None
    assert ended(sandboxd, path) == 0
    return path


def test_a_flood_of_output_stays_bounded_per_stream(sandboxd, box):
    path = flood(sandboxd, box)
    # A past-the-end offset is refused, naming it.
    assert "offset" in sandboxd.call(MEMBER, "ReadOutput", "t", [cursor(0, 5)], path=path,
                                     iface=EXEC).error(h.INVALID_ARGS)
    out, err, nxt, running = read_output(sandboxd, MEMBER, path, 0)
    # stdout's oldest was dropped: its newest 1 MiB is kept; stderr's line is whole.
    assert not running and err == "END\n" and nxt == cursor(10000000, 4)
    assert len(out) == CAP and set(out) == {"a"}


def test_the_cap_is_the_policy_a_process_started_with(stack, sandboxd, box):
    before = detach(sandboxd, MEMBER, box, ["sh", "-c", "sleep 2; " + FLOOD]).result[0]
    small = 64 << 10
    with h.daemon_config(stack, {"max_process_output": small}):
        assert sandboxd.call(MEMBER, "GetPolicy").result[0]["max_process_output"] == small
        after = flood(sandboxd, box)
        out, err, nxt, running = read_output(sandboxd, MEMBER, after, 0)
        assert not running and len(out) == small and err == "END\n" and nxt == cursor(10000000, 4)
        # Started before the change (and flooding after it): read with its own cap.
        h.wait_until(lambda: ended(sandboxd, before) is not None or None, 60, step=0.3, what="the first flood's end")
        out, err, nxt, running = read_output(sandboxd, MEMBER, before, 0)
        assert not running and len(out) == CAP and err == "END\n", (len(out), err)
    assert sandboxd.call(MEMBER, "GetPolicy").result[0]["max_process_output"] == CAP


def test_a_ring_of_the_old_layout_is_refused_and_its_process_killed(sandboxd, box):
    """A process found with a layout-1 ring (XSBRING1: one from before an upgrade; here
    the owner's own rewrite of it) is not read: it is killed and its object goes."""
    path = detach(sandboxd, MEMBER, box, ["sleep", "700"]).result[0]
    h.wait_until(lambda: any(c == "sleep 700" for c in h.command_lines(box)), 15, step=0.3, what="the sleep")
    ring = f"/tmp/.xagent-sandbox-exec/{path.rsplit('/', 1)[1]}/output"
    old = b"XSBRING1" + (2 << 20).to_bytes(8, "little") + bytes(4096)
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [box, ring, list(old), {}]).result
    h.wait_until(lambda: not [x for x in list_execs(sandboxd, MEMBER, box) if x[0] == path], 15, step=0.3, what="the object gone")
    h.wait_until(lambda: not any(c == "sleep 700" for c in h.command_lines(box)), 15, step=0.3, what="the sleep killed")


def test_ended_processes_come_back_ended_holding_no_slot(stack, sandboxd, box):
    limit = sandboxd.call(MEMBER, "GetPolicy").result[0]["max_execs_per_user"]
    paths = [detach(sandboxd, MEMBER, box, ["true"]).result[0] for _ in range(limit)]
    for p in paths:
        h.wait_until(lambda: ended(sandboxd, p) is not None or None, 15, step=0.3, what="true's end")
    assert stack.stop_daemon(signal.SIGKILL) is not None
    back = h.wait_until(lambda: [x for x in list_execs_after_restart(sandboxd, MEMBER, box) if x[0] in paths], 30,
                        step=0.3, what="the objects back")
    # Seen ended at once (their rings said so), not running until a poll.
    assert sorted(back) == sorted((p, "true", False, 0) for p in paths), back
    # So the whole share is free.
    fresh = [detach(sandboxd, MEMBER, box, ["sleep", "600"]).result[0] for _ in range(limit)]
    for p in fresh:
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=p, iface=EXEC).result
    for p in fresh + paths:
        h.wait_until(lambda: ended(sandboxd, p) is not None or None, 15, step=0.3, what="killed")
        read_output(sandboxd, MEMBER, p, 0)


def test_start_failures_are_typed(sandboxd, box):
    msg = detach(sandboxd, MEMBER, box, ["no-such-command"]).error(h.INVALID_ARGS)
    assert "argv[0]: 'no-such-command': no such command in PATH" in msg
    msg = detach(sandboxd, MEMBER, box, ["true"], {"working_dir": ["s", "/nope"]}).error(h.INVALID_ARGS)
    assert "working_dir: '/nope'" in msg
    assert "tty: not with detach" in detach(sandboxd, MEMBER, box, ["true"], {"tty": ["b", True]}).error(h.INVALID_ARGS)
    assert "timeout: not with detach" in detach(sandboxd, MEMBER, box, ["true"],
                                                {"timeout": ["u", 5]}).error(h.INVALID_ARGS)
    assert [x for x in list_execs(sandboxd, MEMBER, box) if x[1] in ("no-such-command", "true")] == []


def test_the_limit_holds_for_20_concurrent_detaches(stack, sandboxd, box):
    limit = sandboxd.call(MEMBER, "GetPolicy").result[0]["max_execs_per_user"]
    args = json.dumps([box, ["sleep", "1200"], DETACH, "</dev/null", ">/dev/null", ">/dev/null"])
    procs = [stack.spawn_as(MEMBER, stack.client_argv("call", h.BUS_NAME, h.MANAGER_PATH,
                                                      f"{h.MANAGER}.StartExec", "sasa{sv}hhh", args),
                            ) for _ in range(20)]
    replies = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    paths = [r["result"][0] for r in replies if r["ok"]]
    try:
        # Never more than the share; a call refused names the limit it met (20 at once
        # may also meet max_operations_per_user).
        assert 0 < len(paths) <= limit, replies
        assert all(r["error"] == h.LIMITS_EXCEEDED and
                   ("max_execs_per_user" in r["message"] or "max_operations_per_user" in r["message"])
                   for r in replies if not r["ok"]), replies
        # Filled up one by one, the share is exactly max_execs_per_user.
        for _ in range(limit + 1):
            r = detach(sandboxd, MEMBER, box, ["sleep", "1200"])
            if not r.ok:
                assert "max_execs_per_user" in r.error(h.LIMITS_EXCEEDED)
                break
            paths.append(r.result[0])
        assert len(paths) == limit
        running = [x for x in list_execs(sandboxd, MEMBER, box) if x[1] == "sleep" and x[2]]
        assert len(running) == limit
    finally:
        for p in paths:
            assert sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=p, iface=EXEC)["ok"]
    for p in paths:
        assert h.wait_until(lambda: ended(sandboxd, p), 15, step=0.3, what="killed") == 128 + 9
    # The slots are free again.
    path = detach(sandboxd, MEMBER, box, ["true"]).result[0]
    h.wait_until(lambda: ended(sandboxd, path) is not None or None, 15, step=0.3, what="true's end")
