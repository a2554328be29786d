# SPDX-License-Identifier: LGPL-2.1-or-later
"""Bulk bytes through descriptors (docs/api.md, "Files" and the exec object): ReadFile's
and WriteFile's option fd and StreamOutput, as a member through the real bus — the bytes
arrive whole (sha256) past max_file_bytes, the disk budget refuses an oversized transfer
with nothing half-written left, a caller that closes its end early gets a typed error and
the daemon stays healthy, a descriptor of the wrong kind is refused naming fd, and the
outsider is refused."""

import hashlib
import json
import os
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER
from test_python_client import pyrun  # noqa: F401 (a fixture)

BIG = 20 << 20          # above the default max_file_bytes (16 MiB)


def call(sandboxd, method, sig, args, user=MEMBER, **kw):
    return sandboxd.call(user, method, sig, args, **kw)


def sh(sandboxd, name, script):
    out = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["sh", "-c", script], {}]).result
    assert out[0] == 0, out
    return bytes(out[1]).decode()


def sha_in(sandboxd, name, path):
    return sh(sandboxd, name, f"sha256sum {path}").split()[0]


def sha_of(path):
    d = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            d.update(block)
    return d.hexdigest()


def member_file(ws, name, data):
    p = os.path.join(ws, name)
    with open(p, "wb") as f:
        f.write(data)
    os.chown(p, h.uid_of(MEMBER), h.gid_of(MEMBER))
    return p


@pytest.fixture(scope="module")
def box(stack, docker_image):
    bus = h.Sandboxd(stack)
    name = h.unique("ffd")
    cleanup = h.Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(MEMBER, name, h.spec()).result
    yield name
    cleanup.run()


def test_descriptors_both_ways_past_max_file_bytes(sandboxd, box, cleanup):
    ws = cleanup.workspace(MEMBER, "ffd")
    data = os.urandom(BIG)
    src = member_file(ws, "src.bin", data)
    policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
    assert BIG > policy["max_file_bytes"], policy

    call(sandboxd, "WriteFile", "ssaya{sv}", [box, "/tmp/big.bin", [], {"fd": ["h", "<" + src]}]).result
    assert sha_in(sandboxd, box, "/tmp/big.bin") == hashlib.sha256(data).hexdigest()

    dst = os.path.join(ws, "dst.bin")
    got, info = call(sandboxd, "ReadFile", "ssa{sv}", [box, "/tmp/big.bin", {"fd": ["h", ">" + dst]}]).result
    assert got == [] and info["size"] == BIG and info["eof"] is True, info
    assert sha_of(dst) == hashlib.sha256(data).hexdigest()

    # offset and length through a descriptor; on the sandbox object too.
    part = os.path.join(ws, "part.bin")
    got, info = call(sandboxd, "ReadFile", "sa{sv}",
                     ["/tmp/big.bin", {"fd": ["h", ">" + part], "offset": ["t", 1000], "length": ["t", 5000]}],
                     path=h.object_path(box, MEMBER), iface=h.SANDBOX).result
    assert info["eof"] is False
    with open(part, "rb") as f:
        assert f.read() == data[1000:6000]

    # An append through a descriptor, with the mode and make_parents of a plain write.
    tail = member_file(ws, "tail.bin", b"tail\n")
    call(sandboxd, "WriteFile", "saya{sv}",
         ["/tmp/new/dir/f", [], {"fd": ["h", "<" + tail], "make_parents": ["b", True], "mode": ["u", 0o600]}],
         path=h.object_path(box, MEMBER), iface=h.SANDBOX).result
    call(sandboxd, "WriteFile", "ssaya{sv}", [box, "/tmp/new/dir/f", [], {"fd": ["h", "<" + tail],
                                                                           "append": ["b", True]}]).result
    assert sh(sandboxd, box, "stat -c %a /tmp/new/dir/f; cat /tmp/new/dir/f") == "600\ntail\ntail\n"


def test_the_disk_budget_refuses_an_oversized_descriptor_write(stack, sandboxd, cleanup):
    name = h.unique("ffdq")
    ws = cleanup.workspace(MEMBER, "ffdq")
    big = member_file(ws, "big.bin", os.urandom(3 << 20))
    small = member_file(ws, "small.bin", b"s" * 1000)
    with h.daemon_config(stack, {"max_disk_mib": 2}):
        cleanup.sandbox(name)
        sandboxd.create(MEMBER, name, h.spec()).result
        sh(sandboxd, name, "echo before > /tmp/kept")
        msg = call(sandboxd, "WriteFile", "ssaya{sv}",
                   [name, "/tmp/over", [], {"fd": ["h", "<" + big]}]).error(h.POLICY_VIOLATION)
        assert "max_disk_mib" in msg and "nothing was written" in msg, msg
        msg = call(sandboxd, "WriteFile", "ssaya{sv}",
                   [name, "/tmp/kept", [], {"fd": ["h", "<" + big], "append": ["b", True]}]).error(
                       h.POLICY_VIOLATION)
        assert "max_disk_mib" in msg, msg
        # Nothing half-written: no file, no temporary name, the append cut back.
        listing = sh(sandboxd, name, "ls -a /tmp; cat /tmp/kept")
        assert "over" not in listing and ".xagent" not in listing, listing
        assert listing.endswith("before\n"), listing
        # The budget still takes what fits.
        call(sandboxd, "WriteFile", "ssaya{sv}", [name, "/tmp/fits", [], {"fd": ["h", "<" + small]}]).result
        assert sh(sandboxd, name, "wc -c < /tmp/fits").strip() == "1000"


# A member's own client with a pipe (python3-dbus): the end the daemon does not hold is
# closed before the call, or filled slowly in non-blocking mode.
PIPE_CLIENT = r"""
import json, os, sys, time, dbus
name, how = sys.argv[1], sys.argv[2]
bus = dbus.SystemBus()
m = dbus.Interface(bus.get_object("org.xagent.Sandbox1", "/org/xagent/Sandbox1"), "org.xagent.Sandbox1.Manager")
r, w = os.pipe()
start = time.monotonic()
try:
    if how == "read-closed":
        os.close(r)
        m.ReadFile(name, "/tmp/src.bin", {"fd": dbus.types.UnixFd(w)}, timeout=120)
    elif how == "write-nonblocking":
        # A non-blocking pipe filled slowly by a writer that then closes it.
        import threading
        os.set_blocking(r, False)
        def feed():
            for _ in range(16):
                os.write(w, b"n" * 65536)
                time.sleep(0.05)
            os.close(w)
        threading.Thread(target=feed).start()
        m.WriteFile(name, "/tmp/slow", dbus.Array([], signature="y"), {"fd": dbus.types.UnixFd(r)}, timeout=120)
    print(json.dumps({"ok": True, "seconds": time.monotonic() - start}))
except dbus.DBusException as e:
    print(json.dumps({"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message(),
                      "seconds": time.monotonic() - start}))
"""


def pipe_client(stack, name, how):
    r = stack.run_as(MEMBER, ["/usr/bin/python3", "-c", PIPE_CLIENT, name, how], timeout=150)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_a_caller_closing_its_end_early(stack, sandboxd, box):
    sh(sandboxd, box, "head -c 8388608 /dev/urandom > /tmp/src.bin")
    before = sandboxd.pid()
    out = pipe_client(stack, box, "read-closed")
    assert out["ok"] is False and out["error"] == h.INVALID_ARGS, out
    assert out["message"].startswith("fd: "), out
    assert out["seconds"] < 60, out
    # The daemon is healthy and the same.
    assert sandboxd.pid() == before
    assert sha_in(sandboxd, box, "/tmp/src.bin")
    assert call(sandboxd, "ReadFile", "ssa{sv}", [box, "/tmp/src.bin", {"length": ["t", 4]}]).result[1]["size"] \
        == 8 << 20


def test_a_non_blocking_descriptor_filled_slowly(stack, sandboxd, box):
    out = pipe_client(stack, box, "write-nonblocking")
    assert out["ok"] is True, out
    assert sh(sandboxd, box, "wc -c < /tmp/slow").strip() == str(16 * 65536)


def test_bad_descriptors_are_typed(sandboxd, box, cleanup):
    ws = cleanup.workspace(MEMBER, "ffdbad")
    src = member_file(ws, "src.bin", b"data")
    sh(sandboxd, box, "echo hi > /tmp/hi")
    # ReadFile writes to fd: a read-only one is refused; WriteFile reads: a write-only one.
    msg = call(sandboxd, "ReadFile", "ssa{sv}", [box, "/tmp/hi", {"fd": ["h", "<" + src]}]).error(h.INVALID_ARGS)
    assert msg.startswith("fd: ") and "read-only" in msg, msg
    out = os.path.join(ws, "out.bin")
    msg = call(sandboxd, "WriteFile", "ssaya{sv}", [box, "/tmp/w", [], {"fd": ["h", ">" + out]}]).error(
        h.INVALID_ARGS)
    assert msg.startswith("fd: ") and "write-only" in msg, msg
    # Data and fd together; fd of another type; a path that is not a file.
    msg = call(sandboxd, "WriteFile", "ssaya{sv}", [box, "/tmp/w", [1], {"fd": ["h", "<" + src]}]).error(
        h.INVALID_ARGS)
    assert msg.startswith("data: ") and "fd" in msg, msg
    assert call(sandboxd, "ReadFile", "ssa{sv}", [box, "/tmp/hi", {"fd": ["s", "x"]}]).error(
        h.INVALID_ARGS).startswith("fd: ")
    msg = call(sandboxd, "ReadFile", "ssa{sv}", [box, "/tmp", {"fd": ["h", ">" + out]}]).error(h.INVALID_ARGS)
    assert msg.startswith("path: ") and "directory" in msg, msg
    msg = call(sandboxd, "ReadFile", "ssa{sv}", [box, "/nonexistent", {"fd": ["h", ">" + out]}]).error(
        h.INVALID_ARGS)
    assert msg.startswith("path: ") and "No such file" in msg, msg
    # Neither call left anything behind.
    assert "w" not in sh(sandboxd, box, "ls /tmp").split()


def test_the_outsider_is_refused(sandboxd, box, cleanup):
    ws = cleanup.workspace(OTHER, "ffdout", owner=OTHER)
    out = os.path.join(ws, "out.bin")
    for r in (call(sandboxd, "ReadFile", "sa{sv}", ["/tmp", {"fd": ["h", ">" + out]}], user=OTHER,
                   path=h.object_path(box, MEMBER), iface=h.SANDBOX),
              call(sandboxd, "WriteFile", "saya{sv}", ["/tmp/o", [], {"fd": ["h", "</dev/null"]}], user=OTHER,
                   path=h.object_path(box, MEMBER), iface=h.SANDBOX)):
        r.error(*h.DENIED)
    assert os.path.getsize(out) == 0


# ---- StreamOutput ------------------------------------------------------------------------

EXEC = "org.xagent.Sandbox1.Exec"

# A member's client: StreamOutput into two pipes, both read to their end (the service
# closes its copies when the output was written); prints each stream's sha256 and size.
STREAM_CLIENT = r"""
import hashlib, json, os, selectors, sys, dbus
path, opts = sys.argv[1], json.loads(sys.argv[2])
bus = dbus.SystemBus()
o = dbus.Interface(bus.get_object("org.xagent.Sandbox1", path), "org.xagent.Sandbox1.Exec")
options = dbus.Dictionary({k: dbus.UInt64(v) if k == "offset" else dbus.Boolean(v) for k, v in opts.items()},
                          signature="sv")
(ro, wo), (re_, we) = os.pipe(), os.pipe()
try:
    o.StreamOutput(dbus.types.UnixFd(wo), dbus.types.UnixFd(we), options, timeout=60)
except dbus.DBusException as e:
    print(json.dumps({"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}))
    sys.exit(0)
os.close(wo)
os.close(we)
sel, got = selectors.DefaultSelector(), {ro: hashlib.sha256(), re_: hashlib.sha256()}
size = {ro: 0, re_: 0}
for fd in got:
    sel.register(fd, selectors.EVENT_READ)
while sel.get_map():
    for key, _ in sel.select(timeout=60):
        b = os.read(key.fd, 1 << 16)
        if not b:
            sel.unregister(key.fd)
        got[key.fd].update(b)
        size[key.fd] += len(b)
print(json.dumps({"ok": True, "stdout": [got[ro].hexdigest(), size[ro]], "stderr": [got[re_].hexdigest(), size[re_]]}))
"""


def stream(stack, path, options=None, user=MEMBER):
    r = stack.run_as(user, ["/usr/bin/python3", "-c", STREAM_CLIENT, path, json.dumps(options or {})], timeout=150)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_stream_output_of_a_detached_process(stack, sandboxd, box):
    data = os.urandom(900 << 10)          # within the 1 MiB kept of each stream
    sh(sandboxd, box, "rm -f /tmp/so.bin")
    sandboxd.call(MEMBER, "WriteFile", "ssaya{sv}", [box, "/tmp/so.bin", list(data), {}]).result
    script = "sleep 1; cat /tmp/so.bin; echo done-err >&2; sleep 1; exit 3"
    path = sandboxd.call(MEMBER, "StartExec", "sasa{sv}hhh",
                         [box, ["sh", "-c", script], {"detach": ["b", True]}, "</dev/null", ">/dev/null",
                          ">/dev/null"]).result[0]
    # Following (the default): from before the output exists until the process ended.
    out = stream(stack, path)
    assert out["ok"], out
    assert out["stdout"] == [hashlib.sha256(data).hexdigest(), len(data)], out
    assert out["stderr"] == [hashlib.sha256(b"done-err\n").hexdigest(), 9], out
    # Ended: what is kept, from a cursor (stdout from byte 1000, stderr from 0), not following.
    h.wait_until(lambda: not sandboxd.call(MEMBER, "Get", "ss", [EXEC, "Running"], path=path,
                                           iface="org.freedesktop.DBus.Properties").result[0], 30)
    out = stream(stack, path, {"offset": 1000, "follow": False})
    assert out["stdout"] == [hashlib.sha256(data[1000:]).hexdigest(), len(data) - 1000], out
    # A cursor past the end, an unknown option, the outsider: typed.
    out = stream(stack, path, {"offset": len(data) + 5})
    assert out["error"] == h.INVALID_ARGS and "offset" in out["message"], out
    r = sandboxd.call(MEMBER, "StreamOutput", "hha{sv}", [">/dev/null", ">/dev/null", {"from": ["t", 0]}],
                      path=path, iface=EXEC)
    assert "from: unknown option" in r.error(h.INVALID_ARGS)
    out = stream(stack, path, user=OTHER)
    assert out["error"] == h.ACCESS_DENIED, out
    # The object is still there for ReadOutput, which reads it to its end.
    assert sandboxd.call(MEMBER, "ReadOutput", "t", [0], path=path, iface=EXEC).result[3] is False


# ---- the CLI: above its threshold (1 MiB) through descriptors ---------------------------

def test_ctl_put_and_cat_through_descriptors(stack, sandboxd, box, cleanup):
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    ws = cleanup.workspace(MEMBER, "ffdctl")
    data = os.urandom(BIG)
    src = member_file(ws, "src.bin", data)
    want = hashlib.sha256(data).hexdigest()
    script = (f"set -e; cd {ws}; {ctl} put src.bin {box}:/tmp/ctl.bin; {ctl} cat {box}:/tmp/ctl.bin > back.bin; "
              f"head -c 3000000 src.bin | {ctl} put - {box}:/tmp/piped.bin; {ctl} cat {box}:/tmp/piped.bin > piped.bin; "
              f"{ctl} cat {box}:/tmp/ctl.bin | tail -c 100 > tail.bin")
    r = stack.run_as(MEMBER, ["sh", "-c", script], timeout=300)
    assert r.returncode == 0, r.stderr
    assert sha_in(sandboxd, box, "/tmp/ctl.bin") == want
    assert sha_of(os.path.join(ws, "back.bin")) == want
    assert sha_of(os.path.join(ws, "piped.bin")) == hashlib.sha256(data[:3000000]).hexdigest()
    with open(os.path.join(ws, "tail.bin"), "rb") as f:
        assert f.read() == data[-100:]


# ---- the Python module: above FD_THRESHOLD (1 MiB) through descriptors ------------------

def test_python_files_through_descriptors(pyrun, sandboxd, box):  # noqa: F811
    out = pyrun(MEMBER, f"""
        import hashlib, random
        data = random.Random(7).randbytes({BIG})
        sb = Sandbox({box!r})
        sb.files.write("/tmp/py.bin", data)
        back = sb.files.read("/tmp/py.bin")
        small = sb.files.read("/etc/hostname")
        try:
            sb.files.write("/nonexistent/dir/x", data)
            failed = None
        except SandboxError as e:
            failed = str(e)
        print(json.dumps(dict(threshold=xs.FD_THRESHOLD, want=hashlib.sha256(data).hexdigest(),
                              back=hashlib.sha256(back).hexdigest(), n=len(back), small=len(small) > 0,
                              failed=failed)))
    """)
    assert out["threshold"] == 1 << 20
    assert out["back"] == out["want"] and out["n"] == BIG, out
    assert sha_in(sandboxd, box, "/tmp/py.bin") == out["want"]
    assert out["small"] and "No such file" in out["failed"], out
