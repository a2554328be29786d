# SPDX-License-Identifier: LGPL-2.1-or-later
"""A create Docker carries out after the daemon gave up on it: the relay holds the
POST /containers/create until the daemon's side has gone (its deadline passed, or it
was SIGKILLed), then lets dockerd carry it out. The container that appears under the
provisional name never blocks the name and does not stay."""

import re
import time

import fault as F
from fault import MEMBER, ROOT

CREATE = r"^/containers/create\?"


def pending_of(f, name, user):
    return [c for c in f.containers_of(name, user).values() if c[0].endswith(".pending")]


def late_create(f, user, name):
    """A create held before Docker saw it, answered BackendUnavailable at its deadline,
    its intent settled by the reconciliation that follows (nothing there yet); then
    Docker carries it out. Returns once the late container exists."""
    hold = f.relay.hold("POST", CREATE, subject="^" + re.escape(F.container_name(name, user)) + r"\.pending$",
                        orphan=True)
    r = f.create(user, name).result()
    r.error(F.BACKEND_UNAVAILABLE)
    hold.wait_held(1)
    # the reconciliation 5 s after the failure, past the create's deadline: no container
    F.wait_until(lambda: not f.intents(), 20, what="the intent settled")
    hold.release()
    F.wait_until(lambda: pending_of(f, name, user), 10, what="Docker's late container")
    assert not f.intents()


def test_a_late_pending_container_does_not_block_its_name(f):
    f.activate()
    f.wait_settled()
    for user in (ROOT, MEMBER):
        name = F.unique("late")
        late_create(f, user, name)
        assert [x for x in f.list_all() if x[0] == name] == []       # not a sandbox
        r = f.create(user, name).result()
        assert r.ok, dict(r)
        ins = f.inspect(user, name).result[0]
        assert ins["verdict"] == "match" and ins["state"] == "running", ins
        assert not pending_of(f, name, user)
        f.assert_settled()
        assert f.delete(user, name).result().ok
    f.assert_settled()


def test_an_intent_is_kept_until_its_create_deadline(f):
    """SIGKILL while the create is held; the next daemon starts at once and finds
    nothing yet; Docker then makes the container: the intent, kept until the create's
    deadline, has the container removed without any other call."""
    f.activate()
    f.wait_settled()
    name = F.unique("killed")
    hold = f.relay.hold("POST", CREATE, subject="^" + re.escape(F.container_name(name, MEMBER)) + r"\.pending$",
                        orphan=True)
    call = f.create(MEMBER, name)
    hold.wait_held(F.DOCKER_TIMEOUT - 1)
    t0 = time.monotonic()
    f.kill_daemon()
    call.result().error(*F.DAEMON_GONE)
    f.activate()
    time.sleep(1)                       # the start-up reconciliation: nothing there yet
    assert f.intents(), "the intent was settled before the create's deadline"
    hold.release()
    F.wait_until(lambda: pending_of(f, name, MEMBER), 10, what="Docker's late container")
    took = f.assert_settled(timeout=F.DOCKER_TIMEOUT + 15)
    print(f"settled {time.monotonic() - t0:.1f} s after the kill ({took:.1f} s waited)")
    assert not f.containers_of(name, MEMBER)
    r = f.create(MEMBER, name).result()
    assert r.ok, dict(r)
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()
