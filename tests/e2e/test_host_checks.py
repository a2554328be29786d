# SPDX-License-Identifier: LGPL-2.1-or-later
"""The host-side checks as the unprivileged member meets them (docs/security.md): a
working directory inside a volume is never runc's to create, POSIX ACLs count in the
volume checks, and a sandbox's writable layer is bounded."""

import os
import subprocess

import sandbox_helpers as h
from sandbox_helpers import MEMBER

HOME = h.home_of(MEMBER)


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
        assert config["WorkingDir"] == wd and "xagent.sandbox.working_dir" not in config["Labels"]
        assert run(sandboxd, other, ["pwd"])[:2] == (0, wd + "\n")


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
