# SPDX-License-Identifier: LGPL-2.1-or-later
"""What the README and org.xagent.Sandbox1(7) say about joining the group
xagent-sandbox, checked against the real polkitd: it reads the caller's groups from
the group database at every check (getgrouplist of the user), not from the calling
process's credentials, so a process started before `usermod -aG` — a session that
has not logged in again — is granted at once, and one removed is refused at once.

A user of its own (created and removed here), so that the shared test users'
memberships never change under other tests."""

import grp
import subprocess

import pytest

USER = "sbx-newcomer"
GROUP = "xagent-sandbox"

# Waits for the go-ahead on stdin, then asks polkit (through the daemon) as the same
# process: its credentials are those it had before the membership changed.
CALLER = r"""
import os, sys, dbus
print(" ".join(str(g) for g in os.getgroups()), flush=True)
for line in sys.stdin:
    bus = dbus.SystemBus()
    m = dbus.Interface(bus.get_object("org.xagent.Sandbox1", "/org/xagent/Sandbox1"),
                       "org.xagent.Sandbox1.Manager")
    try:
        m.DeleteSandbox("no-such-sandbox", timeout=30)  # needs manage, then nothing to do
        print("yes", flush=True)
    except dbus.exceptions.DBusException as e:
        print(e.get_dbus_name(), flush=True)
    bus.close()
"""


@pytest.fixture
def newcomer():
    subprocess.run(["userdel", "-r", USER], capture_output=True)
    subprocess.run(["useradd", "-m", USER], check=True)
    try:
        yield USER
    finally:
        subprocess.run(["userdel", "-r", USER], capture_output=True)


def test_group_membership_counts_without_a_new_login(stack, sandboxd, newcomer):
    gid = grp.getgrnam(GROUP).gr_gid
    p = stack.spawn_as(newcomer, ["/usr/bin/python3", "-c", CALLER])
    try:
        groups = p.stdout.readline().split()
        assert str(gid) not in groups, groups

        def ask():
            p.stdin.write("go\n")
            p.stdin.flush()
            return p.stdout.readline().strip()

        assert ask() == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
        subprocess.run(["usermod", "-aG", GROUP, newcomer], check=True)
        # The same process, its groups unchanged: polkit now says yes.
        assert ask() == "yes"
        subprocess.run(["gpasswd", "-d", newcomer, GROUP], check=True, capture_output=True)
        assert ask() == "org.freedesktop.DBus.Error.InteractiveAuthorizationRequired"
    finally:
        p.stdin.close()
        p.wait(timeout=30)
