# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Python module's agent surface (issue 39), programs run as the member against the
real stack: leases (`with sb.lease():`, SandboxBusy, stop(force=True), the lease
revoked), lifetimes (create/ensure options, set_lifetimes, an ensure applying them to
the sandbox it finds), a typed exception for every bus error name the service has,
stdin to a background process, its output resumed from its id alone (no byte twice,
none lost, a typed NoSuchProcess once it is gone), and `wait` on runs."""

import os
import re

import sandbox_helpers as h
from sandbox_helpers import MEMBER
from test_python_client import pyrun  # noqa: F401 (the fixture)

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_lease_busy_force_and_revoked(pyrun, cleanup):  # noqa: F811
    name = h.unique("pylease")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
        other = Sandbox({name!r})                   # another connection
        seen = {{}}
        with sb.lease() as lease:
            seen["held"] = lease.held
            seen["leases"] = sb.lifetimes["leases"]
            try:
                other.stop(timeout=1)
            except SandboxBusy as e:
                seen["busy"] = [type(e).__name__, e.name, e.message]
            seen["revoked_before"] = lease.revoked
            other.stop(timeout=1, force=True)
            seen["revoked"] = lease.wait_revoked(10)
            try:
                lease.check()
            except LeaseRevoked as e:
                seen["check"] = isinstance(e, SandboxError)
        seen["state"] = sb.state
        seen["released"] = not lease.held
        print(json.dumps(seen))
    """)
    assert out["held"] and out["leases"] == 1
    assert out["busy"][:2] == ["SandboxBusy", h.ERR + "SandboxBusy"]
    assert "1 lease held by another connection" in out["busy"][2]
    assert out["revoked_before"] is False and out["revoked"] is True and out["check"] is True
    assert out["state"] == "stopped" and out["released"]


def test_lifetimes(pyrun, cleanup):  # noqa: F811
    name = h.unique("pylife")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        import time
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r}, idle_timeout=600, idle_counts_processes=True)
        seen = {{"made": sb.lifetimes}}
        before = time.time()
        sb.set_lifetimes(expire_after=900, on_idle="pause")
        seen["set"] = sb.lifetimes
        seen["from_now"] = seen["set"]["expires_at"] >= (before + 900) * 1e6 - 2e6
        again = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r}, idle_timeout=30, idle_counts_processes=False)
        seen["outcome"] = again.outcome
        seen["ensured"] = sb.lifetimes
        try:
            sb.set_lifetimes(idle_timeout=10 ** 9)
        except PolicyViolation as e:
            seen["policy"] = e.message
        print(json.dumps(seen))
    """)
    assert (out["made"]["idle_timeout"], out["made"]["idle_counts_processes"], out["made"]["expires_at"]) == \
        (600, True, 0)
    assert (out["set"]["idle_timeout"], out["set"]["on_idle"]) == (600, "pause") and out["from_now"]
    assert out["outcome"] == "reused"
    assert (out["ensured"]["idle_timeout"], out["ensured"]["idle_counts_processes"]) == (30, False)
    assert out["ensured"]["expires_at"] == out["set"]["expires_at"]
    assert "idle_timeout" in out["policy"] and "max_idle_timeout" in out["policy"]


def service_error_names():
    """Every D-Bus error name the service returns: its own list (src/core/error.h) and
    the sd-bus names its code uses (SD_BUS_ERROR_*, as sd-bus-protocol.h spells them)."""
    with open(os.path.join(SOURCE_ROOT, "src/core/error.h")) as f:
        header = f.read()
    names = set(re.findall(r'SBX_BUS_ERROR_PREFIX "(\w+)"', header))
    names = {"org.xagent.Sandbox1.Error." + n for n in names}
    names |= {"org.freedesktop.DBus.Error." + n for n in re.findall(r'SBX_BUS_DBUS_PREFIX "(\w+)"', header)}
    with open("/usr/include/systemd/sd-bus-protocol.h") as f:
        macros = dict(re.findall(r'#define (SD_BUS_ERROR_\w+)\s+"([\w.]+)"', f.read()))
    for dirpath, _, files in os.walk(os.path.join(SOURCE_ROOT, "src")):
        for fn in files:
            if fn.endswith(".c"):
                with open(os.path.join(dirpath, fn)) as f:
                    names |= {macros[m] for m in re.findall(r"\b(SD_BUS_ERROR_[A-Z_]+)\b", f.read()) if m in macros}
    return sorted(names)


def test_a_typed_exception_for_every_error_name(pyrun):  # noqa: F811
    names = service_error_names()
    assert "org.xagent.Sandbox1.Error.SandboxBusy" in names and "org.freedesktop.DBus.Error.UnknownObject" in names
    out = pyrun(MEMBER, f"""
        import xagent_sandbox._errors as errors
        untyped = [n for n in {names!r} if n not in errors.ERRORS]
        classes = {{n: errors.ERRORS[n].__name__ for n in {names!r} if n in errors.ERRORS}}
        exported = all(hasattr(xs, c) for c in classes.values())
        print(json.dumps([untyped, classes, exported, issubclass(NoSuchProcess, UnknownObject)]))
    """)
    untyped, classes, exported, gone_is_unknown = out
    assert untyped == [], untyped
    assert exported and gone_is_unknown
    assert classes["org.xagent.Sandbox1.Error.SandboxBusy"] == "SandboxBusy"


def test_stdin_and_output_resumed_from_the_id_alone(pyrun, cleanup):  # noqa: F811
    name = h.unique("pyproc")
    cleanup.sandbox(name)
    out = pyrun(MEMBER, f"""
        import time
        sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
        p = sb.processes.start("echo first; read x; echo got-$x; read y; echo got-$y >&2; echo last")
        pid = p.id
        del p
        out, err, reads = b"", b"", 0
        deadline = time.monotonic() + 60
        sent = 0
        while time.monotonic() < deadline:
            o = sb.processes.output(pid)             # a new Process object each time: the id alone
            out += o.stdout
            err += o.stderr
            reads += 1
            if not o.running:
                break
            if b"first" in out and sent == 0:
                sb.processes.get(pid).send_stdin("one\\n")
                sent = 1
            elif b"got-one" in out and sent == 1:
                sb.processes.get(pid).send_stdin(b"two\\n")
                sent = 2
            time.sleep(0.2)
        seen = {{"out": out.decode(), "err": err.decode(), "exit": o.exit_code, "reads": reads}}
        try:
            sb.processes.get(pid).output()
        except SandboxError as e:
            seen["after"] = [type(e).__name__, isinstance(e, NoSuchProcess), isinstance(e, UnknownObject), e.message]
        try:
            sb.processes.get(pid).kill()
        except NoSuchProcess as e:
            seen["kill"] = type(e).__name__
        print(json.dumps(seen))
    """)
    assert out["out"] == "first\ngot-one\nlast\n", out
    assert out["err"] == "got-two\n" and out["exit"] == 0 and out["reads"] > 2
    assert out["after"][:3] == ["NoSuchProcess", True, True] and out["after"][3].startswith("process ")
    assert "exit code 0" in out["after"][3]
    assert out["kill"] == "NoSuchProcess"


def test_run_waits_for_a_full_share(stack, pyrun, cleanup):  # noqa: F811
    name = h.unique("pywait")
    cleanup.sandbox(name)
    with h.daemon_config(stack, {"max_execs_per_user": 2}):
        out = pyrun(MEMBER, f"""
            import threading, time
            sb = Sandbox.ensure({name!r}, image={h.TEST_IMAGE!r})
            busy = [sb.processes.start("sleep 600") for _ in range(2)]
            seen = {{}}
            try:
                sb.run("true")
            except LimitsExceeded as e:
                seen["full"] = e.name
            threading.Timer(2, busy[0].kill).start()
            t0 = time.monotonic()
            r = sb.run("echo queued", wait=60)
            seen["run"] = [r.exit_code, r.stdout, time.monotonic() - t0 >= 1.5]
            busy[1].kill()
            print(json.dumps(seen))
        """)
    assert out["full"] == "org.freedesktop.DBus.Error.LimitsExceeded"
    assert out["run"] == [0, "queued\n", True]
