# SPDX-License-Identifier: LGPL-2.1-or-later
"""Shared helpers of the daemon's end-to-end tests: calls to org.xagent.Sandbox1 as a
test user through the three clients, unique names, the Docker API as root, clean-up
of everything a test made, and daemon restarts with another configuration.

Every name a test makes starts with PREFIX (unique per run), so parallel runs on the
same dockerd never collide and leftovers are easy to find."""

import contextlib
import grp
import hashlib
import http.client
import importlib.util
import itertools
import json
import os
import pwd
import re
import shutil
import socket
import subprocess
import time

import stack as e2e

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))

BUS_NAME = e2e.BUS_NAME
MANAGER_PATH = "/org/xagent/Sandbox1"
MANAGER = "org.xagent.Sandbox1.Manager"
SANDBOX = "org.xagent.Sandbox1.Sandbox"
PROPERTIES = "org.freedesktop.DBus.Properties"
OBJECT_MANAGER = "org.freedesktop.DBus.ObjectManager"
SANDBOX_PREFIX = MANAGER_PATH + "/sandbox/"

ERR = "org.xagent.Sandbox1.Error."
NO_SUCH_SANDBOX = ERR + "NoSuchSandbox"
SANDBOX_EXISTS = ERR + "SandboxExists"
RUNTIME_CONFLICT = ERR + "RuntimeConflict"
NO_SUCH_SNAPSHOT = ERR + "NoSuchSnapshot"
SNAPSHOT_EXISTS = ERR + "SnapshotExists"
POLICY_VIOLATION = ERR + "PolicyViolation"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
INTERACTIVE = "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
LIMITS_EXCEEDED = "org.freedesktop.DBus.Error.LimitsExceeded"
DENIED = (ACCESS_DENIED, INTERACTIVE)

TEST_IMAGE = "xagent-sandbox-test:latest"
SNAPSHOT_REPOSITORY = "xagent-sandbox-snapshot"
DOCKER_SOCKET = "/var/run/docker.sock"

MEMBER, OTHER, ROOT = e2e.MEMBER, e2e.OTHER, "root"

PREFIX = "e2e-%x-%x" % (os.getpid(), int(time.time()) & 0xffffff)
_counter = itertools.count(1)


def service_id(state_dir):
    """The daemon's instance id for a state directory (its label xagent.sandbox.service)."""
    return hashlib.sha256(os.path.realpath(state_dir).encode()).hexdigest()[:16]


def unique(tag):
    """A sandbox name / snapshot id no other test and no other run uses."""
    return f"{PREFIX}-{tag}-{next(_counter)}"


def uid_of(user):
    return pwd.getpwnam(user).pw_uid


def gid_of(user):
    return pwd.getpwnam(user).pw_gid


def home_of(user):
    return pwd.getpwnam(user).pw_dir


def qualified(name, owner=None):
    """The Docker-level name of owner's (a user name or uid) name: root's is the name
    itself, anyone else's "~<uid>:<name>" (names belong to their owner)."""
    if owner is None:
        return name
    uid = owner if isinstance(owner, int) else uid_of(owner)
    return name if uid == 0 else f"~{uid}:{name}"


def plain(label):
    """A name label as its owner calls it."""
    m = re.match(r"^~[0-9]+:(.*)$", label or "", re.S)
    return m.group(1) if m else label


def object_path(name, owner=None):
    """sd_bus_path_encode() of the Docker-level name: every byte but [A-Za-z0-9] as _xx;
    "" is "_"."""
    name = qualified(name, owner)
    if not name:
        return SANDBOX_PREFIX + "_"
    return SANDBOX_PREFIX + "".join(
        chr(b) if chr(b).isascii() and chr(b).isalnum() else "_%02x" % b
        for b in name.encode())


def safe_name(name):
    """xagent's _make_safe_name (contract §3)."""
    base = re.sub(r"[^a-zA-Z0-9_.-]+", "-", name).strip("-.") or "sandbox"
    return f"{base.lower()}-{hashlib.sha1(name.encode()).hexdigest()[:10]}"


def container_name(name, owner=None):
    return "xagent_sandbox_" + safe_name(qualified(name, owner))


def snapshot_ref(snapshot_id, owner=None):
    return f"{SNAPSHOT_REPOSITORY}:{safe_name(qualified(snapshot_id, owner))}"


# ---- the spec as client.py's typed JSON -------------------------------------------------

def spec(image=TEST_IMAGE, *, snapshot=None, working_dir=None, cpus=None, memory=None,
         env=None, volumes=None, network_isolated=None, ports=None, **raw):
    """An a{sv} spec for client.py; image=None leaves the key out (the default image).
    raw adds entries as given ({"key": [SIG, VALUE]}) for malformed inputs."""
    out = {}
    if image is not None:
        out["image"] = ["s", image]
    if snapshot is not None:
        out["snapshot"] = ["s", snapshot]
    if working_dir is not None:
        out["working_dir"] = ["s", working_dir]
    if cpus is not None:
        out["cpus"] = ["u", cpus]
    if memory is not None:
        out["memory"] = ["u", memory]
    if env is not None:
        out["env"] = ["a{ss}", env]
    if volumes is not None:
        out["volumes"] = ["a(sss)", [list(v) for v in volumes]]
    if network_isolated is not None:
        out["network_isolated"] = ["b", network_isolated]
    if ports is not None:
        out["ports"] = ["a(qq)", [list(p) for p in ports]]
    out.update(raw)
    return out


def spec_json(image=TEST_IMAGE, **kw):
    """The same spec in the CLI's JSON form (xagent-sandboxctl fingerprint)."""
    out = {"image": image} if image is not None else {}
    for k, v in kw.items():
        if v is not None:
            out[k] = [list(x) for x in v] if k in ("volumes", "ports") else v
    return out


def ctl_fingerprint(stack, spec_dict):
    """The fingerprint xagent-sandboxctl computes for a JSON spec."""
    ctl = os.path.join(stack.build_root, "src", "ctl", "xagent-sandboxctl")
    r = subprocess.run([ctl, "fingerprint", "-"], input=json.dumps(spec_dict), text=True,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return r.stdout.strip()


def module(file_name, name):
    """A Python file of tests/ (outside this directory) as a module."""
    s = importlib.util.spec_from_file_location(name, os.path.join(SOURCE_ROOT, "tests", file_name))
    mod = importlib.util.module_from_spec(s)
    s.loader.exec_module(mod)
    return mod


def oracle():
    """tests/fingerprint-oracle.py as a module (its from_parts/expected_line restate
    xagent's contract in plain Python)."""
    return module("fingerprint-oracle.py", "fingerprint_oracle")


def oracle_fingerprint(**parts):
    """xagent's fingerprint as this machine's Python 3.11 computes it: SHA-256 of the
    repr() of the oracle's from_parts() tuple."""
    import hashlib
    return hashlib.sha256(repr(oracle().from_parts(**parts)).encode("utf-8")).hexdigest()


# ---- calls --------------------------------------------------------------------------------

class Reply(dict):
    """client.py's JSON: {"ok": True, "result": [...]} or {"ok": False, "error", "message"}."""

    @property
    def ok(self):
        return self["ok"]

    @property
    def result(self):
        assert self["ok"], f"call failed: {self.get('error')}: {self.get('message')}"
        return self["result"]

    def error(self, *names):
        """Asserts the call failed with one of names; returns the message."""
        assert not self["ok"], f"expected {names}, the call succeeded: {self.get('result')}"
        assert self["error"] in names, f"expected {names}, got {self['error']}: {self['message']}"
        return self["message"]


class Sandboxd:
    """Calls to the daemon as a given user (python3-dbus by default, busctl, gdbus)."""

    def __init__(self, stack):
        self.stack = stack

    # python3-dbus (client.py, run as the user) --------------------------------------------

    def call(self, user, method, sig="", args=(), interactive=False, path=MANAGER_PATH,
             iface=MANAGER, timeout=60, dest=BUS_NAME):
        argv = ["call", dest, path, f"{iface}.{method}", sig]
        payload = json.dumps(list(args))
        extra = ["--timeout", str(timeout)] + (["--interactive"] if interactive else [])
        # Large inputs go through stdin: one argv string may not exceed 128 KiB.
        if len(payload) > 32 * 1024:
            r = self.stack.run_as(user, self.stack.client_argv(*argv, "-", *extra),
                                  timeout=timeout + 30, input=payload)
        else:
            r = self.stack.run_as(user, self.stack.client_argv(*argv, payload, *extra),
                                  timeout=timeout + 30)
        assert r.returncode == 0, f"client.py as {user} failed ({r.returncode}): {r.stderr}"
        return Reply(json.loads(r.stdout))

    def create(self, user, name, sp, options=None, **kw):
        return self.call(user, "CreateSandbox", "sa{sv}a{sv}", [name, sp, options or {}], **kw)

    def get(self, user, name, **kw):
        return self.call(user, "GetSandbox", "s", [name], **kw)

    def _sandbox(self, user, method, name, sig, args, owner=None, **kw):
        """The Manager's by-name method (the caller's own namespace), or with owner the
        same method of owner's sandbox object."""
        if owner is None:
            return self.call(user, method + "Sandbox", "s" + sig, [name] + args, **kw)
        return self.call(user, method, sig, args, path=object_path(name, owner), iface=SANDBOX, **kw)

    def inspect(self, user, name, **kw):
        return self._sandbox(user, "Inspect", name, "", [], **kw)

    def verify(self, user, name, sp, **kw):
        return self._sandbox(user, "Verify", name, "a{sv}", [sp], **kw)

    def start(self, user, name, **kw):
        return self._sandbox(user, "Start", name, "", [], **kw)

    def stop(self, user, name, timeout=None, options=None, **kw):
        opts = dict(options or {})
        if timeout is not None:
            opts["timeout"] = ["u", timeout]
        return self._sandbox(user, "Stop", name, "a{sv}", [opts], **kw)

    def delete(self, user, name, **kw):
        return self._sandbox(user, "Delete", name, "", [], **kw)

    def snapshot(self, user, name, snapshot_id, **kw):
        return self._sandbox(user, "Snapshot", name, "s", [snapshot_id], **kw)

    def delete_snapshot(self, user, snapshot_id, **kw):
        return self.call(user, "DeleteSnapshot", "s", [snapshot_id], **kw)

    def list(self, user, **kw):
        """{name: (state, owner, verdict, path)} of ListSandboxes."""
        r = self.call(user, "ListSandboxes", **kw).result[0]
        return {n: (st, o, v, p) for n, st, o, v, p in r}

    def list_snapshots(self, user, **kw):
        """{id: (source, image id, owner, created µs)} of ListSnapshots."""
        r = self.call(user, "ListSnapshots", **kw).result[0]
        return {i: (src, img, o, t) for i, src, img, o, t in r}

    def managed_objects(self, user):
        r = self.call(user, "GetManagedObjects", iface=OBJECT_MANAGER)
        return r.result[0]

    def properties(self, user, name, owner=None, **kw):
        return self.call(user, "GetAll", "s", [SANDBOX], path=object_path(name, owner),
                         iface=PROPERTIES, **kw)

    def create_ok(self, user, name, sp, cleanup, **kw):
        """Creates and registers the name for clean-up; returns (path, fingerprint)."""
        cleanup.sandbox(name)
        return tuple(self.create(user, name, sp, **kw).result)

    # busctl and gdbus --------------------------------------------------------------------

    def busctl(self, user, method, sig="", *args, interactive=True, path=MANAGER_PATH,
               iface=MANAGER):
        """busctl call --json=short; (returncode, parsed data or None, stderr)."""
        argv = ["call", "--json=short",
                "--allow-interactive-authorization=" + ("yes" if interactive else "no"),
                BUS_NAME, path, iface, method]
        if sig:
            argv += [sig] + [str(a) for a in args]
        r = self.stack.busctl(user, *argv)
        data = json.loads(r.stdout)["data"] if r.returncode == 0 and r.stdout.strip() else None
        return r.returncode, data, r.stderr

    def gdbus(self, user, method, *args, interactive=False, path=MANAGER_PATH, iface=MANAGER):
        """gdbus call; (returncode, stdout, stderr). gdbus names the error in stderr as
        GDBus.Error:NAME: message."""
        argv = ["call", "--system", "--dest", BUS_NAME, "--object-path", path,
                "--method", f"{iface}.{method}"] + (["--interactive"] if interactive else [])
        r = self.stack.gdbus(user, *argv, *args)
        return r.returncode, r.stdout, r.stderr

    # the daemon itself --------------------------------------------------------------------

    def pid(self):
        return self.stack.daemon_pid()

    def ensure_running(self):
        """Activates the daemon (as an unprivileged caller would) and returns its pid."""
        self.call(OTHER, "Get", "ss", [MANAGER, "Version"], iface=PROPERTIES).result
        return self.pid()


def gdbus_error(stderr):
    """The D-Bus error name in gdbus's message, or None."""
    m = re.search(r"GDBus\.Error:([A-Za-z0-9_.]+):", stderr)
    return m.group(1) if m else None


# ---- Docker, as root, over the unix socket -----------------------------------------------

class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path, timeout=120):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def docker(method, path, body=None, timeout=120, socket_path=DOCKER_SOCKET):
    """One Docker Engine API request (to the shared dockerd unless socket_path says
    another); returns (status, parsed JSON or text or None)."""
    conn = _UnixConnection(socket_path, timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, path, json.dumps(body) if body is not None else None, headers)
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(data) if data else None
    except ValueError:
        return resp.status, data.decode(errors="replace")


def docker_containers_labelled(name):
    """Ids of the containers (any state) whose xagent.sandbox.name label is name, in
    any owner's namespace (the label "name" or "~<uid>:name")."""
    filters = json.dumps({"label": ["xagent.managed=true"]})
    from urllib.parse import quote
    status, data = docker("GET", "/containers/json?all=1&filters=" + quote(filters))
    assert status == 200, data
    return [c["Id"] for c in data
            if plain((c.get("Labels") or {}).get("xagent.sandbox.name")) == name]


def docker_remove_container(cid):
    docker("DELETE", f"/containers/{cid}?force=1&v=1")


def docker_image_exists(ref):
    from urllib.parse import quote
    status, _ = docker("GET", f"/images/{quote(ref, safe='')}/json")
    return status == 200


def docker_remove_image(ref):
    from urllib.parse import quote
    docker("DELETE", f"/images/{quote(ref, safe='')}?force=1")


def make_stop_slow(name):
    """The sandbox's first process ends on SIGTERM, so a stop is immediate. Frozen with
    SIGSTOP (by root, from the host), the SIGTERM stays pending and a stop waits out its
    timeout before Docker's SIGKILL: a slow Docker call, for tests of what must not
    wait behind one."""
    import signal
    for cid in docker_containers_labelled(name):
        os.kill(docker_inspect(cid)["State"]["Pid"], signal.SIGSTOP)


def docker_inspect(cid):
    status, data = docker("GET", f"/containers/{cid}/json")
    assert status == 200, data
    return data


# ---- clean-up ----------------------------------------------------------------------------

class Cleanup:
    """What a test made; removed at teardown through the daemon as root, then directly
    with Docker in case the daemon could not (so no test leaves anything behind)."""

    def __init__(self, bus):
        self.bus = bus
        self.sandboxes = []
        self.snapshots = []
        self.paths = []
        self.containers = []

    def sandbox(self, name):
        self.sandboxes.append(name)
        return name

    def snapshot(self, snapshot_id):
        self.snapshots.append(snapshot_id)
        return snapshot_id

    def path(self, p):
        self.paths.append(p)
        return p

    def container(self, cid):
        self.containers.append(cid)
        return cid

    def run(self):
        problems = []
        for name in self.sandboxes:
            try:
                # root's own, and the test users' through their objects
                self.bus.delete(ROOT, name)
                for user in (MEMBER, OTHER):
                    self.bus.delete(ROOT, name, owner=user)
            except Exception as e:      # the daemon may be down: Docker below
                problems.append(f"DeleteSandbox {name}: {e}")
            for cid in docker_containers_labelled(name):
                docker_remove_container(cid)
        for cid in self.containers:
            docker_remove_container(cid)
        for sid in self.snapshots:
            try:
                for user in (ROOT, MEMBER, OTHER):
                    self.bus.delete_snapshot(user, sid)
            except Exception as e:
                problems.append(f"DeleteSnapshot {sid}: {e}")
            for user in (None, MEMBER, OTHER):
                if docker_image_exists(snapshot_ref(sid, user)):
                    docker_remove_image(snapshot_ref(sid, user))
        for p in self.paths:
            if os.path.islink(p) or os.path.isfile(p):
                os.unlink(p)
            elif os.path.isdir(p):
                shutil.rmtree(p)
        return problems

    def workspace(self, user, tag, mode=0o755, owner=None):
        """A fresh directory in user's home (owned by owner, default user)."""
        p = self.path(os.path.join(home_of(user), unique(tag)))
        os.mkdir(p)
        os.chmod(p, mode)
        owner = owner or user
        os.chown(p, uid_of(owner), gid_of(owner))
        return p


# ---- the daemon's life -------------------------------------------------------------------

def write_config(stack, config):
    with open(stack.config_path, "w") as f:
        json.dump(config, f)
    os.chmod(stack.config_path, 0o644)


@contextlib.contextmanager
def daemon_config(stack, config):
    """Runs the body with the daemon started on config (sandboxd.json): the running
    daemon is stopped so that the next call activates one that reads the file; after,
    the file is removed and the daemon stopped again (built-in defaults next time)."""
    stack.stop_daemon()
    write_config(stack, config)
    try:
        yield
    finally:
        stack.stop_daemon()
        if os.path.exists(stack.config_path):
            os.unlink(stack.config_path)


@contextlib.contextmanager
def daemon_argv(stack, argv):
    """Runs the body with another activation command line; restores the default."""
    stack.stop_daemon()
    stack.set_daemon_command(argv)
    try:
        yield
    finally:
        stack.stop_daemon()
        stack.set_daemon_command(stack.default_daemon_argv())


SECOND_MEMBER = "sbx-member2"   # a second member of the group, made by the tests that need one


def second_member():
    """Makes (idempotent) and returns the second member of the group."""
    try:
        pwd.getpwnam(SECOND_MEMBER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--user-group",
                        "--groups", e2e.GROUP, SECOND_MEMBER], check=True)
    if SECOND_MEMBER not in grp.getgrnam(e2e.GROUP).gr_mem:
        subprocess.run(["gpasswd", "--add", SECOND_MEMBER, e2e.GROUP], check=True, capture_output=True)
    return SECOND_MEMBER


def running_sandbox(stack, tag, sp=None):
    """For a module fixture (`yield from`): a running sandbox of the member's, named
    unique(tag), made with spec sp (spec() by default); deleted after, nothing left."""
    bus = Sandboxd(stack)
    name = unique(tag)
    cleanup = Cleanup(bus)
    cleanup.sandbox(name)
    bus.create(MEMBER, name, sp or spec()).result
    yield name
    assert cleanup.run() == []


def command_lines(name):
    """What runs in the sandbox's container, asked of Docker (not of the daemon)."""
    [cid] = docker_containers_labelled(name)
    status, top = docker("GET", f"/containers/{cid}/top?ps_args=-eo%20pid,args")
    assert status == 200, top
    return [p[-1] for p in top["Processes"]]


def wait_until(predicate, timeout, step=0.1, what="condition"):
    """The predicate's first true value, asked every step seconds for timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = predicate()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"{what} not reached within {timeout}s")


def read_until(fd, needle, timeout=20):
    """What fd gave until it holds needle (bytes)."""
    import select
    got = b""
    deadline = time.monotonic() + timeout
    while needle not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"{needle!r} not within {timeout} s; got {got!r}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"end of file before {needle!r}; got {got!r}"
            got += chunk
    return got


class Listener:
    """client.py listen as a user: the signals org.xagent.Sandbox1 sends, collected by
    a reader thread."""

    def __init__(self, stack, user):
        import threading
        self.proc = stack.spawn_as(user, stack.client_argv("listen", BUS_NAME))
        line = self.proc.stdout.readline()
        assert line and json.loads(line) == {"ready": True}, line + self.proc.stderr.read()
        self.signals = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            if line.strip():
                self.signals.append(json.loads(line))

    def wait_for(self, predicate, timeout=10):
        """Waits until predicate(signals) holds; returns the signals."""
        wait_until(lambda: predicate(list(self.signals)), timeout, what="signals")
        return list(self.signals)

    def close(self):
        """Ends the listener; returns every signal it saw, in order."""
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
        self._thread.join(timeout=5)
        return list(self.signals)


def flood(stack, user, phases, connections=4, timeout=180):
    """client.py flood as user against the Manager: [reply, ...] in call order."""
    r = stack.run_as(user, stack.client_argv("flood", BUS_NAME, MANAGER_PATH, MANAGER,
                                             "--connections", str(connections)),
                     input=json.dumps(phases), timeout=timeout)
    assert r.returncode == 0, r.stderr
    return [Reply(x) for x in json.loads(r.stdout)]


class LogMark:
    """What dbus-daemon.log (the bus, and the daemon's stderr) gained since creation."""

    def __init__(self, stack, what="dbus-daemon"):
        self.stack, self.what = stack, what
        self.start = len(stack.log(what, tail=None))

    def new(self):
        return self.stack.log(self.what, tail=None)[self.start:]
