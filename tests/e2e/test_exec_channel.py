# SPDX-License-Identifier: LGPL-2.1-or-later
"""Commands over the kept channel (docs/architecture.md, "Commands over the channel"),
as the members through the real bus: a command is forked by the service's program in
the sandbox (not one Docker exec each); an owner who stops or floods the channel
gets a typed error within the call's deadline, and another member's calls meanwhile
run as before; and option wait queues an agent's fan-out of 16 under the default
limits."""

import json
import threading
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

# The channel's own deadline (SBX_DOCKER_EXEC_CALL_TIMEOUT_S) and the margin a loaded
# machine needs on top.
CHANNEL_DEADLINE_S = 20
SLACK_S = 15
# Another member's exec while the owner's channel is stuck: generous, far below the deadline.
UNAFFECTED_S = 10

# The command's parent (its supervisor) and that one's parent (the channel's program).
PARENTS = ('p=$(awk \'/^PPid/{print $2}\' /proc/$PPID/status); '
           'echo "$PPID $p"; tr "\\0" " " </proc/$PPID/cmdline; echo')


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "chan")


@pytest.fixture(scope="module")
def other_box(stack, docker_image):
    """A sandbox of the second member's."""
    user = h.second_member()
    bus = h.Sandboxd(stack)
    name = h.unique("chan2")
    cleanup = h.Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(user, name, h.spec()).result
    yield user, name
    bus.delete(user, name).result
    assert cleanup.run() == []


def run(sandboxd, user, name, argv, options=None, **kw):
    status, out, err, _ = sandboxd.call(user, "ExecSandbox", "sasa{sv}", [name, argv, options or {}], **kw).result
    return status, bytes(out).decode(), bytes(err).decode()


def parents(sandboxd, box):
    status, out, _ = run(sandboxd, MEMBER, box, ["sh", "-c", PARENTS])
    assert status == 0, out
    ids, cmdline = out.splitlines()
    # A Docker exec's first process has its parent outside the sandbox: PPid 0, no
    # /proc/0 to read a grandparent from.
    ppid, grand = (int(x) for x in (ids.split() + ["0"])[:2])
    assert ppid != 0, "the command ran as a Docker exec, not over the channel"
    return ppid, grand, cmdline


def test_a_command_is_forked_by_the_channels_program(sandboxd, box):
    ppid, grand, cmdline = parents(sandboxd, box)
    # A Docker exec's first process has its parent outside the sandbox (PPid 0).
    assert ppid != 0 and grand != 0
    assert cmdline.strip() == "/.xagent-sandbox/xagent-sandbox-init --serve"
    # The same program, kept: the next command's supervisor has the same parent.
    assert parents(sandboxd, box)[1] == grand


def test_environment_working_dir_status_and_signals(sandboxd, box):
    status, out, err = run(sandboxd, MEMBER, box, ["sh", "-c", 'echo "$A|$XAGENT_SANDBOX_EXEC|$(pwd)"; '
                                                   'echo e >&2; exit 7'],
                           {"env": ["a{ss}", {"A": "b"}], "working_dir": ["s", "/tmp"]})
    a, token, cwd = out.strip().split("|")
    assert (status, a, cwd, err) == (7, "b", "/tmp", "e\n") and len(token) == 49
    status, _, _ = run(sandboxd, MEMBER, box, ["sh", "-c", "kill -TERM $$"])
    assert status == 128 + 15
    sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["/no/such"], {}]).error(h.INVALID_ARGS)
    msg = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}",
                        [box, ["true"], {"working_dir": ["s", "/no/such/dir"]}]).error(h.INVALID_ARGS)
    assert "working_dir" in msg


def other_member_runs(sandboxd, other_box, results, stop):
    """The second member's execs, one after another, each timed, until stop."""
    user, name = other_box
    while not stop.is_set():
        t0 = time.monotonic()
        status, out, _ = run(sandboxd, user, name, ["echo", "fine"])
        results.append((status, out, time.monotonic() - t0))


def stuck_owner_call(sandboxd, box, other_box, break_channel, expected_errors):
    """Breaks the member's channel (break_channel: a shell command run in the sandbox,
    given the channel program's pid as $1), then: the member's next call fails typed
    within the deadline while the second member's execs run as before."""
    _, serve, _ = parents(sandboxd, box)
    run(sandboxd, MEMBER, box, ["sh", "-c", break_channel, "sh", str(serve)])
    results, stop = [], threading.Event()
    other = threading.Thread(target=other_member_runs, args=(sandboxd, other_box, results, stop))
    other.start()
    try:
        t0 = time.monotonic()
        r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["echo", "owner"], {}],
                          timeout=CHANNEL_DEADLINE_S + SLACK_S + 10)
        took = time.monotonic() - t0
    finally:
        stop.set()
        other.join(timeout=60)
    assert not r.ok and r["error"] in expected_errors, r
    assert took < CHANNEL_DEADLINE_S + SLACK_S, took
    assert results and all(s == 0 and o == "fine\n" for s, o, _ in results), results
    assert max(t for _, _, t in results) < UNAFFECTED_S, results
    # The owner's next call opens a new channel.
    assert run(sandboxd, MEMBER, box, ["echo", "again"])[:2] == (0, "again\n")


def test_a_stopped_channel_costs_only_its_owner(sandboxd, box, other_box):
    stuck_owner_call(sandboxd, box, other_box, 'kill -STOP "$1"', {h.ERR + "TimedOut"})


def test_a_flooded_channel_costs_only_its_owner(sandboxd, box, other_box):
    # Garbage into the channel's own output, for a while, from a process of the owner's.
    flood = '(timeout 60 sh -c "while :; do echo garbage-garbage-garbage; done" >"/proc/$1/fd/1" 2>/dev/null &)'
    stuck_owner_call(sandboxd, box, other_box, flood, {h.ERR + "BackendError", h.ERR + "TimedOut"})


def spawn_exec(stack, box, argv, options, timeout=120):
    return stack.spawn_as(MEMBER, stack.client_argv("call", h.BUS_NAME, h.MANAGER_PATH, f"{h.MANAGER}.ExecSandbox",
                                                    "sasa{sv}", json.dumps([box, argv, options]),
                                                    "--timeout", str(timeout)))


def fan_out(stack, box, n, options, sleep=3):
    """n ExecSandbox calls at once (each sleeps); their answers."""
    calls = [spawn_exec(stack, box, ["sh", "-c", f"sleep {sleep}; echo done"], options) for _ in range(n)]
    return [json.loads(c.communicate(timeout=180)[0]) for c in calls]


def test_sixteen_execs_with_wait_under_the_default_limits(stack, sandboxd, box):
    policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
    assert policy["max_execs_per_user"] >= 16 and policy["max_operations_per_user"] >= 16
    answers = fan_out(stack, box, 16, {"wait": ["u", 60]})
    assert all(a["ok"] and bytes(a["result"][1]) == b"done\n" for a in answers), answers


def test_wait_applies_to_the_operations_share_too(stack, sandboxd, box):
    # The operations' share below the execs': it is the one that fills.
    with h.daemon_config(stack, {"max_operations_per_user": 3, "max_execs_per_user": 16}):
        answers = fan_out(stack, box, 6, {"wait": ["u", 20]}, sleep=1)
        assert all(a["ok"] for a in answers), [a for a in answers if not a["ok"]]
        answers = fan_out(stack, box, 6, {}, sleep=2)
        refused = [a for a in answers if not a["ok"]]
        assert refused and all(a["error"] == h.LIMITS_EXCEEDED and "max_operations_per_user" in a["message"]
                               for a in refused), refused
        assert any(a["ok"] for a in answers)

