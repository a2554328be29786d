# SPDX-License-Identifier: LGPL-2.1-or-later
"""Copies done by the service's own program in the sandbox (xagent-sandbox-init
--unpack / --pack, as the owner): they work in an image with no tar and no shell at
all, and an interrupted copy never leaves a partial file under its final name."""

import io
import os
import subprocess
import tarfile

import pytest

import sandbox_helpers as h
from sandbox_helpers import MEMBER

# An image with nothing to run in it: three directories. The sandbox's first process
# is the service's init, mounted from the host, so it starts all the same.
BARE_IMAGE = "xagent-sandbox-bare:" + h.PREFIX


@pytest.fixture(scope="module")
def bare_image(docker_image):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as t:
        for d, mode in (("home", 0o755), ("tmp", 0o1777), ("data", 0o1777)):
            info = tarfile.TarInfo(d)
            info.type, info.mode = tarfile.DIRTYPE, mode
            t.addfile(info)
    subprocess.run(["docker", "import", "-", BARE_IMAGE], input=buf.getvalue(), check=True,
                   stdout=subprocess.DEVNULL)
    yield BARE_IMAGE
    h.docker_remove_image(BARE_IMAGE)


def make_tar(path, entries):
    with open(path, "wb") as f:
        f.write(h.module("tarlib.py", "tarlib").archive(entries))
    os.chown(path, h.uid_of(MEMBER), h.gid_of(MEMBER))
    return path


def copy_to(sandboxd, name, guest_dir, tar_path):
    return sandboxd.call(MEMBER, "CopyToSandbox", "ssha{sv}", [name, guest_dir, "<" + tar_path, {}])


def copy_from(sandboxd, name, guest_path, tar_path):
    return sandboxd.call(MEMBER, "CopyFromSandbox", "ssha{sv}", [name, guest_path, ">" + tar_path, {}])


def docker_listing(name, guest_dir):
    """The names below guest_dir, read by Docker (no program of the image needed)."""
    from urllib.parse import quote
    (cid,) = h.docker_containers_labelled(name)
    conn = h._UnixConnection(h.DOCKER_SOCKET, 60)
    try:
        conn.request("GET", f"/containers/{cid}/archive?path={quote(guest_dir)}")
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    assert resp.status == 200, data
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        return {m.name: m for m in t.getmembers()}


def test_copies_both_ways_in_an_image_without_tar(sandboxd, bare_image, cleanup):
    name = h.unique("bare")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec(image=bare_image)).result
    ws = cleanup.workspace(MEMBER, "bare")
    tar_in = make_tar(os.path.join(ws, "in.tar"), [
        ({"name": "proj", "type": tarfile.DIRTYPE, "mode": 0o750}, None),
        ({"name": "proj/a.txt", "mode": 0o640}, b"hello\n"),
        ({"name": "proj/" + "d" * 150 + "/long.txt", "mode": 0o600}, b"long\n"),
        ({"name": "proj/link", "type": tarfile.SYMTYPE, "linkname": "a.txt"}, None),
        ({"name": "proj/hard", "type": tarfile.LNKTYPE, "linkname": "proj/a.txt"}, None),
        ({"name": "proj/big.bin", "mode": 0o644}, os.urandom(3 << 20)),
    ])
    copy_to(sandboxd, name, "/data", tar_in).result

    out = os.path.join(ws, "out.tar")
    copy_from(sandboxd, name, "/data/proj", out).result
    with tarfile.open(out) as t:
        got = {m.name: m for m in t.getmembers()}
        assert t.extractfile("proj/a.txt").read() == b"hello\n"
        assert t.extractfile("proj/big.bin").read() == _entry_data(tar_in, "proj/big.bin")
        assert t.extractfile(f"proj/{'d' * 150}/long.txt").read() == b"long\n"
    assert got["proj/link"].issym() and got["proj/link"].linkname == "a.txt"
    assert got["proj"].mode & 0o7777 == 0o750 and got["proj/a.txt"].mode & 0o7777 == 0o640
    owner = (h.uid_of(MEMBER), h.gid_of(MEMBER))
    assert {(m.uid, m.gid) for m in got.values()} == {owner}, "everything is the owner's"
    assert not any(".xagent-copy" in n for n in got)

    r = copy_from(sandboxd, name, "/data/nothing-here", out)
    assert "guest_path" in r.error(h.INVALID_ARGS)


def _entry_data(tar_path, member):
    with tarfile.open(tar_path) as t:
        return t.extractfile(member).read()


def test_an_interrupted_copy_leaves_no_partial_file(sandboxd, cleanup):
    """The stream ends 1 MiB into a 4 MiB file: the copy fails naming why, the complete
    file before it is there, and nothing is under the cut file's name (nor a
    temporary one). (The test image has a tar, which left the cut file in place.)"""
    name = h.unique("cut")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec()).result
    sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}", [name, ["mkdir", "/tmp/data"], {}]).result
    ws = cleanup.workspace(MEMBER, "cut")
    whole = make_tar(os.path.join(ws, "whole.tar"), [
        ({"name": "done.txt"}, b"complete\n"),
        ({"name": "big.bin"}, b"x" * (4 << 20)),
    ])
    with open(whole, "rb") as f:
        data = f.read()
    cut = os.path.join(ws, "cut.tar")
    with open(cut, "wb") as f:
        f.write(data[:data.index(b"x" * 512) + (1 << 20)])
    os.chown(cut, h.uid_of(MEMBER), h.gid_of(MEMBER))

    assert "ends inside" in copy_to(sandboxd, name, "/tmp/data", cut).error(h.INVALID_ARGS)
    names = set(docker_listing(name, "/tmp/data"))
    assert "data/done.txt" in names
    assert "data/big.bin" not in names
    assert not any(".xagent-copy" in n for n in names), names

    # The whole stream lands complete.
    copy_to(sandboxd, name, "/tmp/data", whole).result
    assert docker_listing(name, "/tmp/data")["data/big.bin"].size == 4 << 20


def test_copy_out_leaves_out_what_is_not_a_file(sandboxd, cleanup):
    """A FIFO in the tree would block a reader for ever: it is left out, the rest arrives."""
    name = h.unique("fifo")
    cleanup.sandbox(name)
    sandboxd.create(MEMBER, name, h.spec()).result
    r = sandboxd.call(MEMBER, "ExecSandbox", "sasa{sv}",
                      [name, ["sh", "-c", "mkdir /tmp/t && mkfifo /tmp/t/pipe && echo x > /tmp/t/f"], {}])
    assert r.result[0] == 0
    ws = cleanup.workspace(MEMBER, "fifo")
    out = os.path.join(ws, "out.tar")
    copy_from(sandboxd, name, "/tmp/t", out).result
    with tarfile.open(out) as t:
        assert sorted(t.getnames()) == ["t", "t/f"]
