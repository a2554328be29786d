# SPDX-License-Identifier: LGPL-2.1-or-later
"""The private dockerd killed (SIGKILL) or hung (SIGSTOP) in the middle of a call, an
activation while it hangs, and the daemon following Docker's events (before and after a
dockerd restart)."""

import re
import time

import fault as F
from fault import MEMBER, ROOT, h
from test_create import ID, subject_of


def hold_create(f, user, name, step, when):
    paths = {"create": ("POST", r"^/containers/create\?"),
             "start": ("POST", rf"^/containers/{ID}/start"),
             "rename": ("POST", rf"^/containers/{ID}/rename")}
    method, path = paths[step]
    return f.relay.hold(method, path, when=when, subject=subject_of("container", user, name))


def test_dockerd_sigkill_mid_create(f):
    """Two creates held (one with its container just created, one verified but not yet
    renamed); dockerd dies: both answered BackendUnavailable in time; once dockerd is
    back the daemon removes both containers by itself (no other create of the names)."""
    f.activate()
    a, b = F.unique("dk"), F.unique("dk")
    holds = [hold_create(f, MEMBER, a, "create", "after"), hold_create(f, ROOT, b, "rename", "before")]
    calls = [f.create(MEMBER, a), f.create(ROOT, b)]
    for hd in holds:
        hd.wait_held(F.DOCKER_TIMEOUT - 1)
    assert f.containers_of(a, MEMBER) and f.containers_of(b, ROOT)
    f.docker.kill()
    for c in calls:
        r = c.result()
        assert r.elapsed < F.DOCKER_TIMEOUT + 3, r.elapsed
        r.error(F.BACKEND_UNAVAILABLE)
    f.relay.release_all()
    f.docker.start(image=False)
    took = f.wait_settled(timeout=25)
    assert not f.containers_of(a, MEMBER) and not f.containers_of(b, ROOT)
    print(f"converged {took:.2f}s after dockerd came back")
    for u, n in ((MEMBER, a), (ROOT, b)):       # converged by itself: one create each
        creates = f.relay.since(0, "POST", r"^/containers/create",
                                subject=re.escape(F.container_name(n, u)))
        assert len([r for r in creates if r.t_forwarded]) == 1, creates
    f.assert_settled()
    for c in [f.create(MEMBER, a), f.create(ROOT, b)]:
        assert c.result().ok
    for c in [f.delete(MEMBER, a), f.delete(ROOT, b)]:
        assert c.result().ok
    f.assert_settled()


def test_dockerd_sigkill_mid_stop(f):
    """A stop held before Docker sees it; dockerd dies: BackendUnavailable in time; after
    dockerd's restart the retried stop succeeds and the row agrees."""
    f.activate()
    names = [(MEMBER, F.unique("ds")), (ROOT, F.unique("ds"))]
    for c in [f.create(u, n) for u, n in names]:
        assert c.result().ok
    holds = [f.relay.hold("POST", rf"^/containers/{ID}/stop", subject=subject_of("container", u, n))
             for u, n in names]
    calls = [f.stop_sandbox(u, n) for u, n in names]
    for hd in holds:
        hd.wait_held(F.DOCKER_TIMEOUT - 1)
    f.docker.kill()
    for c in calls:
        c.result().error(F.BACKEND_UNAVAILABLE)
    f.relay.release_all()
    f.docker.start(image=False)
    f.wait_settled(timeout=25)
    for c in [f.stop_sandbox(u, n) for u, n in names]:
        assert c.result().ok
    rows = f.rows()
    for u, n in names:
        (cid, (_, _, running)), = f.containers_of(n, u).items()
        assert not running and rows[F.qualified(n, u)][:2] == (cid, "stopped")
    f.assert_settled()
    for c in [f.delete(u, n) for u, n in names]:
        assert c.result().ok


def test_dockerd_sigstop_mid_create(f):
    """dockerd hangs while a create's start is on its way: the caller gets
    BackendUnavailable within docker_timeout + 3 s; after SIGCONT the container (never
    verified) is removed without another create of that name."""
    f.activate()
    name = F.unique("hang")
    hd = hold_create(f, MEMBER, name, "start", "before")
    call = f.create(MEMBER, name)
    hd.wait_held(F.DOCKER_TIMEOUT - 1)
    f.docker.freeze()
    try:
        hd.release()
        r = call.result()
        r.error(F.BACKEND_UNAVAILABLE)
        assert r.elapsed < F.DOCKER_TIMEOUT + 3, r.elapsed
        # while it hangs, other calls are answered in time too
        r2 = f.submit(MEMBER, "ListSandboxes").result()
        r2.error(F.BACKEND_UNAVAILABLE)
        assert r2.elapsed < F.DOCKER_TIMEOUT + 3, r2.elapsed
    finally:
        f.docker.thaw()
    mark = f.relay.mark()
    took = f.wait_settled(timeout=25)
    print(f"converged {took:.2f}s after SIGCONT")
    assert not f.containers_of(name, MEMBER)
    assert not f.relay.since(mark, "POST", r"^/containers/create")
    f.assert_settled()
    assert f.create(MEMBER, name).result().ok
    assert f.delete(MEMBER, name).result().ok


def test_activation_with_dockerd_hung(f):
    """A fresh activation takes the bus name at once though dockerd hangs; a call needing
    Docker is BackendUnavailable in time; after SIGCONT everything is as it was."""
    f.activate()
    name = F.unique("act")
    assert f.create(MEMBER, name).result().ok
    f.stop_daemon()
    f.docker.freeze()
    try:
        r = f.submit(MEMBER, "GetPolicy").result()
        assert r.ok, dict(r)
        assert r.elapsed < 2.5, f"activation took {r.elapsed:.2f}s"
        assert r.result[0]["docker_timeout"] == F.DOCKER_TIMEOUT
        r = f.submit(MEMBER, "InspectSandbox", "s", [name]).result()
        r.error(F.BACKEND_UNAVAILABLE)
        assert r.elapsed < F.DOCKER_TIMEOUT + 3, r.elapsed
    finally:
        f.docker.thaw()
    f.assert_settled()
    ins = f.inspect(MEMBER, name).result[0]
    assert ins["verdict"] == "match" and ins["state"] == "running", ins
    assert f.delete(MEMBER, name).result().ok


class TimedListener(h.Listener):
    """Listener whose signals carry the time they arrived here."""

    def _read(self):
        import json
        for line in self.proc.stdout:
            if line.strip():
                s = json.loads(line)
                s["t"] = time.monotonic()
                self.signals.append(s)


def state_changed(path, state):
    return lambda s: (s["member"] == "PropertiesChanged" and s["path"] == path
                      and s["args"][0] == h.SANDBOX and s["args"][1].get("State") == state)


def removed(name, path):
    return lambda s: (s["member"] == "SandboxRemoved" and s["interface"] == h.MANAGER
                      and (s["args"][0] in (name, h.qualified(name, MEMBER)) or s["args"][1] == path))


def signal_within(listener, pred, t0, limit=1.0):
    sigs = listener.wait_for(lambda ss: any(pred(s) for s in ss), timeout=limit + 4)
    t = min(s["t"] for s in sigs if pred(s)) - t0
    assert t <= limit, f"signal after {t:.2f}s"
    return t


def kill_behind_the_back(f, listener, cid, name):
    """Kills the member's container with Docker directly; seconds until State said so."""
    t0 = time.monotonic()
    f.docker.ok("POST", f"/containers/{cid}/kill")
    return signal_within(listener, state_changed(h.object_path(name, MEMBER), "stopped"), t0)


def remove_behind_the_back(f, listener, cid, name):
    """Removes it with Docker directly; seconds until SandboxRemoved."""
    t0 = time.monotonic()
    f.docker.remove(cid)
    return signal_within(listener, removed(name, h.object_path(name, MEMBER)), t0)


def test_events_outside_the_daemon(f):
    """A container killed or removed directly in Docker: State becomes "stopped"
    (PropertiesChanged) or SandboxRemoved is emitted within a second; the same after
    a dockerd restart (the daemon reconnects to the event stream)."""
    f.activate()
    a, b, c = (F.unique("ev") for _ in range(3))
    for call in [f.create(MEMBER, a), f.create(MEMBER, b)]:
        assert call.result().ok
    listener = TimedListener(f.stack, ROOT)
    try:
        (ida, _), = f.containers_of(a, MEMBER).items()
        (idb, _), = f.containers_of(b, MEMBER).items()
        ta = kill_behind_the_back(f, listener, ida, a)
        tb = remove_behind_the_back(f, listener, idb, b)

        mark = f.relay.mark()
        f.docker.restart()
        # the daemon follows the stream again: a new /events request reaches dockerd
        F.wait_until(lambda: any(r.t_forwarded for r in f.relay.since(mark, "GET", r"^/events")),
                     15, what="the daemon's event stream reconnected")
        assert f.create(MEMBER, c).result().ok
        (idc, _), = f.containers_of(c, MEMBER).items()
        tc = kill_behind_the_back(f, listener, idc, c)
        td = remove_behind_the_back(f, listener, ida, a)
        print(f"signals after kill {ta:.2f}s, remove {tb:.2f}s; after restart: kill {tc:.2f}s, "
              f"remove {td:.2f}s")
    finally:
        listener.close()
    f.assert_settled()
    assert f.delete(MEMBER, c).result().ok
    f.assert_settled()
