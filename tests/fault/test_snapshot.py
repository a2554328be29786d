# SPDX-License-Identifier: LGPL-2.1-or-later
"""Snapshots interrupted (docs/lifecycle.md): the daemon SIGKILLed while the relay holds the
commit (before Docker saw it, and once Docker answered it), and the commit's answer
replaced by a 500, garbage or a body cut short after Docker made the image.

A snapshot records its intent (the id and the token label its commit writes into the
image) before the commit, so whatever Docker made is found again. Afterwards no image
of a commit is left without a row: an image Docker finished is recorded (ListSnapshots
shows it, a retry of the id says SnapshotExists, DeleteSnapshot removes it); when
Docker made nothing, the id is free again (the retry succeeds)."""

import json
import sqlite3
import time
from urllib.parse import quote

import pytest

import fault as F
from fault import MEMBER, ROOT

SNAPSHOT_EXISTS = F.ERR + "SnapshotExists"
INTENT_LABEL = "xagent.sandbox.snapshot.intent"
COMMIT = ("POST", r"^/commit\?")


def http_answer(status, body, length=None):
    body = body.encode() if isinstance(body, str) else body
    return (f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n\r\n").encode() + body


ANSWERS = {
    "500": http_answer("500 Internal Server Error", '{"message":"injected failure"}'),
    "garbage": http_answer("201 Created", "<html>not the JSON Docker sends</html>"),
    "truncated": http_answer("201 Created", '{"Id":"sha256:0123', length=80),
}

TWO = [ROOT, MEMBER]


# ---- what the world holds -----------------------------------------------------------------

def commit_images(f):
    """{image id: [tags]} of the images a snapshot's commit made (its token label),
    tagged or dangling."""
    path = "/images/json?filters=" + quote(json.dumps({"label": [INTENT_LABEL]}))
    return {i["Id"]: [t for t in (i.get("RepoTags") or []) if t != "<none>:<none>"]
            for i in f.docker.ok("GET", path)}


def snapshot_rows(f):
    """{snapshot id (Docker-level): image id} of table snapshots."""
    try:
        return dict(f._db("SELECT id, image_id FROM snapshots") or [])
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return {}
        raise


def snapshot_intents(f):
    try:
        return f._db("SELECT id, abandoned FROM snapshot_intents") or []
    except sqlite3.OperationalError as e:
        if "no such table" in str(e):
            return []
        raise


def snapshot_problems(f):
    out = []
    intents = snapshot_intents(f)
    if intents:
        out.append(f"snapshot intents left: {intents}")
    rows = snapshot_rows(f)
    images = commit_images(f)
    for img, tags in images.items():
        mine = [sid for sid, i in rows.items() if i == img]
        if len(mine) != 1:
            out.append(f"image {img[:19]} {tags} has {len(mine)} rows")
    for sid, img in rows.items():
        if img not in images:
            out.append(f"row {sid} names image {img[:19]}, which does not exist")
    return out


def wait_snapshots_settled(f, timeout=15):
    deadline = time.monotonic() + timeout
    while True:
        p = snapshot_problems(f)
        if not p:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"snapshots not settled within {timeout}s: {p}")
        time.sleep(0.1)


# ---- calls -------------------------------------------------------------------------------

def snapshot(f, user, name, sid):
    return f.submit(user, "SnapshotSandbox", "ss", [name, sid])


def delete_snapshot(f, user, sid):
    return f.submit(user, "DeleteSnapshot", "s", [sid])


def list_snapshots(f, user):
    """{id: (source, image id, owner, created µs)}."""
    return {x[0]: tuple(x[1:]) for x in f.call(user, "ListSnapshots").result[0]}


@pytest.fixture
def g(f):
    """The world, with no image of a commit before or after."""
    for img in commit_images(f):
        f.docker.api("DELETE", f"/images/{img}?force=1")
    yield f
    f.reset()
    for img in commit_images(f):
        f.docker.api("DELETE", f"/images/{img}?force=1")


def sandboxes(f, users):
    """One running sandbox per user: [(user, name)]."""
    f.activate()
    f.wait_settled()
    made = [(u, F.unique("src")) for u in users]
    for c in [f.create(u, n) for u, n in made]:
        assert c.result().ok
    return made


def check_adopted(f, user, name, sid, image_id=None):
    """The snapshot is recorded with the one image its commit made: listed, the id taken,
    a create from it works, and DeleteSnapshot removes the image."""
    images = commit_images(f)
    listed = list_snapshots(f, user)
    assert sid in listed, (sid, listed)
    assert listed[sid][1] in images, (listed[sid], images)
    if image_id is not None:
        assert listed[sid][1] == image_id
    assert images[listed[sid][1]] == [F.h.snapshot_ref(sid, None if user == ROOT else user)]
    snapshot(f, user, name, sid).result().error(SNAPSHOT_EXISTS)
    assert delete_snapshot(f, user, sid).result().ok
    assert listed[sid][1] not in commit_images(f)
    assert sid not in list_snapshots(f, user)


def check_free(f, user, name, sid):
    """Nothing was made: not listed, no image; the id can be used."""
    assert sid not in list_snapshots(f, user)
    assert not commit_images(f)
    r = snapshot(f, user, name, sid).result()
    assert r.ok, dict(r)
    check_adopted(f, user, name, sid, image_id=r.result[0])


@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_during_commit(g, when):
    """The commit held in the relay (before Docker saw it / Docker answered it), the daemon
    SIGKILLed: once it is back, an image Docker made is recorded, else the id is free."""
    f = g
    made = sandboxes(f, TWO)
    trials = [(u, n, F.unique("snap")) for u, n in made]
    hold = f.relay.hold(*COMMIT, when=when, count=len(trials))
    calls = [snapshot(f, u, n, sid) for u, n, sid in trials]
    hold.wait_held(F.DOCKER_TIMEOUT - 1)
    f.kill_daemon()
    for c in calls:
        c.result().error(*F.DAEMON_GONE)        # it was in flight: the trial is real
    f.relay.release_all()
    f.activate()
    wait_snapshots_settled(f)
    f.assert_settled()
    assert len(commit_images(f)) == (len(trials) if when == "after" else 0)
    for u, n, sid in trials:
        (check_adopted if when == "after" else check_free)(f, u, n, sid)
    wait_snapshots_settled(f)


@pytest.mark.parametrize("answer", sorted(ANSWERS))
def test_commit_answer_lost(g, answer):
    """Docker made the image, but the daemon got a 500, garbage or an answer cut short
    instead of its answer: what Docker made decides — the snapshot is recorded and
    reported as made, with the image's real id; nothing is left without a row."""
    f = g
    made = sandboxes(f, TWO)
    for u, n in made:
        sid = F.unique("snap")
        hold = f.relay.hold(*COMMIT, when="after", answer=ANSWERS[answer])
        r = snapshot(f, u, n, sid).result()
        assert hold.held, "the commit was not answered by the relay"
        assert r.ok, dict(r)
        wait_snapshots_settled(f, timeout=0)
        check_adopted(f, u, n, sid, image_id=r.result[0])
        wait_snapshots_settled(f, timeout=0)
    # and the daemon agrees after a restart
    f.kill_daemon()
    f.activate()
    wait_snapshots_settled(f)
    f.assert_settled()


def test_commit_answer_lost_then_killed(g):
    """The commit's answer cut short and the daemon SIGKILLed before anything else: the
    image is recorded by the next daemon (its caller was never answered)."""
    f = g
    (u, n), = sandboxes(f, [MEMBER])
    sid = F.unique("snap")
    # the settle's image list held: the daemon dies between the commit and its record
    f.relay.hold(*COMMIT, when="after", answer=ANSWERS["truncated"])
    settle = f.relay.hold("GET", r"^/images/json\?", when="before")
    call = snapshot(f, u, n, sid)
    settle.wait_held(F.DOCKER_TIMEOUT - 1)
    f.kill_daemon()
    call.result().error(*F.DAEMON_GONE)
    f.relay.release_all()
    f.activate()
    wait_snapshots_settled(f)
    check_adopted(f, u, n, sid)
