# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python module xagent_sandbox (python/, Gio) as an agent uses it: programs run
as the unprivileged member (and the outsider) against the real stack, each printing
what it saw as JSON. Every method, the typed exceptions, streaming callbacks, a
timed-out run, and no descriptor left open after 1,000 calls."""

import json
import os
import shutil
import textwrap

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER

HERE = os.path.dirname(os.path.abspath(__file__))
MODULE = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python", "xagent_sandbox")


@pytest.fixture(scope="module")
def pyrun(stack, docker_image):
    """Runs a Python program as a user with the module importable; its JSON output."""
    lib = os.path.join(stack.tmp, "pylib")
    shutil.rmtree(lib, ignore_errors=True)
    shutil.copytree(MODULE, os.path.join(lib, "xagent_sandbox"))
    for dirpath, _, _ in os.walk(lib):
        os.chmod(dirpath, 0o755)

    def run(user, program, timeout=120):
        path = os.path.join(stack.tmp, f"prog-{h.unique('py')}.py")
        with open(path, "w") as f:
            f.write("import json, sys\nfrom xagent_sandbox import *\nimport xagent_sandbox as xs\n")
            f.write(textwrap.dedent(program))
        os.chmod(path, 0o644)
        r = stack.run_as(user, ["/usr/bin/env", f"PYTHONPATH={lib}", "/usr/bin/python3", path], timeout=timeout)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.strip().splitlines()[-1])
    return run


def test_ensure_run_files_ports_usage(pyrun, cleanup):
    name = h.unique("py")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        with Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r}, ports=[(0, 8080)], env={{"A": "1"}}) as sb:
            first = sb.outcome
            again = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r}, ports=[(0, 8080)], env={{"A": "1"}})
            r = sb.run("echo $A; id -u; echo err >&2; exit 3")
            r2 = sb.run(["cat"], stdin=b"piped")
            sb.files.write("/tmp/f.txt", "héllo\\n")
            data = sb.files.read("/tmp/f.txt")
            sb.files.write("/tmp/pd/a/b.bin", bytes(range(256)) * 3, mode=0o600, make_parents=True)
            sb.files.write("/tmp/pd/a/b.bin", b"+", append=True)
            binary = sb.files.read("/tmp/pd/a/b.bin")
            listed = sb.files.list("/tmp/pd", depth=2)
            few = sb.files.list("/tmp/pd", depth=2, limit=1)
            sb.files.remove("/tmp/pd", recursive=True)
            gone = [e.name for e in sb.files.list("/tmp") if e.name == "pd"]
            slow = sb.run("echo partial; sleep 30", timeout=1)
            verdict = sb.verify(image={h.TEST_IMAGE!r}, ports=[(0, 8080)], env={{"A": "1"}})
            wrong = sb.verify(image={h.TEST_IMAGE!r}, ports=[(0, 8080)], env={{"A": "2"}})
            print(json.dumps(dict(first=first, again=again.outcome, code=r.exit_code, out=r.stdout,
                  err=r.stderr, ok=r.ok, cat=r2.stdout, data=data.decode(), verdict=verdict, wrong=wrong,
                  ports=sb.ports, mem=sb.usage()["memory_limit_bytes"], state=sb.state,
                  listed=[n for n, *_ in list_sandboxes()],
                  binary_ok=binary == bytes(range(256)) * 3 + b"+",
                  files=sorted((e.name, e.kind, e.size, e.mode & 0o7777) for e in listed),
                  truncated=(listed.truncated, few.truncated, len(few)), gone=gone,
                  slow=(slow.exit_code, slow.timed_out, slow.stdout))))
            again.close()
    """)
    assert out["first"] == "created" and out["again"] == "reused"
    assert (out["code"], out["out"], out["err"], out["ok"]) == (3, f"1\n{h.uid_of(MEMBER)}\n", "err\n", False)
    assert out["cat"] == "piped"
    assert out["data"] == "héllo\n"
    assert out["verdict"] == ["match", []]
    assert out["wrong"][0] == "mismatch" and "env" in out["wrong"][1]
    (host, port, guest), = out["ports"]
    assert host == "127.0.0.1" and port > 0 and guest == 8080
    assert out["mem"] == 512 << 20 and out["state"] == "running"
    assert name in out["listed"]
    assert out["binary_ok"] is True
    assert out["files"] == [["a", "directory", out["files"][0][2], 0o755], ["a/b.bin", "file", 769, 0o600]]
    assert out["truncated"] == [False, True, 1] and out["gone"] == []
    assert out["slow"] == [124, True, "partial\n"], "a timed-out run keeps its output"


def test_streaming_timeout_and_lifecycle(pyrun, cleanup):
    name = h.unique("pys")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        import time
        chunks = []
        with Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r}, on_exit="delete") as sb:
            r = sb.run("for i in 1 2 3; do echo line$i; sleep 0.2; done; echo e >&2; exit 4",
                       on_stdout=lambda c: chunks.append((time.monotonic(), c.decode())))
            t0 = time.monotonic()
            slow = sb.run("echo started; sleep 100", timeout=1, on_stdout=lambda c: None)
            took = time.monotonic() - t0
            quiet = sb.run("sleep 100", timeout=1)
            sb.stop(timeout=1)
            stopped = sb.state
            sb.start()
            snap = sb.snapshot({name + "-snap"!r})
            snaps = [s.id for s in list_snapshots()]
            delete_snapshot({name + "-snap"!r})
        print(json.dumps(dict(code=r.exit_code, out=r.stdout, err=r.stderr, n_chunks=len(chunks),
              spread=chunks[-1][0] - chunks[0][0], slow=[slow.exit_code, slow.timed_out, slow.stdout],
              took=took, quiet=[quiet.exit_code, quiet.timed_out], stopped=stopped, snap=snap, snaps=snaps,
              gone=[n for n, *_ in list_sandboxes()])))
    """)
    assert (out["code"], out["out"], out["err"]) == (4, "line1\nline2\nline3\n", "e\n")
    assert out["n_chunks"] >= 2 and out["spread"] > 0.2, "the callback saw output as it came"
    assert out["slow"] == [124, True, "started\n"], "a timed-out streamed run keeps what it printed"
    assert out["took"] < 10
    assert out["quiet"] == [124, True]
    assert out["stopped"] == "stopped"
    assert out["snap"].startswith("sha256:") and name + "-snap" in out["snaps"]
    assert name not in out["gone"], "on_exit='delete' deleted it"


def test_typed_exceptions(pyrun, cleanup):
    name = h.unique("pye")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        seen = {{}}
        def catch(key, f):
            try:
                f()
                seen[key] = None
            except SandboxError as e:
                seen[key] = [type(e).__name__, e.name, e.message]
        catch("missing", lambda: Sandbox("no-such-{name}").inspect())
        catch("policy", lambda: Sandbox.create({name!r}, image={h.TEST_IMAGE!r}, volumes=[("/etc", "/x", "ro")]))
        catch("args", lambda: Sandbox.create({name!r}, image={h.TEST_IMAGE!r}, memory=1))
        sb = Sandbox.create({name!r}, image={h.TEST_IMAGE!r})
        catch("exists", lambda: Sandbox.create({name!r}, image={h.TEST_IMAGE!r}))
        sb.stop(timeout=1)
        catch("not_running", lambda: sb.run("true"))
        sb.delete()
        print(json.dumps(seen))
    """)
    assert out["missing"][:2] == ["NoSuchSandbox", h.ERR + "NoSuchSandbox"]
    assert out["policy"][0] == "PolicyViolation" and "/etc" in out["policy"][2]
    assert out["args"][0] == "InvalidArgs" and "memory" in out["args"][2], out["args"]
    assert out["exists"][0] == "SandboxExists"
    assert out["not_running"][0] == "NotRunning"


def test_the_outsider_gets_polkits_answer(pyrun):
    out = pyrun(OTHER, """
        try:
            Sandbox.create("x", image="img")
            print(json.dumps(None))
        except SandboxError as e:
            print(json.dumps([type(e).__name__, isinstance(e, SandboxError)]))
    """)
    assert out == ["InteractiveAuthorizationRequired", True]


def test_no_descriptor_left_after_1000_calls(pyrun, cleanup):
    name = h.unique("pyfd")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        import os
        def fds():
            return len(os.listdir("/proc/self/fd"))
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
        sb.run("true"); sb.run("true", on_stdout=lambda c: None); sb.files.read("/etc/passwd")
        before = fds()
        for i in range(1000):
            if i % 100 == 0:
                sb.run("echo x", on_stdout=lambda c: None)
                sb.files.write("/tmp/n", b"%d" % i)
                sb.files.read("/tmp/n")
            else:
                sb.state
        after = fds()
        sb.close()
        print(json.dumps([before, after]))
    """, timeout=300)
    before, after = out
    # A leak grows the count; a streamed run's pipe may still be closing when
    # `before` is taken (CI saw 9 before, 8 after), so fewer is no leak.
    assert after <= before, f"{after - before} descriptors left open ({before} before, {after} after)"


def test_egress(pyrun, cleanup):
    """egress= on create and ensure, sb.set_egress(), sb.egress (docs/python.md)."""
    name, again = h.unique("pyeg"), h.unique("pyeg")
    cleanup.sandbox(name)
    cleanup.sandbox(again)
    out = pyrun(MEMBER, f"""
        sb = Sandbox.create({name!r}, image={h.TEST_IMAGE!r}, egress=["203.0.113.7:443/tcp", "pypi.example.test:443"])
        made = sb.egress
        sb.set_egress("none")
        none = sb.egress
        try:
            sb.set_egress(["not/an/entry"])
            bad = None
        except SandboxError as e:
            bad = [type(e).__name__, e.message]
        ensured = Sandbox.ensure({again!r}, image={h.TEST_IMAGE!r}, egress={{"mode": "none"}}).egress
        print(json.dumps({{"made": made, "none": none, "bad": bad, "ensured": ensured}}))
    """)
    assert out["made"]["mode"] == "allowlist" and out["made"]["enforced"], out
    assert out["made"]["allow"] == ["203.0.113.7:443/tcp", "pypi.example.test:443"], out
    assert out["none"]["mode"] == "none" and out["none"]["effective"] == "none" and out["none"]["enforced"], out
    assert out["bad"][0] == "InvalidArgs" and "not/an/entry" in out["bad"][1], out
    assert out["ensured"]["mode"] == "none" and out["ensured"]["enforced"], out
