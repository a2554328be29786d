# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures of the fault-injection suite: one world (stack, private dockerd, relay)
per session; every test starts from a clean slate (fault.Fault.reset)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import fault as F  # noqa: E402

F.e2e.ensure_users()


@pytest.fixture(scope="session")
def fault():
    world = F.Fault().start()
    problems = []
    try:
        yield world
    finally:
        problems = world.stop()
        host_ok = world.stack is None or world.stack.host_untouched()
    assert not problems, problems
    assert host_ok, "the host's polkit directories changed during the run"


@pytest.fixture
def f(fault):
    """The world, clean before and after the test."""
    fault.reset()
    yield fault
    fault.reset()
