# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every host-policy rule reachable through the bus answers PolicyViolation naming what
it refused, and pre-create conflicts answer RuntimeConflict; nothing is created. The
first half runs on the built-in defaults, the second on a sandboxd.json the daemon is
restarted with."""

import os

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, ROOT

HOME = h.home_of(MEMBER)


def refused(sandboxd, cleanup, sp, error=h.POLICY_VIOLATION, user=MEMBER):
    """Create as user must fail with error; nothing may be left in Docker. Returns the
    message."""
    name = cleanup.sandbox(h.unique("refused"))
    msg = sandboxd.create(user, name, sp).error(error)
    assert h.docker_containers_labelled(name) == []
    return msg


# ---- built-in defaults: volume root %h (ro, rw), max_cpus 4, max_memory_mib 8192,
#      host_port_min 1024 ------------------------------------------------------------------

def test_volume_outside_the_roots(sandboxd, cleanup):
    srv = cleanup.path(os.path.join("/srv", h.unique("x")))
    os.makedirs(srv)
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(srv, "/w", "ro")]))
    assert srv in msg and "volume_roots" in msg, msg
    # Segment boundary: /home/sbx-member-evil is not inside /home/sbx-member.
    evil = cleanup.path(HOME + "-" + h.unique("evil"))
    os.makedirs(evil)
    os.chown(evil, h.uid_of(MEMBER), h.gid_of(MEMBER))
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(evil, "/w", "rw")]))
    assert evil in msg and "volume_roots" in msg, msg


@pytest.mark.parametrize("path", ["/etc", "/var/run/docker.sock", "/", "/proc/1", "/usr"])
def test_protected_paths(sandboxd, cleanup, path):
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(path, "/w", "ro")]))
    assert f"'{path}'" in msg and "never mounted" in msg, msg


def test_symlink_below_the_root(sandboxd, cleanup):
    ws = cleanup.workspace(MEMBER, "real")
    link = cleanup.path(os.path.join(HOME, h.unique("link")))
    os.symlink(ws, link)
    os.lchown(link, h.uid_of(MEMBER), h.gid_of(MEMBER))
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(link, "/w", "rw")]))
    assert "symbolic link" in msg and link in msg, msg
    # Also for a path through the link.
    os.mkdir(os.path.join(ws, "sub"))
    os.chown(os.path.join(ws, "sub"), h.uid_of(MEMBER), h.gid_of(MEMBER))
    refused(sandboxd, cleanup, h.spec(volumes=[(link + "/sub", "/w", "rw")]))


def test_missing_path(sandboxd, cleanup):
    missing = os.path.join(HOME, h.unique("missing"))
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(missing, "/w", "rw")]))
    assert "does not exist" in msg and missing in msg


def test_rw_on_a_path_the_caller_does_not_own(sandboxd, cleanup):
    rootdir = cleanup.workspace(MEMBER, "rootowned", mode=0o755, owner=ROOT)
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(rootdir, "/w", "rw")]))
    assert rootdir in msg and "owned by the caller" in msg, msg
    # ro on the same (readable) directory is fine.
    name = cleanup.sandbox(h.unique("ro-ok"))
    sandboxd.create(MEMBER, name, h.spec(volumes=[(rootdir, "/w", "ro")])).result
    sandboxd.delete(MEMBER, name).result


def test_ro_on_an_unreadable_path(sandboxd, cleanup):
    secret = cleanup.workspace(MEMBER, "secret", mode=0o700, owner=ROOT)
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(secret, "/w", "ro")]))
    assert secret in msg and "readable by the caller" in msg, msg


@pytest.mark.parametrize("guest", ["/proc/x", "/sys", "/dev/shm", "/"])
def test_guest_path_forbidden(sandboxd, cleanup, guest):
    ws = cleanup.workspace(MEMBER, "ws")
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(ws, guest, "rw")]))
    assert f"'{guest}'" in msg


def test_working_dir_under_proc(sandboxd, cleanup):
    assert "/proc" in refused(sandboxd, cleanup, h.spec(working_dir="/proc/self"))


def test_cpus_over_max_cpus(sandboxd, cleanup):
    assert "max_cpus" in refused(sandboxd, cleanup, h.spec(cpus=5))


def test_memory_over_max_memory_mib(sandboxd, cleanup):
    assert "max_memory_mib" in refused(sandboxd, cleanup, h.spec(memory=8193))


def test_host_port_below_host_port_min(sandboxd, cleanup):
    assert "host_port_min" in refused(sandboxd, cleanup, h.spec(ports=[(80, 80)]))
    # 0 (ephemeral) and the minimum itself are fine: covered by the lifecycle and here.
    name = cleanup.sandbox(h.unique("port"))
    port = 20000 + os.getpid() % 20000
    sandboxd.create(MEMBER, name, h.spec(ports=[(port, 80)])).result
    sandboxd.delete(MEMBER, name).result


def test_default_image_absent_is_a_backend_error(sandboxd, cleanup):
    """No image and no snapshot → the policy's default image, xagent's own
    (xprobe/xagent-sandbox:latest), which is not on this host."""
    msg = refused(sandboxd, cleanup, h.spec(image=None), error=h.ERR + "BackendError")
    assert "xprobe/xagent-sandbox:latest" in msg


# ---- pre-create conflicts -----------------------------------------------------------------

def test_duplicate_host_path_is_a_runtime_conflict(sandboxd, cleanup):
    ws = cleanup.workspace(MEMBER, "ws")
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(ws, "/a", "rw"), (ws, "/b", "rw")]),
                  error=h.RUNTIME_CONFLICT)
    assert ws in msg


def test_duplicate_guest_path_is_a_runtime_conflict(sandboxd, cleanup):
    a = cleanup.workspace(MEMBER, "a")
    b = cleanup.workspace(MEMBER, "b")
    refused(sandboxd, cleanup, h.spec(volumes=[(a, "/w", "rw"), (b, "/w", "rw")]),
            error=h.RUNTIME_CONFLICT)


def test_duplicate_guest_port_is_a_runtime_conflict(sandboxd, cleanup):
    msg = refused(sandboxd, cleanup, h.spec(ports=[(0, 80), (30001, 80)]),
                  error=h.RUNTIME_CONFLICT)
    assert "80" in msg
    refused(sandboxd, cleanup, h.spec(ports=[(30002, 80), (30002, 81)]),
            error=h.RUNTIME_CONFLICT)


def test_exact_duplicates_are_no_conflict(sandboxd, cleanup):
    ws = cleanup.workspace(MEMBER, "ws")
    name = cleanup.sandbox(h.unique("dups"))
    sp = h.spec(volumes=[(ws, "/w", "rw"), (ws, "/w", "rw")], ports=[(0, 80), (0, 80)])
    sandboxd.create(MEMBER, name, sp).result
    assert sandboxd.verify(MEMBER, name, h.spec(volumes=[(ws, "/w", "rw")],
                                                 ports=[(0, 80)])).result == ["match", []]
    sandboxd.delete(MEMBER, name).result


def test_malformed_policy_file_stops_the_start(stack, sandboxd):
    """A malformed file: the daemon refuses to start with a clear message; the caller
    is told at once (the activation fails), not after a timeout."""
    with h.daemon_config(stack, {"max_cpus": "many"}):
        mark = h.LogMark(stack)
        r = sandboxd.call(MEMBER, "ListSandboxes", timeout=30)
        r.error("org.freedesktop.DBus.Error.Spawn.ChildExited")
        assert "sandboxd.json: max_cpus" in mark.new(), mark.new()
    # Defaults again afterwards.
    sandboxd.call(MEMBER, "ListSandboxes").result


# ---- a policy file ---------------------------------------------------------------------

MAX_PER_USER = 2


@pytest.fixture(scope="module")
def policy_file(stack, sandboxd):
    """The daemon restarted on a sandboxd.json: only the test image's repository, the
    test image as default, two sandboxes per user, and "/" as a read-only root (so the
    protected paths are refused by their own rule, not for being outside every root)."""
    config = {
        "default_image": h.TEST_IMAGE,
        "allowed_images": ["xagent-sandbox-test:*", "xagent-sandbox-snapshot:*"],
        "max_sandboxes_per_user": MAX_PER_USER,
        "volume_roots": [{"path": "%h", "modes": ["ro", "rw"]},
                         {"path": "/", "modes": ["ro"]}],
        "max_cpus": 2,
        "host_port_min": 30000,
    }
    with h.daemon_config(stack, config):
        yield config


def test_config_is_read_at_start(stack, sandboxd, policy_file, cleanup):
    pid = sandboxd.ensure_running()
    assert sandboxd.pid() == pid
    refused(sandboxd, cleanup, h.spec(cpus=3))                  # max_cpus 2 now
    refused(sandboxd, cleanup, h.spec(ports=[(20000, 80)]))     # host_port_min 30000


def test_image_not_allowed(sandboxd, policy_file, cleanup):
    msg = refused(sandboxd, cleanup, h.spec(image="busybox:latest"))
    assert "busybox:latest" in msg and "allowed_images" in msg
    # Root is bound by the host policy as well.
    refused(sandboxd, cleanup, h.spec(image="busybox:latest"), user=ROOT)


def test_default_image_from_the_policy(sandboxd, policy_file, cleanup):
    name = cleanup.sandbox(h.unique("default"))
    sandboxd.create(MEMBER, name, h.spec(image=None)).result
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["image_ref"] == h.TEST_IMAGE and ins["verdict"] == "match"
    # The spec it was made from names the image: the explicit one matches as well.
    assert sandboxd.verify(MEMBER, name, h.spec()).result == ["match", []]
    sandboxd.delete(MEMBER, name).result


@pytest.mark.parametrize("path", ["/etc", "/etc/passwd", "/var/run/docker.sock", "/run/dbus",
                                  "/", "/var/lib/docker", "/var", "/usr/share"])
def test_protected_paths_even_inside_a_root(sandboxd, policy_file, cleanup, path):
    msg = refused(sandboxd, cleanup, h.spec(volumes=[(path, "/w", "ro")]))
    assert "never mounted" in msg and path in msg, msg


def test_a_wide_root_allows_what_is_not_protected(sandboxd, policy_file, cleanup):
    srv = cleanup.path(os.path.join("/srv", h.unique("data")))
    os.makedirs(srv)
    name = cleanup.sandbox(h.unique("srv"))
    sandboxd.create(MEMBER, name, h.spec(volumes=[(srv, "/data", "ro")])).result
    # rw is not among that root's modes.
    refused(sandboxd, cleanup, h.spec(volumes=[(srv, "/data", "rw")]))
    sandboxd.delete(MEMBER, name).result


def test_max_sandboxes_per_user(sandboxd, policy_file, cleanup):
    names = [cleanup.sandbox(h.unique("quota")) for _ in range(MAX_PER_USER)]
    for n in names:
        sandboxd.create(MEMBER, n, h.spec()).result
    msg = refused(sandboxd, cleanup, h.spec())
    assert "max_sandboxes_per_user" in msg
    # The quota is per user: root still may.
    other = cleanup.sandbox(h.unique("rootquota"))
    sandboxd.create(ROOT, other, h.spec()).result
    # Freeing one makes room again.
    sandboxd.delete(MEMBER, names[0]).result
    again = cleanup.sandbox(h.unique("quota"))
    sandboxd.create(MEMBER, again, h.spec()).result
    for n in names[1:] + [again]:
        sandboxd.delete(MEMBER, n).result
    sandboxd.delete(ROOT, other).result
