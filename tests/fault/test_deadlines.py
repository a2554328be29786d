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


def test_an_old_expiry_never_deletes_the_new_sandbox_of_the_name(f):
    """Issue 33, item 1: the owner deletes an expiring sandbox while Docker's delete is
    slow (held), creates the name again without a deadline, and the old expiry falls
    due meanwhile (queued behind both on the name's lock): it acts only on the sandbox
    that fell due — its container and creation — so it does nothing to the new one."""
    f.stack.set_daemon_command(["/usr/bin/env", "SBX_TEST_DEADLINE_TICK_MS=200"] + f.daemon_argv())
    # The re-create's Docker budget counts from its start, its wait for the name's lock
    # included: room for both.
    f.write_config(docker_timeout=30)
    try:
        f.activate()
        mark = f.log_mark()
        name = F.unique("again")
        t0 = time.monotonic()
        create_with(f, name, expire_after=6)
        [old] = f.containers_of(name, MEMBER)
        hd = f.relay.hold("DELETE", rf"^/containers/{ID}(\?|$)", when="before",
                          subject=subject_of("container", MEMBER, name))
        deleting = f.delete(MEMBER, name)
        hd.wait_held(30)
        assert time.monotonic() - t0 < 5.5, "too slow to hold the delete before the expiry"
        again = f.submit(MEMBER, "CreateSandbox", "sa{sv}a{sv}", [name, f.spec(), {}])
        time.sleep(max(0.0, t0 + 6.8 - time.monotonic()))   # due, and queued on the lock
        hd.release()
        assert deleting.result().ok
        r = again.result()
        assert r.ok, dict(r)
        [new] = f.containers_of(name, MEMBER)
        assert new != old
        time.sleep(2)                       # ten ticks: nothing is due any more
        assert list(f.containers_of(name, MEMBER)) == [new]
        assert F.qualified(name, MEMBER) in f.rows()
        assert "verb=expire" not in mark.new()
        f.assert_settled()
    finally:
        f.stack.set_daemon_command(f.daemon_argv())
