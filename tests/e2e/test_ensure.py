# SPDX-License-Identifier: LGPL-2.1-or-later
"""EnsureSandbox, xagent #1014's get-or-create, through the bus: every outcome, the
mismatch refused or replaced, a lost row recorded again, an unverified sandbox with an
equal stored spec reused, concurrent ensures of one name, and the CLI's ensure. Also a
container whose env holds a Unicode noncharacter, which D-Bus cannot carry, inspected."""

import json
import os
import sqlite3
import subprocess

import sandbox_helpers as h
from sandbox_helpers import MEMBER, ROOT


def ensure(sandboxd, user, name, sp, options=None, **kw):
    return sandboxd.call(user, "EnsureSandbox", "sa{sv}a{sv}", [name, sp, options or {}], **kw)


def outcome(reply):
    return reply.result[2]


def store(stack):
    return sqlite3.connect(os.path.join(stack.state_dir, "sandboxd.db"))


def test_every_outcome(sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("ens"))
    sp = h.spec(memory=256)
    path, fp, out = ensure(sandboxd, MEMBER, name, sp).result
    assert out == "created" and path == h.object_path(name, MEMBER)
    assert ensure(sandboxd, MEMBER, name, sp).result == [path, fp, "reused"]
    sandboxd.stop(MEMBER, name, timeout=0).result
    assert outcome(ensure(sandboxd, MEMBER, name, sp)) == "started"
    assert sandboxd.inspect(MEMBER, name).result[0]["state"] == "running"

    # A mismatch fails by default, naming the fields, and changes nothing ...
    cid = sandboxd.inspect(MEMBER, name).result[0]["container_id"]
    msg = ensure(sandboxd, MEMBER, name, h.spec(memory=512)).error(h.RUNTIME_CONFLICT)
    assert "memory" in msg, msg
    assert sandboxd.inspect(MEMBER, name).result[0]["container_id"] == cid
    # ... or is replaced on request.
    r = ensure(sandboxd, MEMBER, name, h.spec(memory=512),
               {"on_mismatch": ["s", "recreate"], "stop_timeout": ["u", 1]})
    assert outcome(r) == "recreated"
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["container_id"] != cid and ins["memory_bytes"] == 512 * 1024 * 1024
    assert sandboxd.verify(MEMBER, name, h.spec(memory=512)).result == ["match", []]
    sandboxd.delete(MEMBER, name).result


DENY_MANAGE = """polkit.addRule(function(action, subject) {
    if (action.id == "org.xagent.sandbox1.manage" && subject.user == "%s")
        return polkit.Result.NO;
});
""" % MEMBER


def test_replacing_needs_manage(stack, sandboxd, cleanup):
    """A site rule that denies manage (stop, delete) is not bypassed by ensure's
    recreate, which deletes; creating and starting under create still work."""
    name = cleanup.sandbox(h.unique("ensdeny"))
    rule = os.path.join(stack.tmp, "polkit", "etc-rules.d", "10-deny-manage.rules")
    sp = h.spec(memory=256)
    assert outcome(ensure(sandboxd, MEMBER, name, sp)) == "created"
    cid = sandboxd.inspect(MEMBER, name).result[0]["container_id"]
    with open(rule, "w") as f:
        f.write(DENY_MANAGE)
    os.chmod(rule, 0o644)
    try:
        # polkitd re-reads its rules on the change.
        h.wait_until(lambda: not sandboxd.start(MEMBER, name).ok, 20, what="the deny rule")
        msg = ensure(sandboxd, MEMBER, name, h.spec(memory=512),
                     {"on_mismatch": ["s", "recreate"], "stop_timeout": ["u", 1]}).error(*h.DENIED)
        assert "org.xagent.sandbox1.manage" in msg, msg
        ins = sandboxd.inspect(MEMBER, name).result[0]
        assert ins["container_id"] == cid and ins["state"] == "running"
        assert outcome(ensure(sandboxd, MEMBER, name, sp)) == "reused"
    finally:
        os.unlink(rule)
    h.wait_until(lambda: sandboxd.start(MEMBER, name).ok, 20, what="the rule's removal")
    r = ensure(sandboxd, MEMBER, name, h.spec(memory=512),
               {"on_mismatch": ["s", "recreate"], "stop_timeout": ["u", 1]})
    assert outcome(r) == "recreated"
    sandboxd.delete(MEMBER, name).result


def test_bad_options(sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("ensopt"))
    msg = ensure(sandboxd, MEMBER, name, h.spec(), {"on_mismatch": ["s", "maybe"]}).error(h.INVALID_ARGS)
    assert "on_mismatch" in msg
    msg = ensure(sandboxd, MEMBER, name, h.spec(), {"bogus": ["s", "x"]}).error(h.INVALID_ARGS)
    assert "bogus" in msg
    msg = ensure(sandboxd, MEMBER, name, h.spec(), {"stop_timeout": ["u", 61]}).error(h.INVALID_ARGS)
    assert "max_stop_timeout" in msg
    assert h.docker_containers_labelled(name) == []


def test_a_lost_row_is_recorded_again(stack, sandboxd, cleanup):
    """A matching container whose stored row is gone is recorded again, then reused."""
    name = cleanup.sandbox(h.unique("lostrow"))
    sp = h.spec()
    ensure(sandboxd, MEMBER, name, sp).result
    with store(stack) as db:
        assert db.execute("DELETE FROM sandboxes WHERE name = ?", (h.qualified(name, MEMBER),)).rowcount == 1
    assert outcome(ensure(sandboxd, MEMBER, name, sp)) == "reused"
    with store(stack) as db:
        assert db.execute("SELECT COUNT(*) FROM sandboxes WHERE name = ?",
                          (h.qualified(name, MEMBER),)).fetchone()[0] == 1
    assert sandboxd.inspect(MEMBER, name).result[0]["verdict"] == "match"


def test_unverified_with_an_equal_stored_spec_is_reused(stack, sandboxd, cleanup):
    """A container without a fingerprint label (xagent's legacy path), but stored with
    the very spec asked for, is reused rather than refused."""
    name = cleanup.sandbox(h.unique("legacy"))
    body = {"Image": h.TEST_IMAGE, "Cmd": ["tail", "-f", "/dev/null"], "WorkingDir": "/home",
            "Labels": {"xagent.managed": "true", "xagent.sandbox.name": name}}
    status, made = h.docker("POST", "/containers/create?name=" + h.container_name(name), body)
    assert status == 201, made
    cleanup.container(made["Id"])
    assert h.docker("POST", f"/containers/{made['Id']}/start")[0] == 204
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    canon = json.loads(subprocess.run([ctl, "--json", "fingerprint", "-"], input=json.dumps(h.spec_json()),
                                      capture_output=True, text=True, check=True).stdout)
    with store(stack) as db:
        db.execute("INSERT INTO sandboxes (name, owner_uid, owner_gid, container_id, spec_json, fingerprint,"
                   " contract_version, state) VALUES (?, 0, 0, ?, ?, ?, 1, 'running')",
                   (name, made["Id"], json.dumps(canon["spec"]), canon["fingerprint"]))
    assert sandboxd.inspect(ROOT, name).result[0]["verdict"] == "unverified"
    assert outcome(ensure(sandboxd, ROOT, name, h.spec())) == "reused"
    assert sandboxd.inspect(ROOT, name).result[0]["container_id"] == made["Id"]
    # Another spec is a mismatch for it.
    ensure(sandboxd, ROOT, name, h.spec(memory=256)).error(h.RUNTIME_CONFLICT)
    sandboxd.delete(ROOT, name).result


def test_concurrent_ensures_create_once(stack, sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("race"))
    calls = [["EnsureSandbox", "sa{sv}a{sv}", [name, h.spec(), {}]]] * 8
    replies = h.flood(stack, MEMBER, [{"delay": 0, "calls": calls}], connections=8)
    outcomes = sorted(r.result[2] for r in replies)
    assert outcomes == ["created"] + ["reused"] * 7, outcomes
    assert len(h.docker_containers_labelled(name)) == 1
    sandboxd.delete(MEMBER, name).result


def test_cli_ensure(stack, sandboxd, cleanup):
    name = cleanup.sandbox(h.unique("cliens"))
    ctl = [os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl"), "--no-ask-password", "--json"]
    args = ["ensure", name, "--image", h.TEST_IMAGE, "--memory", "256"]
    r = stack.run_as(MEMBER, ctl + args)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["outcome"] == "created"
    r = stack.run_as(MEMBER, ctl + args)
    assert json.loads(r.stdout)["outcome"] == "reused"
    r = stack.run_as(MEMBER, ctl + ["ensure", name, "--image", h.TEST_IMAGE])
    assert r.returncode == 1 and "RuntimeConflict" in r.stderr and "memory" in r.stderr, r
    r = stack.run_as(MEMBER, ctl + ["ensure", name, "--image", h.TEST_IMAGE, "--recreate",
                                    "--stop-timeout", "1"])
    assert r.returncode == 0 and json.loads(r.stdout)["outcome"] == "recreated", r.stderr
    sandboxd.delete(MEMBER, name).result


def test_a_noncharacter_in_a_containers_env(sandboxd, cleanup):
    """Docker and xagent take U+FDD0 in an env value; sd-bus refuses it in a string. The
    inspection carries the env escaped (listed in 'escaped'), it never fails."""
    name = cleanup.sandbox(h.unique("nonchar"))
    body = {"Image": h.TEST_IMAGE, "Cmd": ["tail", "-f", "/dev/null"],
            "Env": ["ODD=a\ufdd0b", "PLAIN=x"],
            "Labels": {"xagent.managed": "true", "xagent.sandbox.name": name}}
    status, made = h.docker("POST", "/containers/create?name=" + h.container_name(name), body)
    assert status == 201, made
    cleanup.container(made["Id"])
    ins = sandboxd.inspect(ROOT, name).result[0]
    assert "env" in ins["escaped"]
    assert ins["env"]["ODD"] == "a\\ufdd0b" and ins["env"]["PLAIN"] == "x"
    assert ins["verdict"] == "unverified"
    sandboxd.delete(ROOT, name).result
