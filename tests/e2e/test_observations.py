# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reads from observations (docs/api.md#reads-from-observations), through the real bus as the member and the
outsider: a change made behind the service's back (docker update --cpus, docker kill,
docker rename) is in the next reads once its event arrived — never a stale `match` —,
even with observations allowed to live far longer than the test (observation_max_age
600 s: only the event can have made the read fresh); RefreshSandbox (and the object's
Refresh, and `xagent-sandboxctl inspect --fresh`) answers Docker's inspection of this
instant; with observation_max_age 0 reads are what they were before observations.
That a read really is served without asking Docker, and that a cut event stream sends
reads to Docker at once, is seen at the Docker socket: tests/fault/test_observations.py."""

import json
import os
import threading
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_security_bus import Lines

LONG = {"observation_max_age": 600}


def container_of(name):
    ids = h.docker_containers_labelled(name)
    assert len(ids) == 1, ids
    return ids[0]


def reads_until(sandboxd, name, pred, timeout=5.0):
    """Inspects until pred(inspection); returns every inspection read on the way."""
    seen = []
    deadline = time.monotonic() + timeout
    while True:
        seen.append(sandboxd.inspect(MEMBER, name).result[0])
        if pred(seen[-1]) or time.monotonic() > deadline:
            return seen


@pytest.fixture
def long_lived(stack):
    with h.daemon_config(stack, LONG):
        yield


def test_policy_shows_the_max_age(sandboxd, long_lived):
    assert sandboxd.call(MEMBER, "GetPolicy").result[0]["observation_max_age"] == 600


def test_default_max_age(stack, sandboxd):
    stack.stop_daemon()
    assert sandboxd.call(MEMBER, "GetPolicy").result[0]["observation_max_age"] == 2


def test_bad_max_age_is_refused(stack, sandboxd):
    """An out-of-range value stops the start, named in the log."""
    with h.daemon_config(stack, {"observation_max_age": 3601}):
        mark = h.LogMark(stack)
        sandboxd.call(MEMBER, "GetPolicy", timeout=30).error("org.freedesktop.DBus.Error.Spawn.ChildExited")
        assert "observation_max_age: 3601 is outside 0–3600" in mark.new(), mark.new()


def test_update_behind_the_back(sandboxd, cleanup, long_lived):
    name = h.unique("obs-upd")
    cleanup.sandbox(name)
    sp = h.spec(cpus=1)
    sandboxd.create(MEMBER, name, sp).result
    for _ in range(2):      # the second one from the observation
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["nano_cpus"] == 10**9 and ins["verdict"] == "match", ins
    status, body = h.docker("POST", f"/containers/{container_of(name)}/update", {"NanoCpus": 5 * 10**8})
    assert status == 200, body
    seen = reads_until(sandboxd, name, lambda i: i["nano_cpus"] == 5 * 10**8)
    print(f"reads until the update showed: {len(seen)}")
    assert seen[-1]["nano_cpus"] == 5 * 10**8, "the update never showed (600 s observations)"
    assert all(i["verdict"] == "mismatch" for i in seen if i["nano_cpus"] == 5 * 10**8)
    # and it stays shown: every later read, the verification, the list, the object
    for _ in range(3):
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["nano_cpus"] == 5 * 10**8 and ins["verdict"] == "mismatch", ins
    verdict, fields = sandboxd.verify(MEMBER, name, sp).result
    assert verdict == "mismatch" and "cpus" in fields, (verdict, fields)
    assert sandboxd.list(MEMBER)[name][2] == "mismatch"
    obj = sandboxd.inspect(MEMBER, name, owner=MEMBER).result[0]
    assert obj["nano_cpus"] == 5 * 10**8 and obj["verdict"] == "mismatch", obj


def test_kill_behind_the_back(sandboxd, cleanup, long_lived):
    name = h.unique("obs-kill")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec()).result
    for _ in range(2):
        assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "running"
    status, body = h.docker("POST", f"/containers/{container_of(name)}/kill")
    assert status == 204, body
    seen = reads_until(sandboxd, name, lambda i: i["state"] == "stopped")
    assert seen[-1]["state"] == "stopped", "the kill never showed (600 s observations)"
    for _ in range(2):
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["state"] == "stopped" and ins["status"] == "exited", ins
    # the service's own start after it is seen at once (it counts as an event)
    sandboxd.start(MEMBER, name).result
    assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "running"
    sandboxd.stop(MEMBER, name, timeout=1).result
    assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "stopped"


def test_rename_behind_the_back(sandboxd, cleanup, long_lived):
    """A container renamed behind the service's back is still its sandbox (found by its
    id and labels): the reads after the rename's event go on answering, from Docker."""
    name = h.unique("obs-ren")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec()).result
    before = sandboxd.inspect(MEMBER, name).result[0]
    cid = container_of(name)
    status, body = h.docker("POST", f"/containers/{cid}/rename?name={name}-moved-{os.getpid()}")
    assert status == 204, body
    for _ in range(2):
        after = sandboxd.inspect(MEMBER, name).result[0]
        assert after["container_id"] == cid and after["verdict"] == before["verdict"] == "match", after
    sandboxd.delete(MEMBER, name).result
    sandboxd.inspect(MEMBER, name).error(h.NO_SUCH_SANDBOX)


def test_refresh(stack, sandboxd, cleanup, long_lived):
    name = h.unique("obs-ref")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec(cpus=1)).result
    ins = sandboxd.inspect(MEMBER, name).result[0]
    fresh = sandboxd.call(MEMBER, "RefreshSandbox", "s", [name]).result[0]
    assert fresh == ins
    obj = sandboxd.call(MEMBER, "Refresh", path=h.object_path(name, MEMBER), iface=h.SANDBOX).result[0]
    assert obj == ins
    # a change, then the refresh: Docker's answer now, and the reads after start from it
    status, _ = h.docker("POST", f"/containers/{container_of(name)}/update", {"NanoCpus": 2 * 10**9})
    assert status == 200
    fresh = sandboxd.call(MEMBER, "RefreshSandbox", "s", [name]).result[0]
    assert fresh["nano_cpus"] == 2 * 10**9 and fresh["verdict"] == "mismatch", fresh
    assert sandboxd.inspect(MEMBER, name).result[0]["nano_cpus"] == 2 * 10**9
    # the CLI's --fresh
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    r = stack.run_as(MEMBER, [ctl, "--json", "inspect", "--fresh", name])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nano_cpus"] == 2 * 10**9
    # the outsider: no such sandbox in its namespace; the member's object is not its
    sandboxd.call(OTHER, "RefreshSandbox", "s", [name]).error(h.NO_SUCH_SANDBOX)
    sandboxd.call(OTHER, "Refresh", path=h.object_path(name, MEMBER), iface=h.SANDBOX).error(*h.DENIED)
    sandboxd.call(MEMBER, "RefreshSandbox", "s", ["no-such-" + name]).error(h.NO_SUCH_SANDBOX)


def test_max_age_zero_is_as_before(stack, sandboxd, cleanup):
    """Observations off: every read asks Docker; a change shows in the very next read."""
    name = h.unique("obs-off")
    cleanup.sandbox(name)
    with h.daemon_config(stack, {"observation_max_age": 0}):
        assert sandboxd.call(MEMBER, "GetPolicy").result[0]["observation_max_age"] == 0
        sandboxd.create(MEMBER, name, h.spec(cpus=1)).result
        for cpus in (2, 1, 2):
            status, _ = h.docker("POST", f"/containers/{container_of(name)}/update", {"NanoCpus": cpus * 10**9})
            assert status == 200
            ins = sandboxd.inspect(MEMBER, name).result[0]
            assert ins["nano_cpus"] == cpus * 10**9, ins
            assert ins["verdict"] == ("match" if cpus == 1 else "mismatch"), ins


def test_read_from_what_is_kept_waits_for_no_worker(stack, sandboxd, cleanup, long_lived):
    """A read the service can answer from what it keeps (the observation standing, no
    host directory to look at) is answered on the main thread: while sbx-member's own
    12 usage calls hold its share of the read workers (4) and queue behind it, its
    InspectSandbox and a matching VerifySandbox are answered at once — and after a
    `docker update` behind the back, the next read differs (it goes to Docker, behind
    the queue) and is never the kept answer. The outsider is refused first: polkit
    is asked before anything kept is looked at."""
    name = cleanup.sandbox(h.unique("obs-main"))
    sp = h.spec(cpus=1)
    sandboxd.create(MEMBER, name, sp).result
    reader = Lines(stack, MEMBER)
    try:
        time.sleep(1)           # the create's own events (start …) arrived: nothing drops what is kept next
        before = reader.call("InspectSandbox", "s", [name])[0].result[0]     # kept from here
        assert before["nano_cpus"] == 10**9 and before["verdict"] == "match", before
        result = {}

        def flood():
            usage = [["GetSandboxUsage", "s", [name]]] * 12
            result["replies"] = h.flood(stack, MEMBER, [{"delay": 0, "calls": usage}], connections=12)

        t = threading.Thread(target=flood)
        t.start()
        time.sleep(0.5)         # the flood's client started, its calls sent
        timings = []
        for _ in range(3):
            r, elapsed = reader.call("InspectSandbox", "s", [name])
            assert r.result[0] == before, r
            timings.append(elapsed)
            r, elapsed = reader.call("VerifySandbox", "sa{sv}", [name, sp])
            assert r.result[0] == "match", r
            timings.append(elapsed)
        still_running = t.is_alive()
        # another spec is never given the kept one's answer: a mismatch, its fields
        r, _ = reader.call("VerifySandbox", "sa{sv}", [name, h.spec(cpus=2)])
        assert r.result == ["mismatch", ["cpus"]], r
        assert reader.call("VerifySandbox", "sa{sv}", [name, sp])[0].result[0] == "match"
        status, body = h.docker("POST", f"/containers/{container_of(name)}/update", {"NanoCpus": 5 * 10**8})
        assert status == 200, body
        seen = []
        deadline = time.monotonic() + 30
        while not seen or seen[-1]["nano_cpus"] != 5 * 10**8 and time.monotonic() < deadline:
            seen.append(reader.call("InspectSandbox", "s", [name])[0].result[0])
        t.join(timeout=120)
        print("the member's reads while its 12 usage calls ran:", ["%.3f" % x for x in timings])
        assert all(r.ok for r in result["replies"]), result["replies"]
        assert still_running, "the usage calls were all answered before the reads"
        assert max(timings) < 0.3, timings
        assert seen[-1]["nano_cpus"] == 5 * 10**8 and seen[-1]["verdict"] == "mismatch", seen[-1]
        verdict, fields = sandboxd.verify(MEMBER, name, sp).result
        assert verdict == "mismatch" and "cpus" in fields, (verdict, fields)
    finally:
        reader.close()
    sandboxd.inspect(OTHER, name, owner=MEMBER).error(*h.DENIED)
    sandboxd.call(OTHER, "VerifySandbox", "sa{sv}", [name, sp]).error(h.NO_SUCH_SANDBOX)


def changed(signals, path, prop):
    """The values of prop in the PropertiesChanged signals about the object at path."""
    return [s["args"][1][prop] for s in signals
            if s["member"] == "PropertiesChanged" and s["path"] == path and s["args"][0] == h.SANDBOX
            and prop in s["args"][1]]


def test_properties_follow_changes_behind_the_back(stack, sandboxd, cleanup, long_lived):
    """`docker update`, `docker pause`/`unpause` and `docker rename` made behind the
    service's back: the object's properties follow once the event arrived, announced
    by PropertiesChanged to the member (a match on the bus), never to the outsider."""
    name = cleanup.sandbox(h.unique("obs-props"))
    sp = h.spec(cpus=1)
    path = h.object_path(name, MEMBER)
    sandboxd.create(MEMBER, name, sp).result
    assert sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]["Verdict"] == "match"
    mine, theirs = h.Listener(stack, MEMBER), h.Listener(stack, OTHER)
    try:
        cid = container_of(name)
        status, body = h.docker("POST", f"/containers/{cid}/update", {"NanoCpus": 5 * 10**8})
        assert status == 200, body
        mine.wait_for(lambda s: changed(s, path, "Verdict") == ["mismatch"], timeout=15)
        status, body = h.docker("POST", f"/containers/{cid}/pause")
        assert status == 204, body
        mine.wait_for(lambda s: changed(s, path, "State") == ["paused"], timeout=15)
        status, body = h.docker("POST", f"/containers/{cid}/unpause")
        assert status == 204, body
        mine.wait_for(lambda s: changed(s, path, "State") == ["paused", "running"], timeout=15)
        status, body = h.docker("POST", f"/containers/{cid}/update", {"NanoCpus": 10**9})
        assert status == 200, body
        mine.wait_for(lambda s: changed(s, path, "Verdict") == ["mismatch", "match"], timeout=15)
        status, body = h.docker("POST", f"/containers/{cid}/rename?name={h.container_name(name, MEMBER)}-moved")
        assert status == 204, body
        props = sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]
        assert props["Name"] == name and props["ContainerId"] == cid and props["Verdict"] == "match", props
        assert props["State"] == "running", props
    finally:
        signals, others = mine.close(), theirs.close()
    assert changed(signals, path, "Status")[:1] == ["paused"], signals
    assert not [s for s in others if s["path"] == path], others
