# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent-sandboxctl for agents (issue 39), as the member through the real bus: a
timeout exits 124 whether the run is streamed or captured (--json); `acquire -- CMD`
ends CMD and exits 1 with a message when its lease is revoked; `lifetimes` changes a
sandbox's lifetimes (SetSandboxLifetimes), with its usage errors and the policy's
bounds typed."""

import json
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_lifetimes_deadlines import wait_docker
from test_lifetimes_leases import ctl_argv, props, wait_leases


@pytest.fixture
def box(sandboxd, cleanup):
    name = h.unique("ctlagent")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    return name


def ctl(stack, *args, **kw):
    return stack.run_as(MEMBER, ctl_argv(stack, *args), **kw)


def test_a_timeout_exits_124_everywhere(stack, sandboxd, box):
    r = ctl(stack, "exec", "--timeout", "1", box, "--", "sh", "-c", "echo before; sleep 60")
    assert (r.returncode, r.stdout, r.stderr) == (124, "before\n", "timed out after 1 s\n")
    r = ctl(stack, "--json", "exec", "--timeout", "1", box, "--", "sh", "-c", "echo before; sleep 60")
    assert r.returncode == 124 and json.loads(r.stdout)["exit_status"] == 124, r.stderr
    # A command that is killed otherwise keeps its 128+N.
    r = ctl(stack, "exec", "--timeout", "30", box, "--", "sh", "-c", "kill -9 $$")
    assert r.returncode == 137, r.stderr


def test_acquire_ends_its_command_when_the_lease_is_revoked(stack, sandboxd, box):
    p = stack.spawn_as(MEMBER, ctl_argv(stack, "acquire", box, "--", "sleep", "60"))
    try:
        wait_leases(sandboxd, box, 1)
        t0 = time.monotonic()
        r = ctl(stack, "stop", "--force", box)
        assert r.returncode == 0, r.stderr
        assert p.wait(timeout=20) == 1
        assert time.monotonic() - t0 < 20
        err = p.stderr.read()
        assert f"the lease on '{box}' was revoked, or the service ended: ending sleep" in err, err
    finally:
        if p.poll() is None:
            p.kill()


def test_lifetimes_command(stack, sandboxd, box):
    r = ctl(stack, "lifetimes", box, "--idle-timeout", "900", "--expire-after", "600", "--on-idle", "pause",
            "--idle-counts-processes", "yes")
    assert (r.returncode, r.stdout) == (0, ""), r.stderr
    p = props(sandboxd, box)
    assert (p["IdleTimeout"], p["OnIdle"]) == (900, "pause")
    assert abs(p["ExpiresAt"] - (time.time() + 600) * 1e6) < 30e6
    assert sandboxd.inspect(MEMBER, box).result[0]["idle_counts_processes"] is True
    # Only what is given changes.
    assert ctl(stack, "lifetimes", box, "--expire-after", "0").returncode == 0
    p = props(sandboxd, box)
    assert (p["IdleTimeout"], p["OnIdle"], p["ExpiresAt"]) == (900, "pause", 0)
    r = ctl(stack, "lifetimes", box)
    assert r.returncode == 2 and "nothing to change" in r.stderr, r.stderr
    r = ctl(stack, "lifetimes", box, "--idle-counts-processes", "maybe")
    assert r.returncode == 2 and "--idle-counts-processes: 'maybe' is neither yes nor no" in r.stderr
    r = ctl(stack, "lifetimes", h.unique("absent"), "--idle-timeout", "5")
    assert r.returncode == 1 and h.NO_SUCH_SANDBOX in r.stderr, r.stderr
    with h.daemon_config(stack, {"max_idle_timeout": 10}):
        r = ctl(stack, "lifetimes", box, "--idle-timeout", "11")
        assert r.returncode == 1 and h.POLICY_VIOLATION in r.stderr and "idle_timeout" in r.stderr, r.stderr
    # A short one is acted on.
    assert ctl(stack, "lifetimes", box, "--idle-timeout", "2", "--on-idle", "stop").returncode == 0
    wait_docker(box, "stopped", 30)
