# SPDX-License-Identifier: LGPL-2.1-or-later
"""Security issue 32, item 1: one member's reads through a stuck channel cost only that
member (docs/security.md, "What a member can make the service spend"). The owner of a
sandbox stops its own `xagent-sandbox-init --serve` from inside (a detached loop that
scans /proc and sends SIGSTOP to every one it finds), then keeps ~128 ReadOutput calls
in flight on one of its detached processes. ReadOutput counts in the reader's own read
share for as long as it runs and runs on the read workers, at most half of them for one
user; a request queued behind the stuck one gives up at its deadline and never opens a
new channel after it. Another member's ExecSandbox, StopSandbox and StartSandbox answer
within 5 s meanwhile and are never refused."""

import json
import threading
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_names import second_member  # noqa: F401 (a fixture)

EXEC = "org.xagent.Sandbox1.Exec"
FLOOD = 128
LIMIT_S = 5.0
# Stops every `xagent-sandbox-init --serve` of the sandbox; the pattern is put together
# at run time so that the loop's own command line never matches it.
STOPPER = ("a=--ser; b=ve; pat=\"$a$b\"; while :; do for p in /proc/[0-9]*; do "
           "case \"$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\" in *sandbox-init\\ $pat*) "
           "kill -STOP ${p#/proc/} 2>/dev/null;; esac; done; usleep 20000; done")


@pytest.fixture
def slow_polls(stack):
    """The daemon with its detached polls a minute apart: the flood, not the polls,
    is what reads the stuck channel here."""
    argv = ["/usr/bin/env", "SBX_TEST_DETACHED_POLL_MS=60000"] + stack.default_daemon_argv()
    with h.daemon_argv(stack, argv):
        yield


def timed(fn):
    t0 = time.monotonic()
    r = fn()
    return r, time.monotonic() - t0


def others_calls(sandboxd, user, name):
    """ExecSandbox, StopSandbox, StartSandbox of user's own sandbox: their times."""
    times = []
    r, t = timed(lambda: sandboxd.call(user, "ExecSandbox", "sasa{sv}", [name, ["true"], {}]))
    assert r.result[0] == 0
    times.append(("exec", t))
    r, t = timed(lambda: sandboxd.stop(user, name, timeout=1))
    r.result
    times.append(("stop", t))
    r, t = timed(lambda: sandboxd.start(user, name))
    r.result
    times.append(("start", t))
    return times


def serve_stopped(box):
    """Whether a stopped --serve is in the sandbox (Docker's ps: state T)."""
    [cid] = h.docker_containers_labelled(box)
    status, top = h.docker("GET", f"/containers/{cid}/top?ps_args=-eo%20stat,args")
    assert status == 200, top
    return any(p[0].startswith("T") and "--serve" in p[-1] for p in top["Processes"])


def test_a_stuck_channel_costs_only_its_owner(stack, sandboxd, cleanup, slow_polls, second_member):  # noqa: F811
    box = cleanup.sandbox(h.unique("stuck"))
    mine = cleanup.sandbox(h.unique("other"))
    sandboxd.create(MEMBER, box, h.spec()).result
    sandboxd.create(second_member, mine, h.spec()).result
    try:
        before = others_calls(sandboxd, second_member, mine)
        # The owner's detached processes: the stopper, and one whose output is read.
        path = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                             [box, ["sh", "-c", "echo hello; sleep 1000"], {"detach": ["b", True]},
                              "</dev/null", ">/dev/null", ">/dev/null"]).result[0]
        sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                      [box, ["sh", "-c", STOPPER], {"detach": ["b", True]},
                       "</dev/null", ">/dev/null", ">/dev/null"]).result
        # A file call opens the channel again if need be; the stopper stops it.
        sandboxd.call(MEMBER, "ReadFile", "sa{sv}", [box, "/etc/hostname", {}], timeout=60)
        h.wait_until(lambda: serve_stopped(box), 30, step=0.3, what="a stopped --serve")

        flood = stack.spawn_as(MEMBER, stack.client_argv("flood", h.BUS_NAME, path, EXEC,
                                                         "--connections", "2"))
        flood.stdin.write(json.dumps([{"delay": 0, "calls": [["ReadOutput", "t", [0]]] * FLOOD}]))
        flood.stdin.close()
        out = []
        reader = threading.Thread(target=lambda: out.append(flood.stdout.read()), daemon=True)
        reader.start()
        time.sleep(2)                           # the flood is in flight
        during = []
        for _ in range(3):
            during += others_calls(sandboxd, second_member, mine)
        assert flood.wait(timeout=240) == 0, flood.stderr.read()
        reader.join(timeout=10)
        replies = [h.Reply(x) for x in json.loads(out[0])]
        print("the other member's calls before:", before)
        print("… during the flood:", during)
        slowest = max(t for _, t in during)
        assert slowest < LIMIT_S, during
        # The flood is refused, when it is, as the owner's own read share.
        # The flood is refused, when it is, as the owner's own read share; the rest
        # waited for the stuck channel (TimedOut), or found a new one stopped at once.
        share = f"Too many reads of uid {h.uid_of(MEMBER)} in progress (max_reads_per_user)"
        refused = [(r["error"], r["message"]) for r in replies if not r.ok]
        assert all(e == h.LIMITS_EXCEEDED and m.startswith(share) or e in (h.ERR + "TimedOut", h.ERR + "BackendError")
                   for e, m in refused), refused
        assert any(e == h.LIMITS_EXCEEDED for e, _ in refused), refused
    finally:
        sandboxd.delete(second_member, mine)
