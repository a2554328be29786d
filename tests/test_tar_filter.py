# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tar filter of CopyToSandbox (src/core/tar-filter.c) against archives made by
Python's tarfile in every format: what passes is what may enter a sandbox, rewritten;
what may not is refused naming the entry."""

import io
import os
import subprocess
import tarfile

import pytest

from tarlib import archive

RUN = os.path.join(os.environ["SBX_BUILD_ROOT"], "tests", "tar-filter-run")
UID, GID = 1234, 5678


def run(data):
    return subprocess.run([RUN, str(UID), str(GID)], input=data, capture_output=True)


def members(out):
    with tarfile.open(fileobj=io.BytesIO(out)) as t:
        return [(m, t.extractfile(m).read() if m.isfile() else None) for m in t.getmembers()]


@pytest.mark.parametrize("fmt", [tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT])
def test_rewritten(fmt):
    long_name = "d/" + "x" * 90 + "/" + "y" * 60 + ".txt"
    src = archive([
        ({"name": "d", "type": tarfile.DIRTYPE, "mode": 0o2775, "uid": 0}, None),
        ({"name": "./d/a.txt", "mode": 0o4755, "uid": 0, "gid": 0, "uname": "root", "gname": "root",
          "mtime": 1700000000}, b"hello\n" * 200),
        ({"name": "d/link", "type": tarfile.SYMTYPE, "linkname": "../d/a.txt"}, None),
        ({"name": "d/hard", "type": tarfile.LNKTYPE, "linkname": "d/a.txt"}, None),
    ] + ([({"name": long_name, "mode": 0o640}, b"long")] if fmt != tarfile.USTAR_FORMAT else []), fmt)
    r = run(src)
    assert r.returncode == 0, r.stderr
    got = members(r.stdout)
    names = [m.name for m, _ in got]
    assert names[:4] == ["d", "d/a.txt", "d/link", "d/hard"]
    for m, _ in got:
        assert (m.uid, m.gid, m.uname, m.gname) == (UID, GID, "", "")
        assert m.mode & 0o7000 == 0
    by = {m.name: (m, d) for m, d in got}
    assert by["d/a.txt"][1] == b"hello\n" * 200 and by["d/a.txt"][0].mode == 0o755
    assert by["d/a.txt"][0].mtime == 1700000000
    assert by["d/link"][0].linkname == "../d/a.txt" and by["d/hard"][0].linkname == "d/a.txt"
    if fmt != tarfile.USTAR_FORMAT:
        assert by[long_name][1] == b"long"


@pytest.mark.parametrize("entries,needle", [
    ([({"name": "../x"}, b"")], "'..'"),
    ([({"name": "a/../../x"}, b"")], "'..'"),
    ([({"name": "/etc/x"}, b"")], "absolute"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "/etc"}, None)], "outside"),
    ([({"name": "a/l", "type": tarfile.SYMTYPE, "linkname": "../../x"}, None)], "outside"),
    ([({"name": "l", "type": tarfile.SYMTYPE, "linkname": "a"}, None), ({"name": "l/x"}, b"")], "symbolic link"),
    ([({"name": "h", "type": tarfile.LNKTYPE, "linkname": "/etc/passwd"}, None)], "hard link"),
    ([({"name": "c", "type": tarfile.CHRTYPE, "devmajor": 1, "devminor": 3}, None)], "devices"),
    ([({"name": "b", "type": tarfile.BLKTYPE}, None)], "devices"),
    ([({"name": "f", "type": tarfile.FIFOTYPE}, None)], "FIFO"),
    ([({"name": "x" * 200 + "/../y"}, b"")], "'..'"),
    # a hard link to a symbolic link is that link again, where its target leads out
    ([({"name": "a/b/s", "type": tarfile.SYMTYPE, "linkname": "../../x"}, None),
      ({"name": "t", "type": tarfile.LNKTYPE, "linkname": "a/b/s"}, None)], "symbolic link"),
    # ".." after a link of the archive is not where the file system goes
    ([({"name": "x/b", "type": tarfile.SYMTYPE, "linkname": ".."}, None),
      ({"name": "a", "type": tarfile.SYMTYPE, "linkname": "x/b/.."}, None)], "outside"),
])
def test_refused(entries, needle):
    r = run(archive([({"name": "ok"}, b"fine")] + entries))
    assert r.returncode == 1
    assert r.stderr.decode().startswith("InvalidArgs: tar: entry") and needle in r.stderr.decode()


def test_not_tar_and_truncated():
    r = run(b"hello world\n" * 100)
    assert r.returncode == 1 and b"not a tar stream" in r.stderr
    r = run(archive([({"name": "f"}, b"x" * 5000)])[:1536])
    assert r.returncode == 1 and b"ends inside an entry" in r.stderr
    r = run(b"")
    assert r.returncode == 1 and b"empty" in r.stderr


def test_a_pax_record_without_its_length_separator():
    """A pax header of digits only is malformed (and read within its buffer)."""
    body = b"1234567"
    info = tarfile.TarInfo("././@PaxHeader")
    info.type, info.size = tarfile.XHDTYPE, len(body)
    head = info.tobuf(tarfile.USTAR_FORMAT)
    data = head + body + b"\0" * (512 - len(body)) + archive([({"name": "f"}, b"x")], tarfile.USTAR_FORMAT)
    r = run(data)
    assert r.returncode == 1 and b"malformed pax header" in r.stderr, r.stderr
