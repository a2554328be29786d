# SPDX-License-Identifier: LGPL-2.1-or-later
"""sb.processes: detached processes (StartExec with detach, ListExecs, and ReadOutput
and Kill on the exec object). A process outlives the Python process that started it
and the service's restarts; its output is kept in the sandbox (the newest
max_process_output bytes of each stream, the oldest dropped) until it is read. Where
its output was read to is this Python process's, shared by every Process object of
the same id: a process named by its id alone goes on where the last read ended (no
byte twice, none lost). See docs/python.md."""

import os
import re
import time

from gi.repository import GLib

from ._errors import NoSuchProcess, UnknownObject  # noqa: F401 (UnknownObject: made by _errors)

BUS_NAME = "org.xagent.Sandbox1"
EXEC = "org.xagent.Sandbox1.Exec"
PROPERTIES = "org.freedesktop.DBus.Properties"
EXEC_PREFIX = "/org/xagent/Sandbox1/exec/"
# The Exited signal the service sends after the reply to the last ReadOutput.
_EXITED_WAIT_S = 2.0
# After a StreamOutput that ended: how long its ExitStatus may take to say it ended.
_ENDED_WAIT_S = 3.0

# One ReadOutput reply holds at most this of each stream; a reply that full of an
# ended process's output: the rest kept comes through StreamOutput (descriptors).
_REPLY_MAX = 4 << 20
# A stream's part of the cursor beyond position 2^32 (docs/api.md, ReadOutput).
_PART_MOD = (1 << 32) - 1

# Each process's read position, by id: [offset, finished, exit_code].
_CURSORS = {}
# Each process's stdin as written by send_stdin(): the write end of an Attach session's.
_STDIN = {}


def _gone(process, err):
    """UnknownObject on the process's object as NoSuchProcess, naming it."""
    cursor = _CURSORS.get(process.id)
    why = (f"it ended (exit code {cursor[2]}) and its output was read to its end" if cursor and cursor[1]
           else "it ended and its output was read, its sandbox stopped, or it was trimmed")
    return NoSuchProcess(f"process {process.id}: no such process ({why})", err.name)


def _advance_part(part, n):
    """A stream's part of the cursor n bytes further: the position below 2^32 as it
    is, beyond it 1 + (position - 1) mod (2^32 - 1); only position 0 is part 0."""
    if n == 0:
        return part
    before = part - 1 if part else -1           # (position - 1) modulo 2^32 - 1
    return 1 + (before + n) % _PART_MOD


def _advance(cursor, n_out, n_err):
    """ReadOutput's cursor after n_out more bytes of stdout and n_err of stderr."""
    return _advance_part(cursor >> 32, n_err) << 32 | _advance_part(cursor & 0xFFFFFFFF, n_out)


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
        cursor = _CURSORS.get(self.id)
        if cursor and cursor[1]:
            self.running, self.exit_code = False, cursor[2]

    @property
    def offset(self):
        """Where output() goes on from: where the last read of this id ended."""
        return _CURSORS.get(self.id, [0])[0]

    @property
    def finished(self):
        """A read returned running False: the service forgot it."""
        cursor = _CURSORS.get(self.id)
        return bool(cursor and cursor[1])

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
        byte kept) to what was written until now, at most 4 MiB of each stream while it
        runs: an Output. Once it ended, the read that returns running False has the
        rest (beyond 4 MiB a stream through descriptors, StreamOutput), and the service
        then forgets the process."""
        offset = self.offset if offset is None else int(offset)
        exited = self._subscribe_exited()
        try:
            self._read_status()
            ended = self.exit_code is not None
            out, err, next_offset, running = self._read_output(offset)
            if running and ended and max(len(out), len(err)) >= _REPLY_MAX:
                # It ended: what is kept no longer moves, so the cursor after the
                # stream is exact, and the read after it has the end.
                more_out, more_err, _ = self._stream(next_offset, False, None)
                tail_out, tail_err, next_offset, running = self._read_output(
                    _advance(next_offset, len(more_out), len(more_err)))
                out, err = out + more_out + tail_out, err + more_err + tail_err
            if not running and self.exit_code is None:
                exited.wait(self)
        except UnknownObject as e:
            raise _gone(self, e) from None
        finally:
            exited.close()
        self.running = running
        _CURSORS[self.id] = [next_offset, not running, None if running else self.exit_code]
        if not running:
            self._close_stdin()
        return Output(out, err, next_offset, running, None if running else self.exit_code)

    def _read_output(self, offset):
        out, err, next_offset, running = self._bus().call(self.path, EXEC, "ReadOutput", "t", [offset],
                                                          timeout_s=60)
        return bytes(out), bytes(err), next_offset, running

    def _stream(self, offset, follow, deadline):
        """StreamOutput from offset into two sockets that threads read to their end:
        (stdout, stderr, whether the end came before deadline). Past it this side
        stops reading, which ends the session (the process runs on). Where it ended
        becomes the read position."""
        from . import _Drain
        with _Drain() as out, _Drain() as err:
            self._bus().call(self.path, EXEC, "StreamOutput", "hha{sv}",
                             [0, 1, {"offset": GLib.Variant("t", offset), "follow": GLib.Variant("b", follow)}],
                             fds=[out.fd, err.fd], timeout_s=60)
            out.close_ours()
            err.close_ours()
            whole = all(d.ended(None if deadline is None else max(0.0, deadline - time.monotonic()))
                        for d in (out, err))
        _CURSORS[self.id] = [_advance(offset, len(out.out), len(err.out)), False, None]
        return bytes(out.out), bytes(err.out), whole

    def _follow(self, deadline):
        """The output to the process's end through StreamOutput (descriptors, no
        polling; docs/python.md): (stdout, stderr, the Output of the read after it),
        or None where no session can be had now (4 run on it: LimitsExceeded). Past
        deadline: TimedOut."""
        from . import LimitsExceeded, TimedOut
        try:
            out, err, whole = self._stream(self.offset, True, deadline)
        except LimitsExceeded:
            return None
        except UnknownObject as e:
            raise _gone(self, e) from None
        if not whole:
            raise TimedOut(f"process {self.id} still runs after the wait's timeout", TimedOut.dbus_name)
        # The service learns of an end by a poll about once a second.
        ended_by = time.monotonic() + _ENDED_WAIT_S
        self._read_status()
        while self.exit_code is None and time.monotonic() < ended_by:
            time.sleep(0.1)
            self._read_status()
        if self.exit_code is None:
            o = self.output()                           # cut short while it runs: go on polling
            return out + o.stdout, err + o.stderr, o
        # It ran to the process's end: the reads from where it ended only say so and let
        # the object go. What they return was passed already: the stream skips what the
        # process overwrote while it was read (past what is kept), so its count may be
        # behind.
        o = self.output()
        while o.running:
            o = self.output()
        return out, err, o

    def wait(self, timeout=None, poll=0.2):
        """Reads the output to the end: a RunResult with all that was left to read
        (nothing if output() already read the end). Through StreamOutput (descriptors:
        the bytes in no bus message) while a session can be had, else polling
        ReadOutput every poll seconds. Past timeout seconds: TimedOut (the process
        runs on)."""
        from . import RunResult, TimedOut
        if self.finished:
            return RunResult(self.exit_code, b"", b"")
        deadline = None if timeout is None else time.monotonic() + timeout
        out, err = bytearray(), bytearray()
        followed = self._follow(deadline)
        if followed and not followed[2].running:
            return RunResult(followed[2].exit_code, followed[0], followed[1])
        if followed:
            out += followed[0]
            err += followed[1]
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
        try:
            self._bus().call(self.path, EXEC, "Kill", "s", [str(signal)])
        except UnknownObject as e:
            raise _gone(self, e) from None

    def send_stdin(self, data):
        """Writes data (bytes, or str as UTF-8) to its stdin, through an Attach session
        of this Python process's, made at the first call and kept (the output it
        replays goes nowhere: read it with output()). Only who started it may."""
        fd = _STDIN.get(self.id)
        if fd is None:
            fd = _STDIN[self.id] = self._attach_stdin()
        view = memoryview(data.encode() if isinstance(data, str) else bytes(data))
        while view:
            view = view[os.write(fd, view):]

    def close_stdin(self):
        """Ends this Python process's input to it (the process's own stdin stays open
        for the next attacher, as the service keeps it)."""
        self._close_stdin()

    def _close_stdin(self):
        fd = _STDIN.pop(self.id, None)
        if fd is not None:
            os.close(fd)

    def _attach_stdin(self):
        r, w = os.pipe2(os.O_CLOEXEC)
        null = os.open("/dev/null", os.O_RDWR | os.O_CLOEXEC)
        try:
            # stdout and stderr /dev/null: the session lasts while this connection does.
            self._bus().call(self.path, EXEC, "Attach", "hhh", [0, 1, 2], fds=[r, null, null], timeout_s=60)
        except UnknownObject as e:
            os.close(w)
            raise _gone(self, e) from None
        except BaseException:
            os.close(w)
            raise
        finally:
            os.close(r)
            os.close(null)
        return w

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
        """The Process of an id (or exec object path) from start() or list(): its
        output() goes on where the last read of that id in this Python process ended."""
        return Process(self._sb, process_id)

    def output(self, process_id, offset=None):
        """get(process_id).output(offset): the output since the last read of that id."""
        return self.get(process_id).output(offset)
