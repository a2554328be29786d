# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pause and resume (issue 23, docs/lifecycle.md) through the real bus as the member and the
outsider: a counter in a shell inside stops while paused and goes on from where it was
after the resume (its memory kept); State and the inspection say "paused", the verdict
stays "match"; exec, file calls and copies on a paused sandbox are NotRunning; both
calls are idempotent, a stopped sandbox is NotRunning, a stop thaws and stops, an ensure
resumes; the outsider can do neither; the CLI's pause and resume."""

import os
import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

NOT_RUNNING = h.ERR + "NotRunning"
COUNTER = "i=0; while :; do i=$((i+1)); echo $i > /tmp/counter; sleep 0.1; done"


def exec_(sandboxd, user, name, argv):
    return sandboxd.call(user, "ExecSandbox", "sasa{sv}", [name, argv, {}])


def counter(sandboxd, name):
    r = exec_(sandboxd, MEMBER, name, ["cat", "/tmp/counter"]).result
    assert r[0] == 0, r
    return int(bytes(r[1]).decode())


def state(sandboxd, name):
    return sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]["State"]


def test_pause_keeps_the_processes_and_their_memory(sandboxd, cleanup):
    name = h.unique("pause")
    sp = h.spec()
    sandboxd.create_ok(MEMBER, name, sp, cleanup)
    r = exec_(sandboxd, MEMBER, name, ["sh", "-c", "sh -c '%s' </dev/null >/dev/null 2>&1 &" % COUNTER]).result
    assert r[0] == 0, r
    time.sleep(1)
    before = counter(sandboxd, name)
    t0 = time.monotonic()
    assert before > 0

    assert sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).ok
    running_for = time.monotonic() - t0
    assert sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).ok            # idempotent
    assert state(sandboxd, name) == "paused"
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["state"] == "paused" and ins["verdict"] == "match"
    assert sandboxd.verify(MEMBER, name, sp).result == ["match", []]
    assert sandboxd.list(MEMBER)[name][0] == "paused"
    found = sandboxd.call(MEMBER, "FindSandboxes", "a{sv}", [{"state": ["s", "paused"]}]).result[0]
    assert name in [row[0] for row in found]

    # Nothing runs in it meanwhile: exec, the file calls and the copies say so.
    exec_(sandboxd, MEMBER, name, ["true"]).error(NOT_RUNNING)
    sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/counter", {}]).error(NOT_RUNNING)
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/x", [65], {}]).error(NOT_RUNNING)
    sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [name, "/tmp", ">/dev/null", {}]).error(NOT_RUNNING)
    # The outsider can neither pause nor resume it.
    sandboxd.call(OTHER, "Resume", path=h.object_path(name, MEMBER), iface=h.SANDBOX).error(*h.DENIED)
    time.sleep(3)

    t2 = time.monotonic()
    assert sandboxd.call(MEMBER, "Resume", path=h.object_path(name, MEMBER), iface=h.SANDBOX).ok
    assert sandboxd.call(MEMBER, "ResumeSandbox", "s", [name]).ok           # idempotent
    assert state(sandboxd, name) == "running"
    resumed = counter(sandboxd, name)
    running_for += time.monotonic() - t2
    # Frozen for 3 s (30 counts) at 10 a second: it went on from where it was, not
    # from 0, counting only while not paused ...
    assert before <= resumed <= before + 10 * running_for + 3, (before, resumed, running_for)
    assert resumed < before + 25, (before, resumed, running_for)
    time.sleep(1)
    # ... and goes on counting.
    assert counter(sandboxd, name) > resumed + 3
    assert sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/counter", {}]).ok


def test_pause_with_the_rest_of_the_lifecycle(stack, sandboxd, cleanup):
    name = h.unique("pause")
    sp = h.spec()
    sandboxd.create_ok(MEMBER, name, sp, cleanup)
    sandboxd.call(OTHER, "PauseSandbox", "s", [name]).error(*h.DENIED, h.NO_SUCH_SANDBOX)
    sandboxd.call(OTHER, "Pause", path=h.object_path(name, MEMBER), iface=h.SANDBOX).error(*h.DENIED)
    assert state(sandboxd, name) == "running"

    # An ensure resumes it; a start leaves it paused; a stop thaws and stops it.
    sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).result
    r = sandboxd.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, sp, {}]).result
    assert r[2] == "started" and state(sandboxd, name) == "running"
    sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).result
    sandboxd.start(MEMBER, name).result
    assert state(sandboxd, name) == "paused"
    sandboxd.stop(MEMBER, name, timeout=1).result
    assert state(sandboxd, name) == "stopped"
    msg = sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).error(NOT_RUNNING)
    assert name in msg and "stopped" in msg, msg
    sandboxd.call(MEMBER, "ResumeSandbox", "s", [name]).error(NOT_RUNNING)
    sandboxd.call(MEMBER, "PauseSandbox", "s", [h.unique("nosuch")]).error(h.NO_SUCH_SANDBOX)

    # The CLI's pause and resume; a paused sandbox is deleted like any other.
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    sandboxd.start(MEMBER, name).result
    for verb, want in (("pause", "paused"), ("resume", "running"), ("pause", "paused")):
        r = stack.run_as(MEMBER, [ctl, verb, name], input="")
        assert r.returncode == 0, r.stderr
        assert state(sandboxd, name) == want
    sandboxd.delete(MEMBER, name).result
    assert name not in sandboxd.list(MEMBER)


def test_option_resume_resumes_first(sandboxd, cleanup):
    name = h.unique("resume")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    resume = {"resume": ["b", True]}

    def paused():
        sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).result
        assert state(sandboxd, name) == "paused"

    paused()
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["echo", "hi"], resume]).result
    assert r[0] == 0 and bytes(r[1]) == b"hi\n"
    assert state(sandboxd, name) == "running"
    paused()
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/r", [65], resume]).result
    assert state(sandboxd, name) == "running"
    paused()
    data, _ = sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/r", resume]).result
    assert bytes(data) == b"A" and state(sandboxd, name) == "running"
    paused()
    sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [name, "/tmp/r", ">/dev/null", resume]).result
    assert state(sandboxd, name) == "running"
    # resume false is the default; another option for the copies is still refused.
    paused()
    sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/r", {"resume": ["b", False]}]).error(NOT_RUNNING)
    msg = sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}",
                        [name, "/tmp/r", ">/dev/null", {"force": ["b", True]}]).error(h.INVALID_ARGS)
    assert "force: unknown option" in msg, msg
    sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [name, "/tmp/r", {"resume": ["s", "yes"]}]).error(h.INVALID_ARGS)
    # The outsider's resume through a use of the object is refused, and changes nothing.
    sandboxd.call(OTHER, "ReadFile", "sa{sv}", ["/tmp/r", resume], path=h.object_path(name, MEMBER),
                  iface=h.SANDBOX).error(*h.DENIED)
    assert state(sandboxd, name) == "paused"
    # A stopped sandbox stays NotRunning.
    sandboxd.stop(MEMBER, name, timeout=0).result
    sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], resume]).error(NOT_RUNNING)


def test_a_detached_process_lives_through_a_pause(sandboxd, cleanup):
    """A detached process is frozen with its sandbox, not ended: while paused its object
    still runs (the service cannot look inside a frozen sandbox and does not guess), and
    after the resume it goes on and its output is read as before."""
    name = h.unique("pdet")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    path = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                         [name, ["sh", "-c", "echo one; sleep 4; echo two; sleep 600"], {"detach": ["b", True]},
                          "</dev/null", ">/dev/null", ">/dev/null"]).result[0]
    exec_iface = "org.xagent.Sandbox1.Exec"
    h.wait_until(lambda: b"one" in bytes(sandboxd.call(MEMBER, "ReadOutput", "t", [0], path=path,
                                                     iface=exec_iface).result[0]), 10, what="one")
    assert sandboxd.call(MEMBER, "PauseSandbox", "s", [name]).ok
    time.sleep(3)           # the service looks at its detached processes once a second
    props = sandboxd.call(MEMBER, "GetAll", "s", [exec_iface], path=path, iface=h.PROPERTIES).result[0]
    assert props["Running"], props
    assert sandboxd.call(MEMBER, "ResumeSandbox", "s", [name]).ok
    h.wait_until(lambda: b"two" in bytes(sandboxd.call(MEMBER, "ReadOutput", "t", [0], path=path,
                                                     iface=exec_iface).result[0]), 15, what="two")
    assert sandboxd.call(MEMBER, "Kill", "s", ["KILL"], path=path, iface=exec_iface).ok
