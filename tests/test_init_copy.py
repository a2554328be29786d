# SPDX-License-Identifier: LGPL-2.1-or-later
"""The copies' in-sandbox side, xagent-sandbox-init --unpack and --pack
(src/init/unpack.c, pack.c), run directly in a scratch directory: what the filter
passes lands whole and nowhere else; a stream that is cut, corrupt or hostile (the
unpacker reads it as untrusted, filter or not) fails naming why and leaves no partial
file; the packer's archive round-trips through Python's tarfile."""

import io
import os
import stat
import subprocess
import tarfile

import pytest

from tarlib import archive

BUILD = os.environ["SBX_BUILD_ROOT"]
INIT = os.path.join(BUILD, "src", "init", "xagent-sandbox-init")
FILTER = os.path.join(BUILD, "tests", "tar-filter-run")


def filtered(entries, fmt=tarfile.PAX_FORMAT):
    r = subprocess.run([FILTER, str(os.getuid()), str(os.getgid())], input=archive(entries, fmt),
                       capture_output=True, check=True)
    return r.stdout


def unpack(target, data):
    return subprocess.run([INIT, "--unpack", str(target)], input=data, capture_output=True)


def tree(root):
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(dirpath, n)
            out[os.path.relpath(p, root)] = os.lstat(p)
    return out


def test_unpacks_every_kind(tmp_path):
    long_name = "p/" + "d" * 120 + "/" + "f" * 110
    data = filtered([
        ({"name": "p", "type": tarfile.DIRTYPE, "mode": 0o555, "mtime": 1000}, None),
        ({"name": "p/a.txt", "mode": 0o640, "mtime": 1234567}, b"hello\n"),
        ({"name": long_name, "mode": 0o600}, b"long"),
        ({"name": "p/link", "type": tarfile.SYMTYPE, "linkname": "a.txt"}, None),
        ({"name": "p/hard", "type": tarfile.LNKTYPE, "linkname": "p/a.txt"}, None),
        ({"name": "q/implied/dirs.bin"}, os.urandom(100000)),
    ])
    r = unpack(tmp_path, data)
    assert r.returncode == 0, r.stderr
    t = tree(tmp_path)
    assert stat.S_IMODE(t["p"].st_mode) == 0o555 and t["p"].st_mtime == 1000
    assert stat.S_IMODE(t["p/a.txt"].st_mode) == 0o640 and t["p/a.txt"].st_mtime == 1234567
    assert (tmp_path / long_name).read_bytes() == b"long"
    assert os.readlink(tmp_path / "p/link") == "a.txt"
    assert t["p/hard"].st_ino == t["p/a.txt"].st_ino
    assert t["q/implied/dirs.bin"].st_size == 100000
    assert not [n for n in t if ".xagent-copy" in n]
    os.chmod(tmp_path / "p", 0o755)


def test_a_file_is_replaced_whole(tmp_path):
    (tmp_path / "f").write_bytes(b"old")
    assert unpack(tmp_path, filtered([({"name": "f"}, b"new contents")])).returncode == 0
    assert (tmp_path / "f").read_bytes() == b"new contents"


@pytest.mark.parametrize("cut", [100, 512 + 700, 512 + 4096, -1024, -1])
def test_a_cut_stream_leaves_no_partial_file(tmp_path, cut):
    (tmp_path / "big").write_bytes(b"previous")
    data = filtered([({"name": "first"}, b"complete"), ({"name": "big"}, b"x" * 20000)])
    start = data.index(b"x" * 512)
    r = unpack(tmp_path, data[:start + cut] if cut > 0 else data[:cut])
    assert r.returncode == 1
    assert b"ends" in r.stderr
    assert (tmp_path / "big").read_bytes() in (b"previous", b"x" * 20000)
    if cut > 0:
        assert (tmp_path / "big").read_bytes() == b"previous"
    assert sorted(os.listdir(tmp_path)) == ["big", "first"]


def raw_entry(name, data=b"", typeflag=b"0", link=b""):
    """One ustar header (and data) written by hand, bypassing every writer's checks."""
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % len(data)
    h[136:148] = b"00000000000\0"
    h[156:157] = typeflag
    h[157:157 + len(link)] = link
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:155] = b"%06o\0" % sum(h)
    return bytes(h) + data + b"\0" * ((512 - len(data) % 512) % 512)


END = b"\0" * 1024


@pytest.mark.parametrize("stream,needle", [
    (raw_entry(b"../evil", b"x") + END, b"not a plain relative name"),
    (raw_entry(b"/tmp/evil", b"x") + END, b"not a plain relative name"),
    (raw_entry(b"a//b", b"x") + END, b"not a plain relative name"),
    (raw_entry(b"dev", typeflag=b"3") + END, b"only files"),
    (raw_entry(b"h", typeflag=b"1", link=b"../../etc/passwd") + END, b"hard link"),
    (raw_entry(b"pax", b"99999999 path=x\n", typeflag=b"x") + END, b"malformed pax"),
    (raw_entry(b"pax", b"x" * 70000, typeflag=b"x") + END, b"larger than"),
    (b"\x01" * 512 + END, b"corrupt header"),
    (raw_entry(b"ok", b"fine"), b"ends before the end"),
])
def test_hostile_streams_fail_naming_why(tmp_path, stream, needle):
    target = tmp_path / "t"
    target.mkdir()
    r = unpack(target, stream)
    assert r.returncode == 1
    assert needle in r.stderr, r.stderr
    assert sorted(os.listdir(tmp_path)) == ["t"]
    assert [n for n in os.listdir(target) if n != "ok"] == []


def test_usage_and_a_missing_target(tmp_path):
    assert subprocess.run([INIT, "--unpack"], capture_output=True).returncode == 2
    r = unpack(tmp_path / "nope", END)
    assert r.returncode == 1 and b"cannot open the target directory" in r.stderr


def pack(directory, name):
    return subprocess.run([INIT, "--pack", str(directory), name], capture_output=True)


def test_pack_round_trips_and_leaves_out_what_is_not_a_file(tmp_path):
    src = tmp_path / "src"
    (src / ("d" * 120)).mkdir(parents=True)
    (src / "a.txt").write_bytes(b"hello\n")
    os.chmod(src / "a.txt", 0o640)
    (src / ("d" * 120) / ("f" * 110)).write_bytes(os.urandom(70000))
    os.symlink("/etc/passwd", src / "abs-link")
    os.mkfifo(src / "fifo")
    r = pack(tmp_path, "src")
    assert r.returncode == 0, r.stderr
    assert b"'src/fifo': left out" in r.stderr
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as t:
        got = {m.name: m for m in t.getmembers()}
        assert t.extractfile("src/a.txt").read() == b"hello\n"
        long_name = "src/" + "d" * 120 + "/" + "f" * 110
        assert t.extractfile(long_name).read() == (src / ("d" * 120) / ("f" * 110)).read_bytes()
    assert got["src/abs-link"].issym() and got["src/abs-link"].linkname == "/etc/passwd"
    assert got["src/a.txt"].mode == 0o640
    assert "src/fifo" not in got and got["src"].isdir()


def test_pack_of_a_file_and_a_missing_path(tmp_path):
    (tmp_path / "one").write_bytes(b"1")
    r = pack(tmp_path, "one")
    with tarfile.open(fileobj=io.BytesIO(r.stdout)) as t:
        assert t.getnames() == ["one"]
    r = pack(tmp_path, "missing")
    assert r.returncode == 1 and b"'missing': cannot stat" in r.stderr
    assert pack(tmp_path, "a/b").returncode == 2
