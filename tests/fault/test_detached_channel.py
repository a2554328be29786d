# SPDX-License-Identifier: LGPL-2.1-or-later
"""A detached process whose sandbox's channel fails while it is polled (issue 32, item
5): the process kills the channel's program (`xagent-sandbox-init --serve`) from inside,
and Docker refuses every exec of the sandbox meanwhile (the relay answers its
`POST /containers/{id}/exec` with a 500), so no new channel can be opened and every poll
fails. That is "unknown", not "ended": the object stays running, its output stays, and
once Docker answers again the poll finds the process running and then its real end."""

import time

import fault as F
from fault import MEMBER
from test_create import ID, subject_of

EXEC = "org.xagent.Sandbox1.Exec"
REFUSED = (b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n"
           b'{"message":"refused here"}\n')
# Waits for /tmp/go, kills the channel's program (its second argument is --serve; this
# shell's is -c), then runs on and ends with a line of its own.
SCRIPT = ("echo begun; while [ ! -e /tmp/go ]; do sleep 0.2; done; "
          "for p in /proc/[0-9]*; do a=$(tr '\\0' '\\n' < $p/cmdline 2>/dev/null | sed -n 2p); "
          "[ \"$a\" = --serve ] && kill -9 ${p#/proc/} && echo killed >&2; done; sleep 12; echo done")


def list_execs(f, name):
    return [tuple(x) for x in f.call(MEMBER, "ListExecs", "s", [name]).result[0]]


def read_output(f, path):
    """(stdout, stderr, running), or None while the channel cannot be had (a loaded
    machine's exec may take longer than these tests' docker_timeout of 6 s)."""
    r = f.call(MEMBER, "ReadOutput", "t", [0], path=path, iface=EXEC)
    if not r.ok and r["error"] == F.BACKEND_UNAVAILABLE:
        return None
    out, err, nxt, running = r.result
    return bytes(out), bytes(err), running


def test_a_failing_channel_is_not_an_end(f):
    f.activate()
    name = F.unique("dchan")
    assert f.create(MEMBER, name).result().ok
    path = f.call(MEMBER, "StartExec", "sasa{sv}hhh", [name, ["sh", "-c", SCRIPT], {"detach": ["b", True]},
                                                       "</dev/null", ">/dev/null", ">/dev/null"]).result[0]
    F.wait_until(lambda: (read_output(f, path) or (b"",))[0] == b"begun\n", 30, step=0.3, what="its first line")
    f.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/go", [], {}]).result
    f.relay.answer("POST", rf"^/containers/{ID}/exec", REFUSED, subject=subject_of("container", MEMBER, name))
    # Polls (one a second) for 6 s: the channel's program is gone and no exec is had.
    start = time.monotonic()
    while time.monotonic() - start < 6:
        assert (path, "sh", True, -1) in list_execs(f, name)
        time.sleep(0.5)
    # A read meanwhile fails typed (nothing is known), it does not end the object.
    f.call(MEMBER, "ReadOutput", "t", [0], path=path, iface=EXEC).error(F.ERR + "BackendError", F.BACKEND_UNAVAILABLE)
    f.relay.release_all()
    out, err, running = F.wait_until(lambda: read_output(f, path), 30, step=0.5, what="a read once Docker answers")
    assert out == b"begun\n" and err == b"killed\n" and running
    F.wait_until(lambda: (path, "sh", False, 0) in list_execs(f, name), 30, step=0.5, what="its end")
    assert F.wait_until(lambda: read_output(f, path), 30, step=0.5, what="the last read") == \
        (b"begun\ndone\n", b"killed\n", False)
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()
