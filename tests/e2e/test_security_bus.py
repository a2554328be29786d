# SPDX-License-Identifier: LGPL-2.1-or-later
"""The bus front end tells nobody what they may not read, and one user's load does not
refuse or stall another's (docs/security.md): polkit's details name a snapshot
template as a snapshot, signals reach only who may read them, the ObjectManager and
introspection list only the caller's own objects, reads and state changes have shares
of their own, and a slow read does not hold up another user's reads."""

import json
import os
import threading
import time

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT


def install_rule(stack, file_name, body):
    path = os.path.join(stack.tmp, "polkit", "etc-rules.d", file_name)
    with open(path, "w") as f:
        f.write(body)
    return path


# ---- polkit's details: a snapshot is no image -----------------------------------------

def test_an_image_prefix_rule_does_not_match_a_snapshot_named_like_one(stack, sandboxd, cleanup):
    """The README's example rule keys on the image prefix: a snapshot whose id starts
    with that prefix is passed as "snapshot", never as "image", so the rule does not
    grant it; an image create is still keyed on "image"."""
    src = cleanup.sandbox(h.unique("src"))
    sandboxd.create(MEMBER, src, h.spec()).result
    sid = cleanup.snapshot("acc/" + h.unique("evil"))
    sandboxd.snapshot(MEMBER, src, sid).result
    rule = install_rule(stack, "10-test-image-prefix.rules",
                        'polkit.addRule(function(action, subject) {\n'
                        '    if (action.id == "org.xagent.sandbox1.create" && subject.user == "sbx-member") {\n'
                        '        var image = action.lookup("image");\n'
                        '        if (image && image.indexOf("acc/") == 0) return polkit.Result.YES;\n'
                        '        return polkit.Result.NO;\n'
                        '    }\n'
                        '});\n')
    try:
        refused = h.unique("refused")
        h.wait_until(lambda: sandboxd.create(MEMBER, refused, h.spec())["error"] == h.ACCESS_DENIED,
                     10, what="polkitd to load the rule")
        # An image under the prefix passes polkit (and fails later: no such image here).
        r = sandboxd.create(MEMBER, cleanup.sandbox(h.unique("img")), h.spec(image="acc/absent:1"))
        assert r.get("error") != h.ACCESS_DENIED, r
        # The snapshot named like one does not.
        child = cleanup.sandbox(h.unique("child"))
        r = sandboxd.create(MEMBER, child, h.spec(image=None, snapshot=sid))
        assert r.get("error") == h.ACCESS_DENIED, r
        assert h.docker_containers_labelled(child) == []
    finally:
        os.unlink(rule)


# ---- a store that cannot be opened ----------------------------------------------------

STORE_UNAVAILABLE = h.ERR + "StoreUnavailable"


def test_an_unopenable_store_is_named_to_every_caller(stack, sandboxd, cleanup):
    """Garbage in sandboxd.db: the daemon takes its name anyway and answers every call
    (the Manager's methods, the objects' properties, the ObjectManager) with
    StoreUnavailable naming the file and the problem, logs it, leaves the sandboxes in
    Docker alone, and exits idle as usual; with the file back, the next activation
    manages them again."""
    name = cleanup.sandbox(h.unique("kept"))
    sandboxd.create(MEMBER, name, h.spec()).result
    cid = sandboxd.inspect(MEMBER, name).result[0]["container_id"]
    db = os.path.join(stack.state_dir, "sandboxd.db")
    argv = stack.default_daemon_argv()
    argv[argv.index("--idle-timeout") + 1] = "3"
    with h.daemon_argv(stack, argv):
        saved = {}
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                with open(db + suffix, "rb") as f:
                    saved[suffix] = f.read()
                os.unlink(db + suffix)
        try:
            with open(db, "wb") as f:
                f.write(b"this is no SQLite database\n" * 512)
            os.chmod(db, 0o600)
            mark = h.LogMark(stack)
            t0 = time.monotonic()
            for r in (sandboxd.call(MEMBER, "ListSandboxes"), sandboxd.inspect(MEMBER, name),
                      sandboxd.call(OTHER, "GetManagedObjects", iface=h.OBJECT_MANAGER),
                      sandboxd.call(ROOT, "Get", "ss", [h.MANAGER, "Version"], iface=h.PROPERTIES),
                      sandboxd.delete(ROOT, name)):
                msg = r.error(STORE_UNAVAILABLE)
                assert db in msg and "not a database" in msg, msg
            pid = stack.daemon_pid()
            assert pid, "the daemon does not hold its name"
            assert db in mark.new() and "not a database" in mark.new(), mark.new()
            # Docker was not touched: the sandbox is there and still running.
            d = h.docker_inspect(cid)
            assert d["State"]["Running"], d["State"]
            # Idle exit as usual (3 s here).
            h.wait_until(lambda: stack.daemon_pid() is None, 15, what="the idle exit")
            assert time.monotonic() - t0 >= 3
        finally:
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)
            for suffix, data in saved.items():
                with open(db + suffix, "wb") as f:
                    f.write(data)
                os.chmod(db + suffix, 0o600)
    # The repaired file is picked up by the next activation.
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["container_id"] == cid and ins["verdict"] == "match", ins


# ---- shares and workers: reads and state changes apart, slow reads fenced -------------

class Lines:
    """client.py lines as a user: one connection, calls sent one at a time, each timed
    from its line written to its reply read (no process start in the figure)."""

    def __init__(self, stack, user):
        self.proc = stack.spawn_as(user, stack.client_argv("lines", h.BUS_NAME, h.MANAGER_PATH, h.MANAGER))

    def call(self, method, sig, args):
        t0 = time.monotonic()
        self.proc.stdin.write(json.dumps([method, sig, args]) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read()
        return h.Reply(json.loads(line)), time.monotonic() - t0

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_a_users_slow_reads_do_not_hold_up_anothers(stack, sandboxd, cleanup):
    """sbx-member has 8 GetSandboxUsage calls in flight (each about a second in
    Docker); root's InspectSandbox meanwhile is answered at once, before the usage
    calls are: one caller holds at most half the read workers."""
    mine, theirs = cleanup.sandbox(h.unique("usage")), cleanup.sandbox(h.unique("theirs"))
    sandboxd.create(MEMBER, mine, h.spec()).result
    sandboxd.create(ROOT, theirs, h.spec()).result
    reader = Lines(stack, ROOT)
    try:
        reader.call("InspectSandbox", "s", [theirs])[0].result     # connected and warm
        result = {}

        def flood():
            usage = [["GetSandboxUsage", "s", [mine]]] * 8
            t0 = time.monotonic()
            result["replies"] = h.flood(stack, MEMBER, [{"delay": 0, "calls": usage}], connections=8)
            result["elapsed"] = time.monotonic() - t0

        t = threading.Thread(target=flood)
        t.start()
        time.sleep(0.5)         # the flood's client started (about 0.2 s), its calls sent
        timings = []
        for _ in range(3):
            r, elapsed = reader.call("InspectSandbox", "s", [theirs])
            assert r.result[0]["state"] == "running"
            timings.append(elapsed)
        still_running = t.is_alive()
        t.join(timeout=120)
        print("root's inspect while sbx-member's 8 usage calls run:", ["%.3f" % x for x in timings],
              "the usage calls took %.2f s" % result["elapsed"])
        assert all(r.ok for r in result["replies"]), result["replies"]
        assert still_running, "the usage calls were all answered before the inspects"
        assert max(timings) < 0.3, timings
    finally:
        reader.close()


def test_a_read_storm_does_not_refuse_the_same_users_state_changes(stack, sandboxd, cleanup):
    """sbx-member floods 24 slow reads (usage) and then deletes three of its sandboxes:
    the reads beyond max_reads_per_user (16) are LimitsExceeded naming it, the deletes
    all succeed — reads and state changes have shares of their own."""
    busy = cleanup.sandbox(h.unique("busy"))
    doomed = [cleanup.sandbox(h.unique("doomed")) for _ in range(3)]
    for n in [busy] + doomed:
        sandboxd.create(MEMBER, n, h.spec()).result
    calls = [["GetSandboxUsage", "s", [busy]]] * 24 + [["DeleteSandbox", "s", [n]] for n in doomed]
    replies = h.flood(stack, MEMBER, [{"delay": 0, "calls": calls}], connections=8)
    reads, deletes = replies[:24], replies[24:]
    assert all(r.ok for r in deletes), [dict(r) for r in deletes]
    refused = [r for r in reads if not r.ok]
    assert refused, "no read was refused: the share was not full"
    assert all(r["error"] == h.LIMITS_EXCEEDED and "max_reads_per_user" in r["message"] for r in refused), refused
    assert len(reads) - len(refused) >= 16
    for n in doomed:
        assert h.docker_containers_labelled(n) == []


# ---- what signals, the ObjectManager and introspection tell --------------------------

EXEC = "org.xagent.Sandbox1.Exec"
EXEC_PREFIX = h.MANAGER_PATH + "/exec"


def introspect(sandboxd, user, path):
    r = sandboxd.call(user, "Introspect", path=path, iface="org.freedesktop.DBus.Introspectable")
    return r.result[0]


def test_signals_reach_only_who_may_read_them(stack, sandboxd, cleanup):
    """An outsider's match on the service's signals receives nothing of a member's
    sandbox or exec (no name, owner, container id, state, exit status); the owner's
    own listener receives all of it, and so does root's."""
    name = cleanup.sandbox(h.unique("quiet"))
    path = h.object_path(name, MEMBER)
    outsider, owner, root = (h.Listener(stack, u) for u in (OTHER, MEMBER, ROOT))
    try:
        sandboxd.create(MEMBER, name, h.spec()).result
        cid = sandboxd.inspect(MEMBER, name).result[0]["container_id"]
        r = stack.run_as(MEMBER, stack.client_argv("start-exec", name, json.dumps(["sh", "-c", "exit 7"]), "{}"),
                         input="")
        assert r.returncode == 7, r.stderr
        exec_path = json.loads(r.stderr.splitlines()[0])["exec"]
        sandboxd.stop(MEMBER, name, timeout=1).result
        sandboxd.delete(MEMBER, name).result
        for listener in (owner, root):
            listener.wait_for(lambda ss: any(s["member"] == "SandboxRemoved" and s["args"][0] == name for s in ss))
            listener.wait_for(lambda ss: any(s["member"] == "Exited" and s["path"] == exec_path for s in ss))
        time.sleep(0.5)     # anything still on its way to the outsider
    finally:
        heard = {u: l.close() for u, l in ((OTHER, outsider), (MEMBER, owner), (ROOT, root))}
    for user in (MEMBER, ROOT):
        members = [(s["member"], s["path"]) for s in heard[user]]
        for want in [("SandboxNew", h.MANAGER_PATH), ("InterfacesAdded", h.MANAGER_PATH),
                     ("PropertiesChanged", path), ("InterfacesRemoved", h.MANAGER_PATH),
                     ("SandboxRemoved", h.MANAGER_PATH), ("Exited", exec_path), ("PropertiesChanged", exec_path)]:
            assert want in members, (user, want, members)
        exited = [s for s in heard[user] if s["member"] == "Exited" and s["path"] == exec_path]
        assert exited[0]["args"] == [7], exited
        added = [s for s in heard[user] if s["member"] == "InterfacesAdded" and s["args"][0] == path]
        props = added[0]["args"][1][h.SANDBOX]
        assert props["Name"] == name and props["Owner"] == h.uid_of(MEMBER), props
        assert props.get("Image", "") == "" and props.get("Fingerprint", "") == "", props
    leaked = [s for s in heard[OTHER] if any(x in json.dumps(s) for x in (name, cid, path, exec_path))]
    assert not leaked, leaked
    assert not [s for s in heard[OTHER] if s["path"].startswith(h.MANAGER_PATH)], heard[OTHER]


def test_another_users_exec_breaks_no_listing_and_shows_no_id(stack, sandboxd, cleanup):
    """While sbx-member's exec runs, everyone's GetManagedObjects still answers and
    lists what that caller may read only; introspecting the exec tree lists the exec's
    id to its caller (and root), to nobody else."""
    name = cleanup.sandbox(h.unique("execs"))
    theirs = cleanup.sandbox(h.unique("theirs"))
    sandboxd.create(MEMBER, name, h.spec()).result
    sandboxd.create(ROOT, theirs, h.spec()).result
    p = stack.spawn_as(MEMBER, stack.client_argv("start-exec", name, json.dumps(["sleep", "infinity"]), "{}"))
    try:
        exec_path = json.loads(p.stderr.readline())["exec"]
        exec_id = exec_path.rsplit("/", 1)[1]
        other = sandboxd.managed_objects(OTHER)
        assert exec_path not in other and h.object_path(name, MEMBER) not in other, other
        mine = sandboxd.managed_objects(MEMBER)
        assert exec_path in mine and mine[exec_path][EXEC]["Running"] is True, mine
        assert h.object_path(name, MEMBER) in mine and h.object_path(theirs) not in mine, mine
        everything = sandboxd.managed_objects(ROOT)
        assert exec_path in everything and h.object_path(name, MEMBER) in everything
        assert exec_id not in introspect(sandboxd, OTHER, EXEC_PREFIX)
        assert exec_id not in introspect(sandboxd, OTHER, h.MANAGER_PATH)
        assert exec_id in introspect(sandboxd, MEMBER, EXEC_PREFIX)
        assert exec_id in introspect(sandboxd, ROOT, EXEC_PREFIX)
        # Its object still answers its caller.
        props = sandboxd.call(MEMBER, "GetAll", "s", [EXEC], path=exec_path, iface=h.PROPERTIES).result[0]
        assert props["Running"] is True and props["Sandbox"] == name
    finally:
        p.kill()
        p.wait()
