# SPDX-License-Identifier: LGPL-2.1-or-later
"""Attach on a detached process's exec object, as the member and the outsider through
the real bus: the kept output is replayed, then what comes; what the attacher writes
reaches the process's stdin (a running `cat` echoes it); the end of one attacher's
input leaves the process's stdin open for the next; at most 4 at once; the outsider is
refused; after a SIGKILL of the daemon the restored object is attached to again; the
session ends with the process."""

import os
import select
import signal
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

EXEC = "org.xagent.Sandbox1.Exec"
DETACH = {"detach": ["b", True]}
NULLS = ["</dev/null", ">/dev/null", ">/dev/null"]
NOT_RUNNING = h.ERR + "NotRunning"
ECHO = "echo ready; echo err-ready >&2; exec cat"


@pytest.fixture(scope="module")
def box(stack, sandboxd, docker_image):
    for name in h.running_sandbox(stack, "attach"):
        yield name
        # The killed processes are seen ended (the next module's share is free).
        h.wait_until(lambda: not [x for x in list_execs(sandboxd, name) if x[2]], 15, step=0.3, what="every process seen ended")


def detach(sandboxd, name, argv):
    return sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh", [name, argv, DETACH] + NULLS).result[0]


def list_execs(sandboxd, name):
    """ListExecs; right after a restart it may say BackendUnavailable while it asks how
    the processes given back are (then: nothing known yet)."""
    r = sandboxd.call(MEMBER, "ListExecs", "s", [name])
    if not r.ok:
        r.error(h.ERR + "BackendUnavailable")
        return []
    return [tuple(x) for x in r.result[0]]


def read_to_end(fd, timeout=20):
    got = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        assert left > 0, f"no end of file within {timeout} s; got {got!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                return got
            got += chunk


class Attached:
    """client.py attach as the member: its stdin, stdout and stderr are the session's."""

    def __init__(self, stack, path):
        self.p = stack.spawn_as(MEMBER, stack.client_argv("attach", path))
        self.out = self.p.stdout.fileno()
        self.err = self.p.stderr.fileno()

    def send(self, text):
        self.p.stdin.write(text)
        self.p.stdin.flush()

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=30)


def running(sandboxd, path):
    return sandboxd.call(MEMBER, "GetAll", "s", [EXEC], path=path, iface=h.PROPERTIES).result[0]["Running"]


def test_attach_replays_then_relays_both_ways(stack, sandboxd, box):
    path = detach(sandboxd, box, ["sh", "-c", ECHO])
    h.wait_until(lambda: b"ready" in bytes(sandboxd.call(MEMBER, "ReadOutput", "t", [0], path=path,
                                                         iface=EXEC).result[0]), 15, step=0.3, what="ready")
    a = Attached(stack, path)
    try:
        # The kept output first, each stream to its own descriptor.
        assert h.read_until(a.out, b"ready\n").startswith(b"ready\n")
        assert b"err-ready\n" in h.read_until(a.err, b"err-ready\n")
        a.send("hello\n")
        assert b"hello\n" in h.read_until(a.out, b"hello\n")
        # The end of this attacher's input is not the process's: cat still runs.
        a.p.stdin.close()
        time.sleep(1)
        assert running(sandboxd, path)
    finally:
        a.close()
    b = Attached(stack, path)
    try:
        b.send("second\n")
        assert b"second\n" in h.read_until(b.out, b"second\n")
        # What was echoed is kept too, in order.
        out = bytes(sandboxd.call(MEMBER, "ReadOutput", "t", [0], path=path, iface=EXEC).result[0])
        assert out == b"ready\nhello\nsecond\n", out
        # The session ends with the process: its output ends, the client returns.
        sandboxd.call(MEMBER, "Kill", "s", ["TERM"], path=path, iface=EXEC).result
        read_to_end(b.out)
        assert b.p.wait(timeout=20) == 0
    finally:
        b.close()
    # Attach to a process that ended is NotRunning.
    h.wait_until(lambda: not running(sandboxd, path), 15, step=0.3, what="the end")
    assert "exited" in sandboxd.call(MEMBER, "Attach", "hhh", NULLS, path=path,
                                     iface=EXEC).error(NOT_RUNNING)


def test_the_outsider_and_a_plain_exec_are_refused(stack, sandboxd, box):
    path = detach(sandboxd, box, ["sleep", "600"])
    try:
        assert "another user" in sandboxd.call(OTHER, "Attach", "hhh", NULLS, path=path,
                                               iface=EXEC).error(h.ACCESS_DENIED)
    finally:
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=EXEC).result
    plain = Attached.__new__(Attached)
    plain.p = stack.spawn_as(MEMBER, stack.client_argv("start-exec", box, '["sleep", "600"]', "{}"))
    try:
        exec_path = h.wait_until(lambda: [x[0] for x in list_execs(sandboxd, box) if x[1] == "sleep" and x[2]
                                          and x[0] != path], 15, step=0.3, what="the plain exec")[0]
        assert "not detached" in sandboxd.call(MEMBER, "Attach", "hhh", NULLS, path=exec_path,
                                               iface=EXEC).error(h.INVALID_ARGS)
    finally:
        plain.close()


def attach_ok(sandboxd, path):
    """An Attach with /dev/null (its session ends with this call's connection)."""
    r = sandboxd.call(MEMBER, "Attach", "hhh", NULLS, path=path, iface=EXEC)
    if not r["ok"]:
        assert "at most 4" in r.error(h.LIMITS_EXCEEDED)
    return r["ok"]


def test_at_most_four_at_once(stack, sandboxd, box):
    path = detach(sandboxd, box, ["sh", "-c", ECHO])
    sessions = []
    try:
        for i in range(4):
            s = Attached(stack, path)
            sessions.append(s)
            s.send(f"s{i}\n")
            h.read_until(s.out, f"s{i}\n".encode())
        msg = sandboxd.call(MEMBER, "Attach", "hhh", NULLS, path=path, iface=EXEC).error(h.LIMITS_EXCEEDED)
        assert "at most 4" in msg, msg
        # One ends when its caller closes its stdout (the pipe's reader), its
        # connection still open: there is room again.
        sessions[0].p.stdout.close()
        assert h.wait_until(lambda: attach_ok(sandboxd, path), 15, step=0.3, what="room after a hang-up")
        assert sessions[0].p.poll() is None
        # Another ends with its caller's connection.
        sessions.pop().close()
        assert h.wait_until(lambda: attach_ok(sandboxd, path), 15, step=0.3, what="room after a connection closed")
    finally:
        for s in sessions:
            s.close()
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=EXEC).result


def test_attach_after_the_daemon_was_killed(stack, sandboxd, box):
    path = detach(sandboxd, box, ["sh", "-c", ECHO])
    a = Attached(stack, path)
    try:
        a.send("before\n")
        h.read_until(a.out, b"before\n")
        assert stack.stop_daemon(signal.SIGKILL) is not None
    finally:
        a.close()
    h.wait_until(lambda: (path, "sh", True, -1) in list_execs(sandboxd, box), 30, step=0.3, what="the object back")
    b = Attached(stack, path)
    try:
        got = h.read_until(b.out, b"before\n")
        assert got.startswith(b"ready\nbefore\n"), got
        b.send("after\n")
        h.read_until(b.out, b"after\n")
    finally:
        b.close()
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=EXEC).result
