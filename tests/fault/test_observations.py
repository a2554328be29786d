# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads from observations (docs/api.md#reads-from-observations), seen at the Docker socket (the relay records
every request): while the event stream is followed, reads of a sandbox nothing
happened to do not ask Docker; RefreshSandbox does, once, and the reads after it do
not; an event (a rename behind the service's back) sends the next read to Docker; an
event stream cut (the relay closes every connection and holds the daemon's next
/events) sends every read to Docker at once, until the stream is followed again; with
observation_max_age 0 every read asks Docker; the object's refresh after an outside
change, its answer held back past a stop through the service, never undoes the stop.
The reads' answers themselves (a change shown after its event) are
tests/e2e/test_observations.py's."""

import time

import fault as F
from fault import MEMBER


def inspects(f, mark, cid):
    return f.relay.since(mark, "GET", rf"^/containers/{cid}/json")


def setup_sandbox(f, max_age):
    f.write_config(observation_max_age=max_age)
    f.stop_daemon()
    f.activate()
    name = F.unique("obs")
    assert f.create(MEMBER, name).result().ok
    (cid, _), = f.containers_of(name, MEMBER).items()
    f.wait_settled()
    return name, cid


def read(f, name):
    r = f.inspect(MEMBER, name)
    assert r.ok, dict(r)
    return r.result[0]


def test_reads_from_observations(f):
    name, cid = setup_sandbox(f, 600)
    read(f, name)
    mark = f.relay.mark()
    for _ in range(3):
        assert read(f, name)["verdict"] == "match"
    r = f.call(MEMBER, "VerifySandbox", "sa{sv}", [name, f.spec()])
    assert r.ok and r.result[0] == "match", dict(r)
    assert not inspects(f, mark, cid), "reads of an unchanged sandbox asked Docker"

    mark = f.relay.mark()
    r = f.call(MEMBER, "RefreshSandbox", "s", [name])
    assert r.ok and r.result[0]["container_id"] == cid, dict(r)
    assert len(inspects(f, mark, cid)) == 1
    mark = f.relay.mark()
    read(f, name)
    assert not inspects(f, mark, cid), "the read after a refresh asked Docker again"

    # an event: the rename (behind the service's back) — Docker is asked once after it,
    # by the object's refresh on the event (or else by the next read), and the read
    # answers from that, never from the observation from before
    mark = f.relay.mark()
    f.docker.ok("POST", f"/containers/{cid}/rename?name={F.container_name(name, MEMBER)}-moved")
    F.wait_until(lambda: inspects(f, mark, cid), 10, what="the object's refresh after the rename")
    time.sleep(0.3)         # … and its answer kept
    assert read(f, name)["container_id"] == cid
    assert len(inspects(f, mark, cid)) == 1, "the read after an event used the observation"
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_cut_event_stream_reads_live(f):
    name, cid = setup_sandbox(f, 600)
    read(f, name)
    mark = f.relay.mark()
    read(f, name)
    assert not inspects(f, mark, cid)
    cut = f.relay.mark()
    held = f.relay.hold("GET", r"^/events", when="before")
    f.relay.close_connections()             # the stream too
    held.wait_held(10)                      # the daemon noticed, and is not following
    mark = f.relay.mark()
    for _ in range(3):
        read(f, name)
    assert len(inspects(f, mark, cid)) == 3, "reads without the event stream used observations"
    held.release()
    F.wait_until(lambda: any(r.t_forwarded for r in f.relay.since(cut, "GET", r"^/events")), 15,
                 what="the event stream followed again")
    time.sleep(0.5)                         # Docker accepted it; the reconciliation ran
    read(f, name)
    mark = f.relay.mark()
    read(f, name)
    assert not inspects(f, mark, cid), "with the stream back, reads still ask Docker"
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_max_age_zero_reads_live(f):
    name, cid = setup_sandbox(f, 0)
    mark = f.relay.mark()
    for _ in range(3):
        read(f, name)
    assert len(inspects(f, mark, cid)) == 3
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def state_property(f, path):
    r = f.call(MEMBER, "Get", "ss", [F.SANDBOX, "State"], path=path, iface="org.freedesktop.DBus.Properties")
    assert r.ok, dict(r)
    return r.result[0]


def test_refresh_after_an_event_never_undoes_a_later_change(f):
    """An outside `docker update` has the object refreshed from Docker; that inspect's
    answer held back while the service stops the sandbox: when it comes, it is older
    than the stop, and the object's State stays stopped (not the running the held
    answer says)."""
    name, cid = setup_sandbox(f, 600)
    r = f.call(MEMBER, "GetSandbox", "s", [name])
    assert r.ok, dict(r)
    path = r.result[0]
    held = f.relay.hold("GET", rf"^/containers/{cid}/json", when="after")
    f.docker.ok("POST", f"/containers/{cid}/update", {"NanoCpus": 5 * 10**8})
    held.wait_held(10)                      # the refresh's inspect: Docker said running
    assert f.stop_sandbox(MEMBER, name).result().ok
    assert state_property(f, path) == "stopped"
    held.release()
    time.sleep(1)                           # the refresh has its answer and is done
    assert state_property(f, path) == "stopped"
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


# ---- issue 33 item 2: a lost or stalled event never keeps a verdict past the rule ----

def listed_verdict(f, method, name, args=None):
    """The verdict ListSandboxes / FindSandboxes (as the member) gives name."""
    r = f.call(MEMBER, method, *(("a{sv}", [args]) if method == "FindSandboxes" else ("", [])))
    assert r.ok, dict(r)
    return {row[0]: row[3] for row in r.result[0]}.get(name)


def verdict_property(f, path):
    r = f.call(MEMBER, "Get", "ss", [F.SANDBOX, "Verdict"], path=path, iface="org.freedesktop.DBus.Properties")
    assert r.ok, dict(r)
    return r.result[0]


def every_read_says(f, name, path, verdict, limit):
    """List, Find (by state), Inspect, Verify and the object's Verdict say `verdict`
    within `limit` seconds (observation_max_age and a margin); the seconds it took."""
    t0 = time.monotonic()
    F.wait_until(lambda: listed_verdict(f, "ListSandboxes", name) == verdict, limit,
                 what=f"ListSandboxes saying {verdict}")
    took = time.monotonic() - t0
    assert listed_verdict(f, "FindSandboxes", name, {"state": ["s", "running"]}) == verdict
    assert read(f, name)["verdict"] == verdict
    r = f.call(MEMBER, "VerifySandbox", "sa{sv}", [name, f.spec()])
    assert r.ok and r.result[0] == verdict, dict(r)
    # what a read found is the object's too (PropertiesChanged announced it)
    assert verdict_property(f, path) == verdict
    assert listed_verdict(f, "ListSandboxes", name) == verdict, "a list went back to an older verdict"
    return took


def setup_listed(f):
    name, cid = setup_sandbox(f, 2)
    r = f.call(MEMBER, "GetSandbox", "s", [name])
    assert r.ok, dict(r)
    path = r.result[0]
    every_read_says(f, name, path, "match", 5)
    return name, cid, path


def test_lost_update_event_no_stale_verdict(f):
    """`docker update --cpus 0.5` behind the service's back with its one `update` event
    dropped (the relay): every read — the lists, Inspect, Verify, the object's Verdict —
    says mismatch within observation_max_age (2 s) and a margin, and none goes back to
    match (was: List, Find and the property said match for 90 s, also after Inspect,
    Refresh and Verify had said mismatch)."""
    name, cid, path = setup_listed(f)
    lost = f.relay.drop_events(r"^update$", count=1)
    f.docker.ok("POST", f"/containers/{cid}/update", {"NanoCpus": 5 * 10**8})
    F.wait_until(lambda: lost.caught, 10, what="the update event dropped")
    took = every_read_says(f, name, path, "mismatch", 2 + 3)
    print(f"mismatch listed {took:.2f}s after the lost event")
    r = f.call(MEMBER, "RefreshSandbox", "s", [name])
    assert r.ok and r.result[0]["verdict"] == "mismatch", dict(r)
    assert listed_verdict(f, "ListSandboxes", name) == "mismatch"
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()


def test_stalled_event_stream_no_stale_verdict(f):
    """The event stream stalled (its connection open, no event passed on): a change
    behind the service's back is in every read within observation_max_age and a margin,
    the object's Verdict property first, read alone (was: List said match for the whole
    stall)."""
    name, cid, path = setup_listed(f)
    stall = f.relay.drop_events()
    f.docker.ok("POST", f"/containers/{cid}/update", {"NanoCpus": 5 * 10**8})
    F.wait_until(lambda: stall.caught, 10, what="the update event withheld")
    # no list, no inspect: the object's Verdict alone, read past observation_max_age,
    # has the sandbox looked at again
    t0 = time.monotonic()
    F.wait_until(lambda: verdict_property(f, path) == "mismatch", 2 + 3, step=0.2,
                 what="the Verdict property saying mismatch")
    print(f"the Verdict property said mismatch {time.monotonic() - t0:.2f}s into the stall")
    took = every_read_says(f, name, path, "mismatch", 2 + 3)
    print(f"mismatch listed {took:.2f}s into the stall")
    stall.cancel()
    assert f.delete(MEMBER, name).result().ok
    f.assert_settled()
