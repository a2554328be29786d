# SPDX-License-Identifier: LGPL-2.1-or-later
"""The exceptions: one class per D-Bus error name the service (or the bus on its
behalf) returns, all subclasses of SandboxError. See docs/python.md."""

from gi.repository import Gio

ERROR_PREFIX = "org.xagent.Sandbox1.Error."
DBUS_PREFIX = "org.freedesktop.DBus.Error."


class SandboxError(Exception):
    """An error the service (or the bus) returned. `name` is the D-Bus error name,
    `message` the service's text, which names what was wrong."""

    dbus_name = None

    def __init__(self, message, name=None):
        super().__init__(message)
        self.message = message
        self.name = name or self.dbus_name


ERRORS = {}
NAMES = []      # the classes' names, for __all__


def _error(short, prefix, doc, python_name=None):
    name = python_name or short
    cls = type(name, (SandboxError,), {"dbus_name": prefix + short, "__doc__": doc})
    ERRORS[cls.dbus_name] = cls
    NAMES.append(name)
    globals()[name] = cls
    return cls


# The service's own (src/core/error.h).
for _short, _doc in [
        ("NoSuchSandbox", "No sandbox of that name in the caller's namespace."),
        ("SandboxExists", "The name is taken."),
        ("RuntimeConflict", "The spec conflicts, or Docker's result differs; the message names the fields."),
        ("RecoveryRequired", "The sandbox cannot be brought back as it is: delete and create it again."),
        ("NoSuchSnapshot", "No snapshot of that id of the caller's."),
        ("SnapshotExists", "The snapshot id is taken."),
        ("PolicyViolation", "Outside the host policy; the message names the rule."),
        ("BackendUnavailable", "The engine does not answer."),
        ("BackendError", "The engine refused; the message is its own."),
        ("NotRunning", "The sandbox (or the process) is not running."),
        ("TimedOut", "The operation did not finish in time."),
        ("AuthorizationTimedOut", "polkit did not answer in time: retry."),
        ("StoreUnavailable", "The service's state cannot be read: an administrator must look."),
        ("NoSuchImage", "The registry has no such image (PullImage, option pull)."),
        ("RegistryUntrusted", "The registry's certificate is from another CA, or for another name."),
        ("SandboxBusy", "Another connection holds a lease on the sandbox (sb.lease()); stop(force=True) "
                        "revokes them."),
]:
    _error(_short, ERROR_PREFIX, _doc)
# The bus's, which the service returns too.
for _short, _doc in [
        ("InvalidArgs", "A malformed argument; the message names the field."),
        ("AccessDenied", "polkit (or ownership) says no."),
        ("InteractiveAuthorizationRequired", "polkit wants to ask; pass interactive=True to let it."),
        ("LimitsExceeded", "Too much at once (the caller's share or the service's); wait= queues instead."),
        ("ServiceUnknown", "The service is not installed or cannot be activated."),
        ("NoReply", "The service did not answer in time."),
        ("Timeout", "The bus gave up waiting."),
        ("Failed", "The service failed without a more precise name."),
        ("UnknownMethod", "The service does not have this method (an older service)."),
        ("UnknownObject", "No such object on the bus: a process that is gone (NoSuchProcess), or a sandbox "
                          "object that went."),
]:
    _error(_short, DBUS_PREFIX, _doc)
# Not IOError: a star import would hide Python's own.
_error("IOError", DBUS_PREFIX, "The service's own state could not be read or written.", "ServiceIOError")


class NoSuchProcess(ERRORS[DBUS_PREFIX + "UnknownObject"]):
    """The process is gone: it ended and its output was read to its end, its sandbox
    stopped, or it was trimmed with the finished ones (its exec object is no more)."""


NAMES.append("NoSuchProcess")


class LeaseRevoked(SandboxError):
    """The lease ended before it was released: another connection's stop(force=True),
    the sandbox deleted, or the service ended."""

    dbus_name = None


NAMES.append("LeaseRevoked")


def raise_from(err):
    """A GLib.Error from Gio as the matching SandboxError."""
    name = Gio.DBusError.get_remote_error(err) if Gio.DBusError.is_remote_error(err) else None
    if name is None and err.matches(Gio.io_error_quark(), Gio.IOErrorEnum.TIMED_OUT):
        name = DBUS_PREFIX + "NoReply"
    message = err.message
    # Gio writes the remote name into the text ("GDBus.Error:NAME: message").
    if name and message.startswith(f"GDBus.Error:{name}: "):
        message = message[len(f"GDBus.Error:{name}: "):]
    cls = ERRORS.get(name, SandboxError)
    raise cls(message, name) from None
