# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a sandbox mounts is what was checked (docs/security.md), tried as an
unprivileged member of the group would attack it: swapping a checked directory for a
symlink while the sandbox is stopped, racing creates with a rename-exchange loop, nesting
guest paths and working directories in volumes. Everything is judged from the host: the
mounts of each running sandbox's first process, and the files that appeared."""

import json
import os
import subprocess
import time

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER, OTHER, ROOT

HOME = h.home_of(MEMBER)

# Runs as the attacker: exchanges two names as fast as it can until killed.
SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
RENAME_EXCHANGE = 2
a, b = (os.fsencode(p) for p in sys.argv[1:3])
print("ready", flush=True)
while True:
    if libc.renameat2(-100, a, -100, b, RENAME_EXCHANGE) != 0:
        sys.exit(ctypes.get_errno())
"""


def mount_roots(cid):
    """{guest path: (device, root within the file system, read-only)} of the container's
    first process, as the host sees them."""
    pid = h.docker_inspect(cid)["State"]["Pid"]
    out = {}
    with open(f"/proc/{pid}/mountinfo") as f:
        for line in f:
            fields = line.split()
            out[fields[4]] = (fields[2], fields[3], "ro" in fields[5].split(","))
    return out


def root_owned_below(path):
    """Every entry below path owned by root (runc creates as root)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(path):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if os.lstat(p).st_uid == 0:
                found.append(p)
    return found


def owned_dir(cleanup, parent, tag, user=MEMBER, mode=0o755):
    p = cleanup.path(os.path.join(parent, h.unique(tag)))
    os.mkdir(p, mode)
    os.chmod(p, mode)
    os.chown(p, h.uid_of(user), h.gid_of(user))
    return p


@pytest.fixture
def victim(cleanup):
    """Another user's directory behind their 0700 home: a readable canary the member
    must never see mounted."""
    os.chmod(h.home_of(OTHER), 0o700)
    d = owned_dir(cleanup, h.home_of(OTHER), "private", user=OTHER)
    with open(os.path.join(d, "canary"), "w") as f:
        f.write("secret of " + OTHER)
    os.chown(os.path.join(d, "canary"), h.uid_of(OTHER), h.gid_of(OTHER))
    return d


def as_member(stack, *argv):
    r = stack.run_as(MEMBER, list(argv))
    assert r.returncode == 0, r.stderr
    return r


def container_of(name):
    ids = h.docker_containers_labelled(name)
    assert len(ids) == 1, ids
    return ids[0]


def test_first_process_is_not_the_owners(sandboxd, cleanup, stack):
    """The first process is the service's init as 65534, not the image's code, not the
    owner's uid; the owner cannot enter it through /proc; the log is bounded."""
    ws = owned_dir(cleanup, HOME, "ws")
    name = h.unique("init")
    sandboxd.create_ok(MEMBER, name, h.spec(volumes=[(ws, "/w", "rw")]), cleanup)
    info = h.docker_inspect(container_of(name))
    assert info["Config"]["Entrypoint"] == ["/.xagent-sandbox/xagent-sandbox-init"]
    assert info["Config"]["User"] == "65534:65534"
    assert info["HostConfig"]["LogConfig"] == {"Type": "json-file",
                                              "Config": {"max-file": "2", "max-size": "1m"}}
    pid = info["State"]["Pid"]
    with open(f"/proc/{pid}/status") as f:
        ids = {k: v.split() for k, v in (line.split(":", 1) for line in f) if k in ("Uid", "Gid")}
    assert ids["Uid"] == ["65534"] * 4 and ids["Gid"] == ["65534"] * 4
    r = stack.run_as(MEMBER, ["ls", f"/proc/{pid}/root/w"])
    assert r.returncode != 0 and "Permission denied" in r.stderr, (r.stdout, r.stderr)
    # Mounted is the checked directory, read-write, and the init's directory read-only.
    roots = mount_roots(container_of(name))
    assert roots["/w"][1] == ws and roots["/w"][2] is False
    assert roots["/.xagent-sandbox"][2] is True
    # A stop does not wait out its timeout: the init ends on SIGTERM.
    t0 = time.monotonic()
    sandboxd.stop(MEMBER, name, timeout=30).result
    assert time.monotonic() - t0 < 5
    inspection = dict(sandboxd.inspect(MEMBER, name).result[0])
    assert inspection["user"] == "65534:65534" and inspection["hardened"] is True


@pytest.mark.parametrize("target", ["victim", "/"])
def test_swap_while_stopped(sandboxd, cleanup, stack, victim, target):
    """Stop, replace the checked directory with a symlink, start: refused, and the
    sandbox never runs with the link's target mounted."""
    target = victim if target == "victim" else target
    ws = owned_dir(cleanup, HOME, "ws")
    name = h.unique("swap")
    sandboxd.create_ok(MEMBER, name, h.spec(volumes=[(ws, "/w", "rw")]), cleanup)
    sandboxd.stop(MEMBER, name, timeout=1).result
    aside = cleanup.path(ws + ".aside")
    as_member(stack, "mv", ws, aside)
    as_member(stack, "ln", "-s", target, ws)

    msg = sandboxd.start(MEMBER, name).error(h.POLICY_VIOLATION)
    assert "symbolic link" in msg and ws in msg, msg
    assert h.docker_inspect(container_of(name))["State"]["Running"] is False
    inspection = dict(sandboxd.inspect(MEMBER, name).result[0])
    assert inspection["state"] == "stopped"

    # Put back, the sandbox starts and has its own directory again.
    os.unlink(ws)
    as_member(stack, "mv", aside, ws)
    sandboxd.start(MEMBER, name).result
    assert mount_roots(container_of(name))["/w"][1] == ws
    assert root_owned_below(ws) == [] and root_owned_below(victim) == []


def test_race_creates_with_a_swap_loop(sandboxd, cleanup, stack, victim):
    """100 creates while the member exchanges the checked directory with a symlink to
    another user's directory as fast as it can: each create is refused or mounts the
    member's own directory; nothing is left behind and nothing appears as root."""
    trials = 100
    ws = owned_dir(cleanup, HOME, "race")
    alt = cleanup.path(os.path.join(HOME, h.unique("race-link")))
    as_member(stack, "ln", "-s", victim, alt)
    names = [cleanup.sandbox(h.unique("race")) for _ in range(trials)]
    # Started directly as the member (no runuser in between), so killing it stops it.
    swapper = subprocess.Popen(["/usr/bin/python3", "-c", SWAPPER, ws, alt], user=h.uid_of(MEMBER),
                               group=h.gid_of(MEMBER), extra_groups=[], stdout=subprocess.PIPE,
                               text=True, cwd="/", env={"PATH": "/usr/bin:/bin"})
    try:
        assert swapper.stdout.readline().strip() == "ready"
        outcomes = {"created": 0, h.POLICY_VIOLATION: 0, h.RUNTIME_CONFLICT: 0}
        for name in names:
            reply = sandboxd.call(MEMBER, "CreateSandbox", "sa{sv}a{sv}",
                                  [name, h.spec(volumes=[(ws, "/w", "rw")]), {}])
            if reply.ok:
                outcomes["created"] += 1
                # What is mounted is a directory of the member's: the checked one,
                # wherever the loop has moved it since (ws or alt), never the victim.
                dev, root, ro = mount_roots(container_of(name))["/w"]
                assert root in (ws, alt) and root != victim, root
                sandboxd.delete(MEMBER, name).result
            else:
                assert reply["error"] in outcomes, reply
                outcomes[reply["error"]] += 1
            assert h.docker_containers_labelled(name) == [], name
    finally:
        swapper.kill()
        swapper.wait()
    print("race outcomes:", json.dumps(outcomes))
    assert sum(outcomes.values()) == trials
    assert outcomes["created"] > 0 and outcomes[h.POLICY_VIOLATION] > 0, outcomes
    real = ws if os.path.isdir(ws) and not os.path.islink(ws) else alt
    assert root_owned_below(real) == [] and root_owned_below(victim) == []
    assert os.listdir(victim) == ["canary"]


def test_nested_guest_paths_refused(sandboxd, cleanup):
    outer = owned_dir(cleanup, HOME, "outer")
    inner = owned_dir(cleanup, HOME, "inner")
    name = cleanup.sandbox(h.unique("nested"))
    msg = sandboxd.create(MEMBER, name, h.spec(volumes=[(outer, "/w", "rw"), (inner, "/w/sub", "ro")])) \
        .error(h.POLICY_VIOLATION)
    assert "'/w/sub'" in msg and "'/w'" in msg and "nested" in msg, msg
    assert h.docker_containers_labelled(name) == []
    assert os.listdir(outer) == [] and root_owned_below(outer) == []


def test_reserved_guest_path_refused(sandboxd, cleanup):
    ws = owned_dir(cleanup, HOME, "ws")
    name = cleanup.sandbox(h.unique("reserved"))
    msg = sandboxd.create(MEMBER, name, h.spec(volumes=[(ws, "/.xagent-sandbox/x", "rw")])) \
        .error(h.POLICY_VIOLATION)
    assert "/.xagent-sandbox" in msg and "reserves" in msg, msg


def test_working_dir_inside_a_volume(sandboxd, cleanup, stack):
    """A working directory inside a volume must exist there (else dockerd would make it
    as root in the member's directory); an existing one works, and a start after it was
    removed is refused the same way."""
    ws = owned_dir(cleanup, HOME, "wd")
    name = cleanup.sandbox(h.unique("wd"))
    msg = sandboxd.create(MEMBER, name, h.spec(volumes=[(ws, "/w", "rw")], working_dir="/w/sub")) \
        .error(h.POLICY_VIOLATION)
    assert "working_dir" in msg and "/w/sub" in msg, msg
    assert os.listdir(ws) == []

    as_member(stack, "mkdir", os.path.join(ws, "sub"))
    sandboxd.create_ok(MEMBER, name, h.spec(volumes=[(ws, "/w", "rw")], working_dir="/w/sub"), cleanup)
    sandboxd.stop(MEMBER, name, timeout=1).result
    as_member(stack, "rmdir", os.path.join(ws, "sub"))
    msg = sandboxd.start(MEMBER, name).error(h.POLICY_VIOLATION)
    assert "working_dir" in msg, msg
    assert os.listdir(ws) == [] and root_owned_below(ws) == []
    # The working directory at the mount point itself needs nothing.
    name2 = cleanup.sandbox(h.unique("wd-top"))
    sandboxd.create_ok(MEMBER, name2, h.spec(volumes=[(ws, "/w", "rw")], working_dir="/w"), cleanup)
    assert root_owned_below(ws) == []


def test_start_of_a_container_without_the_posture(sandboxd, cleanup):
    """A member's container made by an older version (its first process the owner's, from
    the image; its name label the plain name, from before names had owners) is found in
    the member's namespace, inspected, but never started: RecoveryRequired."""
    name = h.unique("legacy")
    sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    cid = container_of(name)
    info = h.docker_inspect(cid)
    sandboxd.delete(MEMBER, name).result
    labels = dict(info["Config"]["Labels"], **{"xagent.sandbox.name": name})
    body = {"Image": info["Config"]["Image"], "Cmd": ["tail", "-f", "/dev/null"],
            "User": f"{h.uid_of(MEMBER)}:{h.gid_of(MEMBER)}", "Labels": labels,
            "HostConfig": {k: info["HostConfig"][k] for k in
                           ("NanoCpus", "Memory", "MemorySwap", "PidsLimit", "CapDrop",
                            "SecurityOpt", "NetworkMode")}}
    status, made = h.docker("POST", f"/containers/create?name={h.container_name(name)}", body)
    assert status == 201, made
    cleanup.container(made["Id"])
    ins = sandboxd.inspect(MEMBER, name).result[0]
    assert ins["container_id"] == made["Id"] and ins["hardened"] is False
    assert name in sandboxd.list(MEMBER)
    msg = sandboxd.start(MEMBER, name).error(h.ERR + "RecoveryRequired")
    assert "posture" in msg, msg
    assert h.docker_inspect(made["Id"])["State"]["Running"] is False
    # Not root's: the plain name in root's namespace is nothing.
    sandboxd.inspect(ROOT, name).error(h.NO_SUCH_SANDBOX)
    sandboxd.delete(MEMBER, name).result
    assert h.docker_containers_labelled(name) == []
