# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a daemon that died leaves, and what is nobody's: the execs a SIGKILLed daemon
left running are killed by the next one (what a finished exec left behind stays), and
a container whose name label is another owner's form without that owner's label is
no one's sandbox and never blocks the owner's name."""

import json
import os
import signal
import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, ROOT

EXEC_SANDBOX = f"{h.MANAGER}.ExecSandbox"


def test_execs_of_a_killed_daemon_are_killed(stack, sandboxd, cleanup):
    name = h.unique("left")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    # a finished exec's background process: not an exec left running
    status, _, _, _ = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [
        name, ["sh", "-c", "sleep 1003 </dev/null >/dev/null 2>&1 &"], {}]).result
    assert status == 0
    started = stack.spawn_as(MEMBER, stack.client_argv("start-exec", name, json.dumps(["sleep", "1001"]), "{}"))
    running = stack.spawn_as(MEMBER, stack.client_argv(
        "call", h.BUS_NAME, h.MANAGER_PATH, EXEC_SANDBOX, "sasa{sv}",
        json.dumps([name, ["sh", "-c", "sleep 1002; echo never"], {"timeout": ["u", 600]}])))
    try:
        assert "/org/xagent/Sandbox1/exec/" in started.stderr.readline()
        h.wait_until(lambda: {"sleep 1001", "sleep 1002"} <= set(h.command_lines(name)), 10, step=0.2, what="both execs running")
        os.kill(stack.daemon_pid(), signal.SIGKILL)
        stack.wait_for_no_owner(h.BUS_NAME)
        assert json.loads(running.communicate(timeout=30)[0])["ok"] is False     # NoReply: it was in flight
        t0 = time.monotonic()
        sandboxd.ensure_running()       # the next call activates a new daemon
        h.wait_until(lambda: not {"sleep 1001", "sleep 1002"} & set(h.command_lines(name)), 10, step=0.2,
                     what="the dead daemon's execs killed")
        print(f"killed {time.monotonic() - t0:.2f} s after the activating call")
        assert "sleep 1003" in h.command_lines(name)
    finally:
        for p in (started, running):
            p.kill()
            p.wait()
    # the new daemon's own execs are its own: not killed, counted
    status, out, _, _ = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["echo", "ok"], {}]).result
    assert (status, bytes(out)) == (0, b"ok\n")


def test_a_name_in_nobodys_namespace_blocks_nobody(stack, sandboxd, cleanup):
    """A container labelled "~<member's uid>:x" without the member's owner label (what
    xagent makes of a sandbox literally named so), under the container name the
    member's x derives: not listed (not as root's x), and the member's create of x
    works."""
    name = h.unique("nobodys")
    label = h.qualified(name, MEMBER)
    status, made = h.docker("POST", f"/containers/create?name={h.container_name(name, MEMBER)}", {
        "Image": h.TEST_IMAGE, "Cmd": ["sleep", "1000"],
        "Labels": {"xagent.managed": "true", "xagent.sandbox.name": label}})
    assert status == 201, made
    foreign = cleanup.container(made["Id"])
    for user in (ROOT, MEMBER):
        assert name not in sandboxd.list(user)
    sandboxd.inspect(ROOT, name).error(h.NO_SUCH_SANDBOX)

    cleanup.sandbox(name)
    assert sandboxd.create(MEMBER, name, h.spec()).ok
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["verdict"] == "match" and ins["container_id"] != foreign, ins
    assert sandboxd.list(MEMBER)[name][2] == "match"
    everyone = sandboxd.call(ROOT, "ListSandboxes").result[0]
    assert [(n, o) for n, _, o, _, _ in everyone if n == name] == [(name, h.uid_of(MEMBER))], everyone
    assert h.docker_inspect(foreign)["Config"]["Labels"]["xagent.sandbox.name"] == label     # left alone
