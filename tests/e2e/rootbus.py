# SPDX-License-Identifier: LGPL-2.1-or-later
"""Root's own python3-dbus connection to the stack's private bus, and a sandbox owned by
root for tests that need a live sandbox object (image xagent-sandbox-test:latest, made
by tests/setup-docker.sh)."""

import contextlib
import os

import dbus

BUS_NAME = "org.xagent.Sandbox1"
MANAGER_PATH = "/org/xagent/Sandbox1"
MANAGER_IFACE = "org.xagent.Sandbox1.Manager"
SANDBOX_IFACE = "org.xagent.Sandbox1.Sandbox"
TEST_IMAGE = "xagent-sandbox-test:latest"


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
