# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fault-injection suite's world: the e2e stack (private bus, real polkitd, test
users), a private dockerd, the relay between them, the daemon's state dir on a small
tmpfs, callers as root and as the group member, and the checks every test ends with.
See README.md next to this file."""

import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD_ROOT = os.environ.get("SBX_BUILD_ROOT", os.path.join(SOURCE_ROOT, "build"))
sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "e2e"))

import stack as e2e  # noqa: E402
import sandbox_helpers as h  # noqa: E402
from privdocker import PrivateDocker, TEST_IMAGE  # noqa: E402
from relay import Relay  # noqa: E402

MEMBER, ROOT = e2e.MEMBER, "root"
MANAGER_PATH, MANAGER, SANDBOX = h.MANAGER_PATH, h.MANAGER, h.SANDBOX
ERR = "org.xagent.Sandbox1.Error."
BACKEND_UNAVAILABLE = ERR + "BackendUnavailable"
SANDBOX_EXISTS = ERR + "SandboxExists"
ACCESS_DENIED = "org.freedesktop.DBus.Error.AccessDenied"
# What a caller gets when the daemon dies with its call in flight.
DAEMON_GONE = ("org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Disconnected")

REPLY_LIMIT = 25.0              # the bus's default reply timeout: every reply before it
DOCKER_TIMEOUT = 6              # the daemon's docker_timeout in these tests
STATE_TMPFS_SIZE = "16m"

PREFIX = "f%x" % (os.getpid() & 0xffff)
_n = iter(range(1, 1 << 30))


def unique(tag):
    return f"{PREFIX}-{tag}-{next(_n)}"


def uid_of(user):
    return 0 if user == ROOT else h.uid_of(user)


def qualified(name, user):
    return h.qualified(name, None if user == ROOT else user)


def container_name(name, user):
    return h.container_name(name, None if user == ROOT else user)


def wait_until(pred, timeout, step=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    last = None
    while True:
        last = pred()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout}s")
        time.sleep(step)


def one_operation(requests):
    """Of requests (in order), those of the operation that made the first: on its
    worker's connection, or a POST's, which goes out on a fresh connection of its own
    (never re-sent) that the worker then keeps. Other workers' requests (an event's
    refresh, a reconciliation) are on connections of their own."""
    if not requests:
        return []
    seen, out, conn = set(), [], requests[0].conn_id
    for r in requests:
        if r.conn_id == conn or (r.method == "POST" and r.conn_id not in seen):
            out.append(r)
            conn = r.conn_id
        seen.add(r.conn_id)
    return out


# ---- callers ----------------------------------------------------------------------------

class Reply(h.Reply):
    """client.py's answer plus the time it took, measured here (submit → answer)."""

    @property
    def elapsed(self):
        return self["client_elapsed"]


class Pending:
    def __init__(self, caller, rid, what):
        self.caller, self.id, self.what = caller, rid, what
        self.t0 = time.monotonic()
        self._event = threading.Event()
        self._reply = None

    def _set(self, obj):
        obj["client_elapsed"] = time.monotonic() - self.t0
        self._reply = Reply(obj)
        self._event.set()

    def done(self):
        return self._event.is_set()

    def result(self, timeout=70):
        """The reply; asserts it came within the bus's 25 s."""
        if not self._event.wait(timeout):
            raise AssertionError(f"{self.what}: no answer within {timeout}s")
        r = self._reply
        assert r.elapsed < REPLY_LIMIT, f"{self.what}: answered after {r.elapsed:.1f}s: {dict(r)}"
        self.caller.fault.timings.append((self.what, r.elapsed, r.get("error")))
        return r


class Caller:
    """tests/fault/caller.py running as user: calls in flight at once, each on a connection
    of its own."""

    def __init__(self, fault, user):
        self.fault, self.user = fault, user
        self.proc = fault.stack.spawn_as(user, ["/usr/bin/python3", fault.stack._path("caller.py")])
        line = self.proc.stdout.readline()
        assert line and json.loads(line)["ready"], line + self.proc.stderr.read()
        self._lock = threading.Lock()
        self._pending = {}
        self._ids = iter(range(1, 1 << 62))
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self):
        for line in self.proc.stdout:
            if not line.strip():
                continue
            obj = json.loads(line)
            with self._lock:
                p = self._pending.pop(obj["id"], None)
            if p is not None:
                p._set(obj)

    def submit(self, method, sig="", args=(), path=MANAGER_PATH, iface=MANAGER,
               dest=e2e.BUS_NAME, timeout=60):
        rid = next(self._ids)
        p = Pending(self, rid, f"{self.user} {method}{tuple(args)[:1]}")
        with self._lock:
            self._pending[rid] = p
        req = {"id": rid, "dest": dest, "path": path, "iface": iface, "method": method,
               "sig": sig, "args": list(args), "timeout": timeout}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        return p

    def call(self, *a, **kw):
        return self.submit(*a, **kw).result()

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


# ---- the world --------------------------------------------------------------------------

class Fault:
    def __init__(self):
        self.tmp = None
        self.stack = None
        self.docker = None
        self.relay = None
        self.callers = {}
        self.timings = []           # (what, seconds, error) of every call
        self.made = []              # (user, name) of sandboxes tests made
        self.workspaces = []

    # layout
    @property
    def state_dir(self):
        return os.path.join(self.tmp, "state")

    @property
    def db_path(self):
        return os.path.join(self.state_dir, "sandboxd.db")

    @property
    def config_path(self):
        return os.path.join(self.tmp, "sandboxd.json")

    @property
    def relay_socket(self):
        return os.path.join(self.tmp, "relay.sock")

    def start(self):
        if os.geteuid() != 0:
            raise RuntimeError("the fault-injection suite must run as root")
        self.tmp = tempfile.mkdtemp(prefix="sbx-fault-")
        os.chmod(self.tmp, 0o755)
        try:
            os.makedirs(self.state_dir, mode=0o700)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={STATE_TMPFS_SIZE},mode=0700",
                            "sbx-fault-state", self.state_dir], check=True)
            self.write_config()
            self.docker = PrivateDocker(os.path.join(self.tmp, "docker")).start()
            self.relay = Relay(self.relay_socket, self.docker.socket).start()
            self.stack = e2e.Stack(SOURCE_ROOT, BUILD_ROOT,
                                   keep_tmp=bool(os.environ.get("SBX_E2E_KEEP_TMP"))).start()
            shutil.copy(os.path.join(HERE, "caller.py"), self.stack._path("caller.py"))
            os.chmod(self.stack._path("caller.py"), 0o644)
            self.stack.set_daemon_command(self.daemon_argv())
            for user in (ROOT, MEMBER):
                self.callers[user] = Caller(self, user)
        except BaseException:
            self.stop()
            raise
        return self

    def daemon_argv(self):
        wrapper = shlex.split(os.environ.get("SBX_E2E_DAEMON_WRAPPER", ""))
        return wrapper + [self.stack.daemon_binary,
                          "--docker-host", "unix://" + self.relay_socket,
                          "--state-dir", self.state_dir,
                          "--config", self.config_path,
                          "--idle-timeout", "0",
                          "--init-dir", os.path.join(BUILD_ROOT, "src", "init")]

    def write_config(self, **extra):
        cfg = {"docker_timeout": DOCKER_TIMEOUT}
        cfg.update(extra)
        with open(self.config_path, "w") as f:
            json.dump(cfg, f)
        os.chmod(self.config_path, 0o644)

    def stop(self):
        problems = []
        for c in self.callers.values():
            c.close()
        self.callers = {}
        if self.stack is not None:
            if self.stack.polkit_proc is not None and self.stack.polkit_proc.poll() is None:
                os.kill(self.stack.polkit_proc.pid, signal.SIGCONT)
            self.stack.stop()
        if self.relay is not None:
            self.relay.stop()
        if self.docker is not None:
            problems += self.docker.teardown()
        for p in self.workspaces:
            shutil.rmtree(p, ignore_errors=True)
        if self.tmp:
            if os.path.ismount(self.state_dir):
                subprocess.run(["umount", self.state_dir])
            if os.path.ismount(self.state_dir):
                problems.append(f"{self.state_dir} still mounted")
            else:
                shutil.rmtree(self.tmp, ignore_errors=True)
        return problems

    # ---- calls ----------------------------------------------------------------------

    def caller(self, user):
        return self.callers[user]

    def submit(self, user, method, sig="", args=(), **kw):
        return self.callers[user].submit(method, sig, args, **kw)

    def call(self, user, method, sig="", args=(), **kw):
        return self.callers[user].call(method, sig, args, **kw)

    def create(self, user, name, spec=None, options=None, **kw):
        return self.submit(user, "CreateSandbox", "sa{sv}a{sv}", [name, spec or self.spec(), options or {}], **kw)

    def stop_sandbox(self, user, name, timeout=2):
        return self.submit(user, "StopSandbox", "sa{sv}", [name, {"timeout": ["u", timeout]}])

    def start_sandbox(self, user, name):
        return self.submit(user, "StartSandbox", "s", [name])

    def delete(self, user, name):
        return self.submit(user, "DeleteSandbox", "s", [name])

    def inspect(self, user, name):
        return self.call(user, "InspectSandbox", "s", [name])

    def list_all(self):
        """ListSandboxes as root: [(name, state, owner, verdict, path)]."""
        return [tuple(x) for x in self.call(ROOT, "ListSandboxes").result[0]]

    def policy(self):
        return self.call(ROOT, "GetPolicy").result[0]

    def spec(self, volume=None):
        vols = [(volume, "/work", "rw")] if volume else None
        return h.spec(TEST_IMAGE, network_isolated=True, volumes=vols)

    def workspace(self, user=MEMBER):
        p = os.path.join(h.home_of(user), unique("ws"))
        os.mkdir(p, 0o755)
        os.chown(p, h.uid_of(user), h.gid_of(user))
        self.workspaces.append(p)
        return p

    # ---- the daemon -----------------------------------------------------------------

    def daemon_pid(self):
        return self.stack.daemon_pid()

    def kill_daemon(self, sig=signal.SIGKILL):
        """Signals the running daemon; waits until it is gone and its name free."""
        pid = self.daemon_pid()
        assert pid is not None, "no daemon runs"
        os.kill(pid, sig)
        assert e2e._wait_gone(pid, 30), f"daemon {pid} still there after {sig}"
        self.stack.wait_for_no_owner(e2e.BUS_NAME, timeout=10)
        return pid

    def activate(self):
        """A call that needs neither Docker nor polkit: the daemon (re)activates and has
        taken its name once it answers. Returns (pid, seconds)."""
        t0 = time.monotonic()
        r = self.call(ROOT, "GetPolicy")
        assert r.ok, dict(r)
        return self.daemon_pid(), time.monotonic() - t0

    def stop_daemon(self):
        if self.daemon_pid() is not None:
            self.stack.stop_daemon()

    def log_mark(self):
        return h.LogMark(self.stack)

    # ---- the store and Docker, read directly ----------------------------------------

    def _db(self, query):
        if not os.path.exists(self.db_path):
            return None
        conn = sqlite3.connect(f"file:{self.db_path}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute(query).fetchall()
        finally:
            conn.close()

    def rows(self):
        """{name: (container_id, state, owner_uid)} of table sandboxes."""
        try:
            rs = self._db("SELECT name, container_id, state, owner_uid FROM sandboxes")
        except sqlite3.OperationalError as e:
            if "no such table" in str(e):
                return {}
            raise
        return {n: (c, s, o) for n, c, s, o in (rs or [])}

    def intents(self):
        """[(name, container_name)] of table intents (None: the table does not exist)."""
        try:
            rs = self._db("SELECT name, container_name FROM intents")
        except sqlite3.OperationalError as e:
            if "no such table" in str(e):
                return None
            raise
        return rs or []

    def containers(self):
        """{id: (name, label name, running)} of the managed containers in the private
        dockerd."""
        out = {}
        for c in self.docker.containers():
            out[c["Id"]] = (c["Names"][0].lstrip("/"), c["Labels"].get("xagent.sandbox.name"),
                            c["State"] == "running")
        return out

    def containers_of(self, name, user):
        q = qualified(name, user)
        return {i: c for i, c in self.containers().items() if c[1] == q}

    def problems(self):
        """What breaks "settled": an intent left, a container never verified (.pending),
        a managed container without exactly one row of its id, a row without its
        container."""
        out = []
        if os.path.exists(self.db_path):
            intents = self.intents()
            if intents is None:
                out.append("the store has no table 'intents'")
            elif intents:
                out.append(f"intents left: {intents}")
        rows = self.rows()
        containers = self.containers()
        for cid, (cname, label, running) in containers.items():
            if cname.endswith(".pending"):
                out.append(f"never verified, still there: {cname} ({'running' if running else 'stopped'})")
            mine = [n for n, r in rows.items() if r[0] == cid]
            if len(mine) != 1:
                out.append(f"container {cname} ({label}) has {len(mine)} rows")
            elif mine[0] != label:
                out.append(f"container {cname} labelled {label} has the row of {mine[0]}")
        for n, (cid, state, owner) in rows.items():
            if cid not in containers:
                out.append(f"row {n} names container {cid[:12]}, which does not exist")
        return out

    def wait_settled(self, timeout=15):
        """Waits until problems() is empty; fails with the last problems."""
        deadline = time.monotonic() + timeout
        while True:
            p = self.problems()
            if not p:
                return time.monotonic() - (deadline - timeout)
            if time.monotonic() > deadline:
                raise AssertionError(f"not settled within {timeout}s: {p}")
            time.sleep(0.1)

    def assert_settled(self, timeout=15):
        """settled, and no sandbox listed unverified (ListSandboxes as root) once the
        first reconciliation after an activation has judged each (docs/api.md: until
        then a list answers from Docker's list and the store, unverified)."""
        deadline = time.monotonic() + timeout
        took = self.wait_settled(timeout)
        while True:
            unverified = [x for x in self.list_all() if x[3] == "unverified"]
            if not unverified:
                return took
            assert time.monotonic() < deadline, f"listed unverified: {unverified}"
            time.sleep(0.2)

    # ---- between tests --------------------------------------------------------------

    def reset(self):
        """A clean slate for the next test: Docker and polkit running, no hold, the
        daemon stopped, no container, no store (the private dockerd is this suite's
        alone, so everything in it is ours)."""
        self.relay.release_all()
        if self.stack.polkit_proc is not None and self.stack.polkit_proc.poll() is None:
            os.kill(self.stack.polkit_proc.pid, signal.SIGCONT)
        else:
            self.stack.start_polkit()
        if self.docker.frozen:
            self.docker.thaw()
        if not self.docker.running():
            self.docker.start(image=False)
        pid = self.daemon_pid()
        if pid is not None:
            try:
                self.kill_daemon(signal.SIGTERM)
            except AssertionError:
                self.kill_daemon(signal.SIGKILL)
        for c in self.docker.containers(managed_only=False):
            self.docker.remove(c["Id"])
        for f in os.listdir(self.state_dir):
            p = os.path.join(self.state_dir, f)
            if os.path.isdir(p):
                shutil.rmtree(p)
            else:
                os.unlink(p)
        self.write_config()
        for p in self.workspaces:
            shutil.rmtree(p, ignore_errors=True)
        self.workspaces = []
