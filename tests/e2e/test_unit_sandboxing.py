# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon still works inside the unit's main restrictions (systemd/
xagent-sandboxd.service.in), reproduced without systemd: capability bounding set
CAP_DAC_READ_SEARCH, CAP_NET_ADMIN, CAP_SYS_ADMIN and CAP_SYS_PTRACE only, no new privileges, no network
namespace of the host (PrivateNetwork=yes), the whole file system read-only except the
state directory (ProtectSystem=strict, ProtectHome=read-only, StateDirectory=). A member
creates a sandbox with a volume below a 0700 directory of its home: the volume check walks
it with CAP_DAC_READ_SEARCH, and its egress rules are loaded in its network namespace with
the other three (here the engine's namespace files are not in the daemon's mount namespace:
the host's / is not shared, so /proc/PID/ns/net is used). Without CAP_DAC_READ_SEARCH the
same create fails; without the other three the create fails closed, naming egress: the capabilities are needed. (The system call filter
and the namespace filter are not reproduced here.)"""

import json
import os
import pwd
import shutil

import pytest

import rootbus
import stack as e2e

MEMBER = e2e.MEMBER
CAP_DAC_READ_SEARCH, CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_SYS_PTRACE = 2, 12, 21, 19
UNIT_BOUNDING = "-all,+dac_read_search,+net_admin,+sys_admin,+sys_ptrace"


def wrapped(stack, bounding):
    """The daemon's argv inside a private network and mount namespace, with / read-only
    but the state directory, and the given capability bounding set."""
    script = ('set -e; mount -o bind,remount,ro /; mount --bind "$0" "$0"; '
              'mount -o bind,remount,rw "$0"; '
              'exec /usr/bin/setpriv --no-new-privs --inh-caps=-all '
              f'--bounding-set={bounding} "$@"')
    return (["/usr/bin/unshare", "--net", "--mount", "--propagation", "slave",
             "/bin/sh", "-c", script, stack.state_dir] + stack.default_daemon_argv())


@pytest.fixture
def daemon_as(stack):
    """Restarts the daemon with the given bounding set; the default daemon afterwards."""
    def start(bounding):
        rootbus.stop_daemon(stack)
        stack.set_daemon_command(wrapped(stack, bounding))
    try:
        yield start
    finally:
        rootbus.stop_daemon(stack)
        stack.set_daemon_command(stack.default_daemon_argv())


@pytest.fixture
def private_volume():
    """HOME/unit-sandboxing-PID (0700, the member's)/work: reachable only by the member
    and by whoever may override search permission."""
    pw = pwd.getpwnam(MEMBER)
    outer = os.path.join(pw.pw_dir, f"unit-sandboxing-{os.getpid()}")
    work = os.path.join(outer, "work")
    os.makedirs(work)
    for p in (outer, work):
        os.chown(p, pw.pw_uid, pw.pw_gid)
    os.chmod(outer, 0o700)
    try:
        yield work
    finally:
        shutil.rmtree(outer)


def create(stack, name, volume):
    spec = {"image": ["s", rootbus.TEST_IMAGE], "volumes": ["a(sss)", [[volume, "/work", "rw"]]]}
    return stack.client(MEMBER, "call", rootbus.BUS_NAME, rootbus.MANAGER_PATH,
                        rootbus.MANAGER_IFACE + ".CreateSandbox", "sa{sv}a{sv}",
                        json.dumps([name, spec, {}]), "--timeout", "180", timeout=200)


def delete(stack, name):
    return stack.client(MEMBER, "call", rootbus.BUS_NAME, rootbus.MANAGER_PATH,
                        rootbus.MANAGER_IFACE + ".DeleteSandbox", "s", json.dumps([name]),
                        "--timeout", "180", timeout=200)


def status_field(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return line.split()[1]
    raise KeyError(key)


def test_daemon_works_with_the_units_restrictions(stack, daemon_as, private_volume):
    daemon_as(UNIT_BOUNDING)
    name = f"unit-hardened-{os.getpid()}"
    out = create(stack, name, private_volume)
    try:
        assert out["ok"], out
        # Its egress is in force (read back from its namespace).
        info = stack.client(MEMBER, "call", rootbus.BUS_NAME, rootbus.MANAGER_PATH,
                            rootbus.MANAGER_IFACE + ".InspectSandbox", "s", json.dumps([name]))
        assert info["ok"] and info["result"][0]["egress"]["enforced"] is True, info
        # It really ran restricted.
        caps = sum(1 << c for c in (CAP_DAC_READ_SEARCH, CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_SYS_PTRACE))
        pid = stack.name_owner_pid(rootbus.BUS_NAME)
        assert int(status_field(pid, "CapBnd"), 16) == caps
        assert int(status_field(pid, "CapEff"), 16) == caps
        assert status_field(pid, "NoNewPrivs") == "1"
        assert os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    finally:
        assert delete(stack, name)["ok"]


def test_without_dac_read_search_the_volume_check_cannot_search_the_home(
        stack, daemon_as, private_volume):
    daemon_as("-all")
    out = create(stack, f"unit-nocap-{os.getpid()}", private_volume)
    assert not out["ok"]
    assert "Permission denied" in out["message"], out


def test_without_the_egress_capabilities_a_create_fails_closed(stack, daemon_as, private_volume):
    daemon_as("-all,+dac_read_search")
    name = f"unit-noegress-{os.getpid()}"
    out = create(stack, name, private_volume)
    assert not out["ok"] and out["error"] == "org.xagent.Sandbox1.Error.RuntimeConflict", out
    assert "egress" in out["message"], out
    # nothing is left of it
    assert delete(stack, name)["ok"]
    gone = stack.client(MEMBER, "call", rootbus.BUS_NAME, rootbus.MANAGER_PATH,
                        rootbus.MANAGER_IFACE + ".InspectSandbox", "s", json.dumps([name]))
    assert not gone["ok"] and gone["error"].endswith("NoSuchSandbox"), gone
