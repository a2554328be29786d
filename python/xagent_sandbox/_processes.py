# SPDX-License-Identifier: LGPL-2.1-or-later
"""sb.processes: detached processes (StartExec with detach, ListExecs, and ReadOutput
and Kill on the exec object). A process outlives the Python process that started it
and the service's restarts; its output is kept in the sandbox (the newest
max_process_output bytes of each stream, the oldest dropped) until it is read. See docs/python.md."""

import os
import re
import time

from gi.repository import GLib

BUS_NAME = "org.xagent.Sandbox1"
EXEC = "org.xagent.Sandbox1.Exec"
PROPERTIES = "org.freedesktop.DBus.Properties"
EXEC_PREFIX = "/org/xagent/Sandbox1/exec/"
# The Exited signal the service sends after the reply to the last ReadOutput.
_EXITED_WAIT_S = 2.0


class Output:
    """One read of a process's output: stdout and stderr (bytes; text as .stdout_text
    and .stderr_text, undecodable bytes replaced), next_offset (the offset to read
    from next), running, and exit_code once it ended (None while it runs, or if the
    service could not tell)."""

    def __init__(self, stdout, stderr, next_offset, running, exit_code):
        self.stdout, self.stderr = stdout, stderr
        self.next_offset, self.running, self.exit_code = next_offset, running, exit_code

    @property
    def stdout_text(self):
        return self.stdout.decode("utf-8", "replace")

    @property
    def stderr_text(self):
        return self.stderr.decode("utf-8", "replace")

    def __repr__(self):
        return (f"Output(stdout={self.stdout!r}, stderr={self.stderr!r}, next_offset={self.next_offset}, "
                f"running={self.running}, exit_code={self.exit_code})")


class Process:
    """A detached process of a sandbox: id (its exec object's last path element),
    path, command (argv[0], when listed), running and exit_code as last seen."""

    def __init__(self, sandbox, process_id, command=None, running=True, exit_code=None):
        if process_id.startswith("/"):
            process_id = process_id[len(EXEC_PREFIX):] if process_id.startswith(EXEC_PREFIX) else ""
        if not re.fullmatch(r"[A-Za-z0-9_]{1,255}", process_id):
            raise ValueError("not a process id of processes.start() or processes.list()")
        self._sb = sandbox
        self.id = process_id
        self.path = EXEC_PREFIX + process_id
        self.command = command
        self.running = running
        self.exit_code = exit_code
        self.offset = 0         # where output() goes on from
        self.finished = False   # a read returned running False: the service forgot it

    def __repr__(self):
        return f"Process({self.id!r}, command={self.command!r}, running={self.running}, exit_code={self.exit_code})"

    def _bus(self):
        return self._sb._bus

    def _read_status(self):
        from . import SandboxError
        try:
            (status,) = self._bus().call(self.path, PROPERTIES, "Get", "ss", [EXEC, "ExitStatus"])
        except SandboxError:
            return          # gone, or not the caller's: ReadOutput tells which
        if status >= 0:
            self.running, self.exit_code = False, status

    def output(self, offset=None):
        """Reads the output from offset (None: where the last read ended; 0: the oldest
        byte kept) to what was written until now, at most 4 MiB of each stream: an
        Output. Once it ended, the read that returns running False has the rest, and
        the service then forgets the process."""
        offset = self.offset if offset is None else int(offset)
        exited = self._subscribe_exited()
        try:
            self._read_status()
            out, err, next_offset, running = self._bus().call(self.path, EXEC, "ReadOutput", "t", [offset],
                                                              timeout_s=60)
            if not running and self.exit_code is None:
                exited.wait(self)
        finally:
            exited.close()
        self.offset, self.running, self.finished = next_offset, running, not running
        return Output(out, err, next_offset, running, None if running else self.exit_code)

    def wait(self, timeout=None, poll=0.2):
        """Reads the output to the end (polling every poll seconds): a RunResult with
        all that was left to read (nothing if output() already read the end). Past
        timeout seconds: TimedOut (the process runs on)."""
        from . import RunResult, TimedOut
        if self.finished:
            return RunResult(self.exit_code, b"", b"")
        deadline = None if timeout is None else time.monotonic() + timeout
        out, err = bytearray(), bytearray()
        while True:
            o = self.output()
            out += o.stdout
            err += o.stderr
            if not o.running:
                return RunResult(o.exit_code, bytes(out), bytes(err))
            if deadline is not None and time.monotonic() >= deadline:
                raise TimedOut(f"process {self.id} still runs after {timeout} s", TimedOut.dbus_name)
            time.sleep(poll)

    def kill(self, signal="KILL"):
        """Sends signal (a name such as "TERM", or a number) to it and its descendants."""
        self._bus().call(self.path, EXEC, "Kill", "s", [str(signal)])

    def _subscribe_exited(self):
        return _ExitedWatch(self._bus().conn, self.path)


class _ExitedWatch:
    """The exec object's Exited signal, dispatched on the default main context while
    wait() iterates it."""

    def __init__(self, conn, path):
        self.conn, self.status = conn, None
        self.context = GLib.MainContext.default()
        # Only the service's own (GDBus knows which unique name owns it): another
        # client could send a unicast Exited too.
        self.id = conn.signal_subscribe(BUS_NAME, EXEC, "Exited", path, None, 0, self._on_exited)

    def _on_exited(self, conn, sender, path, iface, signal, params):
        self.status = params.unpack()[0]

    def wait(self, process):
        deadline = time.monotonic() + _EXITED_WAIT_S
        while self.status is None and time.monotonic() < deadline:
            if not self.context.iteration(False):
                time.sleep(0.01)
        if self.status is not None:
            process.running, process.exit_code = False, self.status

    def close(self):
        if self.id:
            self.conn.signal_unsubscribe(self.id)
            self.id = 0
        while self.context.iteration(False):   # what the unsubscription left queued
            pass


class Processes:
    """sb.processes: start, list."""

    def __init__(self, sandbox):
        self._sb = sandbox

    def start(self, cmd, env=None, cwd=None, wait=None):
        """Starts cmd (a list, or a string for /bin/sh -c) detached, as the sandbox's
        owner, and returns its Process at once. With wait (seconds), a full share of
        processes (max_execs_per_user) is waited for instead of LimitsExceeded."""
        from . import _argv, _exec_options, _MARGIN_S
        options = _exec_options(env, cwd, None)
        options["detach"] = GLib.Variant("b", True)
        if wait:
            options["wait"] = GLib.Variant("u", int(wait))
        null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        try:
            # A detached process does not use them; the call sends copies.
            (path,) = self._sb._call("StartExec", "asa{sv}hhh", [_argv(cmd), options, 0, 1, 2],
                                     fds=[null, null, null], timeout_s=(wait or 0) + 60 + _MARGIN_S)
        finally:
            os.close(null)
        p = Process(self._sb, path)
        p.command = _argv(cmd)[0]
        return p

    def list(self):
        """The processes in the sandbox the caller may see (its own; in its own sandbox
        all), as Process objects (exit_code None while running)."""
        (rows,) = self._sb._call("ListExecs", "", [])
        return [Process(self._sb, path, command, running, None if running or status < 0 else status)
                for path, command, running, status in rows]

    def get(self, process_id):
        """The Process of an id (or exec object path) from start() or list()."""
        return Process(self._sb, process_id)
