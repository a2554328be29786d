# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandboxctl exec --detach, ps, output and attach as the unprivileged member,
through the real bus: a detached `cat` listed, attached to through pipes (its kept
output first, what is written echoed), left running when attach goes, its output
printed stream by stream, followed to its end."""

import json
import os
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

EXEC = "org.xagent.Sandbox1.Exec"
ECHO = "echo ready; echo warn >&2; exec cat"


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "ctldetach")


@pytest.fixture
def binary(stack):
    return os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")


@pytest.fixture
def ctl(stack, binary):
    return lambda *args, input="", timeout=60: stack.run_as(MEMBER, [binary, *args], input=input, timeout=timeout)


def ps(ctl, box):
    r = ctl("--json", "ps", box)
    assert r.returncode == 0, r.stderr
    return {e["id"]: e for e in json.loads(r.stdout)}


def test_detach_ps_attach_output(stack, sandboxd, ctl, binary, box):
    r = ctl("exec", "--detach", box, "--", "sh", "-c", ECHO)
    assert r.returncode == 0, r.stderr
    exec_id = r.stdout.strip()
    assert len(exec_id) == 32 and all(c in "0123456789abcdef" for c in exec_id), r.stdout
    path = "/org/xagent/Sandbox1/exec/" + exec_id
    listed = ps(ctl, box)[exec_id]
    assert (listed["argv0"], listed["running"], listed["exit_status"], listed["exec"]) == ("sh", True, -1, path)
    table = ctl("ps", box).stdout.splitlines()
    assert table[0].split() == ["ID", "COMMAND", "STATE"]
    assert [exec_id, "sh", "running"] in [line.split() for line in table[1:]]

    p = stack.spawn_as(MEMBER, [binary, "attach", exec_id])
    try:
        assert h.read_until(p.stdout.fileno(), b"ready\n").startswith(b"ready\n")
        h.read_until(p.stderr.fileno(), b"warn\n")
        p.stdin.write("hi there\n")
        p.stdin.flush()
        h.read_until(p.stdout.fileno(), b"hi there\n")
    finally:
        p.kill()
        p.wait(timeout=20)
    # attach went; the process did not.
    time.sleep(1)
    assert ps(ctl, box)[exec_id]["running"]

    r = ctl("output", exec_id)
    assert (r.returncode, r.stdout, r.stderr) == (0, "ready\nhi there\n", "warn\n")

    # --follow ends with the process; read to its end, the object goes.
    f = stack.spawn_as(MEMBER, [binary, "output", "--follow", path])
    time.sleep(1)
    assert f.poll() is None
    sandboxd.call(MEMBER, "Kill", "s", ["TERM"], path=path, iface=EXEC).result
    out, err = f.communicate(timeout=30)
    assert (f.returncode, out, err) == (0, "ready\nhi there\n", "warn\n")
    deadline = time.monotonic() + 10
    while exec_id in ps(ctl, box):
        assert time.monotonic() < deadline, "the object stayed"
        time.sleep(0.3)


def test_attach_exits_with_the_status(stack, sandboxd, ctl, box):
    exec_id = ctl("exec", "--detach", box, "--", "sh", "-c", "read line; exit 3").stdout.strip()
    r = ctl("attach", exec_id, input="go\n", timeout=60)
    assert r.returncode == 3, (r.returncode, r.stderr)


def test_usage_errors(ctl, box):
    r = ctl("exec", "--detach", "-t", box, "--", "true")
    assert r.returncode == 2 and "--detach: not with -t" in r.stderr, r.stderr
    r = ctl("output", "not-an-id")
    assert r.returncode == 2 and "not an exec id" in r.stderr, r.stderr
    r = ctl("attach", "0" * 32)
    assert r.returncode == 1 and "UnknownObject" in r.stderr, r.stderr
