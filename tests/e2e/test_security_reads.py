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

EXEC = "org.xagent.Sandbox1.Exec"
FLOOD = 128
LIMIT_S = 5.0
# Stops every `xagent-sandbox-init --serve` of the sandbox; the pattern is put together
# at run time so that the loop's own command line never matches it.
STOPPER = ("a=--ser; b=ve; pat=\"$a$b\"; while :; do for p in /proc/[0-9]*; do "
           "case \"$(tr '\\0' ' ' < $p/cmdline 2>/dev/null)\" in *sandbox-init\\ $pat*) "
           "kill -STOP ${p#/proc/} 2>/dev/null;; esac; done; usleep 200000; done")


@pytest.fixture
def slow_polls(stack):
    """The daemon with its detached polls a minute apart: the flood, not the polls,
    is what reads the stuck channel here."""
    argv = ["/usr/bin/env", "SBX_TEST_DETACHED_POLL_MS=60000"] + stack.default_daemon_argv()
    with h.daemon_argv(stack, argv):
        yield


class Calls:
    """The other member's calls on one connection of their own (client.py lines), each
    timed from its request to its reply: the service's answer time, not a client's
    start-up."""

    def __init__(self, stack, user):
        self.proc = stack.spawn_as(user, stack.client_argv("lines", h.BUS_NAME, h.MANAGER_PATH, h.MANAGER))

    def call(self, method, sig, args):
        t0 = time.monotonic()
        self.proc.stdin.write(json.dumps([method, sig, args]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()
        return h.Reply(json.loads(line)), time.monotonic() - t0

    def round(self, name):
        """ExecSandbox, StopSandbox, StartSandbox of its own sandbox: their times."""
        times = []
        for what, method, sig, args in (("exec", "ExecSandbox", "sasa{sv}", [name, ["true"], {}]),
                                        ("stop", "StopSandbox", "sa{sv}", [name, {"timeout": ["u", 1]}]),
                                        ("start", "StartSandbox", "s", [name])):
            r, t = self.call(method, sig, args)
            r.result                    # never refused
            times.append((what, round(t, 2)))
        return times

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def serve_stopped(box):
    """Whether a stopped --serve is in the sandbox (Docker's ps: state T)."""
    [cid] = h.docker_containers_labelled(box)
    status, top = h.docker("GET", f"/containers/{cid}/top?ps_args=-eo%20pid,stat,args")
    assert status == 200, top
    return any(p[1].startswith("T") and "--serve" in p[-1] for p in top["Processes"])


def test_a_stuck_channel_costs_only_its_owner(stack, sandboxd, cleanup, slow_polls):
    second_member = h.second_member()
    box = cleanup.sandbox(h.unique("stuck"))
    mine = cleanup.sandbox(h.unique("other"))
    sandboxd.create(MEMBER, box, h.spec()).result
    sandboxd.create(second_member, mine, h.spec()).result
    calls = Calls(stack, second_member)
    try:
        before = calls.round(mine) + calls.round(mine)
        # The owner's detached processes: the stopper, and one whose output is read.
        path = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                             [box, ["sh", "-c", "echo hello; sleep 1000"], {"detach": ["b", True]},
                              "</dev/null", ">/dev/null", ">/dev/null"]).result[0]
        sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                      [box, ["sh", "-c", STOPPER], {"detach": ["b", True]},
                       "</dev/null", ">/dev/null", ">/dev/null"]).result
        # A file call opens the channel again if need be; the stopper stops it.
        sandboxd.call(MEMBER, "ReadFile", "ssa{sv}", [box, "/etc/hostname", {}], timeout=60)
        h.wait_until(lambda: serve_stopped(box), 30, step=0.3, what="a stopped --serve")

        flood = stack.spawn_as(MEMBER, stack.client_argv("flood", h.BUS_NAME, path, EXEC,
                                                         "--connections", "2"))
        flood.stdin.write(json.dumps([{"delay": 0, "calls": [["ReadOutput", "t", [0]]] * FLOOD}]))
        flood.stdin.close()
        out = []
        reader = threading.Thread(target=lambda: out.append(flood.stdout.read()), daemon=True)
        reader.start()
        # The other member's calls while the flood is in flight (one round at least:
        # the owner's calls may fail at once on a channel found stopped).
        during = []
        while (flood.poll() is None or not during) and len(during) < 30:
            during += calls.round(mine)
        assert flood.wait(timeout=240) == 0, flood.stderr.read()
        reader.join(timeout=10)
        replies = [h.Reply(x) for x in json.loads(out[0])]
        print("the other member's calls before:", before)
        print("… during the flood:", during)
        # 5 s (the bound) on a machine whose own calls take less; on a loaded one
        # (a container's start alone can take 5 s), no worse than twice the same calls'
        # time without the flood. Without the fix they took 30-50 s (issue 32).
        limit = max(LIMIT_S, 2 * max(t for _, t in before))
        slowest = max(t for _, t in during)
        assert slowest < limit, (before, during)
        # The flood is refused, when it is, as the owner's own read share; the rest
        # waited for the stuck channel (TimedOut), or found a new one stopped at once.
        share = f"Too many reads of uid {h.uid_of(MEMBER)} in progress (max_reads_per_user)"
        refused = [(r["error"], r["message"]) for r in replies if not r.ok]
        assert all(e == h.LIMITS_EXCEEDED and m.startswith(share) or e in (h.ERR + "TimedOut", h.ERR + "BackendError")
                   for e, m in refused), refused
        assert any(e == h.LIMITS_EXCEEDED for e, _ in refused), refused
    finally:
        calls.close()
        sandboxd.delete(second_member, mine)
