# SPDX-License-Identifier: LGPL-2.1-or-later
"""SIGKILL of the daemon at every step of a stop and of a delete: three sandboxes held at
the step (before the request is forwarded, or once Docker answered it), SIGKILL, the
settled state after the next activation, and the retried stop / delete succeeds and
leaves rows and containers in agreement."""

import re
import time

import pytest

import fault as F
from fault import MEMBER
from test_create import ID, THREE, subject_of

# What a stop and a delete ask Docker (test_stop_and_delete_request_sequences pins it):
# the container is found by its row's id, no list first.
STOP_STEPS = {
    "inspect": ("GET", rf"^/containers/{ID}/json", "container"),
    "stop": ("POST", rf"^/containers/{ID}/stop", "container"),
}
DELETE_STEPS = {
    "delete": ("DELETE", rf"^/containers/{ID}(\?|$)", "container"),
}


def test_stop_and_delete_request_sequences(f):
    """The requests of a stop and of a delete, in order, are exactly the steps the trials
    below hold (a step added to either must be added there)."""
    f.activate()
    name = F.unique("seq")
    assert f.create(MEMBER, name).result().ok
    # The first reconciliation after the activation judges in the background (docs/api.md):
    # its requests are done before the operation's are counted.
    f.assert_settled()
    deadline = time.monotonic() + 30
    while True:
        quiet = f.relay.mark()
        time.sleep(1)
        if not [r for r in f.relay.since(quiet) if r.decoded != "/_ping"]:
            break
        assert time.monotonic() < deadline, "Docker's requests did not stop"
    subject = subject_of("container", MEMBER, name)
    for op, steps in ((lambda: f.stop_sandbox(MEMBER, name), STOP_STEPS),
                      (lambda: f.delete(MEMBER, name), DELETE_STEPS)):
        mark = f.relay.mark()
        assert op().result().ok
        seen = [r for r in f.relay.since(mark) if r.decoded != "/_ping"]
        assert seen and all(r.subject and re.search(subject, r.subject) for r in seen), seen
        # the operation's own (an event's refresh may inspect meanwhile)
        seen = F.one_operation(seen)
        assert len(seen) == len(steps), seen
        for r, (method, path_re, _) in zip(seen, steps.values()):
            assert r.method == method and re.search(path_re, r.decoded), seen
    f.assert_settled()


def make_three(f):
    trials = []
    for user, with_volume in THREE:
        trials.append((user, F.unique("sd"), f.spec(f.workspace(user) if with_volume else None)))
    for c in [f.create(u, n, s) for u, n, s in trials]:
        assert c.result().ok
    return trials


def held_and_killed(f, steps, step, when, trials, submit):
    method, path_re, kind = steps[step]
    holds = [f.relay.hold(method, path_re, when=when, subject=subject_of(kind, u, n))
             for u, n, _ in trials]
    calls = [submit(u, n) for u, n, _ in trials]
    for hd in holds:
        hd.wait_held(F.DOCKER_TIMEOUT - 1)
    f.kill_daemon()
    for c in calls:
        c.result().error(*F.DAEMON_GONE)        # killed mid-call: the trial is real
    f.relay.release_all()
    f.activate()
    return f.assert_settled()


STOP_CASES = [(s, w) for s in STOP_STEPS for w in ("before", "after")]


@pytest.mark.parametrize("step,when", STOP_CASES, ids=[f"{s}-{w}" for s, w in STOP_CASES])
def test_sigkill_during_stop(f, step, when):
    trials = make_three(f)
    t0 = time.monotonic()
    settle = held_and_killed(f, STOP_STEPS, step, when, trials, f.stop_sandbox)
    for u, n, _ in trials:                  # nothing was removed by the kill
        assert len(f.containers_of(n, u)) == 1
    for c in [f.stop_sandbox(u, n) for u, n, _ in trials]:
        assert c.result().ok
    rows = f.rows()
    for u, n, _ in trials:
        (cid, (cname, label, running)), = f.containers_of(n, u).items()
        assert not running and cname == F.container_name(n, u)
        assert rows[F.qualified(n, u)][:2] == (cid, "stopped"), rows
        ins = f.inspect(u, n).result[0]
        assert ins["state"] == "stopped" and ins["verdict"] == "match", ins
    f.assert_settled()
    print(f"stop {step}-{when}: settled {settle:.2f}s, round {time.monotonic() - t0:.2f}s")
    for c in [f.delete(u, n) for u, n, _ in trials]:
        assert c.result().ok


DELETE_CASES = [(s, w) for s in DELETE_STEPS for w in ("before", "after")]


@pytest.mark.parametrize("step,when", DELETE_CASES, ids=[f"{s}-{w}" for s, w in DELETE_CASES])
def test_sigkill_during_delete(f, step, when):
    trials = make_three(f)
    t0 = time.monotonic()
    settle = held_and_killed(f, DELETE_STEPS, step, when, trials, f.delete)
    gone = step == "delete" and when == "after"
    for u, n, _ in trials:
        assert len(f.containers_of(n, u)) == (0 if gone else 1)
    for c in [f.delete(u, n) for u, n, _ in trials]:
        assert c.result().ok
    rows = f.rows()
    for u, n, _ in trials:
        assert not f.containers_of(n, u)
        assert F.qualified(n, u) not in rows
        f.inspect(u, n).error(F.ERR + "NoSuchSandbox")
    f.assert_settled()
    print(f"delete {step}-{when}: settled {settle:.2f}s, round {time.monotonic() - t0:.2f}s")


# The reconciliation's own list (everyone's managed containers: no name or owner filter).
RECONCILE_LIST = r"^/containers/json(?!.*xagent\.sandbox\.(name|owner))"


def test_reconciliation_straddling_stop_then_ensure(f):
    """Issue 33 item 6: a reconciliation reads the rows (running), its container list is
    held until a Stop has happened (the list says exited) and its answer until an
    EnsureSandbox has started the sandbox again; released, it must not write 'stopped'
    over the row the ensure wrote: the next exec, write and detach work (was: NotRunning
    "was not started and verified by this service")."""
    f.activate()
    name = F.unique("race")
    assert f.create(MEMBER, name).result().ok
    f.wait_settled()
    before = f.relay.hold("GET", RECONCILE_LIST, when="before")
    after = f.relay.hold("GET", RECONCILE_LIST, when="after")
    f.relay.close_connections()             # the event stream too: reconnected, it reconciles
    before.wait_held(15)
    assert f.stop_sandbox(MEMBER, name).result().ok
    mark = f.relay.mark()
    before.release()
    after.wait_held(10)                     # Docker's list, taken after the stop, says exited
    r = f.call(MEMBER, "EnsureSandbox", "sa{sv}a{sv}", [name, f.spec(), {}])
    assert r.ok and r.result[2] == "started", dict(r)
    after.release()
    # the reconciliation lists once more when done with the held list (its objects' refresh)
    F.wait_until(lambda: f.relay.since(mark, "GET", RECONCILE_LIST), 15,
                 what="the reconciliation done")
    assert f.rows()[F.qualified(name, MEMBER)][1] == "running"
    r = f.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], {}])
    assert r.ok and r.result[0] == 0, dict(r)
    r = f.call(MEMBER, "WriteFile", "ssaya{sv}", [name, "/tmp/after-race", list(b"ok"), {}])
    assert r.ok, dict(r)
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()
