# SPDX-License-Identifier: LGPL-2.1-or-later
"""Labels (issue 23, docs/lifecycle.md) through the real bus as the member and the outsider:
the create/ensure option stored and shown (Labels, the inspection's sandbox_labels, the
container's org.xagent.sandbox.label.* Docker labels), kept across a daemon restart,
never part of the fingerprint or the verdict (xagent's own labels untouched),
FindSandboxes by labels and state in the caller's namespace only, an ensure that would
change them refused, and every bad label a typed InvalidArgs."""

import json
import os

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

PREFIX = "org.xagent.sandbox.label."


def labels(d):
    return {"labels": ["a{ss}", d]}


def find(sandboxd, user, filt):
    """FindSandboxes: the names it answers (as ListSandboxes' rows)."""
    r = sandboxd.call(user, "FindSandboxes", "a{sv}", [filt])
    return r


def names(reply):
    return sorted(row[0] for row in reply.result[0])


def ensure(sandboxd, user, name, sp, options=None):
    return sandboxd.call(user, "EnsureSandbox", "sa{sv}a{sv}", [name, sp, options or {}])


def test_round_trip_and_never_in_the_fingerprint(stack, sandboxd, cleanup):
    tagged, plain = h.unique("lab"), h.unique("lab")
    sp = h.spec(memory=256)
    given = {"task": "42", "agent/role": "coder-1", "note": "ünïcode ✓"}
    _, fp_tagged = sandboxd.create_ok(MEMBER, tagged, sp, cleanup, options=labels(given))
    _, fp_plain = sandboxd.create_ok(MEMBER, plain, sp, cleanup)

    # The same spec with and without labels: the same fingerprint, xagent's.
    assert fp_tagged == fp_plain == h.ctl_fingerprint(stack, h.spec_json(memory=256))
    assert sandboxd.verify(MEMBER, tagged, sp).result == ["match", []]

    props = sandboxd.properties(MEMBER, tagged, owner=MEMBER).result[0]
    assert props["Labels"] == given
    assert sandboxd.properties(MEMBER, plain, owner=MEMBER).result[0]["Labels"] == {}
    ins = sandboxd.inspect(MEMBER, tagged).result[0]
    assert ins["sandbox_labels"] == given
    assert ins["verdict"] == "match"
    assert sandboxd.inspect(MEMBER, plain).result[0]["sandbox_labels"] == {}

    # On the container under our prefix; xagent's own labels are those of the plain one.
    docker_tagged = h.docker_inspect(ins["container_id"])["Config"]["Labels"]
    plain_cid = sandboxd.inspect(MEMBER, plain).result[0]["container_id"]
    docker_plain = h.docker_inspect(plain_cid)["Config"]["Labels"]
    assert {k[len(PREFIX):]: v for k, v in docker_tagged.items() if k.startswith(PREFIX)} == given
    assert not any(k.startswith(PREFIX) for k in docker_plain)
    ours = {k: v for k, v in docker_tagged.items() if not k.startswith(PREFIX)}
    assert set(ours) == set(docker_plain)
    for k in ours:
        if k != "xagent.sandbox.name":
            assert ours[k] == docker_plain[k], k
    assert ours["xagent.sandbox.spec.fingerprint"] == fp_tagged

    # The outsider reads neither the property nor the labels through a find.
    sandboxd.properties(OTHER, tagged, owner=MEMBER).error(h.ACCESS_DENIED)
    assert names(find(sandboxd, OTHER, labels({"task": "42"}))) == []

    # Kept in the store: a new daemon shows them again.
    stack.stop_daemon()
    assert sandboxd.properties(MEMBER, tagged, owner=MEMBER).result[0]["Labels"] == given
    assert sandboxd.inspect(MEMBER, tagged).result[0]["sandbox_labels"] == given


def test_a_snapshot_carries_no_labels(sandboxd, cleanup):
    source, copy = h.unique("lsnap"), h.unique("lcopy")
    sid = cleanup.snapshot(h.unique("lsid"))
    run = h.unique("snaprun")
    sandboxd.create_ok(MEMBER, source, h.spec(), cleanup, options=labels({"run": run}))
    sandboxd.snapshot(MEMBER, source, sid).result
    sandboxd.create_ok(MEMBER, copy, h.spec(image=None, snapshot=sid), cleanup)
    ins = sandboxd.inspect(MEMBER, copy).result[0]
    assert ins["sandbox_labels"] == {}
    # Docker merged the image's labels in: ours are there only blank.
    assert ins["labels"].get(PREFIX + "run") == "", ins["labels"]
    assert names(find(sandboxd, MEMBER, labels({"run": run}))) == [source]


def test_find_by_labels_and_state(sandboxd, cleanup):
    run = h.unique("run")
    a, b, c = h.unique("fa"), h.unique("fb"), h.unique("fc")
    sp = h.spec()
    sandboxd.create_ok(MEMBER, a, sp, cleanup, options=labels({"run": run, "role": "x"}))
    sandboxd.create_ok(MEMBER, b, sp, cleanup, options=labels({"run": run, "role": "y"}))
    sandboxd.create_ok(MEMBER, c, sp, cleanup, options=labels({"run": run + "-other"}))
    sandboxd.stop(MEMBER, b, timeout=0).result

    assert names(find(sandboxd, MEMBER, labels({"run": run}))) == sorted([a, b])
    assert names(find(sandboxd, MEMBER, labels({"run": run, "role": "y"}))) == [b]
    assert names(find(sandboxd, MEMBER, labels({"run": run, "role": "z"}))) == []
    assert names(find(sandboxd, MEMBER, labels({"run": run, "missing": ""}))) == []
    both = dict(labels({"run": run}), state=["s", "running"])
    assert names(find(sandboxd, MEMBER, both)) == [a]
    both["state"] = ["s", "stopped"]
    rows = find(sandboxd, MEMBER, both).result[0]
    assert [(r[0], r[1], r[4]) for r in rows] == [(b, "stopped", h.object_path(b, MEMBER))]
    # An empty filter is ListSandboxes (others' tests on the shared dockerd come and go).
    assert {a, b, c} <= set(names(find(sandboxd, MEMBER, {})))
    assert {a, b, c} <= set(sandboxd.list(MEMBER))
    # The outsider's namespace holds none of them.
    assert names(find(sandboxd, OTHER, labels({"run": run}))) == []


def test_ensure_does_not_change_labels(sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("elab"))
    sp = h.spec()
    first = {"task": "7"}
    path, fp, out = ensure(sandboxd, MEMBER, name, sp, labels(first)).result
    assert out == "created"
    assert ensure(sandboxd, MEMBER, name, sp, labels(first)).result == [path, fp, "reused"]
    assert ensure(sandboxd, MEMBER, name, sp).result == [path, fp, "reused"]     # not compared
    msg = ensure(sandboxd, MEMBER, name, sp, labels({"task": "8"})).error(h.INVALID_ARGS)
    assert "labels" in msg and '"task":"7"' in msg and "never changed" in msg, msg
    assert sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]["Labels"] == first
    # A recreate (a spec mismatch) makes a new sandbox: it gets the labels given.
    r = ensure(sandboxd, MEMBER, name, h.spec(memory=128),
               dict(labels({"task": "9"}), on_mismatch=["s", "recreate"], stop_timeout=["u", 0]))
    assert r.result[2] == "recreated"
    assert sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]["Labels"] == {"task": "9"}


def test_bad_labels_are_typed_errors(sandboxd, cleanup):
    name = h.unique("badlab")
    cleanup.sandbox(name)
    sp = h.spec()

    def refused(options, *says):
        msg = sandboxd.create(MEMBER, name, sp, options).error(h.INVALID_ARGS)
        for s in says:
            assert s in msg, (s, msg)

    refused(labels({"k%d" % i: "v" for i in range(33)}), "labels", "more than 32 keys")
    refused(labels({"big": "v" * 5 * 1024}), "labels", "more than 4096 bytes")
    refused(labels({"xagent.sandbox.owner": "0"}), "xagent.sandbox.owner", "never writable")
    refused(labels({"org.xagent.sandbox.label.x": "1"}), "never writable")
    refused(labels({"Task": "1"}), "'Task'", "[a-z0-9._/-]")
    refused(labels({"": "1"}), "empty key")
    refused({"labels": ["a{sv}", {"k": ["s", "v"]}]}, "labels", "expected a value of type 'a{ss}'")
    refused({"ttl": ["u", 5]}, "ttl: unknown option")
    # 32 keys and 4096 bytes exactly are fine; nothing was made by the refusals.
    assert name not in sandboxd.list(MEMBER)
    ok = {"k%02d" % i: "v" * 124 for i in range(32)}      # 32 × (3 + 124) = 4064 bytes
    sandboxd.create(MEMBER, name, sp, labels(ok)).result
    assert sandboxd.properties(MEMBER, name, owner=MEMBER).result[0]["Labels"] == ok

    for filt, says in (({"owner": ["u", 0]}, "owner: unknown filter key"),
                       ({"state": ["s", "sleeping"]}, "state: 'sleeping'"),
                       ({"state": ["u", 1]}, "state: expected a value of type 's'"),
                       (labels({"xagent.managed": "true"}), "never writable")):
        msg = find(sandboxd, MEMBER, filt).error(h.INVALID_ARGS)
        assert says in msg, (says, msg)
    # The outsider gets the same typed answers (refused before any look-up).
    find(sandboxd, OTHER, {"owner": ["u", 0]}).error(h.INVALID_ARGS)


def test_ctl_create_ensure_and_list_by_label(stack, sandboxd, cleanup):
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    run = h.unique("ctlrun")
    a, b = cleanup.sandbox(h.unique("ctla")), cleanup.sandbox(h.unique("ctlb"))

    def ok(*args, user=MEMBER):
        r = stack.run_as(user, [ctl, *args], input="", timeout=120)
        assert r.returncode == 0, (args, r.stdout, r.stderr)
        return r.stdout

    ok("create", a, "--image", h.TEST_IMAGE, "--label", "run=" + run, "--label", "role=x=y")
    ok("ensure", b, "--image", h.TEST_IMAGE, "--label", "run=" + run)
    assert sandboxd.properties(MEMBER, a, owner=MEMBER).result[0]["Labels"] == {"run": run, "role": "x=y"}
    rows = json.loads(ok("--json", "list", "--label", "run=" + run))
    assert sorted(r["name"] for r in rows) == sorted([a, b])
    rows = json.loads(ok("--json", "list", "--label", "run=" + run, "--label", "role=x=y"))
    assert [r["name"] for r in rows] == [a]
    assert json.loads(ok("--json", "list", "--label", "run=" + run, user=OTHER)) == []
    # The same labels again: reused; others: refused, naming the labels it has.
    assert "outcome: reused" in ok("ensure", b, "--image", h.TEST_IMAGE, "--label", "run=" + run)
    r = stack.run_as(MEMBER, [ctl, "ensure", b, "--image", h.TEST_IMAGE, "--label", "run=else"], input="")
    assert r.returncode != 0 and "InvalidArgs" in r.stderr and run in r.stderr, r.stderr
    r = stack.run_as(MEMBER, [ctl, "create", h.unique("ctlc"), "--label", "novalue"], input="")
    assert r.returncode != 0 and "KEY=VALUE" in r.stderr, r.stderr
    r = stack.run_as(MEMBER, [ctl, "verify", a, "--image", h.TEST_IMAGE, "--label", "run=1"], input="")
    assert r.returncode != 0 and "never part of a verification" in r.stderr, r.stderr
