# SPDX-License-Identifier: LGPL-2.1-or-later
"""Issue 33, item 4: idle time and expiry run on the service's own clock (the wall clock
when it began, plus the boot clock since), so a wall-clock step between two ticks is
detected and re-based, never acted on. The daemon runs with clockstep.c preloaded
(built here): it moves only CLOCK_REALTIME, time() and gettimeofday() by +2 h once a
trigger file exists. An idle_timeout 600 sandbox used just before is not stopped, an
expire_after 3600 one is not deleted; both keep their remaining time."""

import os
import subprocess
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_lifetimes_deadlines import create, docker_state
from test_lifetimes_leases import props

STEP_S = 7200


@pytest.fixture
def stepping_daemon(stack):
    lib = os.path.join(stack.tmp, "clockstep.so")
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", lib, os.path.join(h.HERE, "clockstep.c"), "-ldl"],
                   check=True)
    os.chmod(lib, 0o755)
    trigger = os.path.join(stack.tmp, "clockstep-now")
    argv = (["/usr/bin/env", f"LD_PRELOAD={lib}", f"SBX_CLOCKSTEP_TRIGGER={trigger}",
             "SBX_TEST_DEADLINE_TICK_MS=200"] + stack.default_daemon_argv())
    try:
        with h.daemon_argv(stack, argv):
            yield trigger
    finally:
        if os.path.exists(trigger):
            os.unlink(trigger)


def test_a_wall_clock_step_moves_no_deadline(stack, sandboxd, cleanup, stepping_daemon):
    mark = h.LogMark(stack)
    idle = create(sandboxd, cleanup, "step-idle", idle_timeout=600)
    expiring = create(sandboxd, cleanup, "step-expire", expire_after=3600)
    expires = props(sandboxd, expiring)["ExpiresAt"]
    assert sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [idle, ["true"], {}]).result[0] == 0
    time.sleep(1)                           # a few ticks on the old clock
    open(stepping_daemon, "w").close()      # +2 h, for the daemon alone
    # Longer than the default tick (5 s) too: a daemon that followed the wall clock
    # would have acted by now.
    time.sleep(6.5)
    assert docker_state(idle) == "running"
    assert docker_state(expiring) == "running"
    assert "stepped by +7200 s" in mark.new()
    # The expiry moved with the wall clock: still an hour from the creation.
    moved = props(sandboxd, expiring)["ExpiresAt"] - expires
    assert abs(moved - STEP_S * 1_000_000) < 5_000_000, moved
    log = mark.new()
    assert "verb=idle-stop" not in log and "verb=expire" not in log
