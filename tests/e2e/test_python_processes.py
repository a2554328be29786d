# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python module's surface of the later API, as the member (and the outsider)
against the real stack: labels on ensure/create, Sandbox.find by labels and state,
pause and resume, and sb.processes (start, list, output from an offset, wait, kill),
a process read to its end by another program than the one that started it, and no
descriptor left after many process calls. Also what ensure/create send for labels and
the lifetimes (a recording bus, no service)."""

import os
import sys

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_python_client import MODULE, pyrun  # noqa: F401  (the fixture)


def test_labels_find_pause_resume(pyrun, cleanup):  # noqa: F811
    a, b = h.unique("pyla"), h.unique("pylb")
    team = h.unique("t")
    cleanup.sandbox(a)
    cleanup.sandbox(b)
    out = pyrun(MEMBER, f"""
        sa = Sandbox.ensure({a!r}, image={h.TEST_IMAGE!r}, labels={{"team": {team!r}, "role": "web"}})
        sb = Sandbox.create({b!r}, image={h.TEST_IMAGE!r}, labels={{"team": {team!r}, "role": "db"}},
                            idle_timeout=600, expire_after=3600, on_idle="pause")
        life = {{k: sb.inspect()[k] for k in ("idle_timeout", "on_idle", "expires_at")}}
        life_a = sa.inspect()["idle_timeout"]
        again = Sandbox.ensure({a!r}, image={h.TEST_IMAGE!r}, labels={{"team": {team!r}, "role": "web"}})
        try:
            Sandbox.ensure({a!r}, image={h.TEST_IMAGE!r}, labels={{"team": {team!r}}})
            other = None
        except InvalidArgs as e:
            other = e.message
        team_rows = Sandbox.find(labels={{"team": {team!r}}})
        db = [r.name for r in Sandbox.find(labels={{"team": {team!r}, "role": "db"}})]
        sa.pause()
        sa.pause()
        paused_state = sa.state
        paused = [r.name for r in Sandbox.find(labels={{"team": {team!r}}}, state="paused")]
        try:
            sa.run("true")
            run_paused = None
        except NotRunning as e:
            run_paused = e.name
        sa.resume()
        back = sa.run("echo back").stdout
        try:
            Sandbox.find(state="asleep")
            bad_state = None
        except InvalidArgs as e:
            bad_state = e.message
        print(json.dumps(dict(outcomes=[sa.outcome, sb.outcome, again.outcome], other=other,
              team=sorted(r.name for r in team_rows), fields=list(team_rows[0]._fields), db=db,
              labels=sa.labels, paused_state=paused_state, paused=paused, run_paused=run_paused,
              state=sa.state, back=back, bad_state=bad_state, life=life, life_a=life_a)))
    """)
    assert out["outcomes"] == ["created", "created", "reused"]
    assert out["other"] and "labels" in out["other"]
    assert out["team"] == sorted([a, b]) and out["db"] == [b]
    assert out["fields"] == ["name", "state", "owner", "verdict"]
    assert out["labels"] == {"team": team, "role": "web"}
    assert out["paused_state"] == "paused" and out["paused"] == [a]
    assert out["run_paused"] == h.ERR + "NotRunning"
    assert out["state"] == "running" and out["back"] == "back\n"
    assert out["bad_state"] and "asleep" in out["bad_state"]
    # the lifetimes reach the service (issue 23): shown by its inspection
    assert out["life"]["idle_timeout"] == 600 and out["life"]["on_idle"] == "pause", out["life"]
    assert out["life"]["expires_at"] > 0 and out["life_a"] == 0


def test_processes(pyrun, cleanup):  # noqa: F811
    name = h.unique("pyp")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
        p = sb.processes.start("echo hi $A; echo err >&2; printf '\\\\377\\\\n'; sleep 3; echo late; exit 4",
                               env={{"A": "there"}})
        listed = {{q.id: (q.command, q.running, q.exit_code) for q in sb.processes.list()}}
        first = p.output()
        again = p.output(0)
        r = p.wait(timeout=60)
        try:
            p.output()
            after_end = None
        except SandboxError as e:
            after_end = e.name
        q = sb.processes.start(["sleep", "100"])
        q.kill("TERM")
        killed = q.wait(timeout=30)
        try:
            sb.processes.start(["/no/such/program"])
            missing = None
        except InvalidArgs as e:
            missing = e.message
        try:
            sb.processes.get("../x")
            bad_id = None
        except ValueError as e:
            bad_id = str(e)
        survivor = sb.processes.start("echo before; sleep 2; echo after; exit 7")
        print(json.dumps(dict(id=p.id, listed=listed, first=[first.stdout_text, first.running, first.exit_code],
              again=again.stdout_text, code=r.exit_code, out=first.stdout_text + r.stdout, err=first.stderr_text + r.stderr,
              running=p.running, after_end=after_end, killed=killed.exit_code, missing=missing, bad_id=bad_id,
              survivor=survivor.id)))
    """)
    assert out["listed"][out["id"]] == ["/bin/sh", True, None]
    assert out["first"][1:] == [True, None] and out["first"][0].startswith("hi there\n")
    assert out["again"].startswith("hi there\n"), "offset 0 reads from the oldest byte again"
    assert out["code"] == 4 and out["running"] is False
    assert out["out"] == "hi there\n\ufffd\nlate\n" and out["err"] == "err\n"
    assert out["after_end"] == "org.freedesktop.DBus.Error.UnknownObject"
    assert out["killed"] == 128 + 15
    assert out["missing"] and "/no/such/program" in out["missing"]
    assert out["bad_id"]

    # Another program (another connection) reads the survivor to its end.
    later = pyrun(MEMBER, f"""
        sb = Sandbox({name!r})
        ids = [q.id for q in sb.processes.list()]
        r = sb.processes.get({out["survivor"]!r}).wait(timeout=30)
        print(json.dumps(dict(ids=ids, out=r.stdout, code=r.exit_code)))
    """)
    assert out["survivor"] in later["ids"]
    assert later["out"] == "before\nafter\n" and later["code"] == 7

    # The outsider cannot read or signal it.
    p = pyrun(MEMBER, f"""
        print(json.dumps(Sandbox({name!r}).processes.start("echo secret; sleep 30").id))
    """)
    denied = pyrun(OTHER, f"""
        seen = {{}}
        proc = Sandbox({name!r}).processes.get({p!r})
        for key, f in (("read", proc.output), ("kill", proc.kill)):
            try:
                f()
                seen[key] = None
            except SandboxError as e:
                seen[key] = e.name
        print(json.dumps(seen))
    """)
    assert denied == {"read": h.ACCESS_DENIED, "kill": h.ACCESS_DENIED}


def test_no_descriptor_left_after_process_calls(pyrun, cleanup):  # noqa: F811
    name = h.unique("pypfd")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        import os
        def fds():
            return len(os.listdir("/proc/self/fd"))
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
        sb.processes.start(["true"]).wait(timeout=30)
        before = fds()
        codes = []
        for i in range(20):
            p = sb.processes.start(["sh", "-c", "echo %d; exit %d" % (i, i % 3)])
            p.output()
            sb.processes.list()
            codes.append(p.wait(timeout=30).exit_code)
        k = sb.processes.start(["sleep", "100"])
        k.kill()
        k.wait(timeout=30)
        after = fds()
        print(json.dumps([before, after, codes]))
    """, timeout=300)
    before, after, codes = out
    assert codes == [i % 3 for i in range(20)]
    assert after == before, f"{after - before} descriptors left open"


class _RecordingBus:
    """Stands for _Bus: records each Manager call, answers as the service would."""
    calls = []

    def __init__(self, interactive=False):
        pass

    def manager(self, method, sig="", args=(), reply_sig=None, **kw):
        self.calls.append((method, sig, list(args)))
        return ["/org/xagent/Sandbox1/sandbox/x", "fp", "created"][:3 if method == "EnsureSandbox" else 2]

    def close(self):
        pass


def _types(options):
    return {k: (v.get_type_string(), v.unpack()) for k, v in options.items()}


def test_ensure_and_create_send_labels_and_lifetimes_only_when_given(monkeypatch):
    sys.path.insert(0, os.path.dirname(MODULE))
    try:
        import xagent_sandbox as xs
    finally:
        sys.path.pop(0)
    _RecordingBus.calls = []
    monkeypatch.setattr(xs, "_Bus", _RecordingBus)
    xs.Sandbox.ensure("x", image="i", labels={"team": "a"}, idle_timeout=600, expire_after=86400, on_idle="pause")
    xs.Sandbox.ensure("x", image="i")
    xs.Sandbox.create("x", image="i", idle_timeout=0, labels={"k": 1})
    xs.Sandbox.create("x", image="i")
    (m1, s1, a1), (m2, _, a2), (m3, s3, a3), (m4, _, a4) = _RecordingBus.calls
    assert (m1, s1, m3, s3) == ("EnsureSandbox", "sa{sv}a{sv}", "CreateSandbox", "sa{sv}a{sv}")
    assert _types(a1[2]) == {"on_mismatch": ("s", "fail"), "labels": ("a{ss}", {"team": "a"}),
                             "idle_timeout": ("u", 600), "expire_after": ("u", 86400), "on_idle": ("s", "pause")}
    assert _types(a2[2]) == {"on_mismatch": ("s", "fail")}
    assert _types(a3[2]) == {"labels": ("a{ss}", {"k": "1"}), "idle_timeout": ("u", 0)}
    assert _types(a4[2]) == {}
    assert m2 == "EnsureSandbox" and m4 == "CreateSandbox"
