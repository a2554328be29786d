# SPDX-License-Identifier: LGPL-2.1-or-later
"""A detached process's output and state when the sandbox works against its reader, as
the member through the real bus (the ring's one reader is the in-sandbox program,
src/core/ring.c, asked in one OUTPUT request; a channel that fails while a process is
polled: tests/fault/test_detached_channel.py):

- a forged ring header (a commit count of 2^62 written from inside) still gives every
  read progress: ReadOutput(0) returns the bytes the ring keeps and a cursor that is not
  0 again, never "nothing, running, 0" for a reader to loop on;
- under a fast writer (`yes`) every read returns the newest bytes kept, whole and in
  order, never nothing."""

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

EXEC = "org.xagent.Sandbox1.Exec"
DETACH = {"detach": ["b", True]}
@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "dhostile")


def detach(sandboxd, name, argv):
    return sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                         [name, argv, DETACH, "</dev/null", ">/dev/null", ">/dev/null"]).result[0]


def read_output(sandboxd, path, offset=0):
    out, err, nxt, running = sandboxd.call(MEMBER, "ReadOutput", "t", [offset], path=path, iface=EXEC).result
    return bytes(out), bytes(err), nxt, running


def sh(sandboxd, name, script, timeout=60):
    out = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script], {}], timeout=timeout).result
    assert out[0] == 0, out
    return bytes(out[1]).decode()


def test_a_forged_header_still_gives_progress(sandboxd, box):
    path = detach(sandboxd, box, ["sh", "-c", "echo hello; exec sleep 120"])
    h.wait_until(lambda: read_output(sandboxd, path)[0] == b"hello\n", 15, step=0.3, what="its line")
    ring = f"/tmp/.xagent-sandbox-exec/{path.rsplit('/', 1)[1]}/output"
    # stdout's commit (bytes 48-55, little-endian) := 2^62, a multiple of 2^32
    sh(sandboxd, box, f"printf '\\0\\0\\0\\0\\0\\0\\0\\100' | dd of={ring} bs=1 seek=48 conv=notrunc 2>/dev/null")
    out, err, nxt, running = read_output(sandboxd, path)
    assert running
    # What the ring keeps (its whole cap, its first bytes the real line), and a cursor past it.
    assert out.startswith(b"hello\n") and len(out) == 1 << 20, len(out)
    assert nxt != 0
    # Read on from there: caught up, nothing new, the same cursor — progress, no loop back.
    out2, err2, nxt2, running2 = read_output(sandboxd, path, nxt)
    assert out2 == b"" and nxt2 == nxt and running2
    sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=EXEC).result


def test_a_fast_writer_is_read_whole(sandboxd, box):
    path = detach(sandboxd, box, ["yes"])
    try:
        h.wait_until(lambda: read_output(sandboxd, path)[0], 15, step=0.3, what="its output")
        nxt, sizes = 0, []
        for _ in range(12):
            out, err, nxt, running = read_output(sandboxd, path, nxt)
            sizes.append(len(out))
            assert running and out, sizes
            # consistent: "y\n" after "y\n", nothing torn or overwritten inside
            assert set(out) <= {ord("y"), ord("\n")} and b"yy" not in out and b"\n\n" not in out, out[:64]
        print(f"12 reads under `yes`: {sizes} bytes")
    finally:
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=EXEC).result
