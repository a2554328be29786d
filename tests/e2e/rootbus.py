# SPDX-License-Identifier: LGPL-2.1-or-later
"""Root's own python3-dbus connection to the stack's private bus, and a sandbox owned by
root for tests that need a live sandbox object (image xagent-sandbox-test:latest, made
by tests/setup-docker.sh)."""

import contextlib
import os
import signal
import time

import dbus

BUS_NAME = "org.xagent.Sandbox1"
MANAGER_PATH = "/org/xagent/Sandbox1"
MANAGER_IFACE = "org.xagent.Sandbox1.Manager"
SANDBOX_IFACE = "org.xagent.Sandbox1.Sandbox"
TEST_IMAGE = "xagent-sandbox-test:latest"


def stop_daemon(stack):
    """Stops the activated daemon, if it runs, and waits until it is gone: a module
    that activated it leaves the shared stack as it found it (test_stack.py expects
    activation to happen on its next call)."""
    if not stack.name_has_owner(BUS_NAME):
        return
    pid = stack.name_owner_pid(BUS_NAME)
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 20
    while stack.name_has_owner(BUS_NAME) or os.path.exists(f"/proc/{pid}"):
        if time.monotonic() > deadline:
            raise TimeoutError("the daemon did not stop within 20 s")
        time.sleep(0.05)


def connect(stack):
    return dbus.bus.BusConnection(stack.address)


def introspect(conn, path):
    obj = conn.get_object(BUS_NAME, path, introspect=False)
    return str(obj.Introspect(dbus_interface="org.freedesktop.DBus.Introspectable"))


@contextlib.contextmanager
def root_sandbox(stack, prefix):
    """Creates a sandbox as root, yields (name, object path), deletes it afterwards."""
    conn = connect(stack)
    manager = dbus.Interface(conn.get_object(BUS_NAME, MANAGER_PATH, introspect=False),
                             MANAGER_IFACE)
    name = f"{prefix}-{os.getpid()}"
    path, _ = manager.CreateSandbox(
        name, dbus.Dictionary({"image": dbus.String(TEST_IMAGE)}, signature="sv"),
        dbus.Dictionary({}, signature="sv"), timeout=180)
    try:
        yield name, str(path)
    finally:
        manager.DeleteSandbox(name, timeout=180)
        conn.close()
