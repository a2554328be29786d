# SPDX-License-Identifier: LGPL-2.1-or-later
"""The file calls' paths and targets, as the member through the real bus: every path is
normalised the same way before anything is checked ("//", "/.", "/tmp/..", "/w/.." are
the root), so RemoveFile refuses the sandbox's root in any spelling, with or without
`recursive`, and leaves everything in place; an append opens its target without waiting
and writes only into a regular file: a FIFO is refused at once, typed, instead of
holding the in-sandbox program in open() until the channel's 20 s ran out."""

import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "fpaths")


def sh(sandboxd, name, script):
    out = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script], {}]).result
    assert out[0] == 0, out
    return bytes(out[1]).decode()


@pytest.mark.parametrize("spelling", ["/", "//", "/.", "/tmp/..", "/w/..", "///./tmp/../", "/../.."])
@pytest.mark.parametrize("obj", [False, True])
def test_the_root_is_never_removed(sandboxd, box, spelling, obj):
    sh(sandboxd, box, "mkdir -p /tmp/keep && echo kept > /tmp/keep/file")
    options = {"recursive": ["b", True]}
    if obj:
        reply = sandboxd.call(MEMBER, "RemoveFile", "sa{sv}", [spelling, options],
                              path=h.object_path(box, MEMBER), iface=h.SANDBOX)
    else:
        reply = sandboxd.call(MEMBER, "RemoveFile", "ssa{sv}", [box, spelling, options])
    msg = reply.error(h.INVALID_ARGS)
    assert "root" in msg and repr(spelling)[1:-1] in msg, msg
    assert sh(sandboxd, box, "cat /tmp/keep/file") == "kept\n"
    assert "sh" in sh(sandboxd, box, "ls /bin")


def test_every_file_call_reads_a_path_the_same_way(sandboxd, box):
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [box, "/tmp/a/../norm", list(b"one"), {}]).result
    assert sh(sandboxd, box, "cat /tmp/norm") == "one"
    data, info = sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [box, "//tmp/./norm", {}]).result
    assert bytes(data) == b"one"
    entries, _ = sandboxd.call(MEMBER, "ListFiles", "ssa{sv}", [box, "/tmp/x/..", {}]).result
    assert "norm" in [e[0] for e in entries]
    sandboxd.call(MEMBER, "RemoveFile", "ssa{sv}", [box, "/tmp/keep/../norm", {}]).result
    assert sh(sandboxd, box, "test -e /tmp/norm || echo gone") == "gone\n"


def test_an_append_to_a_fifo_is_refused_at_once(sandboxd, box):
    sh(sandboxd, box, "rm -f /tmp/fifo && mkfifo /tmp/fifo")
    start = time.monotonic()
    msg = sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}",
                        [box, "/tmp/fifo", list(b"x"), {"append": ["b", True]}]).error(h.INVALID_ARGS)
    took = time.monotonic() - start
    assert "/tmp/fifo" in msg and "not a regular file" in msg, msg
    assert took < 10, took
    # With a reader on it, too: nothing is written into it.
    sh(sandboxd, box, "(cat /tmp/fifo > /tmp/fifo-read &) ; sleep 0.2")
    msg = sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}",
                        [box, "/tmp/fifo", list(b"y"), {"append": ["b", True]}]).error(h.INVALID_ARGS)
    assert "not a regular file" in msg, msg
    # The channel answers the next call as before.
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [box, "/tmp/plain", list(b"z"), {"append": ["b", True]}]).result
    assert sh(sandboxd, box, "cat /tmp/plain") == "z"
