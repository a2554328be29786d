# SPDX-License-Identifier: LGPL-2.1-or-later
"""Deadlines across a crash (docs/lifecycle.md, "Idle stop and expiry"): SIGKILL of the
daemon while its expiry's delete is held at Docker (before it is forwarded, and once
Docker answered it) leaves no orphan — the state settles after the next activation —
and that start-up finishes the overdue expiry by itself, nobody calling; an idle stop
killed midway is likewise done at the next start-up."""

import time

import pytest

import fault as F
from fault import MEMBER
from test_create import ID, subject_of


def create_with(f, name, **options):
    opts = {k: ["u", v] for k, v in options.items()}
    r = f.submit(MEMBER, "CreateSandbox", "sa{sv}a{sv}", [name, f.spec(), opts]).result()
    assert r.ok, dict(r)


def wait_gone(f, name, timeout):
    deadline = time.monotonic() + timeout
    while f.containers_of(name, MEMBER):
        assert time.monotonic() < deadline, f"{name} not deleted within {timeout}s"
        time.sleep(0.5)


@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_during_an_expiry(f, when):
    f.activate()
    name = F.unique("expire")
    hd = f.relay.hold("DELETE", rf"^/containers/{ID}(\?|$)", when=when,
                      subject=subject_of("container", MEMBER, name))
    create_with(f, name, expire_after=2)
    hd.wait_held(30)                        # the daemon's own delete, nobody calling
    f.kill_daemon()
    f.relay.release_all()
    f.activate()
    f.wait_settled()
    wait_gone(f, name, 30)                  # the next start-up finishes it
    assert F.qualified(name, MEMBER) not in f.rows()
    f.assert_settled()


def test_sigkill_during_an_idle_stop(f):
    f.activate()
    name = F.unique("idle")
    hd = f.relay.hold("POST", rf"^/containers/{ID}/stop", when="before",
                      subject=subject_of("container", MEMBER, name))
    create_with(f, name, idle_timeout=2)
    hd.wait_held(30)
    f.kill_daemon()
    f.relay.release_all()
    f.activate()
    deadline = time.monotonic() + 30
    while True:
        (cid, (cname, label, running)), = f.containers_of(name, MEMBER).items()
        if not running:
            break
        assert time.monotonic() < deadline, "the idle stop was not done after the restart"
        time.sleep(0.5)
    f.assert_settled()
    assert f.delete(MEMBER, name).result().ok
