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
