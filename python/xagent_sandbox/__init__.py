# SPDX-License-Identifier: LGPL-2.1-or-later
"""xagent_sandbox: sandboxes for agents, through xagent-sandboxd on the system bus.

The calling process's own user is who acts: polkit, ownership and the host's limits
apply exactly as to any other client of org.xagent.Sandbox1 (no Docker socket, no new
privilege). Every D-Bus type, descriptor and timeout is handled here::

    from xagent_sandbox import Sandbox

    with Sandbox.ensure("work", image="xagent-sandbox-python:latest", ports=[(0, 8000)], labels={"team": "a"}) as sb:
        r = sb.run("python3 -c 'print(6 * 7)'", timeout=30)
        print(r.exit_code, r.stdout)                 # 0 42
        sb.files.write("/tmp/hello.txt", b"hi\\n")
        print(sb.files.read("/tmp/hello.txt"))       # b'hi\\n'
        print(sb.ports, sb.usage()["memory_bytes"])
        p = sb.processes.start("python3 -m http.server 8000")
        print(p.output().stdout_text)                # what it printed so far
        p.kill()

Errors are exceptions, one class per D-Bus error of the service (NoSuchSandbox,
PolicyViolation, SandboxBusy, …), all subclasses of SandboxError, each carrying the
D-Bus error name and the service's message. `with sb.lease():` keeps others from
stopping or deleting the sandbox meanwhile; sb.set_lifetimes() changes its idle
timeout and expiry. Sandbox.claim() gives a new sandbox under a name the service
generates, warm from a pool when the host policy keeps one (sb.outcome "warm"). The module uses Gio (python3-gi); the bus is the
system bus, or DBUS_SYSTEM_BUS_ADDRESS when set. See docs/python.md.
"""

import collections
import os
import select
import socket
import threading
import time

import gi

gi.require_version("Gio", "2.0")
gi.require_version("GLib", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

from . import _errors  # noqa: E402
from ._lease import Lease  # noqa: E402
from ._processes import Output, Process, Processes  # noqa: E402

__all__ = [
    "Sandbox", "SandboxInfo", "RunResult", "Snapshot", "SandboxError", "Process", "Output", "list_sandboxes",
    "list_snapshots", "policy", "Lease",
]

BUS_NAME = "org.xagent.Sandbox1"
MANAGER_PATH = "/org/xagent/Sandbox1"
MANAGER = "org.xagent.Sandbox1.Manager"
EXEC = "org.xagent.Sandbox1.Exec"
PROPERTIES = "org.freedesktop.DBus.Properties"

# Time given to a call on top of what it may take itself (polkit, Docker).
_MARGIN_S = 30
_DEFAULT_CALL_S = 60
# Above this many bytes a file's data goes through a descriptor (ReadFile's and
# WriteFile's option fd), never in a bus message (docs/python.md).
FD_THRESHOLD = 1 << 20
_FD_SOCKET_BUFFER = 4 << 20
# A descriptor transfer lasts at most the service's own bound on it (10 minutes).
_FD_CALL_S = 600 + _MARGIN_S


# ---- errors (_errors.py) --------------------------------------------------------------

for _name in _errors.NAMES:
    globals()[_name] = getattr(_errors, _name)
    __all__.append(_name)
SandboxError = _errors.SandboxError
_ERRORS = _errors.ERRORS
_raise = _errors.raise_from


# ---- variants --------------------------------------------------------------------------

def _v(sig, value):
    return GLib.Variant(sig, value)


def _spec(image=None, snapshot=None, working_dir=None, cpus=None, memory=None, env=None, volumes=None,
          network_isolated=None, ports=None):
    """The spec as a{sv}: only the keys given (the service fills the defaults)."""
    s = {}
    if image is not None:
        s["image"] = _v("s", image)
    if snapshot is not None:
        s["snapshot"] = _v("s", snapshot)
    if working_dir is not None:
        s["working_dir"] = _v("s", working_dir)
    if cpus is not None:
        s["cpus"] = _v("u", int(cpus))
    if memory is not None:
        s["memory"] = _v("u", int(memory))
    if env is not None:
        s["env"] = _v("a{ss}", {str(k): str(v) for k, v in env.items()})
    if volumes is not None:
        s["volumes"] = _v("a(sss)", [_volume(v) for v in volumes])
    if network_isolated is not None:
        s["network_isolated"] = _v("b", bool(network_isolated))
    if ports is not None:
        s["ports"] = _v("a(qq)", [(int(h), int(g)) for h, g in ports])
    return s


def _volume(v):
    """(host, guest[, mode]) or "HOST:GUEST[:MODE]"."""
    if isinstance(v, str):
        v = v.split(":")
    if len(v) == 2:
        v = (v[0], v[1], "rw")
    host, guest, mode = v
    return (str(host), str(guest), str(mode))


def _egress(egress):
    """The option egress a{sv} (docs/security.md, "Egress"): a mode ("default", "none",
    "allowlist"), a list of entries (an allow-list: "CIDR[:PORT[/tcp|udp]]" or
    "NAME[:PORT]", "*." first allowed), or a dict {"mode": …, "allow": […]}."""
    if isinstance(egress, str):
        egress = {"mode": egress}
    elif isinstance(egress, (list, tuple)):
        egress = {"mode": "allowlist", "allow": list(egress)}
    o = {}
    if egress.get("mode") is not None:
        o["mode"] = _v("s", str(egress["mode"]))
    if egress.get("allow") is not None:
        o["allow"] = _v("as", [str(x) for x in egress["allow"]])
    return o


def _make_options(labels=None, idle_timeout=None, expire_after=None, on_idle=None, idle_counts_processes=None,
                  egress=None, runtime=None):
    """Create/Ensure/SetSandboxLifetimes options a{sv}: labels, egress, the runtime, and
    the lifetimes only when given (the service bounds them by its policy)."""
    o = {}
    if runtime is not None:
        o["runtime"] = _v("s", str(runtime))
    if egress is not None:
        o["egress"] = _v("a{sv}", _egress(egress))
    if labels is not None:
        o["labels"] = _v("a{ss}", {str(k): str(v) for k, v in labels.items()})
    if idle_counts_processes is not None:
        o["idle_counts_processes"] = _v("b", bool(idle_counts_processes))
    if idle_timeout is not None:
        o["idle_timeout"] = _v("u", int(idle_timeout))
    if expire_after is not None:
        o["expire_after"] = _v("u", int(expire_after))
    if on_idle is not None:
        o["on_idle"] = _v("s", str(on_idle))
    return o


def _unpack(value):
    """A GLib.Variant's value with every ay as bytes (a plain unpack gives lists of ints)."""
    if isinstance(value, GLib.Variant):
        if value.get_type_string() == "ay":
            return bytes(value.get_data_as_bytes().get_data())
        if value.get_type_string() == "v":
            return _unpack(value.get_variant())
        if value.is_container() and value.get_type_string().startswith("a{"):
            return {_unpack(value.get_child_value(i).get_child_value(0)):
                    _unpack(value.get_child_value(i).get_child_value(1)) for i in range(value.n_children())}
        if value.is_container():
            items = [_unpack(value.get_child_value(i)) for i in range(value.n_children())]
            return tuple(items) if value.get_type_string().startswith("(") else items
        return value.unpack()
    return value


# ---- the connection --------------------------------------------------------------------

class _Bus:
    """One connection to the system bus (its own, so that closing it is ours to do)."""

    def __init__(self, interactive=False):
        try:
            address = Gio.dbus_address_get_for_bus_sync(Gio.BusType.SYSTEM, None)
            self.conn = Gio.DBusConnection.new_for_address_sync(
                address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
                Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
        except GLib.Error as e:
            _raise(e)
        self.interactive = interactive

    def call(self, path, iface, method, sig, args, reply_sig=None, timeout_s=_DEFAULT_CALL_S, fds=None):
        flags = Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION if self.interactive else Gio.DBusCallFlags.NONE
        if isinstance(args, GLib.Variant):
            params = args               # built already (large ay: PyGObject copies a child byte by byte)
        else:
            params = GLib.Variant(f"({sig})", tuple(args)) if sig else None
        rtype = GLib.VariantType.new(f"({reply_sig})") if reply_sig is not None else None
        try:
            if fds is None:
                reply = self.conn.call_sync(BUS_NAME, path, iface, method, params, rtype, flags,
                                            int(timeout_s * 1000), None)
            else:
                fdlist = Gio.UnixFDList.new()
                for fd in fds:
                    fdlist.append(fd)           # a copy: the caller's fds stay the caller's
                reply, out_fds = self.conn.call_with_unix_fd_list_sync(
                    BUS_NAME, path, iface, method, params, rtype, flags, int(timeout_s * 1000), fdlist, None)
                _close_fd_list(out_fds)
                _close_fd_list(fdlist)
        except GLib.Error as e:
            _raise(e)
        return [_unpack(reply.get_child_value(i)) for i in range(reply.n_children())] if reply else []

    def call_fds_out(self, path, iface, method, sig, args, timeout_s=_DEFAULT_CALL_S):
        """A call whose reply carries descriptors: they are returned (ours to close)."""
        flags = Gio.DBusCallFlags.ALLOW_INTERACTIVE_AUTHORIZATION if self.interactive else Gio.DBusCallFlags.NONE
        try:
            _, out_fds = self.conn.call_with_unix_fd_list_sync(
                BUS_NAME, path, iface, method, GLib.Variant(f"({sig})", tuple(args)), None, flags,
                int(timeout_s * 1000), None, None)
        except GLib.Error as e:
            _raise(e)
        return out_fds.steal_fds() if out_fds is not None else []

    def manager(self, method, sig="", args=(), reply_sig=None, **kw):
        return self.call(MANAGER_PATH, MANAGER, method, sig, args, reply_sig, **kw)

    def close(self):
        if self.conn is not None and not self.conn.is_closed():
            self.conn.close_sync(None)
        self.conn = None


def _close_fd_list(fdlist):
    """Gio keeps a UnixFDList's descriptors open until the list is freed, which
    Python's GC decides: close them now."""
    if fdlist is None:
        return
    for fd in fdlist.steal_fds():
        os.close(fd)


# ---- results ---------------------------------------------------------------------------

class RunResult:
    """What a run gave: exit_code (the code, 128+N after signal N, 124 when it timed
    out), stdout/stderr as text (UTF-8, undecodable bytes replaced) and as bytes,
    timed_out, truncated (output beyond the limit was dropped)."""

    def __init__(self, exit_code, stdout, stderr, timed_out=False, truncated=False):
        self.exit_code = exit_code
        self.stdout_bytes = stdout
        self.stderr_bytes = stderr
        self.timed_out = timed_out
        self.truncated = truncated

    @property
    def stdout(self):
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self):
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def ok(self):
        return self.exit_code == 0 and not self.timed_out

    def __repr__(self):
        return (f"RunResult(exit_code={self.exit_code}, stdout={self.stdout!r}, stderr={self.stderr!r}, "
                f"timed_out={self.timed_out}, truncated={self.truncated})")


SandboxInfo = collections.namedtuple("SandboxInfo", "name state owner verdict")
SandboxInfo.__doc__ = "One row of list_sandboxes() and Sandbox.find(): name, state, owner uid, verdict."


class Snapshot:
    def __init__(self, snapshot_id, source, image_id, owner, created_us):
        self.id, self.source, self.image_id, self.owner, self.created_us = (
            snapshot_id, source, image_id, owner, created_us)

    def __repr__(self):
        return f"Snapshot({self.id!r}, source={self.source!r}, image_id={self.image_id!r})"


def _argv(cmd):
    """A command as argv: a list as it is, a string through /bin/sh -c."""
    if isinstance(cmd, str):
        return ["/bin/sh", "-c", cmd]
    argv = [str(a) for a in cmd]
    if not argv:
        raise ValueError("an empty command")
    return argv


def _exec_options(env, cwd, timeout, wait=None):
    o = {}
    if wait:
        o["wait"] = _v("u", int(wait))
    if env:
        o["env"] = _v("a{ss}", {str(k): str(v) for k, v in env.items()})
    if cwd is not None:
        o["working_dir"] = _v("s", cwd)
    if timeout is not None:
        o["timeout"] = _v("u", max(1, int(-(-timeout // 1))))
    return o


# ---- files -----------------------------------------------------------------------------

class FileEntry:
    """One entry of sb.files.list(): name (relative to the listed path), kind ("file",
    "directory", "symlink", …), size, mtime (seconds, float), mode (st_mode)."""

    def __init__(self, name, kind, size, mtime_us, mode):
        self.name, self.kind, self.size, self.mtime, self.mode = name, kind, size, mtime_us / 1e6, mode

    @property
    def is_dir(self):
        return self.kind == "directory"

    def __repr__(self):
        return f"FileEntry({self.name!r}, {self.kind!r}, size={self.size}, mode={self.mode & 0o7777:#o})"


class _Feeder:
    """A socket whose peer a thread fills with data, then closes: WriteFile's fd. Once
    the call is over the peer goes, so a feed the service stopped reading ends."""

    def __init__(self, data):
        self._data = data
        self._ours, self._peer = socket.socketpair()
        self._peer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _FD_SOCKET_BUFFER)
        self.fd = self._ours.fileno()
        self._thread = threading.Thread(target=self._feed, daemon=True)

    def _feed(self):
        try:
            self._peer.sendall(self._data)
        except OSError:
            pass                # the service stopped reading: the call says why
        finally:
            self._peer.close()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        try:
            self._ours.shutdown(socket.SHUT_RDWR)   # a feed still blocked fails at once
        except OSError:
            pass
        self._ours.close()
        self._thread.join()


class _Drain:
    """A socket a thread reads to its end into out: ReadFile's fd. The end comes once
    the service and this side (close_ours(), after the call) closed their copies."""

    def __init__(self):
        self.out = bytearray()
        self._ours, self._peer = socket.socketpair()
        # Room for the service's writes: with the default (about 200 KiB) it waits on
        # this thread a quarter as often as it could write (bench/README.md).
        self._peer.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, _FD_SOCKET_BUFFER)
        self.fd = self._peer.fileno()
        self._thread = threading.Thread(target=self._drain, daemon=True)

    def _drain(self):
        try:
            while True:
                b = self._ours.recv(1 << 20)
                if not b:
                    return
                self.out += b
        except OSError:
            return

    def close_ours(self):
        if self._peer.fileno() >= 0:
            self._peer.close()

    def ended(self, timeout=None):
        """Waits up to timeout seconds (None: for ever) for the end; whether it came.
        If not, this side stops reading: the writer finds its reader gone."""
        self._thread.join(timeout)
        if self._thread.is_alive():
            try:
                self._ours.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return False
        return True

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self.close_ours()
        if exc[0] is not None:
            try:
                self._ours.shutdown(socket.SHUT_RDWR)   # a failed call: nothing more is wanted
            except OSError:
                pass
        self._thread.join()
        self._ours.close()


class FileList(list):
    """sb.files.list()'s answer: a list, and truncated (more entries were there)."""

    def __init__(self, entries, truncated):
        super().__init__(entries)
        self.truncated = bool(truncated)


class Files:
    """sb.files: files of the sandbox, read and written with its owner's rights
    (ReadFile, WriteFile, ListFiles, RemoveFile: the service's own program in the
    sandbox does them; the image needs no tar, cat or shell)."""

    def __init__(self, sandbox):
        self._sb = sandbox

    def write(self, path, data, mode=0o644, append=False, make_parents=False):
        """Writes data (bytes, or str as UTF-8) to the absolute path: the file appears
        whole or not at all (unless append). Up to FD_THRESHOLD bytes in the call's
        message (at most the policy's max_file_bytes); more through a descriptor,
        bounded by the sandbox's disk budget alone."""
        data = _bytes(data)
        options = {"mode": _v("u", int(mode))}
        if append:
            options["append"] = _v("b", True)
        if make_parents:
            options["make_parents"] = _v("b", True)
        if len(data) > FD_THRESHOLD:
            options["fd"] = _v("h", 0)
            with _Feeder(data) as feeder:
                self._sb._bus.manager("WriteFile", "ssaya{sv}", self._write_params(path, b"", options),
                                      fds=[feeder.fd], timeout_s=_FD_CALL_S)
            return
        self._sb._bus.manager("WriteFile", "ssaya{sv}", self._write_params(path, data, options))

    def _write_params(self, path, data, options):
        return GLib.Variant.new_tuple(
            GLib.Variant("s", self._sb.name), GLib.Variant("s", path),
            GLib.Variant.new_from_bytes(GLib.VariantType("ay"), GLib.Bytes.new(data), True),
            GLib.Variant("a{sv}", options))

    def read(self, path):
        """The contents of the file at the absolute path, as bytes: its first
        FD_THRESHOLD bytes in a reply, the rest (if any) through a descriptor."""
        data, info = self._sb._call("ReadFile", "sa{sv}", [path, {"length": _v("t", FD_THRESHOLD)}])
        if info.get("eof", True) or not data:
            return bytes(data)
        with _Drain() as drain:
            drain.out += data
            self._sb._call("ReadFile", "sa{sv}", [path, {"offset": _v("t", len(data)), "fd": _v("h", 0)}],
                           fds=[drain.fd], timeout_s=_FD_CALL_S)
            drain.close_ours()
        return bytes(drain.out)

    def list(self, path, depth=1, limit=1000):
        """The entries below the directory path (depth levels), as a FileList of
        FileEntry; beyond limit entries the list is cut and its truncated is True."""
        entries, truncated = self._sb._call(
            "ListFiles", "sa{sv}", [path, {"depth": _v("u", int(depth)), "limit": _v("u", int(limit))}])
        return FileList((FileEntry(*e) for e in entries), truncated)

    def remove(self, path, recursive=False):
        """Removes a file, a link or an empty directory (recursive: a whole tree)."""
        self._sb._call("RemoveFile", "sa{sv}", [path, {"recursive": _v("b", bool(recursive))}])


# ---- sandboxes -------------------------------------------------------------------------

class Sandbox:
    """One sandbox of the calling user's, by name. Made by Sandbox.ensure() or
    Sandbox.create(), or found with Sandbox(name)."""

    def __init__(self, name, interactive=False, on_exit="keep", _bus=None):
        self.name = name
        self._bus = _bus or _Bus(interactive)
        if on_exit not in ("keep", "stop", "delete"):
            raise ValueError("on_exit: keep, stop or delete")
        self._on_exit = on_exit
        self.files = Files(self)
        self.processes = Processes(self)
        self.fingerprint = None
        self.outcome = None

    # -- making one

    @classmethod
    def ensure(cls, name, image=None, snapshot=None, working_dir=None, cpus=None, memory=None, env=None,
               volumes=None, network_isolated=None, ports=None, on_mismatch="fail", stop_timeout=None,
               labels=None, idle_timeout=None, expire_after=None, on_idle=None, idle_counts_processes=None,
               interactive=False, on_exit="keep", egress=None, runtime=None):
        """Gets the sandbox `name` if it matches this spec (starting it if stopped),
        else creates it; with on_mismatch="recreate" a different one is replaced.
        sb.outcome says which: created, started, reused, recreated. labels (a dict of
        strings) are set when it is made; idle_timeout, expire_after (seconds),
        on_idle ("stop" or "pause") and idle_counts_processes (whether a running
        process nobody reads holds it from its idle stop) are its lifetimes, each sent
        only when given: one found gets them as set_lifetimes() gives them. egress (a
        mode, a list of allow entries, or {"mode", "allow"}) is what one it makes may
        reach; one it finds keeps its own (set_egress() changes it). runtime ("runc", the
        default, or one of the host policy's, e.g. "gvisor") is the one a sandbox it
        makes runs under; one found under another is a mismatch."""
        sb = cls(name, interactive, on_exit)
        options = {"on_mismatch": _v("s", on_mismatch)}
        if stop_timeout is not None:
            options["stop_timeout"] = _v("u", int(stop_timeout))
        options.update(_make_options(labels, idle_timeout, expire_after, on_idle, idle_counts_processes, egress,
                                     runtime))
        try:
            _, sb.fingerprint, sb.outcome = sb._bus.manager(
                "EnsureSandbox", "sa{sv}a{sv}",
                [name, _spec(image, snapshot, working_dir, cpus, memory, env, volumes, network_isolated, ports),
                 options], timeout_s=120 + (stop_timeout or 30))
        except BaseException:
            sb.close()
            raise
        return sb

    @classmethod
    def create(cls, name, interactive=False, on_exit="keep", labels=None, idle_timeout=None, expire_after=None,
               on_idle=None, idle_counts_processes=None, egress=None, runtime=None, **spec):
        """Creates the sandbox `name` (SandboxExists if the name is taken); labels,
        lifetimes, egress and runtime as for ensure()."""
        sb = cls(name, interactive, on_exit)
        try:
            _, sb.fingerprint = sb._bus.manager(
                "CreateSandbox", "sa{sv}a{sv}",
                [name, _spec(**spec),
                 _make_options(labels, idle_timeout, expire_after, on_idle, idle_counts_processes, egress, runtime)],
                timeout_s=120)
            sb.outcome = "created"
        except BaseException:
            sb.close()
            raise
        return sb

    @classmethod
    def claim(cls, name_prefix=None, labels=None, idle_timeout=None, expire_after=None, on_idle=None,
              idle_counts_processes=None, egress=None, interactive=False, on_exit="keep", **spec):
        """A new sandbox of this spec under a name the service generates
        (ClaimSandbox): a warm one from a pool the host policy keeps for the caller and
        this spec when there is one (sb.outcome "warm", it answers at once), else one
        created now (sb.outcome "cold"). sb.name is the generated name, beginning with
        name_prefix when given; labels and lifetimes as for create() (the lifetimes
        count from the claim); egress as for create() (docs/security.md). The
        spec keywords are create()'s. With on_exit="delete" a `with` block deletes
        it at its end, as a throwaway sandbox wants."""
        options = _make_options(labels, idle_timeout, expire_after, on_idle, idle_counts_processes, egress)
        if name_prefix is not None:
            options["name_prefix"] = _v("s", str(name_prefix))
        sb = cls(None, interactive, on_exit)
        try:
            _, sb.name, sb.fingerprint, sb.outcome = sb._bus.manager(
                "ClaimSandbox", "a{sv}a{sv}", [_spec(**spec), options], timeout_s=120)
        except BaseException:
            sb.close()
            raise
        return sb

    @staticmethod
    def find(labels=None, state=None, interactive=False):
        """The caller's sandboxes having every one of labels (a dict) and, with state
        ("running", "paused", "stopped"), in that state: a list of SandboxInfo."""
        return _find(labels, state, interactive)

    # -- the connection and the context manager

    def close(self):
        """Closes this object's bus connection (the sandbox stays)."""
        if self._bus is not None:
            self._bus.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            if self._on_exit == "delete":
                self.delete()
            elif self._on_exit == "stop":
                self.stop()
        finally:
            self.close()
        return False

    def _call(self, method, sig, args, reply_sig=None, **kw):
        return self._bus.manager(method, "s" + sig, [self.name] + list(args), reply_sig, **kw)

    # -- lifecycle

    def start(self):
        self._call("StartSandbox", "", [], timeout_s=_DEFAULT_CALL_S + _MARGIN_S)

    def stop(self, timeout=10, force=False):
        """Stops it: SIGTERM, then SIGKILL after timeout seconds. While another
        connection holds a lease: SandboxBusy, unless force (the leases are revoked,
        their holders told)."""
        options = {"timeout": _v("u", int(timeout))}
        if force:
            options["force"] = _v("b", True)
        self._call("StopSandbox", "a{sv}", [options], timeout_s=timeout + _MARGIN_S)

    def lease(self):
        """A lease on it (AcquireSandbox), a Lease: while it is held, another
        connection's stop, delete, pause or replacing ensure is SandboxBusy, and the
        sandbox is not stopped idle. `with sb.lease() as lease: …` releases it at the
        end; lease.revoked tells whether another's stop(force=True) ended it, and
        lease.check() raises LeaseRevoked then."""
        fds = self._bus.call_fds_out(MANAGER_PATH, MANAGER, "AcquireSandbox", "sa{sv}", [self.name, {}])
        return Lease(self.name, fds[0])

    def set_lifetimes(self, idle_timeout=None, expire_after=None, on_idle=None, idle_counts_processes=None):
        """Changes its lifetimes (SetSandboxLifetimes, E2B's setTimeout): idle_timeout
        (seconds, 0 = never), expire_after (seconds from now, 0 = never), on_idle
        ("stop" or "pause"), idle_counts_processes (bool); what is not given stays."""
        options = _make_options(None, idle_timeout, expire_after, on_idle, idle_counts_processes)
        if not options:
            raise ValueError("set_lifetimes: nothing to change")
        self._call("SetSandboxLifetimes", "a{sv}", [options])

    def set_egress(self, egress):
        """Changes what it may reach (SetSandboxEgress), atomically, in force before this
        returns: a mode ("default", "none", "allowlist"), a list of allow entries
        ("CIDR[:PORT[/tcp|udp]]", "NAME[:PORT]"), or {"mode": …, "allow": […]}."""
        self._call("SetSandboxEgress", "a{sv}", [_egress(egress)], timeout_s=_DEFAULT_CALL_S + _MARGIN_S)

    @property
    def egress(self):
        """Its egress as the inspection shows it: mode, allow, effective, enforced (the
        rules read back are in force), names_refused."""
        return self.inspect()["egress"]

    @property
    def lifetimes(self):
        """Its lifetimes as the service holds them: idle_timeout, on_idle, expires_at
        (µs, 0 = never), idle_counts_processes, last_activity, leases."""
        i = self.inspect()
        return {k: i.get(k) for k in ("idle_timeout", "on_idle", "expires_at", "idle_counts_processes",
                                      "last_activity", "leases")}

    def pause(self):
        """Freezes it (Docker's pause): its processes stop where they are until
        resume(); runs and files of a paused sandbox are NotRunning."""
        self._call("PauseSandbox", "", [], timeout_s=_DEFAULT_CALL_S + _MARGIN_S)

    def resume(self):
        """Thaws it: its processes go on where they were."""
        self._call("ResumeSandbox", "", [], timeout_s=_DEFAULT_CALL_S + _MARGIN_S)

    def delete(self):
        """Deletes it (nothing happens if it is gone already)."""
        self._call("DeleteSandbox", "", [], timeout_s=_DEFAULT_CALL_S + _MARGIN_S)

    def snapshot(self, snapshot_id):
        """Commits it as a snapshot; the snapshot's image id."""
        return self._call("SnapshotSandbox", "s", [snapshot_id], timeout_s=300)[0]

    def inspect(self):
        """What the engine reports now, as a dict (the service's inspection keys)."""
        return self._call("InspectSandbox", "", [])[0]

    def verify(self, **spec):
        """(verdict, mismatched_fields) of this spec against the sandbox now."""
        verdict, fields = self._call("VerifySandbox", "a{sv}", [_spec(**spec)])
        return verdict, list(fields)

    @property
    def state(self):
        """running, paused or stopped."""
        return self.inspect()["state"]

    @property
    def labels(self):
        """The labels it was made with (a dict)."""
        return self.inspect().get("sandbox_labels", {})

    @property
    def ports(self):
        """The published ports as (host address, host port bound, guest port)."""
        return [tuple(p) for p in self.inspect().get("bound_ports", [])]

    def usage(self):
        """cpu_usage_ns, memory_bytes, memory_limit_bytes, pids (and net_* where reported)."""
        return self._call("GetSandboxUsage", "", [])[0]

    # -- running commands

    def run(self, cmd, timeout=60, env=None, cwd=None, stdin=None, on_stdout=None, on_stderr=None,
            output_limit=None, wait=None):
        """Runs cmd (a list, or a string for /bin/sh -c) as the sandbox's owner and
        waits for it. Without callbacks the output is captured by the service (up
        to output_limit bytes a stream); with on_stdout/on_stderr each chunk (bytes)
        is given to them as it arrives, and collected as well. Past timeout seconds
        the process is killed: the result then has timed_out and exit_code 124.
        With wait (seconds), a full share of the caller's (max_execs_per_user, parallel
        calls) is waited for that long instead of LimitsExceeded."""
        if on_stdout is None and on_stderr is None:
            return self._run_captured(cmd, timeout, env, cwd, stdin, output_limit, wait)
        return self._run_streamed(cmd, timeout, env, cwd, stdin, on_stdout, on_stderr, output_limit, wait)

    def _run_captured(self, cmd, timeout, env, cwd, stdin, output_limit, wait):
        options = _exec_options(env, cwd, timeout, wait)
        # A run past its timeout keeps what it wrote (exit status 124).
        options["on_timeout"] = _v("s", "result")
        if stdin is not None:
            options["stdin"] = _v("ay", _bytes(stdin))
        if output_limit is not None:
            options["output_limit"] = _v("t", int(output_limit))
        started = time.monotonic()
        status, out, err, truncated = self._call("ExecSandbox", "asa{sv}", [_argv(cmd), options],
                                                 timeout_s=(timeout or 60) + (wait or 0) + _MARGIN_S)
        timed_out = status == 124 and time.monotonic() - started >= (timeout or 60)
        return RunResult(status, out, err, timed_out=timed_out, truncated=truncated)

    def _run_streamed(self, cmd, timeout, env, cwd, stdin, on_stdout, on_stderr, output_limit, wait):
        limit = output_limit if output_limit is not None else 16 << 20
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            # The service's own timeout is a backstop a little after ours.
            options = _exec_options(env, cwd, (timeout + 5) if timeout else None, wait)
            (path,) = self._call("StartExec", "asa{sv}hhh", [_argv(cmd), options, 0, 1, 2],
                                 fds=[in_r, out_w, err_w], timeout_s=_DEFAULT_CALL_S + (wait or 0) + _MARGIN_S)
        except BaseException:
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        try:
            _feed_stdin(in_w, stdin)
            in_w = -1
            deadline = time.monotonic() + timeout if timeout else None
            outs, truncated, timed_out = _pump({out_r: on_stdout, err_r: on_stderr}, limit, deadline)
            if timed_out:
                self._kill(path)
                _pump({out_r: on_stdout, err_r: on_stderr}, limit, time.monotonic() + 5, outs)
                return RunResult(124, bytes(outs[out_r]), bytes(outs[err_r]), timed_out=True,
                                 truncated=truncated)
            status = self._exit_status(path)
            return RunResult(status, bytes(outs[out_r]), bytes(outs[err_r]), truncated=truncated)
        finally:
            for fd in (in_w, out_r, err_r):
                if fd >= 0:
                    os.close(fd)

    def _kill(self, path):
        try:
            self._bus.call(path, EXEC, "Kill", "s", ["KILL"])
        except NotRunning:  # noqa: F821
            pass

    def _exit_status(self, path):
        """The exec object's ExitStatus once it has ended (it lags the streams' end)."""
        delay, give_up = 0.005, time.monotonic() + 10
        while True:
            (status,) = self._bus.call(path, PROPERTIES, "Get", "ss", [EXEC, "ExitStatus"])
            if status != -1 or time.monotonic() > give_up:
                return status
            time.sleep(delay)
            delay = min(delay * 2, 0.1)


def _bytes(data):
    return data.encode() if isinstance(data, str) else bytes(data)


def _feed_stdin(fd, data):
    """Writes stdin (if any) and closes it, so the process sees its end."""
    try:
        if data:
            view = memoryview(_bytes(data))
            while view:
                view = view[os.write(fd, view):]
    except BrokenPipeError:
        pass
    finally:
        os.close(fd)


def _pump(callbacks, limit, deadline, outs=None):
    """Reads the pipes to their ends (or the deadline), giving each chunk to its
    callback and keeping up to limit bytes of each. (outs, truncated, timed_out)."""
    outs = outs if outs is not None else {fd: bytearray() for fd in callbacks}
    open_fds = [fd for fd in callbacks]
    truncated = False
    while open_fds:
        wait = None if deadline is None else deadline - time.monotonic()
        if wait is not None and wait <= 0:
            return outs, truncated, True
        ready, _, _ = select.select(open_fds, [], [], wait)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            room = limit - len(outs[fd])
            truncated |= len(chunk) > room
            outs[fd] += chunk[:max(room, 0)]
            if callbacks[fd]:
                callbacks[fd](chunk)
    return outs, truncated, False


# ---- the service as a whole ------------------------------------------------------------

def list_sandboxes(interactive=False):
    """The caller's sandboxes as SandboxInfo (name, state, owner uid, verdict) tuples."""
    bus = _Bus(interactive)
    try:
        (rows,) = bus.manager("ListSandboxes")
        return [SandboxInfo(n, s, o, v) for n, s, o, v, _ in rows]
    finally:
        bus.close()


def _find(labels, state, interactive):
    flt = {}
    if labels is not None:
        flt["labels"] = _v("a{ss}", {str(k): str(v) for k, v in labels.items()})
    if state is not None:
        flt["state"] = _v("s", state)
    bus = _Bus(interactive)
    try:
        (rows,) = bus.manager("FindSandboxes", "a{sv}", [flt])
        return [SandboxInfo(n, s, o, v) for n, s, o, v, _ in rows]
    finally:
        bus.close()


def list_snapshots(interactive=False):
    bus = _Bus(interactive)
    try:
        (rows,) = bus.manager("ListSnapshots")
        return [Snapshot(*r) for r in rows]
    finally:
        bus.close()


def policy():
    """What the host policy allows the caller (limits, images, volume roots)."""
    bus = _Bus()
    try:
        return bus.manager("GetPolicy")[0]
    finally:
        bus.close()


def delete_snapshot(snapshot_id, interactive=False):
    bus = _Bus(interactive)
    try:
        bus.manager("DeleteSnapshot", "s", [snapshot_id])
    finally:
        bus.close()


__all__.append("delete_snapshot")


def pull_image(reference, timeout=3600, interactive=False):
    """PullImage: the engine pulls reference from a registry the host policy lists
    (verified by the service); returns the image id. A pull lasts as long as the
    image is big: timeout (seconds) bounds the call."""
    bus = _Bus(interactive)
    try:
        return bus.manager("PullImage", "sa{sv}", [reference, {}], timeout_s=timeout)[0]
    finally:
        bus.close()


__all__.append("pull_image")
