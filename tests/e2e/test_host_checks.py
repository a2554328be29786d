# SPDX-License-Identifier: LGPL-2.1-or-later
"""The host-side checks as the unprivileged member meets them (docs/security.md): a
working directory inside a volume is never runc's to create, POSIX ACLs count in the
volume checks, and a sandbox's writable layer is bounded."""

import io
import os
import signal
import subprocess
import tarfile

import sandbox_helpers as h
from sandbox_helpers import MEMBER

HOME = h.home_of(MEMBER)

# Another process on the state database, as a backup or monitoring script would be:
# "read" counts the rows, "exclusive" holds BEGIN EXCLUSIVE for argv[3] seconds first.
OUTSIDE = r"""
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
if sys.argv[2] == "exclusive":
    c.execute("BEGIN EXCLUSIVE"); time.sleep(float(sys.argv[3])); c.execute("COMMIT")
print(c.execute("SELECT COUNT(*) FROM sandboxes").fetchone()[0])
c.close()
"""


def owned_dir(cleanup, parent, tag, user=MEMBER, mode=0o755):
    p = cleanup.path(os.path.join(parent, h.unique(tag)))
    os.mkdir(p, mode)
    os.chmod(p, mode)
    os.chown(p, h.uid_of(user), h.gid_of(user))
    return p


def container_of(name):
    ids = h.docker_containers_labelled(name)
    assert len(ids) == 1, ids
    return ids[0]


def run(sandboxd, name, argv, options=None):
    status, out, err, truncated = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}",
                                                [name, argv, options or {}]).result
    return status, bytes(out).decode(), bytes(err).decode()


def test_working_dir_inside_a_volume_is_not_dockers(sandboxd, cleanup, stack):
    """runc creates a missing Config.WorkingDir as root at every start, in whatever the
    volume's path leads to by then: so a working directory inside a volume is never
    given to Docker. The container's Config.WorkingDir is "/", yet the sandbox reports,
    verifies and runs in the spec's."""
    ws = owned_dir(cleanup, HOME, "wd")
    name = cleanup.sandbox(h.unique("wd"))
    sp = h.spec(volumes=[(ws, "/w", "rw")], working_dir="/w/sub/deep")
    msg = sandboxd.create(MEMBER, name, sp).error(h.POLICY_VIOLATION)
    assert "working_dir" in msg and "/w/sub/deep" in msg, msg
    assert os.listdir(ws) == []

    os.makedirs(os.path.join(ws, "sub", "deep"))
    for d in (os.path.join(ws, "sub"), os.path.join(ws, "sub", "deep")):
        os.chown(d, h.uid_of(MEMBER), h.gid_of(MEMBER))
    sandboxd.create_ok(MEMBER, name, sp, cleanup)
    config = h.docker_inspect(container_of(name))["Config"]
    assert config["WorkingDir"] == "/", config["WorkingDir"]
    assert config["Labels"]["xagent.sandbox.working_dir"] == "/w/sub/deep"

    ins = dict(sandboxd.inspect(MEMBER, name).result[0])
    assert ins["working_dir"] == "/w/sub/deep" and ins["verdict"] == "match", ins
    assert sandboxd.verify(MEMBER, name, sp).result[0] == "match"
    # an exec without a working directory runs in the spec's, one with its own in that
    assert run(sandboxd, name, ["pwd"])[:2] == (0, "/w/sub/deep\n")
    assert run(sandboxd, name, ["pwd"], {"working_dir": ["s", "/w/sub"]})[:2] == (0, "/w/sub\n")
    # a restart keeps it so
    sandboxd.stop(MEMBER, name, timeout=1).result
    sandboxd.start(MEMBER, name).result
    assert run(sandboxd, name, ["pwd"])[:2] == (0, "/w/sub/deep\n")

    # outside every volume, and on a volume's mount point, Docker's as before
    for wd in ("/home", "/w"):
        other = cleanup.sandbox(h.unique("wd-out"))
        sandboxd.create_ok(MEMBER, other, h.spec(volumes=[(ws, "/w", "rw")], working_dir=wd), cleanup)
        config = h.docker_inspect(container_of(other))["Config"]
        assert config["WorkingDir"] == wd and config["Labels"]["xagent.sandbox.working_dir"] == ""
        assert run(sandboxd, other, ["pwd"])[:2] == (0, wd + "\n")


def test_an_images_working_dir_label_is_never_read_back(sandboxd, cleanup, stack):
    """The service writes the working_dir label on every container (blank when the
    spec's working directory is Config.WorkingDir), so an image's label of that name —
    here one naming a path inside the sandbox's volume, with the spec's working
    directory "/" — is never taken for the spec's (it made the create fail as a
    working_dir mismatch)."""
    image = "xagent-sandbox-wdlabel:" + h.PREFIX
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for d in ("home", "tmp", "w"):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777
            t.addfile(info)
    subprocess.run(["docker", "import", "-c", "LABEL xagent.sandbox.working_dir=/w/x", "-", image],
                   input=buf.getvalue(), check=True, stdout=subprocess.DEVNULL)
    try:
        ws = owned_dir(cleanup, HOME, "wdl")
        name = cleanup.sandbox(h.unique("wdl"))
        sp = h.spec(image=image, volumes=[(ws, "/w", "rw")], working_dir="/")
        sandboxd.create_ok(MEMBER, name, sp, cleanup)
        assert h.docker_inspect(container_of(name))["Config"]["Labels"]["xagent.sandbox.working_dir"] == ""
        ins = dict(sandboxd.inspect(MEMBER, name).result[0])
        assert ins["working_dir"] == "/" and ins["verdict"] == "match", ins
        sandboxd.delete(MEMBER, name).result
    finally:
        h.docker_remove_image(image)


def test_acl_on_a_parent_refuses(sandboxd, cleanup, stack):
    """An ACL entry user:sbx-member:--- on a directory of the member's home hides what
    lies below it from the member on the host; a volume of a directory below it is
    refused, naming the directory, while the same without the entry is admitted."""
    parent = owned_dir(cleanup, HOME, "acl", user=h.OTHER)
    inner = os.path.join(parent, "inner")
    os.mkdir(inner)
    os.chown(inner, h.uid_of(h.OTHER), h.gid_of(h.OTHER))
    with open(os.path.join(inner, "secret"), "w") as f:
        f.write("not the member's")
    subprocess.run(["setfacl", "-m", f"u:{MEMBER}:---", parent], check=True)
    assert stack.run_as(MEMBER, ["cat", os.path.join(inner, "secret")]).returncode != 0

    name = cleanup.sandbox(h.unique("acl"))
    msg = sandboxd.create(MEMBER, name, h.spec(volumes=[(inner, "/data", "ro")])).error(h.POLICY_VIOLATION)
    assert f"'{parent}'" in msg and "may not search" in msg, msg
    assert h.docker_containers_labelled(name) == []

    subprocess.run(["setfacl", "-b", parent], check=True)
    sandboxd.create_ok(MEMBER, name, h.spec(volumes=[(inner, "/data", "ro")]), cleanup)
    assert run(sandboxd, name, ["cat", "/data/secret"])[:2] == (0, "not the member's")


def make_tar(path, files):
    """A tar of (name, size) regular files of random bytes, owned by the member."""
    with tarfile.open(path, "w") as t:
        for name, size in files:
            info = tarfile.TarInfo(name)
            info.size, info.mode = size, 0o644
            t.addfile(info, io.BytesIO(os.urandom(size)))
    os.chown(path, h.uid_of(MEMBER), h.gid_of(MEMBER))
    return path


def copy_to(sandboxd, name, guest_dir, tar_path):
    return sandboxd.call(MEMBER, "CopyToSandbox", "ssha{sv}", [name, guest_dir, "<" + tar_path, {}])


def layer_size(name):
    status, info = h.docker("GET", f"/containers/{container_of(name)}/json?size=1")
    assert status == 200, info
    return info.get("SizeRw") or 0


def test_disk_bound_on_copies(sandboxd, cleanup, stack):
    """max_disk_mib bounds a sandbox's writable layer on what is copied in (the storage
    driver here has no per-container size): GetPolicy shows the bound and how it is
    enforced; a copy within it lands, one past it is PolicyViolation naming the bound
    and leaves the layer within it; a full layer takes nothing more."""
    mib = 1024 * 1024
    with h.daemon_config(stack, {"max_disk_mib": 2}):
        policy = sandboxd.call(MEMBER, "GetPolicy").result[0]
        assert policy["max_disk_mib"] == 2 and policy["disk_enforcement"] == "copies", policy
        ws = cleanup.workspace(MEMBER, "disk")
        name = cleanup.sandbox(h.unique("disk"))
        sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)

        small = make_tar(os.path.join(ws, "small.tar"), [("small", mib // 2)])
        copy_to(sandboxd, name, "/tmp", small).result
        assert run(sandboxd, name, ["stat", "-c", "%s", "/tmp/small"])[:2] == (0, f"{mib // 2}\n")

        big = make_tar(os.path.join(ws, "big.tar"), [("a", mib // 2), ("big", 3 * mib)])
        msg = copy_to(sandboxd, name, "/tmp", big).error(h.POLICY_VIOLATION)
        assert "max_disk_mib" in msg and "2 MiB" in msg, msg
        assert layer_size(name) <= 2 * mib, layer_size(name)

        # what the layer holds now counts: fill it from inside (execs are not bounded
        # on this driver), and then no copy runs at all
        assert run(sandboxd, name, ["dd", "if=/dev/zero", "of=/tmp/fill", "bs=1M", "count=3"])[0] == 0
        msg = copy_to(sandboxd, name, "/tmp", small).error(h.POLICY_VIOLATION)
        assert "max_disk_mib" in msg and "nothing more is copied in" in msg, msg


def outside(db, mode, hold=0):
    r = subprocess.run(["/usr/bin/python3", "-c", OUTSIDE, db, mode, str(hold)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def deleted_store_files(pid):
    """The daemon's descriptors of database files that were unlinked under it."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if "sandboxd.db" in target and target.endswith("(deleted)"):
            found.append(target)
    return found


def test_an_outside_connection_leaves_the_daemons_wal(sandboxd, cleanup, stack):
    """root's script opening the state database read-write, and another holding BEGIN
    EXCLUSIVE, while the daemon runs: the daemon's -wal and -shm stay linked, its reads
    and writes go on, and a row written afterwards survives a SIGKILL."""
    db = os.path.join(stack.state_dir, "sandboxd.db")
    names = [cleanup.sandbox(h.unique("wal")) for _ in range(3)]
    pid = sandboxd.ensure_running()
    for name in names[:2]:
        sandboxd.create_ok(MEMBER, name, h.spec(), cleanup)
    # several workers' connections
    for _ in range(4):
        sandboxd.list(MEMBER)
        sandboxd.inspect(MEMBER, names[0]).result
    rows = outside(db, "read")
    assert rows >= 2
    assert deleted_store_files(pid) == []
    assert outside(db, "exclusive", 2) == rows
    assert deleted_store_files(pid) == []
    for _ in range(4):
        assert set(names[:2]) <= set(sandboxd.list(MEMBER))
        assert dict(sandboxd.inspect(MEMBER, names[1]).result[0])["state"] == "running"
    sandboxd.create_ok(MEMBER, names[2], h.spec(), cleanup)
    assert stack.stop_daemon(sig=signal.SIGKILL) == pid
    # the next call activates a fresh daemon on the same state
    listed = sandboxd.list(MEMBER)
    assert set(names) <= set(listed), listed
    assert outside(db, "read") == rows + 1
