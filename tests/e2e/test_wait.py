# SPDX-License-Identifier: LGPL-2.1-or-later
"""Option wait on ExecSandbox and StartExec, as the member through the real bus: with
the member's exec share full (detached sleeps), a call with wait queues instead of
failing at once, starts as soon as a slot is free, fails naming the limit once its
wait is over, and leaves the queue when its caller's connection closes."""

import json
import subprocess
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

EXEC = "org.xagent.Sandbox1.Exec"
NULLS = ["</dev/null", ">/dev/null", ">/dev/null"]


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "wait")


@pytest.fixture
def full(sandboxd, box):
    """The member's whole share taken by detached sleeps; their paths (killed after)."""
    limit = sandboxd.call(MEMBER, "GetPolicy").result[0]["max_execs_per_user"]
    paths = [sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                           [box, ["sleep", "1300"], {"detach": ["b", True]}] + NULLS).result[0]
             for _ in range(limit)]
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {}])
    assert "max_execs_per_user" in r.error(h.LIMITS_EXCEEDED)
    yield paths
    for p in paths:
        sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=p, iface=EXEC)
    # A detached process's end is seen within a second (its slot free again).
    h.wait_until(lambda: not any(e[2] for e in sandboxd.call(MEMBER, "ListExecs", "s", [box]).result[0]), 10,
                 what="the share free again")


def spawn_call(stack, method, sig, args, timeout=60):
    return stack.spawn_as(MEMBER, stack.client_argv("call", h.BUS_NAME, h.MANAGER_PATH, f"{h.MANAGER}.{method}",
                                                    sig, json.dumps(args), "--timeout", str(timeout)))


def test_a_waiting_call_fails_naming_the_limit_after_its_wait(sandboxd, box, full):
    t0 = time.monotonic()
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {"wait": ["u", 2]}])
    msg = r.error(h.LIMITS_EXCEEDED)
    assert "wait: no slot within 2 s: max_execs_per_user" in msg, msg
    assert 1.8 < time.monotonic() - t0 < 10


def test_waiting_calls_start_once_a_slot_is_free(stack, sandboxd, box, full):
    capture = spawn_call(stack, "ExecSandbox", "sasa{sv}", [box, ["echo", "queued"], {"wait": ["u", 40]}])
    time.sleep(1.5)
    assert capture.poll() is None          # still waiting
    sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=full[0], iface=EXEC).result
    out = json.loads(capture.communicate(timeout=30)[0])
    assert out["ok"], out
    status, stdout = out["result"][0], bytes(out["result"][1])
    assert (status, stdout) == (0, b"queued\n")
    # StartExec waits the same way (a detached one here), once the share is full again:
    # the slot the queued exec took may be free already, so a filler (with wait) takes it.
    filler = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                           [box, ["sleep", "1302"], {"detach": ["b", True], "wait": ["u", 40]}] + NULLS).result[0]
    full.append(filler)
    detached = spawn_call(stack, "StartExec", "sasa{sv}hhh",
                          [box, ["sleep", "1301"], {"detach": ["b", True], "wait": ["u", 40]}] + NULLS)
    time.sleep(1.5)
    assert detached.poll() is None
    sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=full[1], iface=EXEC).result
    out = json.loads(detached.communicate(timeout=30)[0])
    assert out["ok"], out
    full.append(out["result"][0])


def test_a_gone_caller_leaves_the_queue(stack, sandboxd, box, full):
    ghost = spawn_call(stack, "ExecSandbox", "sasa{sv}",
                       [box, ["touch", "/tmp/ghost"], {"wait": ["u", 40]}])
    time.sleep(1.5)
    # The client (runuser's child) goes away; its call is still queued.
    subprocess.run(["pkill", "-KILL", "-P", str(ghost.pid)], check=False)
    ghost.wait(timeout=10)
    time.sleep(1)
    sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=full[2], iface=EXEC).result
    time.sleep(3)
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["ls", "/tmp/ghost"], {"wait": ["u", 10]}])
    status = r.result[0]
    assert status != 0, "the gone caller's command ran"
