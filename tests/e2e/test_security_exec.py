# SPDX-License-Identifier: LGPL-2.1-or-later
"""Exec and the service's own survival (security issue 28): a caller's descriptor is
never opened anew by root (an O_PATH one is refused, before polkit, and what it names
is never touched); one ExecSandbox reply never exceeds what dbus-daemon carries; the
service follows its callers without a bus match per exec; losing the bus ends the
daemon and everything it runs; one daemon per state directory; memory a caller made
the daemon take is given back."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import pytest

import sandbox_helpers as h
import stack as e2e
from sandbox_helpers import MEMBER, OTHER

MIB = 1024 * 1024

# A python3-dbus call as the user it runs as (argv[1], JSON): {"method", "sig", "args",
# "path", "iface"}, each argument as client.py types it, except descriptors ("h":
# ["opath", PATH] opens it O_PATH, ["r", PATH] for reading, ["w", PATH] creates it for
# writing) and options entries ["zeros", N] (an "ay" of N zero bytes). Prints client.py's
# {"ok", "error", "message"} or {"ok", "result"}, with byte arrays as their lengths.
CALL = r"""
import json, os, sys
import dbus
sys.path.insert(0, os.getcwd())
import client
a = json.loads(sys.argv[1])

def conv(sig, v):
    if sig == "h":
        how, path = v
        flags = {"opath": os.O_PATH, "r": os.O_RDONLY, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC}[how]
        return dbus.types.UnixFd(os.open(path, flags, 0o600))
    if sig == "a{sv}":
        return dbus.Dictionary({k: dbus.ByteArray(bytes(x[1])) if x[0] == "zeros" else client.typed(*x)
                                for k, x in v.items()}, signature="sv")
    return client.typed(sig, v)

msg = dbus.lowlevel.MethodCallMessage("org.xagent.Sandbox1", a.get("path", "/org/xagent/Sandbox1"),
                                      a.get("iface", "org.xagent.Sandbox1.Manager"), a["method"])
msg.append(signature=a["sig"], *[conv(s, x) for s, x in zip(dbus.Signature(a["sig"]), a["args"])])
try:
    reply = dbus.SystemBus().send_message_with_reply_and_block(msg, 120)
except dbus.exceptions.DBusException as e:
    print(json.dumps({"ok": False, "error": e.get_dbus_name(), "message": e.get_dbus_message()}))
    sys.exit(0)
out = [len(x) if isinstance(x, (bytes, dbus.ByteArray)) else client.plain(x)
       for x in reply.get_args_list(byte_arrays=True)]
print(json.dumps({"ok": True, "result": out}))
"""


def call(stack, user, method, sig, args, timeout=150, **kw):
    spec = dict(method=method, sig=sig, args=args, **kw)
    r = stack.run_as(user, ["/usr/bin/python3", "-c", CALL, json.dumps(spec)], timeout=timeout)
    assert r.returncode == 0, r.stderr
    return h.Reply(json.loads(r.stdout))


@pytest.fixture(scope="module")
def box(stack, docker_image):
    yield from h.running_sandbox(stack, "secexec")


def rss_anon_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1])
    raise AssertionError("no RssAnon")


def n_fds(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


# ---- 1. a caller's descriptor is never opened on its behalf ------------------------

@pytest.fixture
def blocked_writer(stack):
    """A FIFO of one user's (0600, in a directory everyone may search) with that user's
    writer blocked in open() until a reader comes: (make(owner) → path, writer)."""
    made = []

    def make(owner):
        d = tempfile.mkdtemp(prefix="sbx-fifo-")
        os.chmod(d, 0o711)
        path = os.path.join(d, "fifo")
        os.mkfifo(path, 0o600)
        os.chown(path, h.uid_of(owner), h.gid_of(owner))
        writer = stack.spawn_as(owner, ["/bin/sh", "-c", f"echo FIFO-SECRET-4242 > {path}"])
        made.append((d, writer))
        time.sleep(0.3)
        assert writer.poll() is None, "the writer did not block"
        return path, writer

    yield make
    for d, writer in made:
        writer.kill()
        writer.wait()
        shutil.rmtree(d)


@pytest.mark.parametrize("caller,victim,method,field", [
    (MEMBER, OTHER, "StartExec", "stdin"),
    (MEMBER, OTHER, "StartExec", "stdout"),
    (MEMBER, OTHER, "StartExec", "stderr"),
    (OTHER, MEMBER, "CopyToSandbox", "tar"),
    (OTHER, MEMBER, "CopyFromSandbox", "tar"),
])
def test_an_o_path_descriptor_is_refused_and_never_opened(stack, sandboxd, box, blocked_writer,
                                                          caller, victim, method, field):
    """An O_PATH descriptor needs only search permission on the directories: the
    service refuses it naming the argument, before polkit (the outsider's copy is
    refused as bad input, not by polkit), and the FIFO it names is never opened (the
    other user's writer stays blocked, its data unread)."""
    path, writer = blocked_writer(victim)
    fd = ["opath", path]
    if method == "StartExec":
        fds = {"stdin": ["r", "/dev/null"], "stdout": ["w", "/dev/null"], "stderr": ["w", "/dev/null"]}
        fds[field] = fd
        r = call(stack, caller, method, "sasa{sv}hhh",
                 [box, ["cat"], {}, fds["stdin"], fds["stdout"], fds["stderr"]])
    else:
        r = call(stack, caller, method, "ssha{sv}", [box, "/tmp", fd, {}])
    msg = r.error(h.INVALID_ARGS)
    assert msg.startswith(f"{field}: ") and "O_PATH" in msg, msg
    time.sleep(0.5)
    assert writer.poll() is None, "the FIFO was opened: the writer got through"


def test_plain_descriptors_still_work(stack, box, cleanup):
    """A descriptor the caller opened itself is used as it is (a copy of the caller's
    open file description)."""
    ws = cleanup.workspace(MEMBER, "plainfd")
    out = os.path.join(ws, "out.tar")
    call(stack, MEMBER, "CopyFromSandbox", "ssha{sv}", [box, "/etc/hostname", ["w", out], {}]).result
    assert os.path.getsize(out) > 0
    r = call(stack, MEMBER, "StartExec", "sasa{sv}hhh",
             [box, ["cat"], {}, ["r", "/dev/null"], ["w", "/dev/null"], ["w", "/dev/null"]])
    assert r.result[0].startswith("/org/xagent/Sandbox1/exec/")


# ---- 2 and 13. one reply stays below the bus's limit; captures are bounded ---------

def test_a_large_capture_keeps_the_service_on_the_bus(stack, sandboxd, box):
    """16 MiB on each stream with output_limit 16 MiB: the reply keeps 24 MiB of both
    together (truncated), dbus-daemon carries it, and the same daemon answers on."""
    pid = sandboxd.ensure_running()
    opts = {"output_limit": ["t", 16 * MIB]}
    cmd = "head -c 16777216 /dev/zero; head -c 16777216 /dev/zero >&2"
    r = call(stack, MEMBER, "ExecSandbox", "sasa{sv}", [box, ["sh", "-c", cmd], opts])
    status, out, err, truncated = r.result
    assert status == 0 and truncated
    assert out == 16 * MIB and out + err == 24 * MIB, (out, err)
    assert sandboxd.pid() == pid
    assert sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], opts]).result[0] == 0
    assert sandboxd.pid() == pid


def test_captures_in_flight_are_bounded_per_user(stack, sandboxd, box):
    """Each capture reserves its possible output while it runs: two with output_limit
    16 MiB fit the caller's 48 MiB, a third at the same time is LimitsExceeded."""
    opts = {"output_limit": ["t", 16 * MIB]}
    call = ["ExecSandbox", "sasa{sv}", [box, ["sleep", "3"], opts]]
    replies = h.flood(stack, MEMBER, [{"delay": 0, "calls": [call, call, call]}], connections=3)
    refused = [r for r in replies if not r.ok]
    assert [r.result[0] for r in replies if r.ok] == [0, 0]
    assert len(refused) == 1 and "output_limit" in refused[0].error(h.LIMITS_EXCEEDED)
    # and given back: the next ones fit again
    call[2][1] = ["true"]
    again = h.flood(stack, MEMBER, [{"delay": 0, "calls": [call, call]}], connections=2)
    assert all(r.ok for r in again), again


def test_memory_is_given_back(stack, sandboxd, box):
    """Refused oversized messages (an outsider's) and large captures (a member's) leave
    the daemon's anonymous memory near where it was."""
    pid = sandboxd.ensure_running()
    sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [box, ["true"], {}]).result
    before = rss_anon_kib(pid)
    for _ in range(4):
        r = call(stack, OTHER, "ExecSandbox", "sasa{sv}", [box, ["true"], {"stdin": ["zeros", 20 * MIB]}])
        assert "stdin" in r.error(h.INVALID_ARGS)
    cmd = "head -c 16777216 /dev/zero; head -c 16777216 /dev/zero >&2"
    for _ in range(2):
        call(stack, MEMBER, "ExecSandbox", "sasa{sv}",
             [box, ["sh", "-c", cmd], {"output_limit": ["t", 16 * MIB]}]).result
    after = rss_anon_kib(pid)
    assert sandboxd.pid() == pid
    assert after - before < 24 * 1024, f"RssAnon {before} KiB → {after} KiB"


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise AssertionError("no VmHWM")


def test_four_large_captures_at_once_stay_bounded(stack, sandboxd, box):
    """A member's four 16+16 MiB captures at once: two run (24 MiB each, truncated),
    two are LimitsExceeded, and the daemon's peak stays far below four full ones."""
    pid = sandboxd.ensure_running()
    before = rss_anon_kib(pid)
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")                    # the peak (VmHWM) starts again from now
    spec = dict(method="ExecSandbox", sig="sasa{sv}",
                args=[box, ["sh", "-c", "sleep 1; head -c 16777216 /dev/zero; head -c 16777216 /dev/zero >&2"],
                      {"output_limit": ["t", 16 * MIB]}])
    procs = [stack.spawn_as(MEMBER, ["/usr/bin/python3", "-c", CALL, json.dumps(spec)]) for _ in range(4)]
    replies = []
    for p in procs:
        out, err = p.communicate(timeout=150)
        assert p.returncode == 0, err
        replies.append(h.Reply(json.loads(out)))
    ok = [r.result for r in replies if r.ok]
    assert [(o[1] + o[2], o[3]) for o in ok] == [(24 * MIB, True)] * 2, ok
    assert all("output_limit" in r.error(h.LIMITS_EXCEEDED) for r in replies if not r.ok)
    peak = peak_rss_kib(pid)
    assert peak - before < 160 * 1024, f"RssAnon {before} KiB, peak {peak} KiB"
    assert sandboxd.pid() == pid


# ---- 3 and 2. a stack of its own: many execs, a second daemon, the bus gone -----------

class OwnStack(e2e.Stack):
    """A stack of its own (its bus, polkitd, daemon and state directory), whose
    dbus-daemon allows a connection 64 match rules rather than 512, so that running out
    of them takes seconds; its bus can be killed."""
    MATCH_RULES = 64

    def _prepare(self):
        super()._prepare()
        with open(self._path("bus.conf")) as f:
            text = f.read()
        self._write("bus.conf", text.replace(
            "</busconfig>", '  <limit name="max_match_rules_per_connection">%d</limit>\n</busconfig>'
            % self.MATCH_RULES))


@pytest.fixture(scope="module")
def own(stack, docker_image):
    """(its stack, calls to it, a running sandbox of the member's in it)."""
    s = OwnStack(h.SOURCE_ROOT, stack.build_root).start()
    name = h.unique("own")
    try:
        bus = h.Sandboxd(s)
        bus.create(MEMBER, name, h.spec()).result
        yield s, bus, name
    finally:
        s.stop()
        for cid in h.docker_containers_labelled(name):
            h.docker_remove_container(cid)


# As the member: N StartExec of `true` (stdio /dev/null) on one connection ("one") or
# each on a connection of its own, all kept open ("many"), waiting a moment whenever
# max_execs_per_user is reached; prints {"done", "error"} and holds the connections
# until stdin ends.
MANY_EXECS = r"""
import json, os, sys, time
import dbus
n, mode, name = int(sys.argv[1]), sys.argv[2], sys.argv[3]
address = os.environ["DBUS_SYSTEM_BUS_ADDRESS"]
null_r, null_w = os.open("/dev/null", os.O_RDONLY), os.open("/dev/null", os.O_WRONLY)
conns, done, error = [], 0, None
while done < n and error is None:
    if mode == "many" or not conns:
        conns.append(dbus.bus.BusConnection(address))
    for attempt in range(400):
        try:
            conns[-1].call_blocking("org.xagent.Sandbox1", "/org/xagent/Sandbox1", "org.xagent.Sandbox1.Manager",
                                    "StartExec", "sasa{sv}hhh",
                                    (name, ["true"], {}, dbus.types.UnixFd(null_r), dbus.types.UnixFd(null_w),
                                     dbus.types.UnixFd(null_w)), timeout=60)
            done += 1
            break
        except dbus.exceptions.DBusException as e:
            if e.get_dbus_name() != "org.freedesktop.DBus.Error.LimitsExceeded":
                error = [e.get_dbus_name(), e.get_dbus_message()]
                break
            time.sleep(0.02)
print(json.dumps({"done": done, "error": error}), flush=True)
sys.stdin.read()
"""


def exec_objects(s):
    """The exec objects the daemon has now (root introspects their parent)."""
    import dbus
    conn = dbus.bus.BusConnection(s.address)
    try:
        xml = conn.call_blocking(h.BUS_NAME, "/org/xagent/Sandbox1/exec", "org.freedesktop.DBus.Introspectable",
                                 "Introspect", "", ())
    finally:
        conn.close()
    return xml.count("<node name=")


@pytest.mark.parametrize("mode,n", [("one", 90), ("many", 90)])
def test_many_short_execs_keep_the_service_on_the_bus(own, mode, n):
    """More exec objects than the bus grants match rules (64 here, 512 by default):
    callers are followed without a match each, finished objects hold no descriptor and
    are capped per user, and the same daemon stays on the bus with its descriptors
    bounded — from one connection, and from as many connections, all open."""
    s, bus, name = own
    pid = bus.ensure_running()
    fds_before = n_fds(pid)
    p = s.spawn_as(MEMBER, ["/usr/bin/python3", "-c", MANY_EXECS, str(n), mode, name])
    try:
        line = p.stdout.readline()
        assert line, p.stderr.read()
        result = json.loads(line)
        assert result == {"done": n, "error": None}, result
        assert bus.pid() == pid, "the daemon left the bus"
        # 32 finished objects per user at most, and what still runs (max_execs_per_user)
        limit = bus.call(MEMBER, "GetPolicy").result[0]["max_execs_per_user"]
        assert exec_objects(s) <= 32 + limit
        # the workers' Docker and SQLite connections come and go; nothing per exec stays
        assert n_fds(pid) < fds_before + 100, (fds_before, n_fds(pid))
    finally:
        p.stdin.close()
        p.wait(timeout=30)
    # (once the last of them have ended: max_execs_per_user)
    h.wait_until(lambda: bus.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["true"], {}]).ok, 20,
                 what="an exec answered")
    assert bus.pid() == pid


def test_a_second_daemon_on_the_same_state_directory_refuses(own):
    """Another instance on a state directory in use stops before it reads the store or
    asks for a name — here on a bus where the name is free — once it has waited 10 s
    for the holder to exit."""
    s, bus, _ = own
    pid = bus.ensure_running()
    other_bus = subprocess.Popen(["/usr/bin/dbus-daemon", "--session", "--nofork", "--print-address"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                 start_new_session=True)
    second = None
    try:
        address = other_bus.stdout.readline().strip()
        assert address, "no session bus"
        argv = s.default_daemon_argv()
        second = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env={"PATH": e2e.SAFE_PATH, "DBUS_SYSTEM_BUS_ADDRESS": address})
        try:
            _, err = second.communicate(timeout=20)     # it waits 10 s for the lock
        except subprocess.TimeoutExpired:
            pytest.fail("a second daemon runs on the same state directory")
        assert second.returncode != 0
        assert f"in use by another xagent-sandboxd (pid {pid}): exiting" in err, err
        assert bus.pid() == pid
        # A call racing the idle exit: the next one waits for the old one to be gone.
        second = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  env={"PATH": e2e.SAFE_PATH, "DBUS_SYSTEM_BUS_ADDRESS": address})
        time.sleep(1)
        assert second.poll() is None
        s.stop_daemon()
        import dbus
        conn = dbus.bus.BusConnection(address)
        try:
            h.wait_until(lambda: conn.name_has_owner(h.BUS_NAME), 15, what="the next daemon on the bus")
        finally:
            conn.close()
        second.terminate()
        assert second.wait(timeout=15) == 0
    finally:
        if second and second.poll() is None:
            second.kill()
            second.wait()
        other_bus.kill()
        other_bus.wait()


def test_losing_the_bus_ends_the_daemon_and_what_it_runs(own):
    """dbus-daemon goes away with a streaming exec and a capture in flight: the daemon
    kills both and exits at once, rather than staying alive (and holding the state
    directory) until the capture's timeout."""
    s, bus, name = own
    pid = bus.ensure_running()
    cid = bus.inspect(MEMBER, name).result[0]["container_id"]
    streaming = s.spawn_as(MEMBER, s.client_argv("start-exec", name, json.dumps(["sleep", "309"]), "{}"))
    capture = s.spawn_as(MEMBER, s.client_argv("call", h.BUS_NAME, h.MANAGER_PATH, h.MANAGER + ".ExecSandbox",
                                               "sasa{sv}", json.dumps([name, ["sleep", "308"], {}])))

    def running():
        status, top = h.docker("GET", f"/containers/{cid}/top")
        assert status == 200, top
        return [" ".join(p) for p in top["Processes"] if "sleep 30" in " ".join(p)]

    try:
        h.wait_until(lambda: len(running()) == 2, 20, what="both processes running")
        t0 = time.monotonic()
        s.bus_proc.kill()
        s.bus_proc.wait()
        assert e2e._wait_gone(pid, 15), "the daemon outlived its bus"
        took = time.monotonic() - t0
        assert took < 5, f"the daemon took {took:.1f} s to exit"
        assert running() == []
        assert "Lost the connection to the bus" in s.log("dbus-daemon")
    finally:
        for p in (streaming, capture):
            p.kill()
            p.wait()
